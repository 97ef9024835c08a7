"""Issues 17 and 18: the turn's one scope decision (runtime/turn/scope.py). Every way out is the same
stop (``no_adapter``) with one ``check: scope`` event naming why; retrieval's fit is its verdict, so
a paraphrase retrieval kept is answered; a code label alone, another service's channel or a
protected near miss is not; and ``ummaya eval retrieval --engine`` measures it end to end."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ummaya.runtime.turn import TurnRequest
from ummaya.runtime.turn.scope import WHY

REPO = Path(__file__).resolve().parents[2]


def ask(engine, query: str, **kw):
    return asyncio.run(engine.ask(TurnRequest(query, mode="mock", **kw)))


def scope_checks(r) -> list[dict]:
    return [e.data for e in r.events if e.type == "check" and e.data.get("check") == "scope"]


def acted(r) -> list[str]:
    return [c["adapter_id"] for c in r.calls] + [e.data.get("adapter_id") for e in r.events if e.type == "permission"]


@pytest.mark.parametrize("query,why", [
    ("김치찌개 레시피 알려줘", "retrieval_abstained"),
    ("노트북 추천해줘 대학생용", "label_only"),  # a life stage of the welfare catalogue's code field
    ("translate this sentence into Japanese", "label_only"),  # a country of the travel warnings
    ("대형폐기물 스티커 어디서 사", "other_channel"),  # the district office, not a pharmacy
    ("카카오톡 백업하는 법", "consent_unnamed"),  # never the identity check's consent notice
])
def test_every_way_out_is_one_stop_with_one_scope_check_naming_why(engine, query, why):
    r = ask(engine, query)
    assert r.stop_reason == "no_adapter", (r.stop_reason, acted(r), r.answer)
    checks = scope_checks(r)
    assert [c["why"] for c in checks] == [why], checks
    assert checks[0]["reason"] == "no_adapter" and why in WHY
    assert not r.calls and not [e for e in r.events if e.type == "permission"]
    assert ("수 없습니다" in r.answer) or ("cannot" in r.answer), r.answer


def test_the_way_out_speaks_the_citizens_language(engine):
    r = ask(engine, "Translate 'thank you' into Japanese")
    assert r.stop_reason == "no_adapter" and r.language == "en"
    assert "cannot" in r.answer and "gov.kr" in r.answer and "수 없습니다" not in r.answer, r.answer


def test_a_named_channel_is_said_when_the_request_names_one(engine):
    r = ask(engine, "대형폐기물 스티커 어디서 사")
    assert scope_checks(r)[0]["message"].endswith("(local_office)")
    assert "120" in r.answer, r.answer


@pytest.mark.parametrize("query,adapter_id", [
    # paraphrases that name no service word: retrieval kept them on two words of evidence
    ("이번 선거 때 도장 찍으러 갈 장소 알고 싶어", "nec_polling_places"),
    ("3일장에 조문객 200명이면 총 얼마 들어?", "bfc_funeral_cost_estimate"),
    ("새벽에 출근하는데 그 노선 제일 이른 차가 몇 시에 출발해? 부산 1003번", "tago_bus_route_search"),
])
def test_a_paraphrase_retrieval_kept_is_answered(engine, query, adapter_id):
    r = ask(engine, query)
    assert r.stop_reason != "no_adapter", (scope_checks(r), r.answer)
    assert adapter_id in acted(r) or r.stop_reason == "needs_input", (r.stop_reason, acted(r))


@pytest.mark.parametrize("query,adapter_id", [
    ("전기차 charger 근처 하단동", "keco_ev_chargers"),  # 전기차 holds 기차: no train booking
    ("대전 1호선 갈마역에서 탄방역 가는데 얼마 내야 돼", "djtc_subway_fare_time"),  # 1호선 holds 호선
    ("행복주택 공고 list 경기", "molit_public_rental_notices"),  # the notices declare 행복주택 and cover the request
])
def test_a_channel_phrase_the_adapter_declares_is_the_adapters(engine, query, adapter_id):
    r = ask(engine, query)
    assert r.stop_reason != "no_adapter", (scope_checks(r), r.answer)
    assert adapter_id in acted(r), acted(r)


def test_a_channel_phrase_an_unrelated_adapter_merely_mentions_still_goes_to_the_channel(engine):
    # the subway dust adapter says 지하철, but covers too little of a travel-time question
    r = ask(engine, "서울 지하철 강남역에서 홍대입구역 몇 분 걸려?")
    assert r.stop_reason == "no_adapter" and [c["why"] for c in scope_checks(r)] == ["other_channel"]
    assert "1577-1234" in r.answer


def test_a_protected_candidate_below_retrievals_best_never_reaches_the_planner(engine):
    r = ask(engine, "Has the playground in our apartment complex passed its safety check?")
    assert r.stop_reason != "no_adapter", r.answer
    assert "mois_playground_safety" in acted(r) and "simple_auth_verify" not in acted(r)
    dropped = [e.data for e in r.events if e.type == "check" and e.data.get("check") == "scope_candidates"]
    assert dropped and dropped[0]["adapter_id"] == "simple_auth_verify" and dropped[0]["why"] == "consent_unnamed"


def test_the_service_a_request_names_keeps_its_protected_adapter(engine):
    r = ask(engine, "PASS 앱으로 인증할래")
    assert "simple_auth_verify" in acted(r), (r.stop_reason, r.answer)


# -- end to end, measured --------------------------------------------------------------------------

ROWS = [
    {"query": "하단역 근처 응급실 좀", "expected": ["nmc_emergency_rooms"], "kind": "colloquial_ko", "split": "tune"},
    {"query": "이번 선거 때 도장 찍으러 갈 장소 알고 싶어", "expected": ["nec_polling_places"], "kind": "paraphrase", "split": "tune"},
    {"query": "김치찌개 레시피 알려줘", "expected": [], "kind": "out_of_scope", "split": "tune"},
    {"query": "노트북 추천해줘 대학생용", "expected": [], "kind": "out_of_scope", "split": "holdout"},
    {"query": "ER 병상", "expected": ["nmc_emergency_beds"], "kind": "mixed", "split": "holdout"},
]


def test_abstention_end_to_end_counts_the_engines_way_out(engine):
    from ummaya.runtime.eval_abstention import compare
    from ummaya.runtime.retrieve.eval_retrieval import EvalRequest

    reqs = [EvalRequest(r["query"], tuple(r["expected"]), r["kind"], r["split"]) for r in ROWS]
    # a retriever that keeps everything: retrieval alone abstains on nothing
    c = compare(reqs, engine, lambda q: ["nmc_emergency_rooms"])
    e, ret = c.engine.overall, c.retrieval.overall
    assert (e.abstain_tp, e.abstain_fp, e.abstain_fn) == (2, 0, 0), c.rows
    assert (ret.abstain_tp, ret.abstain_fp, ret.abstain_fn) == (0, 0, 2)
    assert c.engine.by_split["holdout"].abstain_tp == 1 and c.engine.by_split["tune"].abstain_tp == 1
    assert c.rows["노트북 추천해줘 대학생용"].why == "label_only"
    assert c.rows["하단역 근처 응급실 좀"].acted[0] == "nmc_emergency_rooms"  # the find, not its locate step
    assert c.as_dict()["why"] == {"label_only": 1, "retrieval_abstained": 1}


def test_eval_retrieval_engine_prints_both_per_split(tmp_path, monkeypatch):
    from ummaya.cli import main

    monkeypatch.setenv("UMMAYA_HOME", str(tmp_path / "home"))
    f = tmp_path / "rows.yaml"
    f.write_text(json.dumps({"format": 1, "requests": ROWS}, ensure_ascii=False), encoding="utf-8")
    out = CliRunner().invoke(main, ["eval", "retrieval", "--engine", "--file", str(f), "--root", str(REPO), "--json"])
    assert out.exit_code in (0, 1), out.output
    d = json.loads(out.stdout)
    assert set(d["engine"]["by_split"]) == {"tune", "holdout"} and set(d["retrieval"]["by_split"]) == {"tune", "holdout"}
    assert d["engine"]["overall"]["abstain_tp"] == 2 and d["engine"]["overall"]["abstain_fp"] == 0
    text = CliRunner().invoke(main, ["eval", "retrieval", "--engine", "--file", str(f), "--root", str(REPO)])
    assert "end to end" in text.output and "retrieval alone" in text.output and "split=holdout" in text.output


def test_the_eval_counts_the_adapter_a_question_was_asked_for_not_the_locate_step_before_it():
    # 「잠실 엘스 아파트 최근 실거래가」: the address lookup finds the 법정동 code, then the turn asks
    # which month for the trade prices — the turn acted on the trade prices, not on the lookup
    from types import SimpleNamespace

    from ummaya.runtime.eval_abstention import acted_on

    catalog = SimpleNamespace(adapters={"where": SimpleNamespace(primitive="locate"),
                                        "prices": SimpleNamespace(primitive="find")})
    ev = SimpleNamespace
    r = SimpleNamespace(stop_reason="needs_input", calls=[{"adapter_id": "where", "status": "ok"}],
                        candidates=[{"adapter_id": "prices"}],
                        events=[ev(type="plan", data={"action": "call", "calls": [{"adapter_id": "where"}]}),
                                ev(type="permission", data={"adapter_id": "where"}),
                                ev(type="plan", data={"action": "ask", "calls": [{"adapter_id": "prices"}]})])
    assert acted_on(r, catalog) == ["prices", "where"]
    # a locate step that is all the turn did is still what it acted on
    alone = SimpleNamespace(stop_reason="completed", calls=[{"adapter_id": "where", "status": "ok"}],
                            candidates=[], events=[ev(type="permission", data={"adapter_id": "where"})])
    assert acted_on(alone, catalog) == ["where"]


def test_an_official_label_named_whole_is_evidence_of_its_own(engine):
    # retrieval finds nothing in 「신경과 찾아줘」; 신경과 is one of the hospital search's official
    # specialty labels (x-enum-labels), unlike a citizen's word for a life stage (대학생용)
    r = ask(engine, "신경과 찾아줘 35.1796, 129.0756")
    assert r.stop_reason == "completed" and "hira_hospitals" in acted(r), (scope_checks(r), r.answer)
