"""Issue 20 item 3: no two product modules share a file name, so a newcomer can tell which room is
theirs (``runtime/answer.py`` beside ``runtime/turn/answer.py`` was the case this replaced).

Product modules are the ``.py`` files under runtime/, model/, wire/, codegen/, ci/ and ummaya/ (ci/ is
installed as ``ummaya.ci``: ``ci/scenarios.py`` beside ``runtime/scenarios.py`` was the second case);
``__init__.py`` names a package, not a module, and is left out. The walk reads the tree on disk, so a new file is
checked the moment it exists.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("runtime", "model", "wire", "codegen", "ci", "ummaya")


def shared_names(root: Path) -> dict[str, list[str]]:
    """File name -> the product paths that carry it, for every name carried more than once."""
    seen: dict[str, list[str]] = defaultdict(list)
    for folder in PRODUCT:
        for path in sorted((root / folder).rglob("*.py")):
            if path.name != "__init__.py" and "__pycache__" not in path.parts:
                seen[path.name].append(path.relative_to(root).as_posix())
    return {name: paths for name, paths in seen.items() if len(paths) > 1}


def test_no_two_product_modules_share_a_file_name() -> None:
    assert (ROOT / "runtime" / "turn").is_dir() and (ROOT / "ci").is_dir()  # the real tree
    assert shared_names(ROOT) == {}


def test_a_second_module_of_the_same_name_is_found(tmp_path: Path) -> None:
    for rel in ("runtime/answer.py", "runtime/turn/answer.py", "codegen/answer.py",
                "runtime/__init__.py", "model/__init__.py", "ummaya/cli/ask.py", "tests/ask.py",
                "runtime/scenarios.py", "ci/scenarios.py", "ci/__init__.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("", encoding="utf-8")
    assert shared_names(tmp_path) == {
        "answer.py": ["runtime/answer.py", "runtime/turn/answer.py", "codegen/answer.py"],
        "scenarios.py": ["runtime/scenarios.py", "ci/scenarios.py"]}
