"""Stage 9, answer: what the citizen reads when the turn stops, and the ``answer`` event.

The engine owns the answer, for every planner. A planner that leaves the words to the engine (the
offline planner) gets the evidence rendered under its tier labels; a planner that writes prose gets
it checked claim by claim against this turn's evidence and the citizen's words (claims.py) and set
inside the engine's frame — tier label per piece of evidence, citation, boundary ("nothing was
submitted"), next step — which the prose cannot remove or contradict. An answer with no evidence
at all gets one repair ("call a tool or ask"), then the turn stops as ``ungrounded`` with the
engine's text. The answer text is, by construction, the concatenation of the turn's ``delta``
events, so JSON, SSE and the trace cannot disagree.
"""

from __future__ import annotations

import re

from .. import answer as ans
from . import claims
from .log import TurnLog
from .values import Planned, Stop, TurnContext, TurnState


def facts_for(ctx: TurnContext, st: TurnState) -> claims.Facts:
    """What this turn can back a claim with: every adapter's full output and its citation, the
    citizen's own words and carried slots, the engine's own wording, the clock."""
    outputs: list[object] = []
    for m, e in st.evidence:
        outputs.append(e.output if e.output is not None else e.summary)
        outputs.append(e.citation)
        outputs.append({"title": [m.title.ko, m.title.en], "agency": [m.agency.name_ko, m.agency.name_en]})
    lang = ctx.language
    # The engine's own wording: boundaries, next steps, and the render templates of the adapters
    # used (their fixed phrases — 「반경 150m」 — are the manifest author's, not the model's).
    own = [*ans.NEXT_STEP[lang].values(), *ans.BOUNDARY[lang].values()]
    own += [getattr(m.render, lang) for m, _ in st.evidence if m.render is not None]
    return claims.build_facts(
        outputs,
        citizen=[*ctx.citizen_texts, *(str(v) for v in ctx.slots.values())],
        extra=own,
        tiers={e.tier for _, e in st.evidence},
        live_send_ok=any(m.primitive == "send" and e.tier == "live" and e.status == "ok" for m, e in st.evidence),
        consented=bool(st.consented),
        clock=ctx.clock,
    )


def checked_prose(text: str, ctx: TurnContext, st: TurnState) -> str:
    """The planner's prose with every unbacked claim's sentence removed (recorded in ``st``)."""
    if not text.strip():
        return ""
    verdict = claims.check(text, facts_for(ctx, st))
    if verdict.removed:
        st.grounded = False
        st.removed.extend(verdict.removed)
    return verdict.text


def answer_stop(planned: Planned, ctx: TurnContext, st: TurnState) -> Stop | None:
    """The planner answered. With evidence: the framed answer. Without: None the first time (the
    planner is asked once more — ``st.repair`` says why), then the ``ungrounded`` stop."""
    text = planned.action.text
    if not st.evidence:
        if not st.grounding_repaired:
            st.grounding_repaired = True
            st.repair, st.repair_kind = text, "ungrounded"
            return None
        st.grounded = False
        st.removed.append({"kind": "answer", "claim": "an answer with no evidence", "sentence": text.strip()[:500]})
        return Stop("ungrounded", ans.compose_stop("ungrounded", ctx.language), "no evidence", layer="answer")
    prose = checked_prose(text, ctx, st) if text.strip() else ""
    if prose:
        body = ans.compose_framed(st.evidence, prose, ctx.language)
    else:  # the planner left the words to the engine, or nothing of its prose stood
        body = ans.compose_completed(st.evidence, ctx.language)
    # Mock data for another place than asked is said first, in one plain line.
    notes = "\n".join(st.notes)
    return Stop("completed", f"{notes}\n\n{body}" if notes else body)


_PERSONAL_ASK = re.compile(
    r"주민(?:등록)?\s*번호|생년월일|성함|본인\s*(?:이름|명의)|(?:휴대\s*(?:전화|폰)|핸드폰|전화)\s*번호|연락처|계좌|카드\s*번호"
    r"|여권|운전\s*면허|차량\s*번호|date of birth|birth\s*date|your (?:full )?name|(?:phone|mobile) number"
    r"|resident registration|account number|card number|passport|driver'?s licen[cs]e|vehicle number",
    re.I,
)


def asks_for_personal(text: str) -> bool:
    """The text asks the citizen for personal data (a name, a birth date, a number that is theirs)."""
    return bool(text) and _PERSONAL_ASK.search(text) is not None


def ask_stop(planned: Planned, ctx: TurnContext, st: TurnState) -> Stop:
    """The planner asked the citizen for something (after the gate let it). A question is prose
    too: a claim in it the turn cannot back is removed like any other."""
    action = planned.action
    question = checked_prose(action.text, ctx, st) if action.text else ""
    if question:
        return Stop("needs_input", question)
    return Stop("needs_input", ans.compose_ask(action.missing or ["request"], ctx.language))


def finish(stop_text: str, ctx: TurnContext, st: TurnState, log: TurnLog) -> str:
    """Stream the stop's text; emit ``answer``; return the whole answer."""
    log.stage = "answer"
    if stop_text:
        for chunk in chunks(stop_text):
            st.deltas.append(chunk)
            log.emit("delta", "answer", text=chunk)
    text = "".join(st.deltas)
    log.emit("answer", "answer", text=text, language=ctx.language, grounded=st.grounded,
             removed_claims=st.removed)
    return text


def chunks(text: str, size: int = 400) -> list[str]:
    """Split answer text into stream pieces: a paragraph each (blank-line separated), long ones cut
    at line ends. Every piece is an event in the SSE stream *and* in the trace, so pieces are as
    large as reads naturally."""
    out: list[str] = []
    for para in re.split(r"(?<=\n\n)", text):
        while len(para) > size:
            cut = para.rfind("\n", 0, size) + 1 or size
            out.append(para[:cut])
            para = para[cut:]
        if para:
            out.append(para)
    return out
