"""The embedded offline planner: deterministic, no model server, no network.

It reads only the narrowed candidates and the manifests' declarations: ``x-slot`` on input fields
picks the shared extractor, ``requires``/``provides`` chain ``locate`` → ``find``, and when a
required slot can be filled neither from the request, the session nor a locate adapter, it asks
(``needs_input``) instead of guessing. There are no per-adapter rules in this file.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any

from ummaya.codegen.manifest import Manifest

from ..context import now_kst
from ..schemas import validator
from . import lexicon as lx
from . import slots as sx
from .extractors import SLOT_EXTRACTORS, SlotRequest
from .base import Action, PlanContext, ToolCall

COORD_SLOTS = {"latitude", "longitude", "coordinates"}
# Slots filled from "whatever words are left": only worth guessing when the adapter cannot run
# without them — an optional name filter filled by a guess would silently narrow the result.
RESIDUAL_SLOTS = {"keyword", "free_text", "drug_name", "stop_name"}


_vocab_cache: dict[int, tuple[Manifest, set[str]]] = {}


def _vocabulary(m: Manifest) -> set[str]:
    hit = _vocab_cache.get(id(m))
    if hit is None or hit[0] is not m:
        hit = (m, _build_vocabulary(m))
        _vocab_cache[id(m)] = hit
    return hit[1]


def _build_vocabulary(m: Manifest) -> set[str]:
    vocab: set[str] = set()
    for text in (*m.search_hints.ko, *m.search_hints.en, m.title.ko, m.title.en):
        for w in sx.words(text):
            if len(w) >= 2:
                vocab.add(w.lower())
    return vocab


class SlotFiller:
    """Fills one adapter's arguments from the request, carried slots and evidence."""

    def __init__(self, ctx: PlanContext, now: dt.datetime):
        self.ctx = ctx
        self.text = ctx.request
        self.now = now
        self.region = sx.find_region(self.text)
        hints = ctx.dialogue
        # A place the dialogue resolved (「하단동」 answering 「어디 기준으로?」, 거기 → the carried
        # place) counts as named; the request's own anchored place comes first.
        services = frozenset().union(*(_vocabulary(m) for m in ctx.candidates)) if ctx.candidates else frozenset()
        # Words naming the candidate services (응급실, 약국): never a place.
        self.services: frozenset[str] = frozenset(services)
        self.place = sx.find_place(self.text, ctx.language, services) or (hints.place if hints is not None else None)
        if self.region is None and self.place and hints is not None and hints.place == self.place:
            self.region = sx.find_region(self.place)
        self.coords = sx.find_coordinates(self.text)
        self.carried: dict[str, Any] = dict(hints.carried) if hints is not None else {}
        self.references: dict[str, str] = dict(hints.references) if hints is not None else {}

    def fill(self, m: Manifest, *, chain: bool = False) -> tuple[dict[str, Any], list[str]]:
        """``chain``: filling a locate adapter only as the means to another adapter's end; its
        place then has to be one the citizen actually named, never leftover words."""
        props: dict[str, Any] = m.input_schema.get("properties", {})
        required = set(m.input_schema.get("required", []))
        # Fields one of which must be present (anyOf/oneOf alternatives) are worth a guess too.
        wanted = required | {
            f for key in ("anyOf", "oneOf") for alt in m.input_schema.get(key, []) for f in alt.get("required", [])
        }
        args: dict[str, Any] = {}
        missing: list[str] = []
        vocab = _vocabulary(m)
        for name, prop in props.items():
            if prop.get("x-slot", "free_text") in RESIDUAL_SLOTS and name not in wanted:
                carried = fit(prop, self.carried.get(name))
                if carried is not None:  # an optional filter the last intent used stays on
                    args[name] = carried
                continue
            slot = prop.get("x-slot", "free_text")
            if chain and slot in ("place", "keyword", "free_text"):
                value = self.named_place()
            else:
                value = self.extract(slot, name, prop, vocab, m)
            value = fit(prop, value)
            if value is None and name in self.carried:
                # Kept from the last intent (a follow-up changes only what it names).
                value = fit(prop, self.carried[name])
            if value is None and name in self.references and slot not in ("place",):
                # A name an earlier step resolved (the benefit just checked, the drug asked about).
                value = fit(prop, self.references[name])
            if value is not None:
                args[name] = value
            elif name in required:
                missing.append(name)
        if not missing:
            # Alternatives the fields alone cannot express (anyOf): ask for the first unmet one.
            if not _validator(m.input_schema).is_valid(args):
                unmet = [f for f in sorted(wanted - required) if f not in args]
                missing.extend(unmet[:1] or ["request"])
        return args, missing

    # One branch per slot type, shared by every adapter.
    def extract(self, slot: str, name: str, prop: dict[str, Any], vocab: set[str], m: Manifest) -> Any:
        s = self.ctx.slots
        if prop.get("enum") and slot in RESIDUAL_SLOTS:
            return self._enum_in_text(prop)
        registered = SLOT_EXTRACTORS.get(slot)  # runtime/plan/extractors.py: one function per slot type
        if registered is not None:
            return registered(SlotRequest(self.text, self.now, prop, name, self.ctx.language, dict(s)))
        if slot in ("latitude", "longitude"):
            if self.coords:
                return self.coords[0] if slot == "latitude" else self.coords[1]
            return s.get(slot)
        if slot == "coordinates":
            return None
        if slot == "place":
            return self._place_or_region(vocab)
        if slot in ("sido_name", "region_name", "region_code", "sigungu_name", "city_code"):
            return self._region_value(slot, prop)
        if slot == "time":
            t = sx.find_time(self.text, self.now)
            return _format_time(t, prop) if t else None
        if slot == "specialty":
            return self._labelled(prop, lx.SPECIALTY_SYNONYMS)
        if slot == "life_stage":
            return self._labelled(prop, lx.LIFE_STAGE_SYNONYMS)
        if slot == "target_group":
            return self._labelled(prop, lx.TARGET_GROUP_SYNONYMS)
        if slot in ("drug_name", "stop_name", "keyword"):
            return self._content(slot, prop, vocab)
        if slot == "free_text":
            if prop.get("enum"):
                return None
            return self.text if prop.get("type", "string") == "string" and name in (
                m.input_schema.get("required", [])
            ) else None
        return _PATTERNS.get(slot, lambda _t: None)(self.text)

    def named_place(self) -> str | None:
        if self.place:
            return self.place
        if self.region:
            return self.region.sido_full + (f" {self.region.sigungu}" if self.region.sigungu else "")
        return None

    def _place_or_region(self, vocab: set[str]) -> str | None:
        if self.place:
            return self.place
        # Only words that can be part of a place: never a request, degree or time word, a
        # predicate (「하고 싶어」) or personal data (runtime/plan/place.py).
        from .place import bare_place

        bare = bare_place(sx._without_personal(self.text), self.ctx.language, frozenset(vocab) | self.services)
        if self.region and (not bare or sx.find_region(bare) is not None):
            return self.region.sido_full + (f" {self.region.sigungu}" if self.region.sigungu else "")
        return bare

    def _region_value(self, slot: str, prop: dict[str, Any]) -> Any:
        s = self.ctx.slots
        if self.region is None:
            if slot in s:
                return resolve_or_self(prop, [s[slot]])
            if slot == "sido_name" and s.get("region_name"):
                region = sx.find_region(str(s["region_name"]))
                if region:
                    return sx.resolve_enum(prop, region.names())
            return None
        if slot == "sigungu_name":
            return self.region.sigungu
        if slot == "region_name":
            return self.region.sido_full + (f" {self.region.sigungu}" if self.region.sigungu else "")
        if slot == "region_code":
            return s.get("region_code")
        return sx.resolve_enum(prop, self.region.names())

    def _labelled(self, prop: dict[str, Any], synonyms: dict[str, tuple[str, ...]]) -> Any:
        labels = prop.get("x-enum-labels")
        if labels:
            code = sx.match_labels(self.text, {str(k): v for k, v in labels.items()}, synonyms)
            return sx._typed(code, prop.get("enum", [code])) if code else None
        if prop.get("enum"):
            return sx.match_labels(self.text, {str(v): str(v) for v in prop["enum"]}, synonyms)
        return None

    def _enum_in_text(self, prop: dict[str, Any]) -> Any:
        """A closed vocabulary named in the request: the value, its label, or a word the value
        starts with (「카카오 인증」 → 카카오톡)."""
        low = self.text.lower()
        labels = {str(k): str(v) for k, v in (prop.get("x-enum-labels") or {}).items()}
        for value in prop["enum"]:
            names = [str(value), labels.get(str(value), "")]
            if any(n and n.lower() in low for n in names):
                return value
        for w in sx.words(self.text):
            if len(w) >= 2:
                for value in prop["enum"]:
                    if str(value).lower().startswith(w.lower()):
                        return value
        return None

    def _content(self, slot: str, prop: dict[str, Any], vocab: set[str]) -> str | None:
        if _POINTS_BACK.search(self.text) and (self.carried or self.references):
            # 「그거 어린이도 먹어도 돼?」, 「거기 버스 정류장」: the message points at what the
            # conversation already named, so the carried value fills it, not a word of this message.
            return None
        if slot == "drug_name":
            # The word a citizen puts before what they want to know about it: 「타이레놀 먹어도
            # 돼?」, 「게보린 부작용」 — even when the manifest's hints name that product too.
            mt = _DRUG_CONTEXT.search(self.text)
            if mt:
                return mt.group(1)
        if slot == "stop_name":
            mt = re.search(r"([가-힣A-Za-z0-9]+?)\s*(?:버스\s*)?(?:정류장|정류소|stop)", self.text)
            if mt and mt.group(1) not in ("버스",) and not sx._points_or_labels(mt.group(1).lower()):
                return sx._strip_particle(mt.group(1))
            if self.place:
                return self.place
        words = sx.content_words(self.text, vocab)
        if self.place:
            words = [w for w in words if w not in self.place.split()]
        if not words:
            return None
        if slot == "keyword":
            return " ".join(words[:3])
        return words[0]


