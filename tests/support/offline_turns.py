"""Turns through the real offline planner on the committed catalog, in Mock, at a fixed time:
how the tests of tests/plan ask the engine what it would send. One session per list of messages
(a follow-up sees the turns before it); the engine and its store are the module's
(tests/plan/conftest.py)."""

from __future__ import annotations

import asyncio
import datetime as dt

KST = dt.timezone(dt.timedelta(hours=9))
NOW = dt.datetime(2026, 12, 1, 10, 0, tzinfo=KST)  # a Tuesday


def ask_all(engine, *messages: str, consents: tuple[str, ...] = ()) -> list:
    """Every turn's result, the messages asked one after another in one session."""
    from ummaya.runtime.request_context import fixed_clock
    from ummaya.runtime.turn import TurnRequest

    session = f"plan-{abs(hash(messages))}"

    async def run():
        return [await engine.ask(TurnRequest(m, session_id=session, mode="mock", consents=consents))
                for m in messages]

    with fixed_clock(NOW):
        return asyncio.run(run())


def ask(engine, *messages: str, consents: tuple[str, ...] = ()):
    """The last turn's result (the earlier messages set up the conversation)."""
    return ask_all(engine, *messages, consents=consents)[-1]
