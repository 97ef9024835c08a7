"""No test waits on the wall clock (issue 20): a wait is an event, a readiness signal or an
injected clock, never a guess at how long something takes.

Every call of ``time.sleep`` / ``asyncio.sleep`` (however imported: ``from time import sleep``,
``import time as t``) under tests/ fails this test unless its argument is the literal ``0`` (a
yield to the event loop) or the call is allow-listed below with the reason it has to pace.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
SLEEPS = {("time", "sleep"), ("asyncio", "sleep")}

# (path under tests/, the call's source text) -> why it has to pace on the clock.
ALLOWED = {
    ("support/upstreams.py", "time.sleep(reply.drip_s)"):
        "a dripping upstream: bytes arriving each within the read timeout are the input under "
        "test (one total deadline per call, not one per read); a fake server thread paces them",
}


def _sleep_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """(module aliases of time/asyncio, bare names bound to their sleep) in one file."""
    modules, bare = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in ("time", "asyncio"):
                    modules.add(a.asname or a.name)
        elif isinstance(node, ast.ImportFrom) and node.module in ("time", "asyncio"):
            bare |= {a.asname or a.name for a in node.names if a.name == "sleep"}
    return modules, bare


def _is_yield(call: ast.Call) -> bool:
    args = list(call.args) + [k.value for k in call.keywords]
    return len(args) == 1 and isinstance(args[0], ast.Constant) and args[0].value == 0


def wall_clock_sleeps(root: Path = TESTS) -> list[tuple[str, int, str]]:
    """Every sleep call under ``root`` that is neither ``sleep(0)`` nor allow-listed."""
    found = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source, str(path))
        modules, bare = _sleep_names(tree)
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            hit = (isinstance(f, ast.Attribute) and f.attr == "sleep" and isinstance(f.value, ast.Name)
                   and f.value.id in modules) or (isinstance(f, ast.Name) and f.id in bare)
            if not hit or _is_yield(node):
                continue
            text = ast.get_source_segment(source, node) or ""
            if (rel, text) not in ALLOWED:
                found.append((rel, node.lineno, text))
    return sorted(found)


def test_no_wall_clock_sleep_in_the_tests() -> None:
    assert wall_clock_sleeps() == [], (
        "wait for an event, a readiness signal (tests/support/serving.py) or an injected clock "
        "instead; allow-list here only with the reason the test must pace")


def test_every_allowance_is_still_needed() -> None:
    present = set()
    for (rel, text) in ALLOWED:
        present |= {(rel, text)} if text in (TESTS / rel).read_text(encoding="utf-8") else set()
    assert present == set(ALLOWED), sorted(set(ALLOWED) - present)


def test_the_check_sees_every_spelling(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text(
        "import asyncio\nimport time as t\nfrom time import sleep as nap\n"
        "async def f():\n    await asyncio.sleep(0.1)\n    await asyncio.sleep(0)\n"
        "def g(d):\n    t.sleep(d)\n    nap(1)\n    t.sleep(0)\n", encoding="utf-8")
    assert wall_clock_sleeps(tmp_path) == [
        ("test_x.py", 5, "asyncio.sleep(0.1)"), ("test_x.py", 8, "t.sleep(d)"), ("test_x.py", 9, "nap(1)"),
    ]