# A pointer back at the thing or place the conversation already named.
_POINTS_BACK = re.compile(r"(?:^|\s)(?:그거|그것|그게|그\s*약|그\s*제품|이거|이것|거기|그곳|그\s*정류장)(?=\s|$|[은는이가을를도로에의]|[?.!,])|\b(?:it|that one|there)\b", re.I)


_stripped: dict[int, tuple[Any, Any]] = {}


def _validator(schema: dict[str, Any]) -> Any:
    """A cached validator for a schema without its x-* annotations (keyed by the schema object)."""
    hit = _stripped.get(id(schema))
    if hit is None or hit[0] is not schema:
        hit = (schema, validator(_schema_only(schema)))
        _stripped[id(schema)] = hit
    return hit[1]


def _schema_only(schema: Any) -> Any:
    """A JSON Schema without the x-* annotations (the planner's own vocabulary)."""
    if isinstance(schema, dict):
        return {k: _schema_only(v) for k, v in schema.items() if not k.startswith("x-")}
    if isinstance(schema, list):
        return [_schema_only(v) for v in schema]
    return schema


def fit(prop: dict[str, Any], value: Any) -> Any:
    """The value in the form this field accepts, or None — a planner never proposes arguments it
    can see are invalid. Administrative codes are hierarchical (2-digit 시도, 5-digit 시군구,
    10-digit 법정동), so a field may declare ``x-code-slice: [start, end]`` to take its part of a
    longer code a locate adapter resolved."""
    if value is None:
        return None
    check = _validator(prop)
    if check.is_valid(value):
        return value
    cut = prop.get("x-code-slice")
    if cut and isinstance(value, str) and value.isdigit():
        part = value[cut[0]:cut[1]]
        if check.is_valid(part):
            return part
    if isinstance(value, str) and prop.get("format") == "date":
        digits = re.sub(r"\D", "", value)
        if len(digits) == 8:
            iso = f"{digits[:4]}-{digits[4:6]}-{digits[6:]}"
            if check.is_valid(iso):
                return iso
    if prop.get("type") == "integer" and isinstance(value, str) and value.isdigit():
        return fit({k: v for k, v in prop.items() if k != "x-code-slice"}, int(value))
    return None


