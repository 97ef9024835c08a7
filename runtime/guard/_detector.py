"""Stand-in for ``runtime.store.redact.find_personal`` until the shared detector lands there.

Same contract: ``find_personal(text) -> list[Finding]`` with kind/start/end/value.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ..store.redact import _CARD, _EMAIL, _PHONE, _RRN, _luhn_ok, _rrn_plausible


@dataclass(frozen=True)
class Finding:
    kind: str
    start: int
    end: int
    value: str


_PASSPORT = re.compile(r"(?<![A-Za-z0-9])[MSRGDmsrgd]\d{3}[A-Za-z]\d{4}(?![A-Za-z0-9])|(?<![A-Za-z0-9])[MSRGD]\d{8}(?![A-Za-z0-9])")
_LICENCE = re.compile(r"(?<!\d)\d{2}-\d{2}-\d{6}-\d{2}(?!\d)")
_DASHES = str.maketrans({"–": "-", "—": "-", "‐": "-", "‑": "-", "−": "-", "－": "-"})


def _norm(text: str) -> str:
    # Same length as the input, so spans map back: full-width digits and dash variants folded.
    out = []
    for ch in text:
        n = unicodedata.normalize("NFKC", ch)
        out.append(n if len(n) == 1 else ch)
    return "".join(out).translate(_DASHES)


def find_personal(text: str) -> list[Finding]:
    if not text:
        return []
    t = _norm(text)
    found: list[Finding] = []

    def add(kind: str, s: int, e: int) -> None:
        if not any(f.start < e and s < f.end for f in found):
            found.append(Finding(kind, s, e, text[s:e]))

    for m in _EMAIL.finditer(t):
        add("email", m.start(), m.end())
    for m in _RRN.finditer(t):
        if _rrn_plausible(*m.groups()[:4]):
            add("rrn", m.start(), m.end())
    for m in _LICENCE.finditer(t):
        add("driver_licence", m.start(), m.end())
    for m in _CARD.finditer(t):
        digits = re.sub(r"\D", "", m.group(0))
        if 13 <= len(digits) <= 19 and _luhn_ok(digits):
            add("card", m.start(), m.end())
    for m in _PHONE.finditer(re.sub(r"\s+-\s+", lambda x: "-" + " " * (len(x.group(0)) - 1), t)):
        add("phone", m.start(), m.end())
    for m in _PASSPORT.finditer(t):
        add("passport", m.start(), m.end())
    return sorted(found, key=lambda f: f.start)
