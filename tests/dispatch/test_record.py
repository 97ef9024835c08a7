"""``ummaya record``: a Live answer from a loopback upstream becomes a recorded fixture — keys
removed from everything stored, personal data masked — and the build accepts it as is."""

from __future__ import annotations

import datetime as dt
from urllib.parse import quote, quote_plus

import pytest
import yaml

from tests.codegen.project import NMC, make_project, run
from tests.support.upstreams import XML, Reply, UpstreamServer, data_go_kr_xml, gateway_error_xml

ER_PATH = "/B552657/ErmctInfoInqireService/getEgytLcinfoInqire"
KEY = "Rec0rd+Key/abc=="
ROW = {
    "cnt": "1",
    "distance": "0.95",
    "dutyAddr": "서울특별시 종로구 새문안로 29 (평동)",
    "dutyDiv": "A",
    "dutyDivName": "종합병원",
    "dutyName": "강북삼성병원",
    "dutyTel1": "010-1234-5678",  # a personal mobile where an institution line belongs
    "hpid": "A1100017",
    "latitude": "37.5684083",
    "longitude": "126.9678046",
    "rnum": "1",
}


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = make_project(tmp_path / "proj")
    with UpstreamServer() as srv:
        monkeypatch.setenv("DATA_GO_KR_SERVICE_KEY", KEY)
        monkeypatch.setenv("UMMAYA_BASE_URL_NMC_EMERGENCY_ROOMS", srv.url)
        monkeypatch.setenv("UMMAYA_CACHE", str(tmp_path / "cache"))
        yield root, srv


def _stored(root):
    return {p: p.read_bytes() for p in (root / "registry").rglob("*") if p.is_file()}


def test_record_writes_a_recorded_fixture_without_keys_or_personal_data(project):
    root, srv = project
    # Some gateways echo the request back; the key must not survive in the stored body.
    body = data_go_kr_xml([ROW], msg=f"NORMAL SERVICE. serviceKey={quote(KEY, safe='')}")
    srv.route(ER_PATH, Reply(body=body, content_type=XML))
    result = run(
        "record", "nmc_emergency_rooms", "--args", '{"latitude": 37.5665, "longitude": 126.978}',
        "--name", "seoul_recorded", "--root", str(root),
    )
    assert result.exit_code == 0, result.output
    assert "wrote registry/nmc/fixtures/nmc_emergency_rooms/seoul_recorded.xml" in result.stdout
    (seen,) = srv.seen(ER_PATH)
    assert seen.param("serviceKey") == KEY  # the live call did use the key …

    stored = _stored(root)
    for blob in stored.values():  # … and nothing stored keeps it, in any encoding
        for form in (KEY, quote(KEY, safe=""), quote_plus(KEY)):
            assert form.encode() not in blob
        assert b"1234-5678" not in blob
    saved = stored[root / "registry/nmc/fixtures/nmc_emergency_rooms/seoul_recorded.xml"]
    assert "<dutyTel1>010-****-****</dutyTel1>".encode() in saved
    assert "<dutyName>강북삼성병원</dutyName>".encode() in saved  # the rest byte for byte

    doc = yaml.safe_load((root / NMC).read_text(encoding="utf-8"))
    fx = next(f for f in doc["fixtures"] if f["name"] == "seoul_recorded")
    today = dt.datetime.now(dt.timezone(dt.timedelta(hours=9))).date()
    assert fx["source"] == "recorded" and fx["recorded_on"] in (today, today - dt.timedelta(days=1))
    assert fx["request"] == {"latitude": 37.5665, "longitude": 126.978}
    assert fx["expected"]["items"][0]["phone"] == "010-****-****"
    assert "serviceKey" not in fx["description"] and "WGS84_LAT=37.5665" in fx["description"]

    built = run("build", "--root", str(root), "-q")  # the link stage accepts it as written
    assert built.exit_code == 0, built.output
    check = run("check", "--root", str(root))
    assert "recorded 1/3 (33%)" in check.stdout, check.output


def test_record_keeps_an_error_answer_as_an_error_fixture(project):
    root, srv = project
    srv.route(ER_PATH, Reply(body=gateway_error_xml("30"), content_type=XML))
    result = run("record", "nmc_emergency_rooms", "--args", '{"latitude": 37.5, "longitude": 127.0}', "--name", "key_refused", "--root", str(root))
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load((root / NMC).read_text(encoding="utf-8"))
    fx = next(f for f in doc["fixtures"] if f["name"] == "key_refused")
    assert fx["expected_error"] == "credential_missing" and fx["source"] == "recorded"
    assert run("build", "--root", str(root), "-q").exit_code == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--args", "{nope"], "--args: not JSON"),
        (["--args", "[1]"], "--args: must be a JSON object"),
        (["--args", '{"latitude": 37.5, "longitude": 127.0}', "--name", "busan_saha_multi"], "already has a fixture named 'busan_saha_multi'"),
        (["--args", '{"latitude": 37.5, "longitude": 127.0}', "--name", "Bad-Name"], "use lower-case letters"),
        (["--args", '{"latitude": "x", "longitude": 127.0}'], "latitude"),
    ],
)
def test_record_refuses_cleanly(project, argv, message):
    root, srv = project
    srv.route(ER_PATH, Reply(body=data_go_kr_xml([ROW]), content_type=XML))
    before = _stored(root)
    result = run("record", "nmc_emergency_rooms", *argv, "--root", str(root))
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert _stored(root) == before


def test_record_needs_the_keys(project, monkeypatch):
    root, _ = project
    monkeypatch.delenv("DATA_GO_KR_SERVICE_KEY")
    result = run("record", "nmc_emergency_rooms", "--args", "{}", "--root", str(root))
    assert result.exit_code == 2 and "needs DATA_GO_KR_SERVICE_KEY" in result.stderr


def test_record_warns_when_the_answer_has_fields_the_guide_does_not_document(project):
    root, srv = project
    srv.route(ER_PATH, Reply(body=data_go_kr_xml([dict(ROW, dutyEmclsName="권역응급의료센터")]), content_type=XML))
    result = run("record", "nmc_emergency_rooms", "--args", '{"latitude": 37.5, "longitude": 127.0}', "--name", "drifted", "--root", str(root))
    assert result.exit_code == 0, result.output
    assert "warning: registry/nmc/nmc_emergency_rooms.yaml:" in result.stderr
    assert "'dutyEmclsName' (record 0) which the documented response" in result.stderr
