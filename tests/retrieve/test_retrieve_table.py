"""The loaded retriever keeps a compact table, not the documents, and a cached index is loaded
without parsing them."""

import json

import pytest

from ummaya.runtime.retrieve import Retriever
from ummaya.runtime.retrieve.index import TABLE_FILE


def test_documents_are_not_kept(tmp_path, small_documents):
    r = Retriever(small_documents, cache_dir=tmp_path)
    assert not hasattr(r, "docs")
    docs = json.loads(small_documents)["documents"]
    assert r.ids == [d["id"] for d in docs]
    assert (r.folder / TABLE_FILE).exists()
    assert r.search("1001번 버스 언제 와?")[0].agency == next(d["agency"]["code"] for d in docs if d["id"] == "bus_arrivals")


def test_a_cached_index_is_loaded_without_parsing_the_documents(tmp_path, small_documents, monkeypatch):
    first = Retriever(small_documents, cache_dir=tmp_path)

    class NoParse:
        @staticmethod
        def loads(*a, **k):
            raise AssertionError("documents parsed although the index is cached")

    monkeypatch.setattr("ummaya.runtime.retrieve.retriever.json", NoParse)
    again = Retriever(small_documents, cache_dir=tmp_path)
    assert again.folder == first.folder
    assert [c.adapter_id for c in again.search("약국 위치")] == [c.adapter_id for c in first.search("약국 위치")]


def test_an_index_cached_without_a_table_gets_one(tmp_path, small_documents):
    first = Retriever(small_documents, cache_dir=tmp_path)
    (first.folder / TABLE_FILE).unlink()
    again = Retriever(small_documents, cache_dir=tmp_path)
    assert (again.folder / TABLE_FILE).exists() and again.ids == first.ids


@pytest.mark.parametrize("slots", [frozenset(), frozenset({"coordinates"}), frozenset({"coordinates", "address"})])
def test_context_signal_follows_each_documents_declared_slots(tmp_path, small_documents, slots):
    r = Retriever(small_documents, cache_dir=tmp_path)
    mult = r.signals("약국", slots) / r.signals("약국", frozenset())
    for i, d in enumerate(json.loads(small_documents)["documents"]):
        want = 1.0
        req, prov = set(d["requires"]), set(d["provides"])
        if req and req <= slots:
            want *= 1 + r.context_boost
        if prov and prov <= slots:
            want *= 1 - r.context_boost
        assert mult[i] == pytest.approx(want), d["id"]


def test_a_known_morpheme_inside_an_unknown_word_is_no_evidence(tmp_path, small_manifests):
    from tests.retrieve.conftest import make_manifest

    from ummaya.codegen.emit_index import DOCUMENTS_PATH, emit_index

    aed = make_manifest(
        "aed_finder", title=("자동심장충격기 위치", "AED locations"), summary=("자동심장충격기 설치 위치", "AEDs"),
        hints=(("자동심장충격기", "심장충격기 어디"), ("AED",)), examples=(("근처 자동심장충격기 어디 있어",), ()),
    )
    r = Retriever(emit_index([*small_manifests, aed])[DOCUMENTS_PATH], cache_dir=tmp_path)
    assert r.segment.is_whole("자동심장충격기는") and r.segment.is_whole("약국에서")
    assert not r.segment.is_whole("자동차")  # 자동 is indexed, 자동차 is another word
    assert "m:자동" in r.partial_terms("자동차 보험 비교해줘")
    assert r.search("자동차 보험 비교해줘") == []
    assert r.search("자동심장충격기 어디 있어")[0].adapter_id == "aed_finder"
    r.whole_words = False
    r.evidence_words = 1  # one shared word is evidence again: only the whole-word rule is off
    assert r.search("자동차 보험 비교해줘")[:1] and r.search("자동차 보험 비교해줘")[0].adapter_id == "aed_finder"


