"""emit_index: the committed documents.json is byte-reproducible and canonical."""

import json
import random
from pathlib import Path

import pytest

from ummaya.codegen.emit_index import DOCUMENTS_PATH, emit_index


def test_same_manifests_same_bytes_in_any_order(small_manifests):
    a = emit_index(small_manifests)[DOCUMENTS_PATH]
    shuffled = list(small_manifests)
    random.Random(3).shuffle(shuffled)
    b = emit_index(shuffled)[DOCUMENTS_PATH]
    assert a == b
    assert a == emit_index(small_manifests)[DOCUMENTS_PATH]
    assert a.endswith(b"\n") and b"\r" not in a


def test_content_and_shape(small_manifests):
    out = emit_index(small_manifests)
    assert list(out) == ["index/documents.json"]
    body = json.loads(out[DOCUMENTS_PATH])
    docs = body["documents"]
    assert [d["id"] for d in docs] == sorted(m.id for m in small_manifests)
    er = next(d for d in docs if d["id"] == "er_rooms")
    assert er["text"]["ko"]["hints"] == ["응급실", "응급의료기관", "쓰러졌어요"]
    assert er["text"]["en"]["agency"].startswith("National Medical Center")
    assert set(er["text"]["ko"]) == {"title", "summary", "hints", "examples", "agency", "domain", "primitive", "tier"}
    assert er["requires"] == ["coordinates"] and er["primitive"] == "find" and er["tier"] == "live"
    # Kiwi terms precomputed at build time (the query path never loads Kiwi)
    assert "승학" in er["morphs"]["ko"]["examples"].split(" ")
    assert body["analyzer"]["kiwipiepy"]
    assert "응급실" in out[DOCUMENTS_PATH].decode("utf-8")  # Korean kept readable


def test_a_changed_hint_changes_the_bytes(small_manifests):
    before = emit_index(small_manifests)[DOCUMENTS_PATH]
    changed = [m.model_copy(deep=True) for m in small_manifests]
    changed[0].search_hints.ko.append("심정지")
    assert emit_index(changed)[DOCUMENTS_PATH] != before


def test_duplicate_ids_are_refused(small_manifests):
    with pytest.raises(ValueError, match="duplicate"):
        emit_index([small_manifests[0], small_manifests[0]])


def test_domain_glosses_are_registry_data(small_manifests):
    from ummaya.codegen.emit_index import DOMAIN_VOCABULARY, registry_domains

    root = Path(__file__).resolve().parents[2]
    domains = registry_domains(root)
    assert (root / "registry" / "_vocab" / f"{DOMAIN_VOCABULARY}.yaml").exists()
    assert domains["health"].split() == ["건강", "의료", "병원"]
    er = lambda out: next(d for d in json.loads(out[DOCUMENTS_PATH])["documents"] if d["id"] == "er_rooms")  # noqa: E731
    assert er(emit_index(small_manifests, domains))["text"]["ko"]["domain"] == domains["health"]
    # without the vocabulary a domain indexes its code only
    assert er(emit_index(small_manifests))["text"]["ko"]["domain"] == ""
    assert er(emit_index(small_manifests, {"health": "보건"}))["text"]["ko"]["domain"] == "보건"


def test_primitive_and_tier_glosses_are_registry_data(small_manifests):
    from ummaya.codegen.emit_index import PRIMITIVE_VOCABULARY, TIER_VOCABULARY, Glosses, registry_domains

    root = Path(__file__).resolve().parents[2]
    glosses = registry_domains(root)
    for name in (PRIMITIVE_VOCABULARY, TIER_VOCABULARY):
        assert (root / "registry" / "_vocab" / f"{name}.yaml").exists()
    assert glosses.primitive["send"]["ko"].split()[0] == "신고"
    assert glosses.tier["handoff"]["en"] == "official channel guidance"
    er = lambda out: next(d for d in json.loads(out[DOCUMENTS_PATH])["documents"] if d["id"] == "er_rooms")  # noqa: E731
    doc = er(emit_index(small_manifests, glosses))
    assert doc["text"]["en"]["primitive"] == glosses.primitive[doc["primitive"]]["en"]
    # without the vocabularies a primitive and a tier index their codes
    bare = er(emit_index(small_manifests, Glosses({"health": "보건"})))["text"]
    assert (bare["ko"]["primitive"], bare["en"]["tier"]) == (doc["primitive"], doc["tier"])
