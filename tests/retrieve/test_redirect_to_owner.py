"""A negative example that belongs to another adapter moves its adapter behind that one, when
the request is closer to it than to anything the adapter says of itself (runtime/retrieve)."""

import numpy as np
from tests.retrieve.conftest import make_manifest

from ummaya.codegen.emit_index import DOCUMENTS_PATH, emit_index
from ummaya.runtime.retrieve import Retriever


def _alerts(negatives=()):
    return make_manifest(
        "dust_alerts", domain="environment", agency=("KECO", "한국환경공단", "Korea Environment Corporation"),
        title=("미세먼지·초미세먼지 주의보·경보 발령 현황", "Fine-dust advisories and warnings"),
        summary=("미세먼지 주의보와 경보 발령 현황", "fine-dust alerts issued"),
        hints=(("미세먼지 주의보", "미세먼지 경보", "초미세먼지 주의보", "초미세먼지 경보"), ("dust advisory",)),
        examples=(("부산 미세먼지 주의보 언제 내려졌어?",), ()), negatives=negatives,
    )


def _now():
    return make_manifest(
        "air_now", domain="environment", agency=("KECO", "한국환경공단", "Korea Environment Corporation"),
        title=("실시간 대기질", "Real-time air quality"),
        summary=("시도별 측정소의 실시간 미세먼지와 오존 농도", "real-time PM10, PM2.5 and ozone by province"),
        hints=(("대기질", "공기 질", "지금 공기", "마스크 써야 해", "미세먼지"), ("air quality", "fine dust")),
        examples=(("창문 열고 환기해도 돼?", "오늘 마스크 써야 해?"), ()),
    )


def test_a_negative_example_owned_by_a_neighbour_puts_the_neighbour_first(tmp_path, small_manifests):
    told = Retriever(emit_index([*small_manifests, _alerts((("미세먼지 어때?", "air_now"),)), _now()])
                     [DOCUMENTS_PATH], cache_dir=tmp_path / "b")
    ask = "대구 미세먼지 어때?"
    assert [c.adapter_id for c in told.search(ask)][:2] == ["air_now", "dust_alerts"]
    # The alerts' own words still win for an alert question.
    assert told.search("대구 미세먼지 경보 내려졌어?")[0].adapter_id == "dust_alerts"
    # It is the redirect that decides, not only the text the negative example credits to air_now.
    told.examples.redirectable[:] = False
    assert told.search(ask)[0].adapter_id == "dust_alerts"


def test_a_redirect_never_moves_a_candidate_behind_one_that_is_not_ranked(tmp_path, small_manifests):
    r = Retriever(emit_index([*small_manifests, _alerts((("미세먼지 어때?", "er_rooms"),)), _now()])
                  [DOCUMENTS_PATH], cache_dir=tmp_path / "c")
    ask, only = "대구 미세먼지 어때?", {"domain": "environment"}  # er_rooms is filtered out
    with_rule = [(c.adapter_id, c.score) for c in r.search(ask, filters=only)]
    r.examples.redirectable[:] = False
    assert with_rule == [(c.adapter_id, c.score) for c in r.search(ask, filters=only)]
    assert with_rule[0][0] == "dust_alerts"


def test_no_redirect_when_the_request_adds_a_word_of_the_candidate_own(tmp_path, small_manifests):
    r = Retriever(emit_index([*small_manifests, _alerts((("미세먼지 어때?", "air_now"),)), _now()])
                  [DOCUMENTS_PATH], cache_dir=tmp_path / "d")
    from ummaya.model.analysis import grams

    ask = "대구 미세먼지 경보 어때?"  # 경보 is the alerts' own word, and the example lacks it
    i = r.ids.index("dust_alerts")
    q = [g for g in grams(ask) if f"g:{g}" not in r.no_evidence]
    qids, qidf = r.examples.query(q)
    topic, _ = r.examples.query([g for g in grams(ask) if f"g:{g}" not in r.argument_terms(ask)])
    assert r.examples.redirect(i, qids, qidf, 2.0)[2] == r.ids.index("air_now")  # without the words check
    assert r.examples.redirect(i, qids, qidf, 2.0, topic)[2] == -1
    assert r.search(ask)[0].adapter_id == "dust_alerts"


def test_a_word_both_adapters_say_of_themselves_does_not_stop_the_redirect(tmp_path, small_manifests):
    # 초미세먼지 is in the alerts' hints and about as often in the air-quality adapter's: it tells
    # them apart no better than the negative example 「지금 미세먼지 나쁨이야?」 does, so the example
    # decides.
    now = _now()
    now.search_hints.ko.extend(["초미세먼지", "초미세먼지 농도"])
    r = Retriever(emit_index([*small_manifests, _alerts((("지금 미세먼지 나쁨이야?", "air_now"),)), now])
                  [DOCUMENTS_PATH], cache_dir=tmp_path / "e")
    ask = "초미세먼지 나쁨이야?"
    assert r.search(ask)[0].adapter_id == "air_now"
    # A word only the alerts say (경보) still keeps them first.
    assert r.search("초미세먼지 경보 나쁨이야?")[0].adapter_id == "dust_alerts"


def test_a_word_neither_adapter_says_is_no_ones():
    # An owner with many sentences makes any unsaid word's smoothed share small: that must not make
    # a word the demoted adapter never says either (a city: 청주) "markedly its own".
    from ummaya.runtime.retrieve.counter_examples import CounterExamples

    def doc(id, hints, negatives=()):
        t = {"title": id, "hints": list(hints), "examples": []}
        return {"id": id, "text": {"ko": t, "en": {"title": "", "hints": [], "examples": []}},
                "negative_examples": [{"text": n, "belongs_to": b} for n, b in negatives]}

    ex = CounterExamples.from_documents([
        doc("alerts", ["미세먼지 경보", "주의보 발령"], [("미세먼지 어때?", "now")]),
        doc("now", [f"{c} 미세먼지 어때" for c in ("서울", "부산", "대전", "광주", "울산", "세종", "제주", "강릉")] * 4),
        doc("other", ["청주 날씨"]),
    ])
    assert not ex._whose(np.array([ex.vocab["청주"]]), 0, 1)
    assert ex._whose(np.array([ex.vocab["경보"]]), 0, 1)
