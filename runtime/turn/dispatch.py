"""Stage 7, dispatch: the step's calls run together; each is announced (``call_started``) before
and reported (``call_finished``, a call row) after. The whole turn's deadline bounds the wait: calls
still out when it passes end as ``channel_unavailable`` (``TURN_DEADLINE``), never as silence."""

from __future__ import annotations

import asyncio
import difflib
import json
import re
from typing import Any

from ummaya.model.manifest import Manifest

from .. import compose as ans
from ummaya.wire.outcome import CallOutcome
from ..plan.protocol import ToolCall
from .log import TurnLog
from .values import Dispatched, Stop, TurnContext, TurnState

DEADLINE_CODE = "TURN_DEADLINE"


async def dispatch(
    dispatcher: Any, calls: list[ToolCall], by_id: dict[str, Manifest], ctx: TurnContext,
    st: TurnState, log: TurnLog,
) -> list[Dispatched]:
    log.stage = "dispatch"
    for c in calls:
        m = by_id[c.adapter_id]
        log.emit("call_started", "dispatch", call_id=c.id, adapter_id=m.id, primitive=m.primitive,
                 tier=dispatcher.resolve_tier(m.id, ctx.mode), arguments=c.arguments)
    pending = [asyncio.ensure_future(dispatcher.call(c.adapter_id, c.arguments, mode=ctx.mode)) for c in calls]
    try:
        if ctx.deadline is None:
            outcomes = list(await asyncio.gather(*pending))
        else:
            async with asyncio.timeout_at(ctx.deadline):
                outcomes = list(await asyncio.gather(*pending))
    except TimeoutError:
        outcomes = [p.result() if p.done() and not p.cancelled() and p.exception() is None
                    else _timed_out(c.adapter_id, dispatcher.resolve_tier(c.adapter_id, ctx.mode))
                    for c, p in zip(calls, pending, strict=False)]
    finally:
        for p in pending:
            if not p.done():
                p.cancel()
    st.messages.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": c.id, "type": "function", "function": {"name": c.adapter_id, "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
        for c in calls]})
    done = [Dispatched(c, by_id[c.adapter_id], out) for c, out in zip(calls, outcomes, strict=False)]
    for d in done:
        c, m, out = d.call, d.manifest, d.outcome
        error = ({"class": out.error_class, "code": out.error_code, "message": out.error_message}
                 if out.status == "error" else None)
        st.calls.append({"call_id": c.id, "adapter_id": m.id, "primitive": m.primitive, "tier": out.tier,
                         "arguments": c.arguments, "status": out.status, "latency_ms": round(out.latency_ms, 2), "upstream_url": out.upstream_url,
                         "fixture": out.fixture, "error": error})
        log.emit("call_finished", "dispatch", call_id=c.id, adapter_id=m.id, tier=out.tier, status=out.status,
                 latency_ms=round(out.latency_ms, 2), upstream_url=out.upstream_url, fixture=out.fixture, error=error)
        if out.tier == "mock" and out.fixture and out.status != "error":
            for note in (_other_place(m, out.fixture, c.arguments, ctx.language),
                         _other_subject(m, out.fixture, c.arguments, ctx.language)):
                if note and note not in st.notes:
                    st.notes.append(note)
    return done


def _other_place(m: Manifest, fixture: str, arguments: dict[str, Any] | None, language: str) -> str | None:
    """The answer's one-line note when Mock replays data recorded for another place."""
    from ..dispatch.fixture_place import other_place_note

    fx = next((f for f in m.fixtures if f.name == fixture), None)
    return other_place_note(m, fx, arguments or {}, language)


# Fields that say *what* is asked about in the citizen's words (slot types whose class has the
# "subject" facet: a product, a keyword, a stop): Mock replays one recording whatever was asked, so
# a different value there is said, like a different place.


def _other_subject(m: Manifest, fixture: str, arguments: dict[str, Any] | None, language: str) -> str | None:
    """The answer's one-line note when Mock replays data recorded for another thing than asked
    (「게보린」 answered from the 「타이레놀」 recording)."""
    fx = next((f for f in m.fixtures if f.name == fixture), None)
    if fx is None or not isinstance(fx.request, dict):
        return None
    from ..understand import table

    props = m.input_schema.get("properties", {})
    subjects = table.names_with("subject")
    for name, prop in props.items():
        if not isinstance(prop, dict) or prop.get("x-slot") not in subjects or "enum" in prop:
            continue
        asked, have = (arguments or {}).get(name), fx.request.get(name)
        if not isinstance(asked, str) or not isinstance(have, str):
            continue
        a, h = (re.sub(r"\s+", "", v).lower() for v in (asked, have))
        # Spelling variants of one name (「동아대학교 승학캠퍼스」 / 「동아대승학캠퍼스」) are the same thing.
        if a and h and a not in h and h not in a and difflib.SequenceMatcher(None, a, h).ratio() < 0.6:
            if language == "en":
                return f"Note: this Mock data is for '{have}', not '{asked}' that you asked about."
            return f"모의 데이터는 '{have}' 기준입니다 (요청하신 '{asked}'의 데이터가 아닙니다)."
    return None


def first_error_stop(done: list[Dispatched], language: str) -> Stop | None:
    """The stop a failed call causes (the first one), with the engine's text for it."""
    for d in done:
        out = d.outcome
        if out.status == "error":
            reason = out.error_class or "adapter_error"
            return Stop(reason, ans.compose_stop(reason, language, out.error_code or ""), out.error_code or "")
    return None


def _timed_out(adapter_id: str, tier: str) -> CallOutcome:
    return CallOutcome(adapter_id=adapter_id, tier=tier, status="error",
                       error_class="channel_unavailable", error_code=DEADLINE_CODE,
                       error_message="the turn's deadline passed before the upstream answered")