def resolve_or_self(prop: dict[str, Any], values: list[Any]) -> Any:
    if prop.get("enum"):
        return sx.resolve_enum(prop, [str(v) for v in values])
    return values[0]


def _format_time(t: dt.time, prop: dict[str, Any]) -> str:
    if prop.get("x-format") == "hhmm" or "{4}" in prop.get("pattern", ""):
        return t.strftime("%H%M")
    return t.strftime("%H:%M")


_PATTERNS: dict[str, Callable[[str], Any]] = {
    "phone": lambda t: (m := re.search(r"01[016789][- ]?\d{3,4}[- ]?\d{4}", t)) and m.group(0),
    "vehicle_number": lambda t: (m := re.search(r"\d{2,3}\s?[가-힣]\s?\d{4}", t)) and m.group(0).replace(" ", ""),
    "birth_date": lambda t: (m := re.search(r"(19|20)\d{2}[-./]?\d{2}[-./]?\d{2}", t)) and m.group(0),
    "amount": lambda t: (m := re.search(r"(\d[\d,]*)\s*원", t)) and int(m.group(1).replace(",", "")),
    "reference_number": lambda t: (m := re.search(r"\b[A-Z0-9]{2,}-?\d{4,}\b", t)) and m.group(0),
    # Only a name the citizen states as one (「이름은 홍길동」, 「홍길동 1990-01-01」), never a guess.
    "person_name": lambda t: (
        (m := re.search(r"(?:이름(?:은|이)?\s*:?\s*|name is\s+)([가-힣]{2,4}|[A-Z][a-z]+(?: [A-Z][a-z]+)?)", t))
        or (m := re.search(r"(?<![가-힣])([가-힣]{2,4})(?:이고|이며|,)?\s+(?:19|20)\d{2}[-./]?\d{2}[-./]?\d{2}", t))
    ) and m.group(1),
}


