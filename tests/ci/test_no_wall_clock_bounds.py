"""No test asserts how long something took (issue 20): a bound on the wall clock passes on a quiet
machine and fails on a loaded one (a gzip bomb once ended as TIMEOUT instead of PARSE). A test
asserts the outcome — the stable code, bytes or requests counted, an injected clock's readings —
and speed figures live in bench/.

A clock reading is a call of ``time.monotonic`` / ``perf_counter`` / ``time`` / ``process_time``
(or their ``_ns`` forms, however imported), or a name assigned from an expression holding one
(``t0 = time.monotonic()``; ``elapsed = time.monotonic() - t0``). Every comparison with a clock
reading on either side fails this test; printing a figure is fine.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.clock_calls import bound_names, calls_one, python_files

TESTS = Path(__file__).resolve().parents[1]
CLOCKS = {"monotonic", "perf_counter", "time", "process_time", "monotonic_ns", "perf_counter_ns", "time_ns",
          "process_time_ns"}


def _reads_clock(expr: ast.AST, modules: set[str], bare: set[str], tainted: set[str]) -> bool:
    for n in ast.walk(expr):
        if isinstance(n, ast.Call) and calls_one(n, modules, bare, CLOCKS):
            return True
        if isinstance(n, ast.Name) and n.id in tainted:
            return True
    return False


def _assigned(node: ast.AST) -> list[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
    out = []
    for t in targets:
        out += [n.id for n in ast.walk(t) if isinstance(n, ast.Name)]
    return out


def wall_clock_bounds(root: Path = TESTS) -> list[tuple[str, int, str]]:
    """Every comparison under ``root`` with a clock reading on one side."""
    found = []
    for rel, source, tree in python_files(root):
        modules, bare = bound_names(tree, {"time"}, CLOCKS)
        if not modules and not bare:
            continue
        # Names holding a clock reading, per file, to a fixed point (``elapsed = now - t0``).
        tainted: set[str] = set()
        assigns = [n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                   and n.value is not None]
        while True:
            more = {name for n in assigns if _reads_clock(n.value, modules, bare, tainted)  # type: ignore[arg-type]
                    for name in _assigned(n)} - tainted
            if not more:
                break
            tainted |= more
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and any(
                    _reads_clock(side, modules, bare, tainted) for side in [node.left, *node.comparators]):
                found.append((rel, node.lineno, ast.get_source_segment(source, node) or ""))
    return sorted(found)


def test_no_test_asserts_a_wall_clock_bound() -> None:
    assert wall_clock_bounds() == [], (
        "assert the outcome (the stable code, bytes or requests counted, an injected clock) and keep "
        "the speed figure in bench/")


def test_the_check_sees_every_spelling(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text(
        "import time as t\nfrom time import perf_counter as pc\n"
        "def f():\n    t0 = t.monotonic()\n    work()\n    elapsed = t.monotonic() - t0\n"
        "    assert elapsed < 2\n    assert pc() - 1 >= 0.3\n    print(f'{elapsed:.1f}')\n"
        "    ok = t.time() + 3\n    assert ok\n", encoding="utf-8")
    assert wall_clock_bounds(tmp_path) == [("test_x.py", 7, "elapsed < 2"), ("test_x.py", 8, "pc() - 1 >= 0.3")]
