"""The AST walk both wall-clock guards share (tests/ci/test_no_wall_clock_sleeps.py and
tests/ci/test_no_wall_clock_bounds.py): every test file parsed once, the names a file binds to a
module's functions however it imports them (``import time as t``, ``from time import sleep as
nap``), and whether a call is one of them."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path


def python_files(root: Path) -> Iterator[tuple[str, str, ast.AST]]:
    """(path under ``root``, source, tree) of every ``.py`` file under ``root``, sorted."""
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        yield path.relative_to(root).as_posix(), source, ast.parse(source, str(path))


def bound_names(tree: ast.AST, modules: set[str], functions: set[str]) -> tuple[set[str], set[str]]:
    """(the names ``modules`` are imported as, the bare names bound to one of their ``functions``)."""
    aliases, bare = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {a.asname or a.name for a in node.names if a.name in modules}
        elif isinstance(node, ast.ImportFrom) and node.module in modules:
            bare |= {a.asname or a.name for a in node.names if a.name in functions}
    return aliases, bare


def calls_one(call: ast.Call, aliases: set[str], bare: set[str], functions: set[str]) -> bool:
    """Whether ``call`` is ``<alias>.<function>(…)`` or ``<bare>(…)``."""
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr in functions and isinstance(f.value, ast.Name) and f.value.id in aliases
    return isinstance(f, ast.Name) and f.id in bare