def test_text_evidence_from_one_word_alone_does_not_fit(tmp_path, small_manifests):
    from tests.retrieve.conftest import make_manifest

    from ummaya.codegen.emit_index import DOCUMENTS_PATH, emit_index

    meals = make_manifest(
        "school_meals", title=("학교 급식 식단", "School meals"), summary=("학교 급식 식단표", "school lunch menus"),
        hints=(("급식", "식단", "식단표"), ("school lunch",)), examples=(("오늘 학교 급식 식단 알려줘",), ()),
    )
    r = Retriever(emit_index([*small_manifests, meals])[DOCUMENTS_PATH], cache_dir=tmp_path, abstain_text=0.5)
    # 식단 alone is everyday language (a diet plan); the text path wants two words of evidence
    query = "다이어트 식단 짜줘"
    words = r.word_evidence(query, r.ids.index("school_meals"))
    assert sum(e >= r.word_floor for e in words) == 1
    assert r.search(query) == []
    assert r.search("학교 급식 식단 짜줘")[0].adapter_id == "school_meals"
    r.evidence_words = 1
    assert r.search(query)[0].adapter_id == "school_meals"


def test_a_negative_example_that_belongs_to_nothing_refutes_its_adapter(tmp_path, small_manifests):
    from tests.retrieve.conftest import make_manifest

    from ummaya.codegen.emit_index import DOCUMENTS_PATH, emit_index

    def meals(negatives):
        return make_manifest(
            "school_meals", domain="education", title=("학교 급식 메뉴", "School meals"),
            summary=("학교 급식 식단", "school lunch menu"), hints=(("급식", "급식 메뉴", "학교 메뉴"), ("school lunch",)),
            examples=(("오늘 급식 메뉴 뭐야",), ()), negatives=negatives,
        )

    plain = Retriever(emit_index([*small_manifests, meals(())])[DOCUMENTS_PATH], cache_dir=tmp_path / "a")
    assert [c.adapter_id for c in plain.search("저녁 메뉴 뭐 먹지 추천 좀")][:1] == ["school_meals"]
    told = Retriever(emit_index([*small_manifests, meals((("오늘 저녁 메뉴 추천해줘", None),))])
                     [DOCUMENTS_PATH], cache_dir=tmp_path / "b")
    assert told.search("저녁 메뉴 뭐 먹지 추천 좀") == []
    assert told.search("오늘 급식 메뉴 뭐야")[0].adapter_id == "school_meals"  # its own words still win
    for_, against, kind = told.examples.verdict(
        told.ids.index("school_meals"), *told.examples.query(["저녁", "메뉴", "추천"]), 2.0)
    assert against > for_ and kind == 1


def test_a_district_name_is_an_argument_not_a_topic(tmp_path, small_documents):
    r = Retriever(small_documents, cache_dir=tmp_path)
    query = "신내동 약국 목록 보여줘"
    args = r.argument_terms(query)
    assert "g:신내" in args and "g:약국" not in args
    assert not r.argument_terms("야구 오늘 경기 결과")  # 경기 is a province's short name, and a game
    i = r.ids.index("pharmacies")
    terms, partial = r.analyse(query)
    with_args = r.match(terms, partial, args).coverage[i]
    without = r.match(terms, partial).coverage[i]
    assert with_args > without  # 신내동 no longer counts against the pharmacy lookup
    r.district_arguments = False
    assert not r.argument_terms(query)


def test_an_action_cue_is_no_topic(tmp_path, small_documents):
    r = Retriever(small_documents, cache_dir=tmp_path)
    cues = r.cue_terms("정화조 청소 신청하고 싶어")
    assert "g:신청" in cues and "g:정화" not in cues
    assert not r.cue_terms("근처 약국 어디야")  # location cues are neutral already (retrieval_words.location_cues)
    # 신청 ranks (the send adapters come first) but covers nothing: the request is about 정화조
    terms, partial = r.analyse("정화조 청소 신청하고 싶어")
    assert r.match(terms, partial, cues).coverage.max() == 0.0
    assert r.search("정화조 청소 신청하고 싶어") == []


def test_packed_word_lists_read_back_whole():
    from ummaya.runtime.retrieve.doc_table import Packed

    p = Packed([["응급실", "emergency room"], [], ["약국"]])
    assert len(p) == 3
    assert p[0] == ["응급실", "emergency room"] and p[1] == [] and p[2] == ["약국"]
    assert list(p) == [["응급실", "emergency room"], [], ["약국"]]
    assert p[1:] == [[], ["약국"]]
