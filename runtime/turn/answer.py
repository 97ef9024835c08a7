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

from .. import compose as ans
from ..plan.protocol import PRIVATE_PROMPTS
from . import claims
from .display import clean_text
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
    # 「11월 30일 기록을 오늘 날짜로 옮김」 names the recording's day from the evidence's own
    # metadata (moved_from), which no output field need carry (rows dated days ahead of it).
    own.append(ans.moved_label(st.evidence, lang))
    return claims.build_facts(
        outputs,
        citizen=[*ctx.citizen_texts, *(str(v) for v in ctx.slots.values())],
        extra=own,
        tiers={e.tier for _, e in st.evidence},
        live_send_ok=any(m.primitive == "send" and e.tier == "live" and e.status == "ok" for m, e in st.evidence),
        consented=bool(st.consented),
        clock=ctx.clock,
        private=PRIVATE_PROMPTS,
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
        body = ans.framed_parts(st.evidence, prose, ctx.language)
    else:  # the planner left the words to the engine, or nothing of its prose stood
        body = ans.completed_parts(st.evidence, ctx.language)
    # Mock data for another place than asked, or a day the data does not cover, is said first.
    parts = [ans.Part("note", "\n".join(st.notes)), *body] if st.notes else body
    return Stop("completed", ans.text_of(parts), parts=parts)


# Why the engine, not the planner, wrote an answer from the evidence held (answer_from_evidence).
HELD_WHY = {
    "ko": {"repeated_call": "같은 조회를 되풀이함", "steps_exhausted": "허용된 단계를 모두 씀",
           "model_error": "언어 모델 오류", "turn_deadline": "제한 시간 초과"},
    "en": {"repeated_call": "it repeated a lookup it had already made", "steps_exhausted": "it used every allowed step",
           "model_error": "a language-model error", "turn_deadline": "the turn's time ran out"},
}
HELD_NOTE = {
    "ko": "※ 언어 모델이 답변을 마치지 못해({why}) 아래는 UMMAYA가 이번에 조회한 결과를 그대로 정리한 것입니다.",
    "en": "Note: the language model did not finish its answer ({why}); below, UMMAYA sets out the results it looked up, as they are.",
}


def held_evidence_stop(ctx: TurnContext, st: TurnState, why: str, log: TurnLog, *, code: str | None = None,
                       message: str | None = None) -> Stop:
    """The planner stopped short after evidence was found — it repeated a call it had the answer
    to, ran out of steps, or failed (an empty reply, a cut stream, the deadline). The evidence is
    not thrown away: the engine renders it under its tier labels, as the offline path does, with
    one line first saying the model did not finish and why. A turn that only located a place has
    not answered an end request: it keeps the stop that says what happened, with what was found."""
    lang = ctx.language
    detail = why if code is None else f"{why}: {code}"
    log.emit("answer_from_evidence", "answer", why=why, code=code, message=message,
             evidence=[e.evidence_id for _, e in st.evidence])
    note = HELD_NOTE[lang].format(why=HELD_WHY[lang][why] + (f", {code}" if code else ""))
    notes = "\n".join(st.notes)
    body = ans.compose_completed(st.evidence, lang)
    text = "\n\n".join(p for p in (note, notes, body) if p)
    if st.end_is_locate or any(m.primitive != "locate" for m, _ in st.evidence):
        return Stop("completed", text, f"answered_from_evidence: {detail}", layer="answer")
    reason = "channel_unavailable" if why in ("model_error", "turn_deadline") else "budget_exhausted"
    return Stop(reason, text, f"answered_from_evidence: {detail}", layer="plan")


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
    if not question:
        question = ans.compose_ask(action.missing or ["request"], ctx.language)
    return Stop("needs_input", question, parts=[ans.Part("question", question)])


STOP_KIND = {"needs_input": "question", "consent_required": "consent", "handoff_required": "handoff",
             "no_adapter": "way_out"}


def finish(stop_text: str, ctx: TurnContext, st: TurnState, log: TurnLog, *, reason: str = "completed",
           parts: list[ans.Part] | None = None) -> str:
    """Stream the stop's parts (its text as one part when it has none), after the emergency line
    the turn opened with and the parts of the request the answering adapters cannot serve; emit
    ``answer``; return the whole answer."""
    log.stage = "answer"
    if parts is None:
        parts = [ans.Part(STOP_KIND.get(reason, "stop"), stop_text)] if stop_text else []
    if reason != "no_adapter":  # a way out says what cannot be done itself
        parts = [*limit_parts(ctx, st), *parts]
    kept = [p for p in parts if p.text]
    for i, part in enumerate(kept):
        # No bidirectional or invisible formatting reaches the citizen, whoever wrote the text.
        text = clean_text(part.text + (part.after if i < len(kept) - 1 else ""))
        for chunk in chunks(text):
            st.deltas.append(chunk)
            log.emit("delta", "answer", text=chunk, part=part.kind,
                     **({"evidence_id": part.evidence_id} if part.evidence_id else {}))
    text = "".join(st.deltas)
    log.emit("answer", "answer", text=text, language=ctx.language, grounded=st.grounded,
             removed_claims=st.removed)
    return text


def limit_parts(ctx: TurnContext, st: TurnState) -> list[ans.Part]:
    """What the request asks of the adapters that answered (or the one the engine asks for) and
    they do not do — booking with a list of hospitals, first-bus times with arrivals — said in one
    plain sentence with the official channel for it (``limits`` in the manifest)."""
    if ctx.catalog is None:
        return []
    guidance = ctx.catalog.guidance
    manifests = [m for m, _ in st.evidence]
    asked = (st.asked or {}).get("adapter_id")
    if asked and asked in ctx.catalog.adapters:
        manifests.append(ctx.catalog.adapters[asked])
    out: list[ans.Part] = []
    seen: set[str] = set()
    for m in manifests:
        for lim in guidance.limits_asked(m, ctx.request):
            part = ans.limit_part(lim, guidance.channel(lim.channel), ctx.language)
            if part.text not in seen:
                seen.add(part.text)
                out.append(part)
    return out


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
