"""Emit ``index/documents.json``: the canonical, committed form of the retrieval index.

The Whoosh index is *built from this file* on first use (``ummaya.runtime.retrieve``) into a
git-ignored, content-addressed folder, because Whoosh names its segments randomly and its binary
can never be byte-reproducible. This file can: same manifests -> same bytes (documents sorted by
id, keys sorted, ``\\n`` newlines, no timestamps, UTF-8 with Korean kept readable).

Per adapter it carries the text fields by language and by field — title, summary, hints,
examples, agency names, domain, primitive, tier — plus the non-text facts the ranker uses
(primitive, tier, domain, agency code, the slots an adapter ``requires``/``provides``, the slot
types of its required inputs) and its negative examples (requests that look alike but belong
elsewhere — the index credits them to the adapter named in ``belongs_to``). Glosses for the
domain, primitive and tier are registry vocabulary (registry/_vocab/), so a request phrased as an
intent ("신고하려고", "where is") has something to match even before a manifest's own words.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ummaya.model.manifest import Manifest
from ummaya.model.service_words import derive_service_words

# Kiwi-derived terms are computed here, at build time, so the query path never loads Kiwi.
# (They depend on the kiwipiepy version, which documents.json records.)
from ummaya.model.analysis import ANALYZER_VERSION, morphs_many

DOCUMENTS_PATH = "index/documents.json"
DOCUMENTS_FORMAT = 1

# Glosses: words a citizen uses for the *kind* of service, not for any one adapter — Korean words
# for a domain code (registry/_vocab/domains.yaml, a word class per code) and bilingual words for
# a primitive and a tier (primitives.yaml, tiers.yaml: classes <code>_ko / <code>_en). All are
# registry data; a code with no entry indexes the code itself.
DOMAIN_VOCABULARY = "domains"
PRIMITIVE_VOCABULARY = "primitives"
TIER_VOCABULARY = "tiers"


class Glosses(dict):
    """``{domain code: Korean words}`` (what :func:`emit_index` always took as ``domains``), with the
    primitive and tier glosses beside it: ``primitive[code]`` / ``tier[code]`` = ``{"ko", "en"}``."""

    def __init__(self, domains: Mapping[str, str] | None = None, primitive: Mapping[str, dict[str, str]] | None = None,
                 tier: Mapping[str, dict[str, str]] | None = None):
        super().__init__(domains or {})
        self.primitive = dict(primitive or {})
        self.tier = dict(tier or {})


def _bilingual(words: Mapping[str, list[str]]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for cls, ws in sorted(words.items()):
        code, _, lang = cls.rpartition("_")
        if code and lang in ("ko", "en"):
            out.setdefault(code, {"ko": code, "en": code})[lang] = " ".join(ws)
    return out


def domain_glosses(understanding: Any) -> Glosses:
    """The glosses of the loaded registry's ``domains``, ``primitives`` and ``tiers`` vocabularies."""
    vocabs = understanding.vocabs if understanding is not None else {}

    def words(name: str) -> dict[str, list[str]]:
        vf = vocabs.get(name)
        return dict(vf.words or {}) if vf is not None else {}

    return Glosses({code: " ".join(ws) for code, ws in sorted(words(DOMAIN_VOCABULARY).items())},
                   _bilingual(words(PRIMITIVE_VOCABULARY)), _bilingual(words(TIER_VOCABULARY)))


def registry_domains(root: Path) -> Glosses:
    """:func:`domain_glosses` of the registry under ``root`` (benchmarks and tools that build an
    index outside ``ummaya build``)."""
    from .understand import load_understanding

    return domain_glosses(load_understanding(root)[0])


def _required_slots(m: Manifest) -> list[str]:
    props = m.input_schema.get("properties") or {}
    out = []
    for name in m.input_schema.get("required") or []:
        slot = (props.get(name) or {}).get("x-slot")
        if isinstance(slot, str) and slot not in out:
            out.append(slot)
    return out


