"""Emit ``index/documents.json``: the canonical, committed form of the retrieval index.

The Whoosh index is *built from this file* on first use (``ummaya.runtime.retrieve``) into a
git-ignored, content-addressed folder, because Whoosh names its segments randomly and its binary
can never be byte-reproducible. This file can: same manifests -> same bytes (documents sorted by
id, keys sorted, ``\\n`` newlines, no timestamps, UTF-8 with Korean kept readable).

Per adapter it carries the text fields by language and by field — title, summary, hints,
examples, agency names, domain, primitive, tier — plus the non-text facts the ranker uses
(primitive, tier, domain, agency code, the slots an adapter ``requires``/``provides``, the slot
types of its required inputs) and its negative examples (requests that look alike but belong
elsewhere — the index credits them to the adapter named in ``belongs_to``). Glosses for the primitive and tier are fixed vocabulary, so a request phrased as an
intent ("신고하려고", "where is") has something to match even before a manifest's own words.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .manifest import Manifest

# Kiwi-derived terms are computed here, at build time, so the query path never loads Kiwi.
# (They depend on the kiwipiepy version, which documents.json records.)
from ummaya.runtime.retrieve.analysis import ANALYZER_VERSION, kiwi_version, morphs_many

DOCUMENTS_PATH = "index/documents.json"
DOCUMENTS_FORMAT = 1

# Fixed bilingual glosses: words a citizen uses for the *kind* of action, not for any one adapter.
PRIMITIVE_GLOSS: dict[str, dict[str, str]] = {
    "locate": {"ko": "위치 주소 좌표 장소 찾기", "en": "locate address coordinates place"},
    "find": {"ko": "찾기 조회 검색 정보", "en": "find look up search information"},
    "check": {"ko": "확인 인증 자격 조회 본인", "en": "check verify eligibility identity"},
    "send": {"ko": "신고 신청 납부 제출 접수", "en": "report apply pay submit file"},
}
TIER_GLOSS: dict[str, dict[str, str]] = {
    "live": {"ko": "실시간", "en": "live real-time"},
    "mock": {"ko": "모의", "en": "simulated"},
    "handoff": {"ko": "안내 창구 방문", "en": "official channel guidance"},
}
# Domain codes are short English words; a Korean gloss lets Korean requests match them too.
# Unknown domains still index their code.
DOMAIN_GLOSS: dict[str, str] = {
    "health": "건강 의료 병원",
    "medical": "의료 병원",
    "emergency": "응급",
    "weather": "날씨 기상",
    "environment": "환경 대기",
    "air": "대기 공기",
    "traffic": "교통",
    "transport": "교통 대중교통",
    "transit": "대중교통",
    "mobility": "교통 이동",
    "safety": "안전",
    "welfare": "복지",
    "tax": "세금 세무",
    "identity": "신분 본인",
    "civil": "민원",
    "civil_affairs": "민원",
    "location": "위치 주소",
    "geo": "위치 지도",
    "address": "주소",
    "drug": "약 의약품",
    "finance": "금융",
    "privacy": "개인정보",
    "data": "데이터",
}


def _required_slots(m: Manifest) -> list[str]:
    props = m.input_schema.get("properties") or {}
    out = []
    for name in m.input_schema.get("required") or []:
        slot = (props.get(name) or {}).get("x-slot")
        if isinstance(slot, str) and slot not in out:
            out.append(slot)
    return out


def document(m: Manifest) -> dict[str, Any]:
    """The index document of one adapter (plain JSON types only)."""
    prim = PRIMITIVE_GLOSS.get(m.primitive, {"ko": m.primitive, "en": m.primitive})
    tier = TIER_GLOSS.get(m.tier, {"ko": m.tier, "en": m.tier})
    domain_ko = DOMAIN_GLOSS.get(m.domain, "")
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
        "negative_examples": [
            {"text": n.text, "belongs_to": n.belongs_to} for n in m.negative_examples
        ],
        "text": text,
    }


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
    analysed = dict(zip(texts, morphs_many(texts)))
    for d in docs:
        d["morphs"] = {
            lang: {
                f: " ".join(m for t in _field_text(d["text"][lang][f]) for m in analysed[t])
                for f in TEXT_FIELDS
            }
            for lang in ("ko", "en")
        }
        # negative examples are indexed for the adapter they belong to (a "redirect" field)
        d["morphs"]["negatives"] = [" ".join(analysed[n["text"]]) for n in d["negative_examples"]]


def documents_bytes(docs: Iterable[dict[str, Any]]) -> bytes:
    docs = sorted(docs, key=lambda d: d["id"])
    if any("morphs" not in d for d in docs):
        add_morphs(docs)
    body = {
        "format": DOCUMENTS_FORMAT,
        "analyzer": {"version": ANALYZER_VERSION, "kiwipiepy": kiwi_version()},
        "documents": docs,
    }
    return (json.dumps(body, ensure_ascii=False, sort_keys=True, indent=1) + "\n").encode("utf-8")


def emit_index(manifests: list[Manifest]) -> dict[str, bytes]:
    """``{"index/documents.json": bytes}`` — pure, deterministic, no network, no Whoosh."""
    ids = [m.id for m in manifests]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise ValueError(f"duplicate adapter ids: {', '.join(dupes)}")
    return {DOCUMENTS_PATH: documents_bytes(document(m) for m in manifests)}
