"""No test waits on the wall clock (issue 20): a wait is an event, a readiness signal or an
injected clock, never a guess at how long something takes.

Every call of ``time.sleep`` / ``asyncio.sleep`` (however imported: ``from time import sleep``,
``import time as t``) under tests/ fails this test unless its argument is the literal ``0`` (a
yield to the event loop) or the call is allow-listed below with the reason it has to pace.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.clock_calls import bound_names, calls_one, python_files

TESTS = Path(__file__).resolve().parents[1]

# (path under tests/, the call's source text) -> why it has to pace on the clock.
ALLOWED = {
    ("support/upstreams.py", "time.sleep(reply.drip_s)"):
        "a dripping upstream: bytes arriving each within the read timeout are the input under "
        "test (one total deadline per call, not one per read); a fake server thread paces them",
}


def _is_yield(call: ast.Call) -> bool:
    args = list(call.args) + [k.value for k in call.keywords]
    return len(args) == 1 and isinstance(args[0], ast.Constant) and args[0].value == 0


def wall_clock_sleeps(root: Path = TESTS) -> list[tuple[str, int, str]]:
    """Every sleep call under ``root`` that is neither ``sleep(0)`` nor allow-listed."""
    found = []
    for rel, source, tree in python_files(root):
        modules, bare = bound_names(tree, {"time", "asyncio"}, {"sleep"})
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not calls_one(node, modules, bare, {"sleep"}) or _is_yield(node):
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
