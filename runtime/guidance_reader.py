"""Query-time reading of ``generated/guidance.json``: which emergency a request describes, which
official channels it names, whether it names an adapter's service, and which of an adapter's
``limits`` it asks for.

Kiwi-free and cheap on the cold path: the JSON the build validated (model/guidance.py) is read into
small plain views — no pydantic class is built per ``ask`` — and every phrase is a substring test:
Korean phrases inside the request with spacing ignored (「숨을안쉬」 matches 「숨을 안 쉬어」, and a
stem like 「쓰러」 matches 쓰러졌어요; a phrase written in words, 「숨을 못 쉬」, also lets a few
characters in between: 「숨을 잘 못 쉬셔」), other phrases as whole words of the request, where
letters and digits next to Hangul or punctuation count as a word of their own (「KTX로」 names KTX,
"systems" does not name EMS).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ummaya.model.phrases import GAP, Text, longest_in, longest_match, phrase_in  # noqa: F401  (re-exported)

GUIDANCE_FORMAT = 1  # model/guidance.py GUIDANCE_FORMAT (not imported: it builds pydantic classes)

# -- the compiled entries, as plain views ---------------------------------------------------------

class Said:
    """A text in both languages (``get(language)``)."""

    __slots__ = ("ko", "en")

    def __init__(self, d: dict[str, str]):
        self.ko, self.en = d.get("ko", ""), d.get("en", "")

    def get(self, language: str) -> str:
        return self.en if language == "en" else self.ko


class Phrases:
    __slots__ = ("ko", "en")

    def __init__(self, d: dict[str, list[str]] | None):
        d = d or {}
        self.ko, self.en = list(d.get("ko", [])), list(d.get("en", []))

    def all(self) -> list[str]:
        return [*self.ko, *self.en]


class View:
    """One entry of guidance.json: its fields as attributes, texts as ``Said``, phrase lists as
    ``Phrases`` (the same attribute names as model/guidance.py's types)."""

    TEXTS: tuple[str, ...] = ()
    PHRASES: tuple[str, ...] = ()

    def __init__(self, d: dict[str, Any]):
        for k, v in d.items():
            if k in self.TEXTS:
                v = Said(v) if v else None
            elif k in self.PHRASES:
                v = Phrases(v)
            setattr(self, k, v)


class EmergencyView(View):
    TEXTS = ("says", "cannot", "search")
    PHRASES = ("phrases", "unless")
    id: str
    numbers: list[str]
    priority: int
    fallback: bool
    domains: list[str]
    search: Said | None = None


class LinkView(View):
    TEXTS = ("label",)


class ChannelView(View):
    TEXTS = ("name", "cannot", "where")
    PHRASES = ("words",)
    general: bool = False
    phone: str | None = None

    def __init__(self, d: dict[str, Any]):
        super().__init__(d)
        self.links = [LinkView(link) for link in d.get("links", [])]


class IntentView(View):
    TEXTS = ("cannot",)
    PHRASES = ("words",)
    cannot: Said | None = None


@dataclass
class Guidance:
    emergencies: list[Any] = field(default_factory=list)
    channels: list[Any] = field(default_factory=list)
    intents: list[Any] = field(default_factory=list)
    services: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, generated: Path) -> Guidance:
        path = Path(generated) / "guidance.json"
        try:
            raw = json.loads(path.read_bytes())
        except FileNotFoundError:
            return cls()  # a build before guidance existed, or a scratch catalog: nothing to say
        if raw.get("format") != GUIDANCE_FORMAT:
            raise ValueError(f"{path}: guidance format {raw.get('format')} is not {GUIDANCE_FORMAT}")
        return cls(
            emergencies=[EmergencyView(e) for e in raw.get("emergencies", [])],
            channels=[ChannelView(c) for c in raw.get("channels", [])],
            intents=[IntentView(i) for i in raw.get("intents", [])],
            services=dict(raw.get("services", {})),
        )

    # -- emergencies ---------------------------------------------------------------------------

    def emergencies_in(self, request: str) -> list[Any]:
        """The emergencies the request describes, in priority order; a fallback one only when no
        other matches."""
        text = Text.of(request)
        found = [e for e in self.emergencies
                 if any(phrase_in(p, text) for p in e.phrases.all())
                 and not any(phrase_in(p, text) for p in e.unless.all())]
        specific = [e for e in found if not getattr(e, "fallback", False)]
        return sorted(specific or found, key=lambda e: (e.priority, e.id))

    # -- channels ------------------------------------------------------------------------------

    @property
    def general(self) -> Any:
        return next((c for c in self.channels if c.general), None)

    def channel(self, channel_id: str) -> Any:
        return next((c for c in self.channels if c.id == channel_id), None)

    def channels_named(self, request: str, limit: int = 2) -> list[Any]:
        """The specific channels whose service the request names, the most specific (longest
        phrase) first; the general channel only by its own name (「정부24」)."""
        text = Text.of(request)
        scored = [(longest_match(c.words.all(), text), i, c) for i, c in enumerate(self.channels)]
        hits = sorted(((m, i, c) for m, i, c in scored if m), key=lambda t: (-len(t[0]), t[1]))
        specific = [(m, c) for m, _, c in hits if not c.general] or [(m, c) for m, _, c in hits]
        kept: list[tuple[str, Any]] = []
        for m, c in specific:
            # 「등기부등본」 names the registry office; the 「등본」 inside it names nothing more.
            if not any(m in k for k, _ in kept):
                kept.append((m, c))
        return [c for _, c in kept][:limit]

    def intent_named(self, request: str) -> Any:
        """The intent (with words of what UMMAYA cannot do) the request states most specifically:
        「관람 예약해줘」 → book."""
        text = Text.of(request)
        scored = [(len(longest_match(i.words.all(), text)), n, i) for n, i in enumerate(self.intents) if i.cannot is not None]
        best = max(scored, key=lambda t: (t[0], -t[1]), default=(0, 0, None))
        return best[2] if best[0] else None

    # -- an adapter's own service --------------------------------------------------------------

    def service_words(self, m: Any) -> list[str]:
        hit = self.services.get(m.id)
        if hit is None:  # an adapter the build did not see (a scratch catalog): derive it here
            if m.service_words.ko or m.service_words.en:
                hit = {"ko": list(m.service_words.ko), "en": list(m.service_words.en)}
            else:
                from ummaya.model.service_words import derive_service_words

                hit = derive_service_words(m.search_hints.ko, m.search_hints.en, m.title.ko, m.title.en,
                                           self.generic_words())
            self.services[m.id] = hit
        return [*hit.get("ko", []), *hit.get("en", [])]

    def names_service(self, m: Any, request: str) -> bool:
        return self.service_match(m, request) > 0

    def service_match(self, m: Any, request: str) -> int:
        """How specifically the request names the adapter's service: the length of the longest
        service word it contains (0: none; an adapter without words counts as named)."""
        words = self.service_words(m)
        return longest_in(words, Text.of(request)) if words else 1_000

    def generic_words(self) -> list[str]:
        return [w for i in self.intents for w in i.words.all()]

    # -- limits --------------------------------------------------------------------------------

    def limits_asked(self, m: Any, request: str) -> list[Any]:
        text = Text.of(request)
        out = []
        for lim in m.limits:
            words = [*lim.words.ko, *lim.words.en]
            if lim.intent:
                intent = next((i for i in self.intents if i.id == lim.intent), None)
                words += intent.words.all() if intent else []
            if any(phrase_in(w, text) for w in words):
                out.append(lim)
        return out


__all__ = ["Guidance", "Text", "longest_in", "longest_match", "phrase_in"]
