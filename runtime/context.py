"""Turn context: the request's language, the clock, and what a session carries between turns.

A session keeps *explicitly carried* slots only — a location resolved in one turn (coordinates,
place name, region) is reused in the next (「거기 날씨는?」); nothing else leaks from earlier turns.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Literal

KST = dt.timezone(dt.timedelta(hours=9), "KST")

# Slots that may be carried from one turn to the next. Everything else is per turn.
CARRIED_SLOTS = (
    "latitude",
    "longitude",
    "place",
    "place_address",
    "region_name",
    "region_code",
    "sido_name",
    "sigungu_name",
)

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

    def carry(self, slots: dict[str, Any]) -> None:
        for key in CARRIED_SLOTS:
            if slots.get(key) is not None:
                self.slots[key] = slots[key]


def now_kst() -> dt.datetime:
    return dt.datetime.now(KST)