_DRUG_CONTEXT = re.compile(
    r"([가-힣A-Za-z0-9]{2,}?)(?:을|를|은|는|이|가|랑|하고)?\s*(?:먹어|먹으면|먹는|먹을|복용|효능|효과|부작용|"
    r"같이|용법|보관|하루|몇\s*알|side effects|dosage|with alcohol)",
)


class OfflinePlanner:
    name = "offline"

    def __init__(self, clock: Callable[[], dt.datetime] = now_kst):
        self.clock = clock

    async def plan(self, ctx: PlanContext, on_delta: Callable[[str], None] | None = None) -> Action:
        if not ctx.candidates:
            return Action(kind="ask", text="", missing=["request"])
        target = self.choose_target(ctx)
        done = {e.adapter_id: e for e in ctx.evidence}
        if target.id in done:
            return Action(kind="answer")
        filler = SlotFiller(ctx, self.clock())
        args, missing = filler.fill(target)
        if not missing:
            return Action(kind="call", calls=[ToolCall(f"call_{ctx.step}_0", target.id, args)])
        for provider in self.providers_for(target, missing, ctx, done):
            pargs, pmissing = filler.fill(provider, chain=True)
            if not pmissing:
                return Action(kind="call", calls=[ToolCall(f"call_{ctx.step}_0", provider.id, pargs)])
        props = target.input_schema.get("properties", {})
        slots = sorted({props.get(f, {}).get("x-slot", f) for f in missing})
        if slots and set(slots) <= COORD_SLOTS:
            slots = ["place"]
        return Action(kind="ask", missing=slots, calls=[ToolCall("", target.id, args)])

    @staticmethod
    def choose_target(ctx: PlanContext) -> Manifest:
        top = ctx.candidates[0]
        if top.primitive != "locate" or not sx.find_place(ctx.request, ctx.language):
            return top
        # 「X 근처 Y」: a locate adapter ranked first is the means, the find that needs its
        # output is the end.
        for m in ctx.candidates[1:3]:
            if m.primitive != "locate" and set(m.requires) & _provided(top):
                return m
        return top

    @staticmethod
    def providers_for(
        target: Manifest, missing: list[str], ctx: PlanContext, done: dict[str, Any]
    ) -> list[Manifest]:
        """Locate adapters among the candidates that provide a missing slot, not yet called."""
        props = target.input_schema["properties"]
        wanted = {props[f].get("x-slot", f) for f in missing}
        if wanted & COORD_SLOTS:
            wanted |= {"coordinates"}
        return [
            m for m in ctx.candidates
            if m.primitive == "locate" and m.id not in done and wanted & _provided(m)
        ]


def _provided(m: Manifest) -> set[str]:
    out = set(m.provides)
    if "coordinates" in out:
        out |= {"latitude", "longitude"}
    return out
