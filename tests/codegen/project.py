"""Shared by tests/codegen and tests/ci: a small, self-consistent registry copied into tmp folders.

The real registry/ changes while adapters land; these tests need one that always links (a locate
adapter providing coordinates, a live find that requires them, a handoff send with a consent notice).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from ummaya.cli import main

DATA = Path(__file__).parent / "data" / "registry"
NMC = "registry/nmc/nmc_emergency_rooms.yaml"
KAKAO = "registry/kakao/kakao_keyword_search.yaml"
GOV24 = "registry/gov24/gov24_move_in_report.yaml"


def make_project(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(DATA, folder / "registry")
    return folder


def copy_project(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def line_of(path: Path, needle: str, start: int = 1) -> int:
    """1-based number of the first line at or after ``start`` containing ``needle``."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if number >= start and needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def tree(folder: Path) -> dict[str, bytes]:
    if not folder.exists():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def outputs(root: Path) -> dict[str, bytes]:
    return {f"{top}/{k}": v for top in ("generated", "llms") for k, v in tree(root / top).items()}


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)
