"""Provenance of chained and coded arguments: a value another adapter supplies must come from one.

Coordinates, region/city codes and stop ids are not things a citizen says; a manifest declares
that an earlier step fills them (``requires`` names the slot, a ``locate`` adapter ``provides``
it). A planner that fills one from memory — Seoul's latitude and longitude for a Busan landmark,
as a real 1.5B model did — produces a call that fits the schema, lists real hospitals in the wrong
city, and passes the claim check, because those hospitals *are* in the evidence. So the engine
checks, for every planner, that each such value is backed by

- this turn's evidence (a locate result's coordinates, a code in an earlier result — a
  hierarchical code's part as the field's ``x-code-slice`` cuts it),
- the session's carried slots (a place resolved in an earlier turn), or
- the citizen's own words (coordinates they typed; a region they named, read by the same region
  reader the offline planner uses, for a code whose ``x-enum-labels`` label or a region name the
  field's ``enum`` holds).

Otherwise the call is refused before the gate with a repair message naming the locate step to
run (or saying to ask the citizen when no candidate can supply it); the engine gives the planner
its per-call repair budget, then stops ``invalid_arguments``. Nothing unbacked is dispatched.

Which slots are "derived" is decided in one place, ``is_derived``: the slot types the registry
declares ``derived: true`` (registry/_slots, compiled into the slot table) and the manifest's own
``requires``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

from ummaya.model.manifest import Manifest

from .. import compose as ans
from ..understand import table
from .values import CheckInput, Refusal



def _coord_parts() -> frozenset[str]:
    return frozenset(table.parts_of("coordinates"))


def _wordy_slots() -> frozenset[str]:
    """Carried slots that say where in words (a place, an address, a region's name), read like the
    citizen's own: carried, of the `where` facet, not derived."""
    return (table.carried() & table.names_with("where")) - table.derived()
# How far a coordinate may be from its source and still be that source's (a model rounds
# 35.1167 to 35.12): 0.01° is about 1.1 km of latitude.
COORD_TOLERANCE = 0.01


def is_derived(slot: str, m: Manifest) -> bool:
    """Whether a field of ``m`` whose slot is ``slot`` must be backed by an earlier step, the
    session or the citizen's words (the one place that decides it)."""
    if slot in table.derived() or slot in m.requires:
        return True
    return slot in _coord_parts() and "coordinates" in m.requires


def derived_fields(m: Manifest) -> dict[str, str]:
    """field name → slot, for ``m``'s input fields that are derived."""
    out: dict[str, str] = {}
    for name, prop in (m.input_schema.get("properties") or {}).items():
        if isinstance(prop, dict):
            slot = prop.get("x-slot") or name
            if is_derived(slot, m):
                out[name] = slot
    return out


# ------------------------------------------------------------------------------ what backs a value


def _scalars(value: Any) -> Iterator[tuple[str | None, Any]]:
    """(key, scalar) for every scalar anywhere in ``value``."""
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, (dict, list)):
                yield from _scalars(v)
            else:
                yield str(k), v
    elif isinstance(value, list):
        for v in value:
            yield from _scalars(v)
    elif value is not None:
        yield None, value


def slot_fields(schema: Any) -> dict[str, str]:
    """field name → slot type, for every (nested) output field that declares ``x-slot``."""
    out: dict[str, str] = {}
    if isinstance(schema, dict):
        for name, prop in (schema.get("properties") or {}).items():
            if isinstance(prop, dict):
                if isinstance(prop.get("x-slot"), str):
                    out.setdefault(name, prop["x-slot"])
                for k, v in slot_fields(prop).items():
                    out.setdefault(k, v)
        for k, v in slot_fields(schema.get("items")).items():
            out.setdefault(k, v)
    return out


def _coord_kind(key: str | None, fields: dict[str, str] | None = None) -> str | None:
    if key is None:
        return None
    slot = (fields or {}).get(key, key)
    if slot in _coord_parts():
        return slot
    low = key.lower()
    if low.endswith(("latitude", "_lat")):
        return "latitude"
    if low.endswith(("longitude", "_lon", "_lng")):
        return "longitude"
    return None


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _points(value: Any, fields: dict[str, str] | None = None) -> Iterator[tuple[float | None, float | None]]:
    """(latitude, longitude) of every object in ``value`` that carries one (either may be None);
    ``fields`` names the slot of each output field (its manifest's x-slot), slot names stand for
    themselves (carried slots)."""
    if isinstance(value, dict):
        lat = lon = None
        for k, v in value.items():
            kind = _coord_kind(str(k), fields)
            if kind == "latitude":
                lat = _number(v)
            elif kind == "longitude":
                lon = _number(v)
        if lat is not None or lon is not None:
            yield lat, lon
        for v in value.values():
            if isinstance(v, (dict, list)):
                yield from _points(v, fields)
    elif isinstance(value, list):
        for v in value:
            yield from _points(v, fields)


