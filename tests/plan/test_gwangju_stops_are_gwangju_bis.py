"""Issue 17: a bus stop in Gwangju is answered by Gwangju's own BIS (gwangju_bus_arrivals, the
operator's real-time source); TAGO keeps the other cities. evals/arguments.yaml expects the same
(bus-english-001, bus-stop-002)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.support.offline_turns import ask


def test_a_gwangju_stop_asked_in_english_goes_to_gwangju_bis(engine):
    r = ask(engine, "Next bus at the 금남로4가 stop in Gwangju?")
    assert [(c["adapter_id"], c["arguments"].get("stop_name")) for c in r.calls][:1] == [
        ("gwangju_bus_arrivals", "금남로4가")], r.calls


def test_another_city_stays_with_tago(engine):
    r = ask(engine, "부산 하단역 정류장 버스 도착 정보 알려줘")
    assert [c["adapter_id"] for c in r.calls][:1] == ["tago_bus_arrivals"], r.calls


def test_the_eval_expects_gwangju_bis_for_gwangju_stops():
    cases = yaml.safe_load((Path(__file__).resolve().parents[2] / "evals" / "arguments.yaml").read_text())["cases"]
    gwangju = [c for c in cases if c["id"] in ("bus-english-001", "bus-stop-002")]
    assert len(gwangju) == 2 and {c["adapter"] for c in gwangju} == {"gwangju_bus_arrivals"}
