"""``ummaya eval citizen``: each key of a request's ``useful`` block is judged on the real engine's
answer, a request for adapters not in the registry is pending (counted, never scored), the split
comes from sha1(id), and the report carries the issue's emergency / out-of-scope figures."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from click.testing import CliRunner

from tests.turn.conftest import REPO
from ummaya.cli import main
from ummaya.runtime.eval_citizen import CitizenRequest, load

SET = """\
format: 1
clock: "2026-12-01T10:00:00+09:00"
requests:
  - id: emergency-collapse-x
    request: "아버지가 갑자기 쓰러졌어요"
    domain: health
    scope: emergency
    language: ko
    useful: {emergency_first: "119", no_consent_notice: true}
  - id: out-pet-x
    request: "반려견 등록하고 싶어"
    domain: administration
    scope: out
    language: ko
    useful: {official_channel: true, channel_any: [animal.go.kr], no_consent_notice: true, stop_reason_any: [no_adapter]}
  - id: in-holidays-x
    request: "5월에 공휴일 며칠"
    domain: administration
    scope: in
    language: ko
    useful: {adapters_any: [kasi_public_holidays], contains_any: [어린이날], not_contains: [기독탄신일]}
  - id: in-consent-x
    request: "주거급여 신청해줘"
    domain: welfare
    scope: in
    language: ko
    useful: {adapters_any: [welfare_application_submit], no_consent_notice: true}
  - id: in-followup-x
    before: ["부산 날씨 알려줘"]
    request: "내일은?"
    domain: weather
    scope: in
    language: ko
    useful: {adapters_any: [kma_short_term_forecast], contains_any: ["12월 2일"]}
  - id: in-planned-x
    request: "근처 공영주차장 알려줘"
    domain: transport
    scope: in
    language: ko
    useful: {adapters_any: [no_such_planned_parking_adapter]}
"""


def run(tmp_path: Path, *args: str) -> dict:
    f = tmp_path / "citizen.yaml"
    f.write_text(SET, encoding="utf-8")
    out = CliRunner().invoke(main, ["eval", "citizen", "--json", "--file", str(f), "--root", str(REPO), *args])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_every_key_is_judged_and_planned_adapters_are_pending(tmp_path: Path) -> None:
    rep = run(tmp_path)
    assert rep["requests"] == 6 and rep["pending"] == 1 and rep["scored"] == 5
    failed = {f["id"]: f["problems"] for f in rep["failures"]}
    # the consent notice for the welfare application is what that request does not want
    assert set(failed) == {"in-consent-x"}, failed
    assert failed["in-consent-x"] == ["a consent notice was shown"]
    assert rep["useful"] == 0.8
    assert rep["emergency_first"] == {"n": 1, "share": 1.0}
    assert rep["out_of_scope_way_out"] == {"n": 1, "share": 1.0}
    assert rep["out_of_scope_consent_notice"] == {"n": 1, "share": 0.0}
    assert [p["id"] for p in rep["pending_requests"]] == ["in-planned-x"]
    assert set(rep["scopes"]) == {"emergency", "in", "out"}


def test_the_split_is_fixed_by_the_id(tmp_path: Path) -> None:
    f = tmp_path / "citizen.yaml"
    f.write_text(SET, encoding="utf-8")
    for r in load(f).requests:
        held = hashlib.sha1(r.id.encode()).hexdigest()[0] in "01234"
        assert r.split == ("heldout" if held else "dev")
    rep = run(tmp_path, "--split", "dev")
    assert all(s == "dev" for s in rep["splits"]) and rep["requests"] == sum(1 for r in load(f).requests if r.split == "dev")


def test_a_bad_key_is_refused_with_the_field(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(SET.replace("no_consent_notice: true}", "no_consent: true}", 1), encoding="utf-8")
    out = CliRunner().invoke(main, ["eval", "citizen", "--file", str(f), "--root", str(REPO)])
    assert out.exit_code == 2 and "no_consent" in out.output


def test_the_text_report_names_the_figures(tmp_path: Path) -> None:
    f = tmp_path / "citizen.yaml"
    f.write_text(SET, encoding="utf-8")
    out = CliRunner().invoke(main, ["eval", "citizen", "--file", str(f), "--root", str(REPO), "--failures"])
    assert out.exit_code == 0, out.output
    assert "useful" in out.output and "emergency number on the first line" in out.output
    assert "in-consent-x" in out.output and "1 pending" in out.output


def test_the_committed_set_loads() -> None:
    f = load(REPO / "evals" / "citizen.yaml")
    assert len(f.requests) >= 120 and isinstance(f.requests[0], CitizenRequest)
