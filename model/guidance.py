"""What a citizen is told besides an adapter's result: emergency numbers, official channels, and the
words that say *what to do* (신청, 예약, 조회) as opposed to *which service*.

Three kinds of registry data, one YAML file per entry, compiled by the build into
``generated/guidance.json`` (codegen/emit_guidance.py) and read at query time without Kiwi
(runtime/guidance_reader.py):

- ``registry/_emergency/<id>.yaml`` — an emergency the request describes (collapse, fire, a crime
  in progress …): the phrases that say so, the number to call, and the source that says it is
  that number. The answer names the number on its first line, whatever else the turn does.
- ``registry/_channels/<id>.yaml`` — an official channel for a service UMMAYA has no adapter for
  (정부24, 홈택스, 고용24 …): the words that name the service, what UMMAYA cannot do, where the
  citizen can do it, links and a phone number, and the citation.
- ``registry/_intents/<id>.yaml`` — generic words: what a citizen wants to *do* (apply, book,
  pay …) and filler words (how, where, online). A request made only of these names no service,
  so it never reaches a protected adapter's consent notice (runtime/turn/scope.py).

A manifest names its own service with ``service_words`` (model/manifest.py); without them the
build derives them from its ``search_hints`` and title minus the generic words (``derive_service_words``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .manifest import Domain
from .service_words import derive_service_words  # noqa: F401  (re-exported: the build's entry point)

ENTRY_ID = r"^[a-z][a-z0-9_]{0,63}$"
GUIDANCE_FORMAT = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Words(_Strict):
    """Phrases per language. Korean phrases match inside the request with spacing ignored
    (「숨을안쉬」 matches 「숨을 안 쉬어」, a stem like 「쓰러」 matches 쓰러졌어요); written in words
    (「숨을 못 쉬」) they also allow up to three characters between the words (「숨을 잘 못 쉬셔」).
    Other phrases match whole words, case-insensitively."""

    ko: list[str] = Field(default_factory=list)
    en: list[str] = Field(default_factory=list)

    def all(self) -> list[str]:
        return [*self.ko, *self.en]

    @field_validator("ko", "en")
    @classmethod
    def _no_blank(cls, v: list[str]) -> list[str]:
        for w in v:
            if not w.strip():
                raise ValueError("a phrase must not be empty")
        return v


class Text(_Strict):
    ko: str = Field(min_length=1)
    en: str = Field(min_length=1)

    def get(self, language: str) -> str:
        return self.en if language == "en" else self.ko


class Source(_Strict):
    """Where a number or a channel is published: the agency's own page, checked on a date."""

    title: str = Field(min_length=1)
    url: str = Field(pattern=r"^https://")
    verified: dt.date
    basis: str | None = Field(default=None, description="The law or rule that says so, when there is one")


class Emergency(_Strict):
    """An emergency a request can describe, and the number to call for it."""

    id: str = Field(pattern=ENTRY_ID)
    numbers: list[str] = Field(min_length=1, description="The numbers the first line names (119, 112 …)")
    says: Text = Field(description="The one line the answer opens with; names every number")
    cannot: Text = Field(description="Said when nothing else answers the request (UMMAYA does not call for you)")
    phrases: Words = Field(description="What a citizen in this emergency says")
    unless: Words = Field(default_factory=Words, description="Phrases that make a match a question about the topic, not the emergency (화재 보험, fire station)")
    priority: int = Field(default=50, description="Order of the lines when several emergencies match (lower first)")
    fallback: bool = Field(default=False, description="Said only when no other emergency matches (a cry for help that names no danger)")
    domains: list[Domain] = Field(default_factory=list, description="Domains whose adapters serve this emergency after its number (health: the nearest ER or AED); the turn's candidates come from them when retrieval ranks another domain first")
    search: Text | None = Field(default=None, description="The service the citizen needs after the number, in their words (「근처 응급실」): retrieval is asked for it within ``domains`` when the request's own words find nothing there (「물에 빠졌다 나왔는데 의식이 없어」 names no ER)")
    source: Source

    @model_validator(mode="after")
    def _says_names_numbers(self) -> Emergency:
        if not self.phrases.all():
            raise ValueError("phrases: at least one phrase (ko or en)")
        for lang in ("ko", "en"):
            line = self.says.get(lang)
            if "\n" in line:
                raise ValueError(f"says.{lang}: one line only (the answer's first line)")
            missing = [n for n in self.numbers if n not in line]
            if missing:
                raise ValueError(f"says.{lang}: must name {', '.join(missing)}")
        return self


class Link(_Strict):
    label: Text
    url: str = Field(pattern=r"^https://")


class Channel(_Strict):
    """An official channel where a citizen can do what UMMAYA cannot."""

    id: str = Field(pattern=ENTRY_ID)
    name: Text = Field(description="The channel as citizens know it (정부24, 고용24 …)")
    words: Words = Field(default_factory=Words, description="Words that name the service this channel does (여권, 실업급여 …); none: the channel is reached only through an adapter's limits (booking at a hospital the list found)")
    cannot: Text = Field(description="One plain sentence: what UMMAYA cannot do here")
    where: Text = Field(description="One plain sentence: where and how the citizen can do it")
    links: list[Link] = Field(min_length=1)
    phone: str | None = Field(default=None, pattern=r"^[0-9][0-9-]{1,13}$")
    general: bool = Field(default=False, description="The fallback channel for a request no specific channel names")
    citation: Source

    @model_validator(mode="after")
    def _named(self) -> Channel:
        if self.general and not self.words.all():
            raise ValueError("words: the general channel is named by its own name (정부24)")
        return self


class Intent(_Strict):
    """Generic words: what a citizen wants to do (apply, book, pay) or fillers (how, where).
    They never name a service by themselves."""

    id: str = Field(pattern=ENTRY_ID)
    words: Words
    cannot: Text | None = Field(default=None, description="What UMMAYA cannot do for this intent, said when a request asks it of a service no channel names (「UMMAYA는 예약을 대신할 수 없습니다」)")


def guidance_document(emergencies: list[Emergency], channels: list[Channel], intents: list[Intent],
                      services: dict[str, dict[str, list[str]]]) -> dict[str, Any]:
    """``generated/guidance.json``: one JSON document the runtime reads (runtime/guidance_reader.py)."""
    return {
        "format": GUIDANCE_FORMAT,
        "emergencies": [e.model_dump(mode="json") for e in sorted(emergencies, key=lambda e: (e.priority, e.id))],
        "channels": [c.model_dump(mode="json") for c in sorted(channels, key=lambda c: c.id)],
        "intents": [i.model_dump(mode="json") for i in sorted(intents, key=lambda i: i.id)],
        "services": {k: services[k] for k in sorted(services)},
    }
