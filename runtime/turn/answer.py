"""Stage 9, answer: what the citizen reads when the turn stops, and the ``answer`` event.

The answer text is, by construction, the concatenation of the turn's ``delta`` events, so JSON,
SSE and the trace cannot disagree. The engine writes the text for every stop it decides (consent
notice, handoff material, a stop's reason); a planner's answer is written from the evidence
(runtime/answer.py) when the planner leaves the words to the engine.
"""

from __future__ import annotations

import re

from .. import answer as ans
from .log import TurnLog
from .values import Planned, Stop, TurnContext, TurnState


def answer_stop(planned: Planned, ctx: TurnContext, st: TurnState) -> Stop:
    """The planner answered: the stop that ends the turn with its text."""
    notes = "\n".join(st.notes)
    if planned.streamed:  # the provider already streamed its answer as deltas
        return Stop("completed", notes)
    composed = ans.compose_completed(st.evidence, ctx.language) if st.evidence else ""
    text = planned.action.text or composed
    # Mock data for another place than asked is said first, in one plain line.
    return Stop("completed", f"{notes}\n\n{text}" if notes and text else (text or notes))


def ask_stop(planned: Planned, ctx: TurnContext) -> Stop:
    """The planner asked the citizen for something (after the gate let it)."""
    action = planned.action
    if planned.streamed:  # the question already reached the citizen as deltas
        return Stop("needs_input", "")
    if not action.missing and not action.text:
        return Stop("needs_input", ans.compose_ask(["request"], ctx.language))
    return Stop("needs_input", action.text or ans.compose_ask(action.missing, ctx.language))


def finish(stop_text: str, ctx: TurnContext, st: TurnState, log: TurnLog) -> str:
    """Stream the stop's text after whatever was streamed already; emit ``answer``; return it."""
    log.stage = "answer"
    if stop_text:
        if st.deltas and not st.deltas[-1].endswith("\n"):
            stop_text = "\n\n" + stop_text  # after a cut-off answer, the stop reads apart
        for chunk in chunks(stop_text):
            st.deltas.append(chunk)
            log.emit("delta", "answer", text=chunk)
    text = "".join(st.deltas)
    log.emit("answer", "answer", text=text, language=ctx.language)
    return text


def chunks(text: str, size: int = 400) -> list[str]:
    """Split composed answer text into stream pieces: a paragraph each (blank-line separated),
    long ones cut at line ends. Every piece is an event in the SSE stream *and* in the trace, so
    pieces are as large as reads naturally — a model's own deltas are passed on as they come."""
    out: list[str] = []
    for para in re.split(r"(?<=\n\n)", text):
        while len(para) > size:
            cut = para.rfind("\n", 0, size) + 1 or size
            out.append(para[:cut])
            para = para[cut:]
        if para:
            out.append(para)
    return out
