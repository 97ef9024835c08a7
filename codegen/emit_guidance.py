"""``generated/guidance.json``: emergencies, official channels, generic words, and the words that
name each adapter's service (model/guidance.py says what each is for).

Loaded from ``registry/_emergency/``, ``registry/_channels/`` and ``registry/_intents/`` (one entry
per file, its id the file name) with every problem as ``path:line``; a manifest's ``limits`` must
name a channel and an intent that exist.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ummaya.model.guidance import Channel, Emergency, Intent, derive_service_words, guidance_document
from ummaya.model.phrases import Text, longest_in, phrase_in
from ummaya.model.phrases import _phrase as phrase_parts  # how phrase_in splits a phrase

from .emit_lock import Encoded, canonical_json, item_json
from .loader import LoadedManifest, ParseCache, Problem, parse_yaml, validate_doc

GUIDANCE_PATH = "generated/guidance.json"
FOLDERS: dict[str, type] = {"_emergency": Emergency, "_channels": Channel, "_intents": Intent}


@dataclass
class Guidance:
    emergencies: list[Emergency] = field(default_factory=list)
    channels: list[Channel] = field(default_factory=list)
    intents: list[Intent] = field(default_factory=list)
    # channel id -> (path, parsed document): where a check reports one of its words
    sources: dict[str, tuple[str, Any]] = field(default_factory=dict)

    def generic_words(self) -> list[str]:
        return [w for i in self.intents for w in i.words.all()]


def load_guidance(root: Path, cache: ParseCache | None = None) -> tuple[Guidance, list[Problem]]:
    registry = (Path(root) / "registry").resolve()
    out = Guidance()
    problems: list[Problem] = []
    for folder, model in FOLDERS.items():
        for p in sorted((registry / folder).glob("*.yaml")):
            rel = p.relative_to(Path(root).resolve()).as_posix() if p.is_relative_to(Path(root).resolve()) else p.name
            doc, errs = parse_yaml(p, rel, cache, within=registry)
            problems += errs
            if doc is None:
                continue
            entry, errs = validate_doc(doc, model)
            problems += errs
            if entry is None:
                continue
            if entry.id != p.stem:
                problems.append(Problem(rel, doc.line_of(("id",)), f"id '{entry.id}' must match file name '{p.stem}'"))
                continue
            {"_emergency": out.emergencies, "_channels": out.channels, "_intents": out.intents}[folder].append(entry)
            if folder == "_channels":
                out.sources[entry.id] = (rel, doc)
    general = [c.id for c in out.channels if c.general]
    if len(general) > 1:
        problems.append(Problem(f"registry/_channels/{general[1]}.yaml", 1, f"only one channel may be general (also: {general[0]})"))
    return out, problems


def check_limits(manifests: list[LoadedManifest], g: Guidance) -> list[Problem]:
    """Every ``limits`` entry names a channel and (when given) an intent that exist."""
    channels = {c.id for c in g.channels}
    intents = {i.id for i in g.intents}
    problems = []
    for lm in manifests:
        limits = lm.derived("limits", _limits_of, lm)
        for i, channel, intent, channel_line, intent_line in limits:
            if channel not in channels:
                problems.append(Problem(lm.rel, channel_line,
                                        f"limits.{i}.channel: no channel '{channel}' in registry/_channels/ "
                                        f"(known: {', '.join(sorted(channels)) or 'none'})"))
            if intent is not None and intent not in intents:
                problems.append(Problem(lm.rel, intent_line,
                                        f"limits.{i}.intent: no intent '{intent}' in registry/_intents/ "
                                        f"(known: {', '.join(sorted(intents)) or 'none'})"))
    return problems


def _limits_of(lm: LoadedManifest) -> list[tuple]:
    """(index, channel, intent, channel line, intent line) of each of one adapter's ``limits``."""
    return [(i, lim.channel, lim.intent, lm.source.line_of(("limits", i, "channel")), lm.source.line_of(("limits", i, "intent")))
            for i, lim in enumerate(lm.manifest.limits)]


