"""Issue 17: a request for the whole country sends the nationwide code its manifest declares
(kma_weather_warnings: "108": 전국 (기상청)), read from the field's own labels — a word of a label
named as a word of its own, when the request names no region. A named region still reads as its
region (부산 → 159)."""

from __future__ import annotations

from tests.support.offline_turns import ask


def _args(r, adapter):
    return [c["arguments"] for c in r.calls if c["adapter_id"] == adapter]


def test_the_whole_country_is_the_nationwide_office(engine):
    r = ask(engine, "전국 기상특보 내려진 거 보여줘")
    assert _args(r, "kma_weather_warnings") == [{"station": "108"}], r.calls


def test_a_named_region_keeps_its_own_office(engine):
    r = ask(engine, "부산 기상특보 내려진 거 보여줘")
    assert _args(r, "kma_weather_warnings") == [{"station": "159"}], r.calls
