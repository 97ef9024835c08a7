"""Turn context: the request's language, the clock, and what a session carries between turns.

A session keeps *explicitly carried* slots only — the slot types registry/_slots/ marks
``carried`` (a location resolved in one turn: coordinates, place name, region) are reused in the
next (「거기 날씨는?」); nothing else leaks from earlier turns.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Literal

KST = dt.timezone(dt.timedelta(hours=9), "KST")

MAX_QUERY_CHARS = 2000
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_LATIN = re.compile(r"[A-Za-z]")


class RequestError(ValueError):
    """A request the engine refuses before any stage runs, with a stable code."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def clean_request(text: str) -> str:
    """Normalise a request: NFC, control characters dropped, whitespace folded, length bounded.

    Raises RequestError('empty_query' | 'query_too_long') — a 10,000-character paste is refused
    rather than silently truncated, because a truncated request could change its meaning.
    """
    if text is None:
        raise RequestError("empty_query", "the request is empty")
    text = unicodedata.normalize("NFC", text)
    text = "".join(
        ch if unicodedata.category(ch)[0] != "C" else " " for ch in text
    )
    text = re.sub(r"\s+", " ", text).strip()
    if not text:
        raise RequestError("empty_query", "the request is empty")
    if len(text) > MAX_QUERY_CHARS:
        raise RequestError(
            "query_too_long",
            f"the request has {len(text)} characters; the limit is {MAX_QUERY_CHARS}",
        )
    return text


def detect_language(text: str) -> Literal["ko", "en"]:
    """Korean first: any Hangul that is not dwarfed by Latin text makes the answer Korean."""
    hangul = len(_HANGUL.findall(text))
    latin = len(_LATIN.findall(text))
    if hangul == 0:
        return "en"
    return "ko" if hangul * 3 >= latin else "en"


@dataclass
class Session:
    session_id: str
    slots: dict[str, Any] = field(default_factory=dict)
    turns: int = 0
    dialogue: dict[str, Any] | None = None  # the stored DialogueState (runtime/dialogue/state.py)


# A fixed "now" for a whole engine (the evaluation sets run at the clock they were written for);
# set with ``fixed_clock``, read by every ``now_kst()`` in this context.
_CLOCK: contextvars.ContextVar[dt.datetime | None] = contextvars.ContextVar("ummaya_clock", default=None)


def now_kst() -> dt.datetime:
    fixed = _CLOCK.get()
    return fixed if fixed is not None else dt.datetime.now(KST)


@contextlib.contextmanager
def fixed_clock(at: dt.datetime):
    """Within the block, every stage's "now" is ``at`` (KST unless it carries its own offset)."""
    token = _CLOCK.set(at if at.tzinfo else at.replace(tzinfo=KST))
    try:
        yield
    finally:
        _CLOCK.reset(token)
