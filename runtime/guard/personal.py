"""The personal-data guard: personal values go only where they are declared and consented.

Every planner (the offline one, a model) proposes arguments; before dispatch each free-text
argument is checked with the shared detector ``find_personal`` (주민등록번호, phone numbers in any
spelling, e-mail, card numbers passing Luhn, passport and driver-licence numbers). A value found may
stay only in a *declared personal field* (an input field whose ``x-slot`` names that kind of data,
or that says ``x-personal: true``) of a *protected* adapter (gate other than read-only) that
declares a consent notice — the gate then requires the citizen's consent before the call. Anywhere
else the value is removed; a field that names a place (a locate query) keeps just the place.

Each removal is reported as a redaction record naming the adapter, field and kind of data — never
the value — which the turn records as a ``redaction`` event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ummaya.model.manifest import Manifest

from ummaya.wire.redact import find_personal  # the shared detector (one definition of "personal")

# Which kinds of personal data a field may hold is its slot type's ``personal_kinds``; whether a
# field's value is a span of the citizen's words (after removal it keeps only the place span) is
# its slot class's "span" facet — both from the slot table (registry/_slots/), never a Python list.


def field_kinds(slot: str | None) -> frozenset[str]:
    from ..understand import table

    st = table.slot(slot)
    return frozenset(st.personal_kinds) if st is not None else frozenset()


def is_span(slot: str | None) -> bool:
    from ..understand import table

    return table.has_facet(slot, "span")


@dataclass(frozen=True)
class Redaction:
    adapter_id: str
    field: str
    kinds: tuple[str, ...]
    action: str  # "removed" (the value without the personal data) | "dropped" (nothing was left)

    def event(self) -> dict[str, Any]:
        return {"adapter_id": self.adapter_id, "field": self.field, "kinds": list(self.kinds),
                "action": self.action}


def is_protected(m: Manifest) -> bool:
    return m.permission.gate != "read-only"


def allowed_kinds(m: Manifest, field: str, prop: dict[str, Any]) -> frozenset[str]:
    """The kinds of personal data this field may carry: only a declared personal field of a
    protected adapter with a consent notice."""
    if not is_protected(m) or m.permission.consent is None:
        return frozenset()
    declared = prop.get("x-personal")
    if isinstance(declared, str):
        return frozenset({declared})
    if isinstance(declared, list):
        return frozenset(str(k) for k in declared)
    kinds = field_kinds(str(prop.get("x-slot", field)))
    if declared is True and not kinds:
        return frozenset({"rrn", "phone", "email", "card", "passport", "driver_licence"})
    return kinds


def _strip(text: str, spans: list[tuple[int, int]]) -> str:
    out, last = [], 0
    for start, end in sorted(spans):
        if start < last:
            continue
        out.append(text[last:start])
        out.append(" ")
        last = end
    out.append(text[last:])
    return " ".join("".join(out).split())


def _clean_place(m: Manifest, text: str, spans: list[tuple[int, int]], language: str) -> str:
    """What is left of a place field once personal data is gone: the place span when one can
    be read, else the text without the personal values (never the personal values)."""
    from ..understand.places import MARK, _span_backwards, place_span, split_words

    marked = text
    for start, end in sorted(spans, reverse=True):
        marked = marked[:start] + MARK + marked[end:]  # glued: 「⟦⟧인데」 is one word that ends a span
    span = place_span(marked, language) or (_span_backwards(split_words(marked)) if language == "ko" else None)
    if span:
        return span
    return _strip(text, spans)


def guard_arguments(
    m: Manifest, arguments: dict[str, Any] | None, *, language: str = "ko",
) -> tuple[dict[str, Any] | None, list[Redaction]]:
    """``arguments`` with personal data removed where it may not go, and what was removed."""
    if not arguments:
        return arguments, []
    props: dict[str, Any] = m.input_schema.get("properties", {})
    out: dict[str, Any] = {}
    redactions: list[Redaction] = []
    for name, value in arguments.items():
        prop = props.get(name, {}) if isinstance(props.get(name), dict) else {}
        cleaned, kinds = _guard_value(m, name, prop, value, language)
        if kinds:
            action = "dropped" if cleaned in (None, "", [], {}) else "removed"
            redactions.append(Redaction(m.id, name, tuple(sorted(kinds)), action))
            if action == "dropped":
                continue
        out[name] = cleaned
    exempt = {n for n in out if allowed_kinds(m, n, _schema_of(props, n))}
    for name, kinds in _split_across({n: v for n, v in out.items() if n not in exempt}).items():
        # A number split over two arguments ("010-1234" and "5678") is found in no single one.
        out.pop(name, None)
        redactions.append(Redaction(m.id, name, tuple(sorted(kinds)), "dropped"))
    return out, redactions


def _split_across(arguments: dict[str, Any]) -> dict[str, set[str]]:
    """Top-level scalar arguments that together — joined with a space, or with nothing — hold
    personal data none of them holds alone: {argument: kinds}."""
    scalars = [(k, str(v)) for k, v in arguments.items()
               if isinstance(v, (str, int)) and not isinstance(v, bool) and str(v)]
    if len(scalars) < 2:
        return {}
    hit: dict[str, set[str]] = {}
    for sep in (" ", ""):
        spans: list[tuple[str, int, int]] = []
        at = 0
        for k, v in scalars:
            spans.append((k, at, at + len(v)))
            at += len(v) + len(sep)
        for f in find_personal(sep.join(v for _, v in scalars)):
            names = [k for k, s, e in spans if s < f.end and f.start < e]
            if len(names) > 1:
                for k in names:
                    hit.setdefault(k, set()).add(f.kind)
    return hit


def _guard_value(m: Manifest, name: str, prop: dict[str, Any], value: Any,
                 language: str) -> tuple[Any, set[str]]:
    if isinstance(value, str):
        findings = find_personal(value)
        if not findings:
            return value, set()
        allowed = allowed_kinds(m, name, prop)
        bad = [f for f in findings if f.kind not in allowed]
        if not bad:
            return value, set()
        spans = [(f.start, f.end) for f in bad]
        kinds = {f.kind for f in bad}
        if is_span(str(prop.get("x-slot", ""))) or m.primitive == "locate":
            return _clean_place(m, value, spans, language), kinds
        return _strip(value, spans), kinds
    if isinstance(value, int) and not isinstance(value, bool):
        # A model may propose a number as a JSON number (9001011234567): it reaches the URL as text.
        kinds = {f.kind for f in find_personal(str(value))} - allowed_kinds(m, name, prop)
        return (None, kinds) if kinds else (value, set())
    if isinstance(value, list):
        items, kinds = [], set()
        for v in value:
            c, k = _guard_value(m, name, prop.get("items", {}) if isinstance(prop.get("items"), dict) else {}, v, language)
            kinds |= k
            if c not in (None, ""):
                items.append(c)
        return items, kinds
    if isinstance(value, dict):
        sub_props = prop.get("properties", {}) if isinstance(prop.get("properties"), dict) else {}
        obj, kinds = {}, set()
        for k2, v in value.items():
            key_kinds = {f.kind for f in find_personal(str(k2))}
            if key_kinds:  # personal data as a key: the whole entry goes
                kinds |= key_kinds
                continue
            c, k = _guard_value(m, k2, sub_props.get(k2, {}), v, language)
            kinds |= k
            if c not in (None, ""):
                obj[k2] = c
        return obj, kinds
    return value, set()


def contains_personal(value: Any) -> list[str]:
    """Kinds of personal data anywhere in a JSON-like value (for tests and audits)."""
    if isinstance(value, str):
        return [f.kind for f in find_personal(value)]
    if isinstance(value, dict):
        return [k for v in value.values() for k in contains_personal(v)]
    if isinstance(value, (list, tuple)):
        return [k for v in value for k in contains_personal(v)]
    return []


__all__ = ["Redaction", "guard_arguments", "allowed_kinds", "contains_personal", "find_personal"]


def _schema_of(props: dict[str, Any], name: str) -> dict[str, Any]:
    prop = props.get(name)
    return prop if isinstance(prop, dict) else {}
