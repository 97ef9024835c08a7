"""Issue 17 item 3, through the real planner on the committed catalog (offline, Mock): an address
or a road reaches the adapter whole — the road name with its ending and building number, never
cut to the district or to a known place inside it."""

from __future__ import annotations

from tests.support.offline_turns import ask


def sent(result) -> list[dict]:
    return [c["arguments"] for c in result.calls]


def test_an_address_search_gets_the_road_with_its_number(engine):
    r = ask(engine, "서울 종로구 대학로 101 도로명주소 알려줘")
    assert {"keyword": "서울 종로구 대학로 101"} in sent(r)


def test_a_road_named_before_an_anchor_is_the_place_searched(engine):
    r = ask(engine, "해운대로 주변 약국 어디 있어?")
    queries = [a.get("query") for a in sent(r) if "query" in a]
    assert queries and queries[0] == "해운대로"