_DECIMAL = re.compile(r"(?<![\d.])(\d{2,3}\.\d+)(?![\d.])")


def _squash(s: str) -> str:
    return re.sub(r"[\s\-·.,()]", "", s).lower()


class Sources:
    """What this turn can back a derived value with: evidence outputs, carried slots, the
    citizen's words."""

    def __init__(self, given: CheckInput):
        ctx = given.context
        data: list[Any] = [e.output if e.output is not None else e.summary for _, e in given.evidence]
        self.points = [p for m, e in given.evidence
                       for p in _points(e.output if e.output is not None else e.summary, slot_fields(m.output_schema))]
        data.append(dict(ctx.slots or {}))
        session = getattr(ctx.session, "slots", None)
        if session:
            data.append(dict(session))
        # The region slots of this conversation: a district several 시·도 have is read inside them.
        self.carried: dict[str, Any] = {**dict(session or {}), **dict(ctx.slots or {})}
        self.points += [p for d in data[len(given.evidence):] for p in _points(d)]
        self.values = {str(v) for d in data for _, v in _scalars(d) if v is not None and v != ""}
        # The citizen's words, and the words this conversation resolved from them: the place the
        # dialogue carried (「거기」 → 서울시청), a carried place or address (regions are read in them).
        self.texts = list(ctx.citizen_texts or [])
        hints = getattr(getattr(ctx, "frame", None), "hints", None)
        if hints is not None and getattr(hints, "place", None):
            self.texts.append(str(hints.place))
        self.texts += [str(v) for k, v in (ctx.slots or {}).items() if isinstance(v, str) and k in _wordy_slots()]
        for t in self.texts:
            nums = [float(n) for n in _DECIMAL.findall(t)]
            self.points += [(n, None) for n in nums if 33 <= n <= 39] + [(None, n) for n in nums if 124 <= n <= 132]

    def has_point(self, lat: float | None, lon: float | None) -> bool:
        def near(a: float | None, b: float | None) -> bool:
            return a is None or (b is not None and abs(a - b) <= COORD_TOLERANCE)

        if lat is not None and lon is not None:
            # Both halves from one source point; the citizen's typed numbers count one by one.
            if any(near(lat, p) and near(lon, q) for p, q in self.points if p is not None and q is not None):
                return True
            return any(near(lat, p) for p, q in self.points if q is None and p is not None) and \
                any(near(lon, q) for p, q in self.points if p is None and q is not None)
        return any((lat is not None and near(lat, p)) or (lon is not None and near(lon, q))
                   for p, q in self.points)

    def given_verbatim(self, field: str, value: Any) -> bool:
        """A client that is the citizen's agent (an MCP host) sent these arguments itself: its
        request *is* the arguments, as JSON."""
        for t in self.texts:
            if t.startswith("{"):
                try:
                    obj = json.loads(t)
                except ValueError:
                    continue
                if isinstance(obj, dict) and field in obj and obj[field] == value:
                    return True
        return False

    def has_value(self, value: Any, prop: dict[str, Any]) -> bool:
        v = str(value)
        if v in self.values:
            return True
        cut = prop.get("x-code-slice")
        if cut and v.isdigit():
            if any(s.isdigit() and s[cut[0]:cut[1]] == v for s in self.values):
                return True
        return self._in_words(v, prop)

    def _in_words(self, v: str, prop: dict[str, Any]) -> bool:
        """The citizen named it: the value itself (a region name; a long code typed out), its
        ``x-enum-labels`` label, or a region whose names the field's vocabulary maps to it."""
        labels = {str(k): str(lab) for k, lab in (prop.get("x-enum-labels") or {}).items()}
        label = labels.get(v)
        cut = prop.get("x-code-slice")
        for t in self.texts:
            flat = _squash(t)
            if not v.isdigit() and len(v) >= 2 and _squash(v) in flat:
                return True
            if v.isdigit() and len(v) >= 5 and re.search(rf"(?<!\d){re.escape(v)}(?!\d)", t):
                return True
            if label and _squash(label) in flat:
                return True
            names = _region_names(t, self.carried)
            if names and (v in names or (label and label in names) or _enum_pick(prop, names) == v):
                return True
            if cut and v.isdigit() and _region_code(t, self.carried)[cut[0]:cut[1]] == v:
                return True  # the official 법정동 code of the district the citizen named (대구 중구 → 27110)
        return False


