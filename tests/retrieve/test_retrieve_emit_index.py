"""emit_index: the committed documents.json is byte-reproducible and canonical."""

import json
import random

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
