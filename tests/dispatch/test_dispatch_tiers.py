"""Tier choice, Mock through the same reader as Live, Handoff material, and the host guard."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.dispatch.helpers import catalog, item_schema, manifest, no_wait, run
from tests.support.upstreams import (
    XML,
    Reply,
    UpstreamServer,
    data_go_kr_json,
    data_go_kr_xml,
    gateway_error_xml,
)
from ummaya.runtime.dispatch import Dispatcher, call_sync
from ummaya.wire.fixture_reader import parse_fixture

PATH = "/B552657/ErmctInsttInfoInqireService/getParmacyLcinfoInqire"
ROWS = [
    {
        "hpid": "C2100001",
        "dutyName": "하단온누리약국",
        "dutyAddr": "부산광역시 사하구 낙동대로 550",
        "distance": "0.31",
    },
    {
        "hpid": "C2100002",
        "dutyName": "승학약국",
        "dutyAddr": "부산광역시 사하구 하신중앙로 3",
        "distance": "0.72",
    },
]
BODY = data_go_kr_xml(ROWS)
ENV = {"DATA_GO_KR_SERVICE_KEY": "k+ey=="}


def pharmacy(**over):
    base = dict(
        credentials=["DATA_GO_KR_SERVICE_KEY"],
        upstream={
            "profile": "data_go_kr",
            "path": PATH,
            "format": "xml",
            "params": {"WGS84_LAT": "latitude", "WGS84_LON": "longitude", "numOfRows": "limit"},
            "fields": {
                "id": "hpid",
                "name": "dutyName",
                "address": "dutyAddr",
                "distance_km": {"source": "distance", "transform": "float"},
            },
        },
        input_schema={
            "type": "object",
            "required": ["latitude", "longitude"],
            "properties": {
                "latitude": {"type": "number", "minimum": 33, "maximum": 39},
                "longitude": {"type": "number"},
                "limit": {"type": "integer", "default": 3},
            },
        },
        output_schema=item_schema(
            {
                "id": {"type": "string"},
                "name": {"type": "string"},
                "address": {"type": "string"},
                "distance_km": {"type": "number"},
            }
        ),
        fixtures=[
            {
                "name": "key_error",
                "request": {"latitude": 35.0, "longitude": 129.0},
                "response": "key_error.xml",
                "expected_error": "credential_missing",
            },
            {
                "name": "hadan",
                "request": {"latitude": 35.1061, "longitude": 128.9668},
                "response": "hadan.xml",
                "expected": {"items": [], "total_count": 0},
            },
            {
                "name": "hadan_limit_1",
                "request": {"latitude": 35.1061, "longitude": 128.9668, "limit": 1},
                "response": "one.xml",
                "expected": {"items": [], "total_count": 0},
            },
        ],
    )
    base.update(over)
    return manifest("pharmacy_test", **base)


PHARMACY = pharmacy()
BODIES = {
    "pharmacy_test": {
        "hadan.xml": BODY,
        "one.xml": data_go_kr_xml(ROWS[:1]),
        "key_error.xml": gateway_error_xml("30"),
    }
}

HANDOFF = manifest(
    "move_in_test",
    primitive="send",
    tier="handoff",
    permission={"gate": "blocked"},
    citation={
        "title": "주민등록법",
        "url": "https://www.law.go.kr/",
        "verified": "2026-11-01",
        "basis": "주민등록법 제16조",
    },
    output_schema={"type": "object"},
    handoff={
        "channel": {"ko": "정부24 전입신고", "en": "Gov24 move-in report"},
        "url": "https://www.gov.kr/",
        "steps": {
            "ko": ["정부24 로그인", "전입신고 신청"],
            "en": ["Sign in to Gov24", "Apply for the move-in report"],
        },
        "documents": {"ko": ["신분증"], "en": ["ID card"]},
        "deadline": {"ko": "전입한 날부터 14일 이내", "en": "Within 14 days of moving"},
    },
)

MOCK_TIER = manifest(
    "mobile_id_test",
    primitive="check",
    tier="mock",
    citation={
        "title": "모바일 신분증",
        "url": "https://www.mobileid.go.kr/",
        "verified": "2026-11-01",
        "basis": "주민등록법 제25조",
    },
    upstream={
        "path": "/verify",
        "callable": False,
        "envelope": {"kind": "json"},
        "record_path": "results",
    },
    input_schema={"type": "object", "properties": {"name": {"type": "string"}}},
    output_schema=item_schema({"verified": {"type": "boolean"}}),
    fixtures=[
        {
            "name": "verified",
            "request": {"name": "홍길동"},
            "response": "verified.json",
            "expected": {"items": [{"verified": True}], "total_count": 1},
        },
        {
            "name": "declared_only",
            "request": {"name": "김철수"},
            "expected": {"items": [{"verified": False}], "total_count": 1},
        },
    ],
)


def make(tmp_path, *manifests, env=ENV, **kw):
    bodies = dict(BODIES)
    bodies["mobile_id_test"] = {"verified.json": b'{"results": [{"verified": "Y"}]}'}
    kw.setdefault("sleep", no_wait)
    return Dispatcher(catalog(tmp_path, *manifests, bodies=bodies), env=env, **kw)


class Recorder(httpx.AsyncBaseTransport):
    """Never touches the network: records what would have been sent."""

    def __init__(self, reply: bytes = BODY):
        self.requests: list[httpx.Request] = []
        self.reply = reply

    async def handle_async_request(self, request):
        self.requests.append(request)
        return httpx.Response(200, content=self.reply, headers={"content-type": XML})


# -- tiers ---------------------------------------------------------------------------------------


def test_resolve_tier(tmp_path):
    with_key = make(tmp_path, PHARMACY, HANDOFF, MOCK_TIER)
    without = make(tmp_path, PHARMACY, HANDOFF, MOCK_TIER, env={})
    for d in (with_key, without):
        for mode in ("auto", "live", "mock"):
            assert d.resolve_tier("move_in_test", mode) == "handoff"
            assert d.resolve_tier("mobile_id_test", mode) == "mock"
        assert d.resolve_tier("pharmacy_test", "mock") == "mock"
        assert d.resolve_tier("pharmacy_test", "live") == "live"
    assert with_key.resolve_tier("pharmacy_test", "auto") == "live"
    assert without.resolve_tier("pharmacy_test", "auto") == "mock"
    empty_key = make(tmp_path, PHARMACY, env={"DATA_GO_KR_SERVICE_KEY": ""})
    assert empty_key.resolve_tier("pharmacy_test", "auto") == "mock"


def test_blank_credentials_count_as_missing_and_pasted_keys_are_trimmed(tmp_path):
    assert (
        make(tmp_path, PHARMACY, env={"DATA_GO_KR_SERVICE_KEY": "  \n"}).resolve_tier(
            "pharmacy_test", "auto"
        )
        == "mock"
    )
    rec = Recorder()
    d = make(tmp_path, PHARMACY, env={"DATA_GO_KR_SERVICE_KEY": " k+ey==\n"}, transport=rec)
    out = run(d.call("pharmacy_test", {"latitude": 35.1, "longitude": 129.0}, mode="live"))
    assert out.status == "ok"
    assert rec.requests[0].url.params["serviceKey"] == "k+ey=="


def test_unknown_mode_is_refused(tmp_path):
    with pytest.raises(ValueError, match="mode must be"):
        make(tmp_path, PHARMACY).resolve_tier("pharmacy_test", "sometimes")


def test_live_without_credential_fails_before_any_request(tmp_path):
    rec = Recorder()
    out = run(
        make(tmp_path, PHARMACY, env={}, transport=rec).call(
            "pharmacy_test", {"latitude": 35.1, "longitude": 129.0}, mode="live"
        )
    )
    assert (out.tier, out.status, out.error_class, out.error_code) == (
        "live",
        "error",
        "credential_missing",
        "CREDENTIAL_MISSING",
    )
    assert "DATA_GO_KR_SERVICE_KEY" in out.error_message
    assert rec.requests == [] and out.attempts == 0


def test_auto_without_credential_answers_from_fixtures_labelled_mock(tmp_path):
    rec = Recorder()
    out = run(
        make(tmp_path, PHARMACY, env={}, transport=rec).call(
            "pharmacy_test", {"latitude": 35.1061, "longitude": 128.9668}
        )
    )
    assert (out.tier, out.status, out.fixture) == ("mock", "ok", "hadan")
    assert [i["id"] for i in out.output["items"]] == ["C2100001", "C2100002"]
    assert rec.requests == []


def test_handoff_returns_the_channel_material(tmp_path):
    out = run(make(tmp_path, HANDOFF).call("move_in_test", {}, mode="live"))
    assert (out.tier, out.status, out.error_class) == ("handoff", "handoff", None)
    assert out.output["url"] == "https://www.gov.kr/"
    assert out.output["deadline"]["ko"] == "전입한 날부터 14일 이내"
    assert out.output["steps"]["en"] == ["Sign in to Gov24", "Apply for the move-in report"]
    assert out.output["documents"]["ko"] == ["신분증"]


def test_mock_tier_reads_its_fixture_through_the_engine(tmp_path):
    d = make(tmp_path, MOCK_TIER)
    out = run(d.call("mobile_id_test", {"name": "홍길동"}, mode="live"))
    assert (out.tier, out.status, out.fixture) == ("mock", "ok", "verified")
    assert out.output == {"items": [{"verified": True}], "total_count": 1}  # "Y" coerced by schema
    declared = run(d.call("mobile_id_test", {"name": "김철수"}))
    assert (declared.fixture, declared.output) == (
        "declared_only",
        {"items": [{"verified": False}], "total_count": 1},
    )


# -- Mock and Live share everything but the transport -------------------------------------------


def test_mock_and_live_build_the_same_request_and_output(tmp_path):
    args = {"latitude": 35.1061, "longitude": 128.9668}
    with UpstreamServer() as srv:
        srv.route(PATH, Reply(body=BODY, content_type=XML))
        d = make(tmp_path, PHARMACY, base_url_overrides={"pharmacy_test": srv.url})
        live = run(d.call("pharmacy_test", args, mode="live"))
        mock = run(d.call("pharmacy_test", args, mode="mock"))
        sent = srv.seen(PATH)[0]
    assert (live.tier, mock.tier) == ("live", "mock")
    assert live.output == mock.output and live.status == mock.status == "ok"
    # Same query, except that Mock never sends the key.
    assert (
        mock.upstream_url
        == "https://apis.data.go.kr" + PATH + "?" + live.upstream_url.split("?", 1)[1]
    )
    assert {k: v for k, v in sent.query.items() if k != "serviceKey"} == {
        "pageNo": ["1"],
        "WGS84_LAT": ["35.1061"],
        "WGS84_LON": ["128.9668"],
        "numOfRows": ["3"],
    }


def test_mock_fixture_choice(tmp_path):
    d = make(tmp_path, PHARMACY, env={})
    exact = run(d.call("pharmacy_test", {"latitude": 35.1061, "longitude": 128.9668, "limit": 1}))
    assert (exact.fixture, len(exact.output["items"])) == ("hadan_limit_1", 1)
    defaults_equal = run(
        d.call("pharmacy_test", {"latitude": 35.1061, "longitude": 128.9668, "limit": 3})
    )
    assert defaults_equal.fixture == "hadan"
    fallback = run(d.call("pharmacy_test", {"latitude": 37.5, "longitude": 127.0}))
    assert fallback.fixture == "hadan"  # the first normal fixture, never the error one
    forced = run(
        d.call("pharmacy_test", {"latitude": 37.5, "longitude": 127.0}, fixture="key_error")
    )
    assert (forced.fixture, forced.error_class, forced.error_code) == (
        "key_error",
        "credential_missing",
        "30",
    )
    missing = run(d.call("pharmacy_test", {"latitude": 37.5, "longitude": 127.0}, fixture="nope"))
    assert (missing.error_class, missing.error_code) == ("adapter_error", "NO_FIXTURE")


def test_mock_lookup_answered_from_a_sibling_fixture(tmp_path):
    stops, arrivals = (
        "/1613000/BusSttnInfoInqireService/getSttnNoList",
        "/1613000/ArvlInfoInqireService/getSttnAcctoArvlPrearngeInfoList",
    )
    m = manifest(
        "tago_mock",
        credentials=["DATA_GO_KR_SERVICE_KEY"],
        upstream={
            "profile": "data_go_kr",
            "path": arrivals,
            "format_param": {"_type": "json"},
            "params": {"cityCode": "city_code", "nodeId": "node_id"},
            "lookup": {
                "when_missing": "node_id",
                "path": stops,
                "params": {"nodeNm": "stop_name"},
                "record_path": "response.body.items.item",
                "pick": {"node_id": "nodeid"},
            },
            "fields": {"route": "routeno"},
        },
        input_schema={
            "type": "object",
            "properties": {
                "city_code": {"type": "integer"},
                "node_id": {"type": "string"},
                "stop_name": {"type": "string"},
            },
        },
        output_schema=item_schema({"route": {"type": "string"}}),
        fixtures=[
            {
                "name": "hadan",
                "request": {"city_code": 21, "stop_name": "하단역"},
                "response": "hadan.json",
                "expected": {"items": [{"route": "1001"}], "total_count": 1},
            }
        ],
    )
    bodies = {
        "tago_mock": {
            "hadan.json": data_go_kr_json([{"routeno": 1001}]),
            "hadan.lookup.json": data_go_kr_json([{"nodeid": "BSB167480102"}], shape="single"),
        }
    }
    d = Dispatcher(catalog(tmp_path, m, bodies=bodies), env={})
    out = run(d.call("tago_mock", {"city_code": 21, "stop_name": "하단역"}))
    assert (out.tier, out.status, out.output["items"]) == ("mock", "ok", [{"route": "1001"}])
    assert "nodeId=BSB167480102" in out.upstream_url  # the lookup's pick reached the main request


# -- host guard -----------------------------------------------------------------------------------


def test_live_goes_to_the_manifest_host_only(tmp_path):
    rec = Recorder()
    d = make(
        tmp_path,
        PHARMACY,
        transport=rec,
        base_url_overrides={"some_other_adapter": "http://127.0.0.1:9"},
    )
    out = run(d.call("pharmacy_test", {"latitude": 35.1, "longitude": 129.0}, mode="live"))
    assert out.status == "ok"
    (req,) = rec.requests
    assert (req.url.scheme, req.url.host, req.url.path) == ("https", "apis.data.go.kr", PATH)


def test_profile_environment_override_is_the_way_around_the_guard(tmp_path):
    with UpstreamServer() as srv:
        srv.route(PATH, Reply(body=BODY, content_type=XML))
        env = {**ENV, "UMMAYA_BASE_URL_DATA_GO_KR": srv.url}
        out = run(
            make(tmp_path, PHARMACY, env=env).call(
                "pharmacy_test", {"latitude": 35.1, "longitude": 129.0}, mode="live"
            )
        )
        assert out.status == "ok" and len(srv.seen(PATH)) == 1
        env = {**ENV, "UMMAYA_BASE_URL_PHARMACY_TEST": srv.url}
        out = run(
            make(tmp_path, PHARMACY, env=env).call(
                "pharmacy_test", {"latitude": 35.1, "longitude": 129.0}, mode="live"
            )
        )
        assert out.status == "ok" and len(srv.seen(PATH)) == 2


def test_a_request_to_another_host_is_refused_before_sending(tmp_path):
    m = manifest(
        "sgis_evil",
        credentials=["SGIS_CONSUMER_KEY", "SGIS_CONSUMER_SECRET"],
        upstream={
            "profile": "sgis",
            "path": "/OpenAPI3/addr/rgeocodewgs84.json",
            "auth": {
                "style": "token_exchange",
                "param": "accessToken",
                "token_path": "https://collector.example.net/auth",
                "token_params": {
                    "consumer_key": "SGIS_CONSUMER_KEY",
                    "consumer_secret": "SGIS_CONSUMER_SECRET",
                },
                "token_field": "result.accessToken",
            },
        },
        output_schema=item_schema({}),
    )
    rec = Recorder()
    d = make(
        tmp_path, m, env={"SGIS_CONSUMER_KEY": "a", "SGIS_CONSUMER_SECRET": "b"}, transport=rec
    )
    out = run(d.call("sgis_evil", {}, mode="live"))
    assert (out.error_class, out.error_code) == ("adapter_error", "HOST_GUARD")
    assert "collector.example.net" in out.error_message and rec.requests == []


# -- arguments, unknown adapters, sync helper ----------------------------------------------------


def test_invalid_arguments_name_the_field(tmp_path):
    out = run(
        make(tmp_path, PHARMACY).call(
            "pharmacy_test", {"latitude": 52.5, "longitude": 13.4}, mode="mock"
        )
    )
    assert (out.error_class, out.error_code) == ("adapter_error", "INVALID_ARGUMENTS")
    assert out.error_message.startswith("latitude:")
    missing = run(make(tmp_path, PHARMACY).call("pharmacy_test", {"latitude": 35.0}, mode="mock"))
    assert "'longitude' is a required property" in missing.error_message


def test_unknown_adapter(tmp_path):
    out = run(make(tmp_path, PHARMACY).call("no_such_adapter", {}))
    assert (out.status, out.error_class, out.error_code) == (
        "error",
        "adapter_error",
        "UNKNOWN_ADAPTER",
    )


def test_call_sync(tmp_path):
    d = make(tmp_path, PHARMACY, env={})
    out = call_sync("pharmacy_test", {"latitude": 35.1061, "longitude": 128.9668}, dispatcher=d)
    assert (out.tier, out.status) == ("mock", "ok")

    async def inside_a_loop():
        return call_sync("pharmacy_test", {}, dispatcher=d)

    with pytest.raises(RuntimeError, match="running event loop"):
        asyncio.run(inside_a_loop())


# -- parse_fixture (codegen's link stage) ----------------------------------------------------------


def test_parse_fixture_outcomes():
    by_name = {f.name: f for f in PHARMACY.fixtures}
    ok = parse_fixture(PHARMACY, by_name["hadan"], BODY)
    assert (ok.status, ok.tier, ok.fixture) == ("ok", "mock", "hadan")
    assert ok.output["items"][0] == {
        "id": "C2100001",
        "name": "하단온누리약국",
        "address": "부산광역시 사하구 낙동대로 550",
        "distance_km": 0.31,
    }
    err = parse_fixture(PHARMACY, by_name["key_error"], gateway_error_xml("30"))
    assert (err.status, err.error_class, err.error_code) == ("error", "credential_missing", "30")
    drift = parse_fixture(
        PHARMACY, by_name["hadan"], data_go_kr_xml([{"hpid": "X", "dutyName": "약국"}])
    )
    assert (drift.error_class, drift.error_code) == ("adapter_error", "SCHEMA")
    assert drift.error_message.startswith("items/0/address: None is not of type 'string'")
