"""Emergencies first: a request that describes one gets its number on the answer's first line.

The phrases, numbers and sources are registry data (registry/_emergency/, compiled into
generated/guidance.json). The line goes out as the turn's first ``delta`` — before retrieval, any
question, consent notice or stop — and then the turn goes on as usual (the nearest emergency room,
or the question it needs answered). It is the engine's, so it holds for every planner.
"""

from __future__ import annotations

from .. import compose as ans
from .log import TurnLog
from .values import TurnContext, TurnState


def emergency_opening(ctx: TurnContext, st: TurnState, log: TurnLog) -> None:
    if ctx.catalog is None:
        return
    found = ctx.catalog.guidance.emergencies_in(ctx.request)
    if not found:
        return
    st.emergencies = ctx.emergencies = found
    part = ans.emergency_part(found, ctx.language)
    text = part.text + "\n\n"  # the rest of the answer follows after a blank line
    st.deltas.append(text)
    log.emit("delta", "answer", text=text, part=part.kind,
             emergencies=[e.id for e in found], numbers=sorted({n for e in found for n in e.numbers}))