def _region_names(text: str, carried: dict[str, Any] | None = None) -> list[str]:
    """The region a text names, in every spelling the shared region reader knows, a district
    several 시·도 have read inside the conversation's 시·도 (「중구」 after 대구 수성구 is 대구 중구)."""
    from ..understand.places import region_within  # the one region reader every planner shares

    r = region_within(text, carried)
    if r is None:
        return []
    return [*r.names(), *([r.sigungu] if r.sigungu else [])]


def _region_code(text: str, carried: dict[str, Any] | None = None) -> str:
    """The 법정동 code of the 시·군·구 (or 시·도) a text names, or ""."""
    from ..understand.places import region_within

    r = region_within(text, carried)
    if r is None or not r.current:
        return ""
    # Only as precise as the words: a 시·도 alone backs no 시·군·구 digits.
    return r.dong_code or r.sigungu_code or r.sido_code


def _enum_pick(prop: dict[str, Any], names: list[str]) -> str | None:
    from ..understand.labels import resolve_enum

    if not prop.get("enum"):
        return None
    picked = resolve_enum(prop, names)
    return None if picked is None else str(picked)


# --------------------------------------------------------------------------------------- the check


class ChainedProvenance:
    """The argument check (checks.py) for derived fields: coordinates, codes, ids a locate step or
    the session supplies, or that the citizen wrote."""

    name = "chained_provenance"

    def __call__(self, given: CheckInput) -> list[Refusal]:
        refusals: list[Refusal] = []
        sources: Sources | None = None
        for call in given.calls:
            m = given.candidates.get(call.adapter_id)
            if m is None or not isinstance(call.arguments, dict):
                continue
            fields = {f: s for f, s in derived_fields(m).items() if call.arguments.get(f) not in (None, "")}
            if not fields:
                continue
            sources = sources or Sources(given)
            props = m.input_schema.get("properties") or {}
            lat_f = next((f for f, s in fields.items() if s == "latitude"), None)
            lon_f = next((f for f, s in fields.items() if s == "longitude"), None)
            unbacked: list[tuple[str, str]] = []
            fields = {f: s for f, s in fields.items() if not sources.given_verbatim(f, call.arguments[f])}
            lat_f = lat_f if lat_f in fields else None
            lon_f = lon_f if lon_f in fields else None
            if lat_f or lon_f:
                lat = _number(call.arguments.get(lat_f)) if lat_f else None
                lon = _number(call.arguments.get(lon_f)) if lon_f else None
                if not sources.has_point(lat, lon):
                    unbacked += [(f, "coordinates") for f in (lat_f, lon_f) if f]
            for f, slot in fields.items():
                if slot in _coord_parts():
                    continue
                if not sources.has_value(call.arguments[f], props.get(f) or {}):
                    unbacked.append((f, slot))
            if unbacked:
                refusals.append(self._refusal(m, call.arguments, unbacked, given))
        return refusals

    def _refusal(self, m: Manifest, args: dict[str, Any], unbacked: list[tuple[str, str]],
                 given: CheckInput) -> Refusal:
        slots = list(dict.fromkeys(s for _, s in unbacked))
        wanted = set(slots) | ({"coordinates", "latitude", "longitude"} if "coordinates" in slots else set())
        locators = [c.id for c in given.candidates.values()
                    if c.primitive == "locate" and c.id != m.id and wanted & set(c.provides)]
        shown = ", ".join(f"{f}={args.get(f)!r}" for f, _ in unbacked)
        if locators:
            step = (f"run the locate step {' or '.join(locators[:2])} with the place the citizen named "
                    f"first and take the {'/'.join(slots)} from its result; if the citizen named no "
                    "place, ask them where")
        else:
            step = "ask the citizen for the place; no offered tool can supply it"
        message = (f"{m.id}: {shown} is not from this conversation — no tool result, session fact or "
                   f"citizen's words gives {'/'.join(slots)}; do not guess: {step}")
        lang = given.context.language
        what = {"ko": {"coordinates": "위치 좌표"}, "en": {"coordinates": "coordinates"}}[lang if lang in ("ko", "en") else "ko"]
        citizen = ans.compose_stop("guessed_arguments", lang, ", ".join(what.get(s, s) for s in slots))
        return Refusal(self.name, m.id, unbacked[0][0], "invalid_arguments", message,
                       missing=slots, repairable=True, citizen_text=citizen)
