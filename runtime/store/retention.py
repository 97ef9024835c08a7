"""What a stored trace keeps of the personal values a turn handled: what the consent notice says.

The detector (redact.find_personal) finds 주민등록번호, phones, e-mail, cards … by their shape, but a
name or a birth date has no shape of its own — under ``redacted`` (and even ``none``) a consented
application's trace kept the citizen's name and birth date in its call arguments, while the
notice promised 「기록(trace)에는 가린 값만 남고」 (issue 19 hole 10). The turn knows better than any
detector which values are personal: the arguments of an adapter's personal input fields (their
``x-slot`` is a personal slot, or ``x-personal: true``) and the output fields marked ``x-personal``.
So the trace writer hands those values here (``PersonalValue``), and every one of them is masked
wherever it occurs in the stored trace — request and answer text, call arguments, events, evidence,
the model's messages — by its key in structured data and by its value (in every spelling people
type: 1990-01-01 / 1990.1.1 / 1990년 1월 1일 / 19900101; 홍길동 / 홍 길 동) in text.

Per field, ``x-trace`` says what the notice promises: ``masked`` (the default for a personal field:
「가린 값만」) or ``none`` (「기록에 남기지 않습니다」): a turn that handled a ``none`` value keeps no
raw text at all (request, answer, deltas), since text built from a number cannot be masked by it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

MASK = "[가림]"
TraceMode = Literal["masked", "none"]
_DATE = re.compile(r"^\s*((?:19|20)\d{2})\D{0,3}(\d{1,2})\D{0,3}(\d{1,2})\D{0,2}\s*$")


@dataclass(frozen=True)
class PersonalValue:
    key: str  # the field name, masked wherever it keys a value
    value: Any
    mode: TraceMode = "masked"


def _pattern(value: Any) -> str | None:
    """A regular expression for the spellings of ``value`` in text, or None when it is too short
    to mask by value without masking everything (a household of 1)."""
    text = str(value).strip()
    if isinstance(value, bool) or len(text) < 2:
        return None
    m = _DATE.match(text)
    if m:
        y, mo, d = m.group(1), int(m.group(2)), int(m.group(3))
        sep = r"\s*[-./년]?\s*"
        full = rf"{y}{sep}0?{mo}\s*[-./월]?\s*0?{d}(?:\s*일)?"
        short = rf"{y[2:]}{mo:02d}{d:02d}"
        return rf"(?<!\d)(?:{full}|{short})(?!\d)"
    if isinstance(value, (int, float)):
        if len(text) < 3:
            return None
        return rf"(?<![\d.]){re.escape(text)}(?![\d])"
    digits = re.sub(r"\D", "", text)
    if digits and len(digits) >= len(re.sub(r"[\s\-./()]", "", text)) * 0.6:  # a number written with separators
        return r"(?<!\d)" + r"[\s\-./()]*".join(re.escape(c) for c in digits) + r"(?!\d)"
    squashed = "".join(text.split())
    if len(squashed) < 2:
        return None
    return r"\s*".join(re.escape(c) for c in squashed)


def mode_of(prop: Any) -> TraceMode:
    """What a field's ``x-trace`` promises (a personal field without one: masked)."""
    return "none" if isinstance(prop, dict) and prop.get("x-trace") == "none" else "masked"


class Masker:
    """Masks a turn's personal values in any JSON-like value."""

    def __init__(self, values: Iterable[PersonalValue]):
        values = list(values)
        self.keys = {v.key for v in values}
        self.none = any(v.mode == "none" for v in values)
        patterns = sorted({p for v in values if (p := _pattern(v.value))}, key=len, reverse=True)
        self.regex = re.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None

    def text(self, s: str | None) -> str | None:
        if not s or self.regex is None:
            return s
        return self.regex.sub(MASK, s)

    def value(self, v: Any, *, drop: bool = False) -> Any:
        """Masked copy; ``drop``: personal keys lose their value (None) instead of a mask."""
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, dict):
            return {k: ((None if drop else (MASK if x not in (None, "") else x))
                        if k in self.keys and not isinstance(x, (dict, list)) else self.value(x, drop=drop))
                    for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [self.value(x, drop=drop) for x in v]
        return v


__all__ = ["MASK", "Masker", "PersonalValue", "mode_of"]