def document(m: Manifest, domains: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The index document of one adapter (plain JSON types only); ``domains``: the Korean gloss
    of each domain code (:func:`domain_glosses`)."""
    prim = getattr(domains, "primitive", {}).get(m.primitive, {"ko": m.primitive, "en": m.primitive})
    tier = getattr(domains, "tier", {}).get(m.tier, {"ko": m.tier, "en": m.tier})
    domain_ko = (domains or {}).get(m.domain, "")
    text = {
        "ko": {
            "title": m.title.ko,
            "summary": m.summary.ko,
            "hints": list(m.search_hints.ko),
            "examples": list(m.examples.ko),
            "agency": m.agency.name_ko,
            "domain": domain_ko,
            "primitive": prim["ko"],
            "tier": tier["ko"],
        },
        "en": {
            "title": m.title.en,
            "summary": m.summary.en,
            "hints": list(m.search_hints.en),
            "examples": list(m.examples.en),
            "agency": f"{m.agency.name_en} {m.agency.code}",
            "domain": m.domain.replace("_", " "),
            "primitive": prim["en"],
            "tier": tier["en"],
        },
    }
    return {
        "id": m.id,
        "version": m.version,
        "primitive": m.primitive,
        "tier": m.tier,
        "domain": m.domain,
        "agency": {"code": m.agency.code, "name_ko": m.agency.name_ko, "name_en": m.agency.name_en},
        "gate": m.permission.gate,
        "requires": list(m.requires),
        "provides": list(m.provides),
        "input_slots": _required_slots(m),
        "service_words": _service_words(m),
        "negative_examples": [
            {"text": n.text, "belongs_to": n.belongs_to} for n in m.negative_examples
        ],
        "text": text,
    }


def _service_words(m: Manifest) -> list[str]:
    """The words that name the adapter's service: its declared ``service_words``, else those derived
    from its hints and title (model/service_words.py). The intents' generic words are not taken
    out here (they are guidance data the index does not read), so the list names a little more
    than the engine's scope check does: the retriever only refuses a request that names none."""
    declared = m.service_words
    if declared.ko or declared.en:
        return sorted({w.lower() for w in (*declared.ko, *declared.en)})
    derived = derive_service_words(m.search_hints.ko, m.search_hints.en, m.title.ko, m.title.en, ())
    return sorted({*derived["ko"], *derived["en"]})


TEXT_FIELDS = ("title", "summary", "hints", "examples", "agency", "domain", "primitive", "tier")


def _field_text(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def add_morphs(docs: list[dict[str, Any]]) -> None:
    """Fill ``doc["morphs"][lang][field]`` with Kiwi content morphemes, space-joined (one Kiwi
    batch for all texts)."""
    texts = [
        t
        for d in docs
        for lang in ("ko", "en")
        for f in TEXT_FIELDS
        for t in _field_text(d["text"][lang][f])
    ]
    texts += [n["text"] for d in docs for n in d["negative_examples"]]
    analysed = dict(zip(texts, morphs_many(texts), strict=False))
    for d in docs:
        _fill_morphs(d, analysed)


def _fill_morphs(d: dict[str, Any], analysed: Mapping[str, Any]) -> None:
    d["morphs"] = {
        lang: {
            f: " ".join(m for t in _field_text(d["text"][lang][f]) for m in analysed[t])
            for f in TEXT_FIELDS
        }
        for lang in ("ko", "en")
    }
    # negative examples are indexed for the adapter they belong to (a "redirect" field)
    d["morphs"]["negatives"] = [" ".join(analysed[n["text"]]) for n in d["negative_examples"]]


def _kiwi_version() -> str:
    """kiwipiepy's version as its package records it: importing kiwipiepy for ``__version__``
    costs ~0.12 s, which a build that only assembles cached parts (an edit, ``ummaya check``'s
    drift gate) would pay for one string. The same string: the wheel's metadata is its version."""
    from importlib import metadata

    try:
        return metadata.version("kiwipiepy")
    except metadata.PackageNotFoundError:
        from ummaya.model.analysis import kiwi_version

        return kiwi_version()


def documents_bytes(docs: Iterable[dict[str, Any]]) -> bytes:
    docs = sorted(docs, key=lambda d: d["id"])
    if any("morphs" not in d for d in docs):
        add_morphs(docs)
    body = {
        "format": DOCUMENTS_FORMAT,
        "analyzer": {"version": ANALYZER_VERSION, "kiwipiepy": _kiwi_version()},
        "documents": docs,
    }
    from .emit_lock import dumps_indented

    return (dumps_indented(body, 1) + "\n").encode("utf-8")


def _check_unique(ids: Iterable[str]) -> None:
    counts = Counter(ids)
    dupes = sorted(i for i, n in counts.items() if n > 1)
    if dupes:
        raise ValueError(f"duplicate adapter ids: {', '.join(dupes)}")


def emit_index(manifests: list[Manifest], domains: Mapping[str, str] | None = None) -> dict[str, bytes]:
    """``{"index/documents.json": bytes}`` — pure, deterministic, no network, no Whoosh.
    ``domains``: Korean glosses of the domain codes (:func:`domain_glosses` of the registry)."""
    _check_unique(m.id for m in manifests)
    return {DOCUMENTS_PATH: documents_bytes(document(m, domains) for m in manifests)}


# ------------------------------------------------------------------ per-adapter parts (the build)
# Kiwi analyses each text on its own, so an adapter's morphemes depend on its own document only:
# the build caches each adapter's finished part (its document with morphemes, encoded as it sits in
# documents.json) under the hash of that document, and assembles the file from the parts. An edit
# to one manifest re-analyses that one adapter, not the catalog (issue 23).


def doc_texts(doc: dict[str, Any]) -> list[str]:
    """Every text of one document Kiwi analyses (what :func:`add_morphs` reads)."""
    texts = [t for lang in ("ko", "en") for f in TEXT_FIELDS for t in _field_text(doc["text"][lang][f])]
    return texts + [n["text"] for n in doc["negative_examples"]]


def doc_key(generator: str, doc: dict[str, Any]) -> str:
    """The cache key of one adapter's part: the generator and the document itself."""
    import hashlib

    body = json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(f"{generator}|{body}".encode("utf-8")).hexdigest()


def doc_part(doc: dict[str, Any], analysed: Mapping[str, tuple[str, ...] | list[str]]) -> bytes:
    """One document with its morphemes (``analysed``: text -> morphemes), encoded as an item of
    documents.json's list."""
    from .emit_lock import item_json

    d = dict(doc)
    _fill_morphs(d, analysed)
    return item_json(d, 1).encode("utf-8")


def assemble_documents(parts: list[tuple[str, bytes]]) -> bytes:
    """documents.json from ``(id, part)`` pairs: the bytes :func:`documents_bytes` writes."""
    from .emit_lock import splice_list

    _check_unique(i for i, _ in parts)
    items = [p.decode("utf-8") for _, p in sorted(parts)]
    head = {"format": DOCUMENTS_FORMAT, "analyzer": {"version": ANALYZER_VERSION, "kiwipiepy": _kiwi_version()}}
    return (splice_list(head, "documents", items, 1) + "\n").encode("utf-8")
