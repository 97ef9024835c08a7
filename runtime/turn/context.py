"""Stage 1, context: the request's language, the clock and what the session carries.

``build_context`` is the seam for dialogue state: whatever a session remembers between turns
(carried slots today; the citizen's earlier words, open questions) enters the turn here, typed, and
nowhere else.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

from ..request_context import Session, detect_language, now_kst
from ..dialogue.state import DialogueState
from .values import TurnContext, TurnRequest


def build_context(
    req: TurnRequest,
    query: str,
    session: Session,
    trace_id: str,
    *,
    clock: Callable[[], dt.datetime] | None = None,
    deadline: float | None = None,
) -> TurnContext:
    state = DialogueState.load(session.dialogue) if req.session_id else None
    slots = dict(session.slots)
    if state is not None and session.dialogue:
        slots = state.carried_slots()  # an expired conversation carries nothing
    # Personal data says nothing about the citizen's language: 「hong@example.com 하단동」 is Korean.
    words = retrieval_view(query)
    language = detect_language(words)
    if state is not None and state.language and not re.search(r"[A-Za-z\uac00-\ud7a3]", words if words != query else _without_marks(query)):
        language = state.language  # 「010-…」 or 「3」 alone: the conversation's language carries
    return TurnContext(
        trace_id=trace_id,
        request=query,
        language=language,
        session=session,
        slots=slots,
        clock=(clock or now_kst)(),
        mode=req.mode,
        consents=tuple(req.consents),
        citizen_texts=[query],
        deadline=deadline,
        dialogue=state,
        policy=req.policy or (state.policy if state is not None else "default"),
    )


_PERSONAL = re.compile(r"\[[^\]]{2,8}\]|(?<!\d)(?:19|20)\d{2}[-./]?\d{2}[-./]?\d{2}(?!\d)|\d{2,3}\s?[가-힣]\s?\d{4}")


def _without_marks(query: str) -> str:
    from ummaya.wire.redact import redact

    return _PERSONAL.sub(" ", redact(query))


def _without_personal_labels(text: str) -> str:
    """A label word right before a removed value (「제 번호 [전화번호]」) goes with it: it names the
    citizen's own data, not a service (registry/_vocab/function_words.yaml personal_labels)."""
    if "[" not in text:
        return text
    from ..understand.places import without_value_labels

    return " ".join(without_value_labels(text.split(" "), lambda w: w.startswith("[")))


def retrieval_view(query: str) -> str:
    """The request as retrieval sees it: personal data (주민등록번호, phone, e-mail, card, birth
    date, vehicle number) and typed coordinates removed. Those say nothing about *which* service is
    meant, and retrieval — like every stage that does not need them — should never hold them."""
    from ummaya.wire.redact import redact
    from ..understand.numbers import without_coordinates

    from ..understand.dates import birth_spans

    text = redact(query)
    for start, end in sorted(birth_spans(text), reverse=True):  # dates of birth in every form, phones
        text = text[:start] + " " + text[end:]
    text = _without_personal_labels(text)
    view = re.sub(r"\s+", " ", without_coordinates(_PERSONAL.sub(" ", text))).strip()
    return view or query
