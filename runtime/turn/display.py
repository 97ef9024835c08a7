"""Upstream text is data, bounded: what of an adapter's output the engine shows and hands on.

A record field is written by whoever can write to an agency's database. Before any of it becomes
evidence — the model's view, the citizen's rendering, the carried slots — every string goes
through one display rule per field, declared in the adapter's ``output_schema`` with ``x-display``:

* ``shape``: ``name`` (one line; a name holds no phone number, link, e-mail address or second
  sentence), ``line`` (one line) or ``text`` (line breaks kept, at most two in a row);
* ``max``: characters shown, clipped with "…" (defaults: name 80, line 200, text 1,000).

A string without ``x-display`` is a ``line``. Every shape drops control, invisible and
bidirectional formatting characters; a string that carried an override, embedding or isolate
(U+202A–U+202E, U+2066–U+2069: text meant to read in another order than it is stored) is not
shown at all.
And a string that asserts something about *this turn* — submitted, paid, consented — or asks the
citizen to send personal data somewhere is an instruction planted in data (claims.upstream_problem):
it is replaced by "—" and listed in the turn's ``removed_claims`` (``grounded: false``), whatever
the planner. A Live ``send`` that returned ``ok`` may of course say it was received.
"""

from __future__ import annotations

import re
from typing import Any

from .claims import upstream_problem

SHAPES = ("name", "line", "text")
DEFAULT_MAX = {"name": 80, "line": 200, "text": 1000}
DROPPED = "—"

# Bidirectional controls (embeddings, overrides, isolates, marks), the deprecated format
# controls, invisible operators and the BOM — and C0/C1 controls other than tab and newline.
_INVISIBLE = re.compile("[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
                        "\x00-\x08\x0b-\x1f\x7f-\x9f\ufff9-\ufffb]")
# Embeddings, overrides and isolates: text that means to be read in another order than it is
# stored (「하단병원\u202e5432-6789-010」 reads as a phone number). No public record needs them.
_REORDER = re.compile("[\u202a-\u202e\u2066-\u2069]")
_PHONE = re.compile(r"(?<!\d)(?:\+?82[-.\s]?|0)\d{1,2}[-.)\s]?\d{3,4}[-.\s]?\d{4}(?!\d)")
_LINK = re.compile(r"https?://|www\.|[\w.+-]+@[\w-]+\.[\w.]+", re.I)
_SENTENCE_END = re.compile(r"[.!?。]\s+")


def clean_text(text: str) -> str:
    """``text`` without bidi, invisible and control characters (newlines and tabs kept)."""
    return _INVISIBLE.sub("", text) if text else text


def display_rule(schema: Any) -> tuple[str, int]:
    rule = schema.get("x-display") if isinstance(schema, dict) else None
    rule = rule if isinstance(rule, dict) else {}
    shape = rule["shape"] if rule.get("shape") in SHAPES else "line"
    limit = rule.get("max")
    return shape, limit if isinstance(limit, int) and limit > 0 else DEFAULT_MAX[shape]


def bounded(value: str, shape: str, limit: int) -> tuple[str, str | None]:
    """The display form of one string, and why it failed its shape (None when it did not)."""
    reordered = _REORDER.search(value) is not None
    text = clean_text(value)
    if shape == "text":
        text = re.sub(r"[ \t]+", " ", text)
        text = re.sub(r"\n\s*\n(?:\s*\n)+", "\n\n", text).strip()
    else:
        text = " ".join(text.split())
    why = "bidirectional override or isolate characters" if reordered else None
    if why is None and shape == "name" and (_PHONE.search(text) or _LINK.search(text) or _two_sentences(text)):
        why = "a name holding a phone number, a link or a second sentence"
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text, why


def _two_sentences(text: str) -> bool:
    """A sentence, then another: 「… 접수되었습니다. 문자로 …」 — not 「St. Mary's Hospital」."""
    for m in _SENTENCE_END.finditer(text):
        before, after = text[: m.start()].strip(), text[m.end():].strip()
        if len(before) >= 8 and len(after) >= 12 and " " in after:
            return True
    return False


def _props(schema: Any) -> dict[str, Any]:
    return schema.get("properties", {}) if isinstance(schema, dict) else {}


def display_copy(output: Any, schema: Any, *, send_ok: bool = False, where: str = "") -> tuple[Any, list[dict[str, str]]]:
    """``output`` with every string bounded by its field's rule; the strings replaced (and why)."""
    removed: list[dict[str, str]] = []

    def walk(value: Any, sch: Any, path: str) -> Any:
        if isinstance(value, dict):
            props = _props(sch)
            return {k: walk(v, props.get(k, {}), f"{path}.{k}" if path else k) for k, v in value.items()}
        if isinstance(value, list):
            item = sch.get("items", {}) if isinstance(sch, dict) else {}
            return [walk(v, item, f"{path}[]") for v in value]
        if not isinstance(value, str):
            return value
        shape, limit = display_rule(sch)
        shown, why = bounded(value, shape, limit)
        problem = upstream_problem(shown, send_ok=send_ok)
        if problem is None and why is None:
            return shown
        kind, claim = problem if problem is not None else ("shape", why or "")
        removed.append({"kind": "upstream_text", "claim": f"{where}{path}: {kind}: {claim}"[:200],
                        "sentence": value.strip()[:300]})
        return DROPPED

    return walk(output, schema, ""), removed


__all__ = ["DEFAULT_MAX", "DROPPED", "SHAPES", "bounded", "clean_text", "display_copy", "display_rule"]
