"""The normal forms a personal value is compared in: the slot type's ``compare`` (text, digits,
date), the dates a text writes, its digits, its squashed words.

Argument provenance (runtime/turn/provenance.py) compares a call's value with this message, and
the session's keyed digests of earlier messages (runtime/dialogue/given.py) are made of the same
forms: both read them here, below the dialogue and the turn, so neither imports the other for them.
"""

from __future__ import annotations

import re

from . import table
from .dates import dates_in as _read_dates


def compare_of(slot: str) -> str:
    """How a personal value of ``slot`` is compared (the slot type's ``compare``: text, digits, date)."""
    st = table.slot(slot)
    return st.compare if st is not None else "text"


def dates_in(text: str) -> set[tuple[int, int, int]]:
    """Every (year, month, day) the text writes, in any common form (the date reader's: 1988년 3월
    2일, 1988.03.02, 880302, 880302-1…, "March 2, 1988")."""
    return _read_dates(text)


def digits(s: str) -> str:
    return re.sub(r"\D", "", s)


def squash(s: str) -> str:
    return re.sub(r"[\s\-·.,]", "", s).lower()


__all__ = ["compare_of", "dates_in", "digits", "squash"]