def check_hidden_services(manifests: list[LoadedManifest], g: Guidance, services: dict | None = None) -> list[Problem]:
    """A channel phrase that an existing adapter serves, but that names the channel more
    specifically than it names the adapter, hides the adapter behind its own service's channel
    (runtime/turn/scope.py sends a request to the channel naming it more specifically): 「국공립
    어린이집 대기」 reached the childcare channel although the waitlist handoff exists for it.

    The adapter serves the phrase when its own hints or title contain it and its service words
    name part of it (「어린이집」 inside 「국공립 어린이집」); a phrase only a hint mentions (the
    site 「홈택스」 an adapter hands off to) or a wider service the adapter's words do not name
    is the channel's. Reported at the channel's phrase: the adapter declares ``service_words``
    covering it, or the channel drops it (the channel registry holds what has no adapter)."""
    if services is None:
        services = service_words(manifests, g)
    # Channel phrases prepared once (Text.of, longest_in over the channel's words), then each
    # adapter's part: it reads the adapter's own texts and service words and every channel
    # (registry data all adapters share), so it is kept in the adapter's state.
    phrases = []
    for ch in g.channels:
        if ch.general:
            continue
        rel, doc = g.sources.get(ch.id, (f"registry/_channels/{ch.id}.yaml", None))
        everything = ch.words.all()
        for lang in ("ko", "en"):
            for i, phrase in enumerate(getattr(ch.words, lang)):
                korean, parts = phrase_parts(phrase)
                if not parts:
                    continue  # phrase_in is False for every text
                text = Text.of(phrase)
                line = doc.line_of(("words", lang, i)) if doc is not None else 1
                phrases.append((rel, line, lang, i, phrase, text, longest_in(everything, text), korean, parts[0]))
    problems: list[Problem] = []
    for lm in manifests:
        found = lm.derived("hidden_services", _hidden_by, lm, phrases, services[lm.id])
        problems += [Problem(*p) for p in found]
    return problems


def _hidden_by(lm: LoadedManifest, phrases: list, theirs: dict[str, Any]) -> list[tuple[str, int, str]]:
    """:func:`check_hidden_services` for one adapter, as (path, line, message) tuples."""
    m = lm.manifest
    # The adapter's texts read once, with every text's two forms joined so a phrase whose first
    # part is in none of them skips the adapter at once — the exact test (phrase_in on each text)
    # still decides.
    texts = [Text.of(t) for t in (*m.search_hints.ko, *m.search_hints.en, m.title.ko, m.title.en)]
    squashed, words = "\0".join(t.squashed for t in texts), "\0".join(t.words for t in texts)
    out = []
    for rel, line, lang, i, phrase, text, named, korean, first in phrases:
        if first not in (squashed if korean else words):
            continue
        if not any(phrase_in(phrase, t) for t in texts):
            continue
        own = longest_in([*theirs["ko"], *theirs["en"]], text)
        if 0 < own < named:
            out.append((rel, line, (
                f"words.{lang}.{i} '{phrase}' names this channel more specifically than "
                f"{m.id} ({lm.source.rel}) names its own service, which serves it: declare "
                f"service_words covering '{phrase}' in {m.id}, or drop it here")))
    return out


def service_words(manifests: list[Any], g: Guidance) -> dict[str, dict[str, Any]]:
    """Per adapter: its declared ``service_words``, else the words derived from its hints and title
    (``ko``/``en`` word lists, and ``declared``: whether the manifest named them). ``manifests``:
    Manifest or LoadedManifest (whose state keeps them: they read the intents, shared data)."""
    generic = g.generic_words()
    out: dict[str, dict[str, Any]] = {}
    for m in manifests:
        if isinstance(m, LoadedManifest):
            out[m.id] = m.derived("service_words", _service_words_of, m, generic)
        else:
            out[m.id] = _service_words_of(m, generic)
    return out


def _service_words_of(m: Any, generic: list[str]) -> dict[str, Any]:
    if isinstance(m, LoadedManifest):
        m = m.manifest
    declared = m.service_words
    if declared.ko or declared.en:
        return {"ko": sorted({w.lower() for w in declared.ko}), "en": sorted({w.lower() for w in declared.en}), "declared": True}
    return {**derive_service_words(m.search_hints.ko, m.search_hints.en, m.title.ko, m.title.en, generic), "declared": False}


def emit_guidance(manifests: list[Any], g: Guidance, services: dict | None = None) -> dict[str, bytes]:
    """``services``: :func:`service_words` of the same manifests, when the caller has it already."""
    services = services if services is not None else service_words(manifests, g)
    # A LoadedManifest keeps its entry encoded (its state's key covers the intents it reads).
    encoded = {m.id: Encoded(m.derived("service_words_json", item_json, services[m.id], 2)) for m in manifests
               if isinstance(m, LoadedManifest)}
    doc = guidance_document(g.emergencies, g.channels, g.intents, {**services, **encoded})
    return {GUIDANCE_PATH: canonical_json(doc)}
