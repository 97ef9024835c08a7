"""A number in a request is a value the slot readers take (route 1001, 58번), not a topic: an
adapter whose example happens to hold the same number gains nothing from it; a number a title
holds (119, 정부24) still names that service (runtime/retrieve/retriever.py)."""

from tests.retrieve.conftest import make_manifest

from ummaya.codegen.emit_index import DOCUMENTS_PATH, emit_index
from ummaya.runtime.retrieve import Retriever
from ummaya.runtime.retrieve.retriever import value_units


def _bus():
    return [
        make_manifest("route_stops", domain="transport", title=("버스 노선 정류장 목록", "Stops along a bus route"),
                      hints=(("경유 정류장", "정류장 목록", "노선도"), ("stops along the route",)),
                      examples=(("부산 1001번 버스 정류장 어디어디 지나가?", "1001번 노선도"), ())),
        make_manifest("arrivals", domain="transport", title=("버스 도착 정보", "Bus arrivals at a stop"),
                      hints=(("버스 언제 와", "버스 도착", "정류장"), ("bus arrival",)),
                      examples=(("하단역 정류장에 58-1번 버스 언제 와?",), ())),
        make_manifest("emergency_call", domain="safety", title=("119 신고 안내", "How to call 119"),
                      hints=(("신고 안내",), ("emergency call",)), examples=(("불났을 때 어떻게 해",), ())),
    ]


def test_a_number_in_an_example_is_no_evidence_for_its_adapter(tmp_path):
    docs = emit_index(_bus())[DOCUMENTS_PATH]
    r = Retriever(docs, cache_dir=tmp_path / "a")
    ask = "정류장 1001번 버스 와?"
    assert r.search(ask)[0].adapter_id == "arrivals"
    # The rule decides: with numbers read as words, the example's 1001 wins it for the route list.
    off = Retriever(docs, cache_dir=tmp_path / "b", numbers_are_values=False)
    assert off.search(ask)[0].adapter_id == "route_stops"


def test_a_number_a_title_holds_still_names_the_service(tmp_path):
    r = Retriever(emit_index(_bus())[DOCUMENTS_PATH], cache_dir=tmp_path / "c")
    assert "119" in r._title_numbers and "1001" not in r._title_numbers
    assert r.search("119 어떻게 불러")[0].adapter_id == "emergency_call"


def test_a_romanized_district_is_an_argument_and_its_unit_ranks_nothing(tmp_path):
    docs = emit_index([
        make_manifest("notices", title=("응급실 공지", "ER notices"), hints=((), ("ER restriction notice",)),
                      examples=((), ("Are ERs in Jongno-gu restricted?", "ER notices in Seo-gu, Busan"))),
        make_manifest("beds", title=("응급실 병상", "ER beds"), hints=((), ("ER beds", "is the ER full")),
                      examples=((), ("Free ER beds in Busan?",))),
    ])[DOCUMENTS_PATH]
    r = Retriever(docs, cache_dir=tmp_path / "d")
    args = r.argument_terms("Is the ER in Yeonje-gu full")
    assert {"g:yeonj", "g:gu"} <= args and "g:er" not in args
    # 「-gu」 in the notices' examples is no evidence for them: only the district's unit, the
    # adapter that says what the request asks (full) is untouched.
    ask = "Is the ER in Yeonje-gu full"
    on = {c.adapter_id: c.score for c in r.search(ask)}
    off = {c.adapter_id: c.score for c in Retriever(docs, cache_dir=tmp_path / "e", district_arguments=False).search(ask)}
    assert on["notices"] < 0.6 * off["notices"] and on["beds"] == off["beds"]


def test_a_numbers_counter_is_part_of_the_value(tmp_path):
    # The elderly list's summary says 「2021년 자료부터」: the 년 of 「2024년」 is the year's
    # counter, no word of its topic, so the request's year leaves the ranking as it was.
    docs = emit_index([
        make_manifest("hotspots", domain="safety", title=("교통사고 다발지역", "Accident hotspots"),
                      hints=(("교통사고 다발지역", "사고 많은 곳"), ("accident hotspots",)),
                      examples=(("우리 동네 교통사고 다발지역",), ())),
        make_manifest("elderly", domain="safety", title=("노인 보행자 사고 다발지역", "Elderly pedestrian hotspots"),
                      summary=("2021년 자료부터 최근 3년 노인 보행자 교통사고 다발지역", "Elderly pedestrian hotspots"),
                      hints=(("어르신 보행 사고", "노인 보행자"), ("elderly pedestrian",)),
                      examples=(("노인 보행자 교통사고 다발지역",), ())),
    ])[DOCUMENTS_PATH]
    r = Retriever(docs, cache_dir=tmp_path / "f")
    bare = {c.adapter_id: c.score for c in r.search("교통사고 다발지역")}
    dated = {c.adapter_id: c.score for c in r.search("2024년 교통사고 다발지역")}
    assert dated == bare
    assert r.search("2024년 교통사고 다발지역")[0].adapter_id == "hotspots"


def test_a_unit_that_names_a_topic_stays_a_word(tmp_path):
    # 번 after a number is a bus route (1003번 버스), and 가 a street's section (금남로4가): the
    # vocabulary's value_units hold neither, so they still rank; 년 with its particle is a value.
    r = Retriever(emit_index(_bus())[DOCUMENTS_PATH], cache_dir=tmp_path / "g")
    assert value_units() >= {"년", "월", "곳"} and not value_units() & {"번", "가"}
    on = {c.adapter_id: c.score for c in r.search("1001번 정류장 목록")}
    off = {c.adapter_id: c.score for c in Retriever(emit_index(_bus())[DOCUMENTS_PATH], cache_dir=tmp_path / "h",
                                                    numbers_are_values=False).search("1001번 정류장 목록")}
    assert on["route_stops"] > 0 and on != off  # the number left, 번 still ranks
    assert r.search("2024년에 정류장 목록") == r.search("정류장 목록")
