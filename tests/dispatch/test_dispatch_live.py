"""Live tier against loopback servers that speak each upstream's real wire format."""

from __future__ import annotations

import datetime as dt
import threading
import tracemalloc

import pytest

from tests.dispatch.helpers import (
    FixedClock,
    SleepLog,
    catalog,
    item_schema,
    manifest,
    no_wait,
    run,
)
from tests.support.upstreams import (
    ENTITY_BOMB,
    HTML,
    JSON,
    XML,
    Reply,
    UpstreamServer,
    data_go_kr_json,
    data_go_kr_xml,
    flat_result_json,
    gateway_error_xml,
    header_body_json,
    html_error_page,
    juso_json,
    kakao_error,
    kakao_json,
    sgis_json,
    sgis_token_json,
    truncated,
    wanted_list_xml,
)
from ummaya.runtime.dispatch import Dispatcher

ER_PATH = "/B552657/ErmctInfoInqireService/getEgytLcinfoInqire"
DECODED_KEY = "abc+def/ghi=="
ENV = {"DATA_GO_KR_SERVICE_KEY": DECODED_KEY}

ER = manifest(
    "er_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    upstream={
        "profile": "data_go_kr",
        "path": ER_PATH,
        "format": "xml",
        "params": {"WGS84_LAT": "latitude", "WGS84_LON": "longitude", "numOfRows": "limit"},
        "record_path": "response.body.items.item",
        "fields": {
            "hospital_id": "hpid",
            "name": "dutyName",
            "phone": "dutyTel1",
            "distance_km": {"source": "distance", "transform": "float"},
        },
        # A deadline no machine comes near, however loaded: an outcome here never depends on how
        # fast the test runs. The deadline tests below set their own short one (SHORT).
        "timeout_s": 60,
    },
    input_schema={
        "type": "object",
        "required": ["latitude", "longitude"],
        "properties": {
            "latitude": {"type": "number"},
            "longitude": {"type": "number"},
            "limit": {"type": "integer", "default": 5},
        },
    },
    output_schema=item_schema(
        {
            "hospital_id": {"type": "string"},
            "name": {"type": "string"},
            "phone": {"type": ["string", "null"]},
            "distance_km": {"type": ["number", "null"]},
        },
        ["hospital_id", "name"],
    ),
)

ROWS = [
    {
        "hpid": "A2100002",
        "dutyName": "동아대학교병원",
        "dutyTel1": "051-240-2000",
        "distance": "4.12",
    },
    {"hpid": "A2100040", "dutyName": "괴정성모병원", "dutyTel1": "-", "distance": "2.87"},
]
ARGS = {"latitude": 35.1167, "longitude": 128.968}


def _with_upstream(m, **changes):
    """A copy of manifest ``m`` with upstream fields changed (same id)."""
    data = m.model_dump(mode="json", exclude={"id"})
    data["upstream"] = {**m.upstream.model_dump(mode="json", exclude_none=True), **changes}
    return manifest(m.id, **data)


# ER with a 0.3 s deadline, for the tests whose outcome *is* the deadline (an upstream that never
# answers, retries that would not fit): only there a short deadline is the input under test.
SHORT = _with_upstream(ER, timeout_s=0.3)


@pytest.fixture
def srv():
    with UpstreamServer() as server:
        yield server


def dispatcher(srv, *manifests, env=ENV, tmp_path, **kw):
    cat = catalog(tmp_path, *manifests)
    kw.setdefault("sleep", no_wait)
    return Dispatcher(cat, env=env, base_url_overrides={m.id: srv.url for m in manifests}, **kw)


# -- data.go.kr XML ----------------------------------------------------------------------------


def test_xml_normal_projects_and_sends_the_right_parameters(srv, tmp_path):
    srv.route(ER_PATH, Reply(body=data_go_kr_xml(ROWS), content_type=XML))
    out = run(dispatcher(srv, ER, tmp_path=tmp_path).call("er_test", ARGS, mode="live"))
    assert out.status == "ok" and out.tier == "live" and out.attempts == 1
    assert out.output == {
        "items": [
            {
                "hospital_id": "A2100002",
                "name": "동아대학교병원",
                "phone": "051-240-2000",
                "distance_km": 4.12,
            },
            {"hospital_id": "A2100040", "name": "괴정성모병원", "phone": None, "distance_km": 2.87},
        ],
        "total_count": 2,
    }
    (seen,) = srv.seen(ER_PATH)
    assert seen.param("WGS84_LAT") == "35.1167" and seen.param("WGS84_LON") == "128.968"
    assert seen.param("numOfRows") == "5"  # input_schema default applied
    assert seen.param("pageNo") == "1"  # profile static param
    # The key arrives decoded exactly as issued: encoded once on the wire, never twice.
    assert seen.param("serviceKey") == DECODED_KEY
    assert "%25" not in seen.raw_query and "%2B" in seen.raw_query
    assert "serviceKey" not in (out.upstream_url or "") and DECODED_KEY not in (
        out.upstream_url or ""
    )
    assert out.upstream_url.startswith(srv.url + ER_PATH + "?")


def test_an_already_encoded_key_is_not_encoded_twice(srv, tmp_path):
    srv.route(ER_PATH, Reply(body=data_go_kr_xml(ROWS), content_type=XML))
    env = {"DATA_GO_KR_SERVICE_KEY": "abc%2Bdef%2Fghi%3D%3D"}  # the portal's "encoded" key
    out = run(dispatcher(srv, ER, env=env, tmp_path=tmp_path).call("er_test", ARGS, mode="live"))
    assert out.status == "ok"
    assert srv.seen(ER_PATH)[0].param("serviceKey") == DECODED_KEY


def test_single_item_xml_becomes_a_one_element_list(srv, tmp_path):
    srv.route(ER_PATH, Reply(body=data_go_kr_xml(ROWS[:1]), content_type=XML))
    out = run(dispatcher(srv, ER, tmp_path=tmp_path).call("er_test", ARGS, mode="live"))
    assert out.status == "ok"
    assert [i["hospital_id"] for i in out.output["items"]] == ["A2100002"]
    assert out.output["total_count"] == 1


@pytest.mark.parametrize(
    "body",
    [
        data_go_kr_xml([], code="03", msg="NODATA_ERROR", with_body=False),
        data_go_kr_xml([], code="00", total=0),
    ],
    ids=["code_03", "empty_items"],
)
def test_no_data_is_not_an_error(srv, tmp_path, body):
    srv.route(ER_PATH, Reply(body=body, content_type=XML))
    out = run(dispatcher(srv, ER, tmp_path=tmp_path).call("er_test", ARGS, mode="live"))
    assert out.status == "no_data" and out.error_class is None
    assert out.output == {"items": [], "total_count": 0}
    assert out.attempts == 1


# -- data.go.kr JSON and the gateway's XML errors ---------------------------------------------

HOSP_PATH = "/B551182/hospInfoServicev2/getHospBasisList"
HOSP = manifest(
    "hosp_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    upstream={
        "profile": "data_go_kr",
        "path": HOSP_PATH,
        "format": "json",
        "format_param": {"_type": "json"},
        "params": {
            "xPos": "longitude",
            "yPos": "latitude",
            "radius": "radius_m",
            "dgsbjtCd": "specialty_code",
        },
        "fields": {
            "name": "yadmNm",
            "doctors": {"source": "drTotCnt", "transform": "int"},
            "lon": "XPos",
        },
    },
    input_schema={
        "type": "object",
        "properties": {
            "latitude": {"type": "number"},
            "longitude": {"type": "number"},
            "radius_m": {"type": "integer", "default": 1000},
            "specialty_code": {"type": "string"},
        },
    },
    output_schema=item_schema(
        {
            "name": {"type": "string"},
            "doctors": {"type": ["integer", "null"]},
            "lon": {"type": "number"},
        }
    ),
)


@pytest.mark.parametrize("shape", ["wrapped", "single"])
def test_json_envelope_list_or_single_object(srv, tmp_path, shape):
    rows = [{"yadmNm": "부산의원", "drTotCnt": 3, "XPos": 129.0750}]
    srv.route(HOSP_PATH, Reply(body=data_go_kr_json(rows, shape=shape)))
    out = run(
        dispatcher(srv, HOSP, tmp_path=tmp_path).call(
            "hosp_test", {"latitude": 35.18, "longitude": 129.07}, mode="live"
        )
    )
    assert out.status == "ok"
    assert out.output == {
        "items": [{"name": "부산의원", "doctors": 3, "lon": 129.075}],
        "total_count": 1,
    }
    seen = srv.seen(HOSP_PATH)[0]
    assert seen.param("_type") == "json" and seen.param("radius") == "1000"
    assert seen.param("xPos") == "129.07" and seen.param("yPos") == "35.18"
    assert "dgsbjtCd" not in seen.query  # absent optional input is not sent


def test_gateway_xml_error_is_read_even_though_json_was_asked(srv, tmp_path):
    srv.route(HOSP_PATH, Reply(body=gateway_error_xml("30"), content_type=XML))
    out = run(dispatcher(srv, HOSP, tmp_path=tmp_path).call("hosp_test", {}, mode="live"))
    assert srv.seen(HOSP_PATH)[0].param("_type") == "json"
    assert (out.status, out.error_class, out.error_code) == ("error", "credential_missing", "30")
    assert "SERVICE_KEY_IS_NOT_REGISTERED_ERROR" in out.error_message
    assert out.attempts == 1  # a refused key is never retried


def test_gateway_quota_error_is_retried_then_channel_unavailable(srv, tmp_path):
    srv.route(
        HOSP_PATH,
        Reply(
            body=gateway_error_xml("22", "LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR"),
            content_type=JSON,
        ),
    )
    sleep = SleepLog()
    out = run(
        dispatcher(srv, HOSP, tmp_path=tmp_path, sleep=sleep).call("hosp_test", {}, mode="live")
    )
    assert (out.error_class, out.error_code, out.attempts) == ("channel_unavailable", "22", 3)
    assert len(srv.seen(HOSP_PATH)) == 3
    assert sleep.delays == [0.2, 0.4]  # exponential backoff between attempts


@pytest.mark.parametrize(
    ("code", "error_class", "attempts"),
    [
        ("01", "channel_unavailable", 3),
        ("05", "channel_unavailable", 3),
        ("10", "adapter_error", 1),
        ("31", "credential_missing", 1),
    ],
)
def test_result_codes_classified_and_only_transient_ones_retried(
    srv, tmp_path, code, error_class, attempts
):
    srv.route(HOSP_PATH, Reply(body=data_go_kr_json([], code=code, msg="ERR", shape="empty")))
    out = run(dispatcher(srv, HOSP, tmp_path=tmp_path).call("hosp_test", {}, mode="live"))
    assert (out.error_class, out.error_code, out.attempts) == (error_class, code, attempts)
    assert len(srv.seen(HOSP_PATH)) == attempts


def test_503_is_retried_and_a_later_success_wins(srv, tmp_path):
    rows = [{"yadmNm": "부산의원", "drTotCnt": "3", "XPos": "129.075"}]
    srv.route(
        HOSP_PATH,
        [
            Reply(503, html_error_page(503, "Service Unavailable"), HTML),
            Reply(body=data_go_kr_json(rows)),
        ],
    )
    out = run(dispatcher(srv, HOSP, tmp_path=tmp_path).call("hosp_test", {}, mode="live"))
    assert out.status == "ok" and out.attempts == 2
    assert out.output["items"] == [{"name": "부산의원", "doctors": 3, "lon": 129.075}]


def test_retry_after_is_honoured_within_bounds(srv, tmp_path):
    srv.route(
        HOSP_PATH,
        [
            Reply(
                429, kakao_error("RateLimitExceeded", "too many"), headers={"Retry-After": "1.5"}
            ),
            Reply(503, b"busy", "text/plain", headers={"Retry-After": "3600"}),
            Reply(body=data_go_kr_json([{"yadmNm": "a", "drTotCnt": 1, "XPos": 1}])),
        ],
    )
    sleep = SleepLog()
    out = run(
        dispatcher(srv, HOSP, tmp_path=tmp_path, sleep=sleep).call("hosp_test", {}, mode="live")
    )
    assert (out.status, out.attempts) == ("ok", 3)
    assert sleep.delays == [1.5, 5.0]  # the upstream's wish, capped for a live turn


def test_503_every_time_gives_channel_unavailable_after_bounded_attempts(srv, tmp_path):
    srv.route(HOSP_PATH, Reply(503, b"Service Unavailable", "text/plain"))
    out = run(dispatcher(srv, HOSP, tmp_path=tmp_path).call("hosp_test", {}, mode="live"))
    assert (out.error_class, out.error_code, out.attempts) == ("channel_unavailable", "HTTP_503", 3)


def test_slow_upstream_times_out_as_channel_unavailable(srv, tmp_path):
    # The upstream never answers while the call lasts: only the call's deadline can end it.
    srv.route(ER_PATH, Reply(body=data_go_kr_xml(ROWS), content_type=XML, hold=True))
    out = run(
        dispatcher(srv, SHORT, tmp_path=tmp_path, max_attempts=2).call("er_test", ARGS, mode="live")
    )
    # timeout_s 0.3 is the whole call's deadline: the retry is not attempted past it.
    assert (out.error_class, out.error_code, out.attempts) == ("channel_unavailable", "TIMEOUT", 1)


def test_connection_refused_is_channel_unavailable(tmp_path):
    with UpstreamServer() as dead:
        url = dead.url
    cat = catalog(tmp_path, ER)  # backoffs 0.2 + 0.4 s fit well inside the deadline
    d = Dispatcher(cat, env=ENV, base_url_overrides={"er_test": url}, sleep=no_wait)
    out = run(d.call("er_test", ARGS, mode="live"))
    assert (out.error_class, out.error_code, out.attempts) == ("channel_unavailable", "CONNECT", 3)


def test_retries_stop_at_the_call_deadline(tmp_path):
    """Backoff 0.2 s fits a 0.3 s deadline, the next 0.4 s would not: the retries never stretch
    the call past its deadline (issue 11 item 10)."""
    with UpstreamServer() as dead:
        url = dead.url
    log = SleepLog()
    d = Dispatcher(catalog(tmp_path, SHORT), env=ENV, base_url_overrides={"er_test": url}, sleep=log)
    out = run(d.call("er_test", ARGS, mode="live"))
    assert out.error_code == "CONNECT" and out.attempts <= 2
    assert sum(log.delays) < 0.3


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        (Reply(body=html_error_page(200, "점검 중"), content_type=HTML), "HTML page"),
        (Reply(body=truncated(data_go_kr_xml(ROWS)), content_type=XML), "truncated"),
        (Reply(body=ENTITY_BOMB, content_type=XML), "hostile XML"),
        (Reply(body=b'{"response": {"header": ', content_type="application/json"), "invalid JSON"),
    ],
    ids=["html", "truncated_xml", "entity_bomb", "invalid_json"],
)
def test_unreadable_bodies_are_parse_errors_never_retried(srv, tmp_path, reply, fragment):
    """The outcome is PARSE on any machine (ER's deadline is far beyond any parse), and the entity
    bomb is refused, not expanded: its lol9 is 10⁹ "lol"s, gigabytes, yet the call's peak memory
    stays within a few megabytes — a bound in bytes, which no machine's speed changes."""
    srv.route(ER_PATH, reply)
    tracemalloc.start()
    try:
        out = run(dispatcher(srv, ER, tmp_path=tmp_path).call("er_test", ARGS, mode="live"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (out.status, out.error_class, out.error_code, out.attempts) == (
        "error",
        "adapter_error",
        "PARSE",
        1,
    )
    assert fragment in out.error_message
    assert peak < 8 * 1024 * 1024, f"{peak:,} bytes at peak: the body was expanded"


def test_a_runaway_body_is_refused_while_streaming(srv, tmp_path):
    srv.route(ER_PATH, Reply(body=data_go_kr_xml(ROWS * 200), content_type=XML))
    out = run(
        dispatcher(srv, ER, tmp_path=tmp_path, max_body_bytes=10_000).call(
            "er_test", ARGS, mode="live"
        )
    )
    assert (out.error_class, out.error_code, out.attempts) == ("adapter_error", "PARSE", 1)
    assert "larger than 10000 bytes" in out.error_message


def test_upstream_drift_is_a_schema_error_naming_the_field(srv, tmp_path):
    srv.route(
        ER_PATH,
        Reply(
            body=data_go_kr_xml([{"hpid": "A1", "dutyName": "병원", "distance": "멀리"}]),
            content_type=XML,
        ),
    )
    m = manifest(
        "er_drift",
        **{
            **ER.model_dump(mode="json", exclude={"id"}),
            "upstream": {
                **ER.upstream.model_dump(mode="json", exclude_none=True),
                "fields": {"hospital_id": "hpid", "name": "dutyName", "distance_km": "distance"},
            },
        },
    )
    out = run(dispatcher(srv, m, tmp_path=tmp_path).call("er_drift", ARGS, mode="live"))
    assert (out.error_class, out.error_code) == ("adapter_error", "SCHEMA")
    assert out.error_message.startswith("items/0/distance_km:")


def test_redirects_are_not_followed(srv, tmp_path):
    srv.route(ER_PATH, Reply(302, b"", headers={"Location": "http://203.0.113.9/steal"}))
    out = run(dispatcher(srv, ER, tmp_path=tmp_path).call("er_test", ARGS, mode="live"))
    assert (out.error_class, out.error_code, out.attempts) == ("adapter_error", "HTTP_302", 1)
    assert len(srv.seen()) == 1


# -- the other envelopes --------------------------------------------------------------------

KAKAO_PATH = "/v2/local/search/keyword.json"
KAKAO = manifest(
    "kakao_test",
    primitive="locate",
    credentials=["KAKAO_REST_API_KEY"],
    upstream={
        "profile": "kakao",
        "path": KAKAO_PATH,
        "params": {"query": "query", "x": "longitude", "y": "latitude"},
        "fields": {"name": "place_name", "lon": "x", "lat": "y"},
    },
    input_schema={
        "type": "object",
        "required": ["query"],
        "properties": {
            "query": {"type": "string"},
            "latitude": {"type": "number"},
            "longitude": {"type": "number"},
        },
    },
    output_schema={
        **item_schema(
            {"name": {"type": "string"}, "lon": {"type": "number"}, "lat": {"type": "number"}}
        ),
        "properties": {
            **item_schema(
                {"name": {"type": "string"}, "lon": {"type": "number"}, "lat": {"type": "number"}}
            )["properties"],
            "is_end": {"type": "boolean"},
        },
    },
)
KAKAO_ENV = {"KAKAO_REST_API_KEY": "kakao-secret"}


def test_kakao_header_auth_documents_and_meta(srv, tmp_path):
    docs = [{"place_name": "동아대학교 승학캠퍼스", "x": "128.9680", "y": "35.1167", "id": "8"}]
    srv.route(KAKAO_PATH, Reply(body=kakao_json(docs, total=7, is_end=False)))
    out = run(
        dispatcher(srv, KAKAO, env=KAKAO_ENV, tmp_path=tmp_path).call(
            "kakao_test", {"query": "동아대 승학캠퍼스"}, mode="live"
        )
    )
    assert out.status == "ok"
    assert out.output == {
        "items": [{"name": "동아대학교 승학캠퍼스", "lon": 128.968, "lat": 35.1167}],
        "total_count": 7,
        "is_end": False,
    }
    seen = srv.seen(KAKAO_PATH)[0]
    assert seen.headers["authorization"] == "KakaoAK kakao-secret"
    assert seen.param("query") == "동아대 승학캠퍼스"
    assert "kakao-secret" not in out.upstream_url


def test_kakao_401_json_error_is_credential_missing(srv, tmp_path):
    srv.route(
        KAKAO_PATH,
        Reply(
            401,
            kakao_error("AccessDeniedError", "wrong appkey format"),
            "application/json;charset=UTF-8",
        ),
    )
    out = run(
        dispatcher(srv, KAKAO, env=KAKAO_ENV, tmp_path=tmp_path).call(
            "kakao_test", {"query": "x"}, mode="live"
        )
    )
    assert (out.error_class, out.error_code, out.attempts) == (
        "credential_missing",
        "AccessDeniedError",
        1,
    )
    assert "wrong appkey format" in out.error_message


def test_kakao_400_is_an_adapter_error(srv, tmp_path):
    srv.route(KAKAO_PATH, Reply(400, kakao_error("InvalidArgument", "query is empty")))
    out = run(
        dispatcher(srv, KAKAO, env=KAKAO_ENV, tmp_path=tmp_path).call(
            "kakao_test", {"query": "x"}, mode="live"
        )
    )
    assert (out.error_class, out.error_code, out.attempts) == (
        "adapter_error",
        "InvalidArgument",
        1,
    )


JUSO_PATH = "/addrlink/addrLinkApi.do"
JUSO = manifest(
    "juso_test",
    primitive="locate",
    credentials=["JUSO_CONFM_KEY"],
    upstream={
        "profile": "juso",
        "path": JUSO_PATH,
        "params": {"keyword": "keyword", "countPerPage": "limit"},
        "static_params": {"currentPage": 1},
        "fields": {"road_address": "roadAddr", "adm_code": "admCd", "zip": "zipNo"},
    },
    input_schema={
        "type": "object",
        "required": ["keyword"],
        "properties": {"keyword": {"type": "string"}, "limit": {"type": "integer", "default": 10}},
    },
    output_schema=item_schema(
        {
            "road_address": {"type": "string"},
            "adm_code": {"type": "string"},
            "zip": {"type": "string"},
        }
    ),
)


def test_juso_success_and_key_param(srv, tmp_path):
    juso = [
        {
            "roadAddr": "부산광역시 사하구 낙동대로550번길 37 (하단동)",
            "admCd": "2638010100",
            "zipNo": "49315",
        }
    ]
    srv.route(JUSO_PATH, Reply(body=juso_json(juso)))
    env = {"JUSO_CONFM_KEY": "U01TX0FVVEg="}
    out = run(
        dispatcher(srv, JUSO, env=env, tmp_path=tmp_path).call(
            "juso_test", {"keyword": "낙동대로550번길 37"}, mode="live"
        )
    )
    assert out.status == "ok" and out.output["items"][0]["adm_code"] == "2638010100"
    seen = srv.seen(JUSO_PATH)[0]
    assert seen.param("confmKey") == "U01TX0FVVEg=" and seen.param("resultType") == "json"
    assert seen.param("countPerPage") == "10" and seen.param("currentPage") == "1"
    assert "confmKey" not in out.upstream_url


def test_juso_e0001_is_credential_missing(srv, tmp_path):
    srv.route(
        JUSO_PATH,
        Reply(body=juso_json([], error_code="E0001", error_message="승인되지 않은 KEY 입니다.")),
    )
    out = run(
        dispatcher(srv, JUSO, env={"JUSO_CONFM_KEY": "bad"}, tmp_path=tmp_path).call(
            "juso_test", {"keyword": "x"}, mode="live"
        )
    )
    assert (out.error_class, out.error_code, out.attempts) == ("credential_missing", "E0001", 1)
    assert "승인되지 않은 KEY" in out.error_message


SGIS_TOKEN = "/OpenAPI3/auth/authentication.json"
SGIS_PATH = "/OpenAPI3/addr/rgeocodewgs84.json"
SGIS = manifest(
    "sgis_test",
    primitive="locate",
    credentials=["SGIS_CONSUMER_KEY", "SGIS_CONSUMER_SECRET"],
    upstream={
        "profile": "sgis",
        "path": SGIS_PATH,
        "params": {"x_coor": "longitude", "y_coor": "latitude"},
        "static_params": {"addr_type": 20},
        "fields": {"sido": "sido_nm", "sigungu": "sgg_nm", "address": "full_addr"},
    },
    input_schema={
        "type": "object",
        "properties": {"latitude": {"type": "number"}, "longitude": {"type": "number"}},
    },
    output_schema=item_schema(
        {"sido": {"type": "string"}, "sigungu": {"type": "string"}, "address": {"type": "string"}}
    ),
)
SGIS_ENV = {"SGIS_CONSUMER_KEY": "ck-123", "SGIS_CONSUMER_SECRET": "cs-456"}


def test_sgis_token_exchange_refreshes_once_on_minus_401(srv, tmp_path):
    tokens = iter(["tok-stale", "tok-fresh"])
    srv.route(SGIS_TOKEN, lambda seen: Reply(body=sgis_token_json(next(tokens))))

    def geocode(seen):
        if seen.param("accessToken") != "tok-fresh":
            return Reply(body=sgis_json(None, err_cd=-401, err_msg="인증 정보가 존재하지 않습니다"))
        return Reply(
            body=sgis_json(
                [
                    {
                        "sido_nm": "부산광역시",
                        "sgg_nm": "사하구",
                        "full_addr": "부산광역시 사하구 하단동",
                    }
                ]
            )
        )

    srv.route(SGIS_PATH, geocode)
    d = dispatcher(srv, SGIS, env=SGIS_ENV, tmp_path=tmp_path)
    out = run(d.call("sgis_test", {"latitude": 35.1167, "longitude": 128.968}, mode="live"))
    assert out.status == "ok"
    assert out.output["items"] == [
        {"sido": "부산광역시", "sigungu": "사하구", "address": "부산광역시 사하구 하단동"}
    ]
    token_calls = srv.seen(SGIS_TOKEN)
    assert len(token_calls) == 2
    assert (
        token_calls[0].param("consumer_key") == "ck-123"
        and token_calls[0].param("consumer_secret") == "cs-456"
    )
    assert [s.param("accessToken") for s in srv.seen(SGIS_PATH)] == ["tok-stale", "tok-fresh"]
    assert "accessToken" not in out.upstream_url and "cs-456" not in out.upstream_url
    # The fresh token is cached: a second call exchanges nothing.
    again = run(d.call("sgis_test", {"latitude": 35.1, "longitude": 128.9}, mode="live"))
    assert again.status == "ok" and len(srv.seen(SGIS_TOKEN)) == 2


def test_concurrent_calls_share_one_token_exchange_and_one_refresh(srv, tmp_path):
    tokens = iter(["tok-stale", "tok-fresh", "tok-extra"])

    def exchange(seen):
        token = next(tokens)
        if token == "tok-fresh":
            # The refresh answers only once all four calls met the stale token: each of them must
            # then wait for this one refresh instead of starting its own.
            assert srv.wait_seen(SGIS_PATH, 4), "the four calls did not all reach the upstream"
        return Reply(body=sgis_token_json(token))

    srv.route(SGIS_TOKEN, exchange)

    def geocode(seen):
        if seen.param("accessToken") != "tok-fresh":
            return Reply(body=sgis_json(None, err_cd=-401, err_msg="expired"))
        return Reply(
            body=sgis_json([{"sido_nm": "부산광역시", "sgg_nm": "사하구", "full_addr": "x"}])
        )

    srv.route(SGIS_PATH, geocode)
    d = dispatcher(srv, SGIS, env=SGIS_ENV, tmp_path=tmp_path)
    outs = run(
        d.call_many([("sgis_test", {"latitude": 35.1 + i / 100}) for i in range(4)], mode="live")
    )
    assert [o.status for o in outs] == ["ok"] * 4
    assert len(srv.seen(SGIS_TOKEN)) == 2  # one exchange, one refresh — not one per call


def test_sgis_token_still_refused_after_refresh_is_credential_missing(srv, tmp_path):
    srv.route(SGIS_TOKEN, Reply(body=sgis_token_json("tok")))
    srv.route(SGIS_PATH, Reply(body=sgis_json(None, err_cd=-401, err_msg="expired")))
    out = run(
        dispatcher(srv, SGIS, env=SGIS_ENV, tmp_path=tmp_path).call("sgis_test", {}, mode="live")
    )
    assert (out.error_class, out.error_code) == ("credential_missing", "-401")
    assert len(srv.seen(SGIS_TOKEN)) == 2 and len(srv.seen(SGIS_PATH)) == 2


def test_sgis_token_request_refused(srv, tmp_path):
    srv.route(
        SGIS_TOKEN,
        Reply(body=sgis_json(None, err_cd=-401, err_msg="인증 정보가 존재하지 않습니다")),
    )
    out = run(
        dispatcher(srv, SGIS, env=SGIS_ENV, tmp_path=tmp_path).call("sgis_test", {}, mode="live")
    )
    assert (out.status, out.error_class, out.error_code) == ("error", "credential_missing", "-401")
    assert srv.seen(SGIS_PATH) == []


KOROAD_PATH = "/B552061/frequentzoneLg/getRestFrequentzoneLg"
KOROAD = manifest(
    "koroad_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    upstream={
        "profile": "data_go_kr",
        "path": KOROAD_PATH,
        "format_param": {"type": "json"},
        "params": {"searchYearCd": "year", "siDo": "sido_code", "guGun": "gugun_code"},
        "envelope": {"kind": "flat_result", "success_codes": ["00"], "no_data_codes": ["03"]},
        "fields": {
            "spot": "spot_nm",
            "accidents": "occrrnc_cnt",
            "casualties": "caslt_cnt",
            "lat": "la_crd",
        },
    },
    input_schema={
        "type": "object",
        "properties": {
            "year": {"type": "integer"},
            "sido_code": {"type": "string"},
            "gugun_code": {"type": "string"},
        },
    },
    output_schema=item_schema(
        {
            "spot": {"type": "string"},
            "accidents": {"type": "integer"},
            "casualties": {"type": "integer"},
            "lat": {"type": "number"},
        }
    ),
)


def test_koroad_flat_json(srv, tmp_path):
    items = [
        {
            "spot_nm": "부산광역시 사하구 하단동(하단교차로 부근)",
            "occrrnc_cnt": 7,
            "caslt_cnt": "9",
            "la_crd": "35.1062",
        }
    ]
    srv.route(KOROAD_PATH, Reply(body=flat_result_json(items, total=12)))
    out = run(
        dispatcher(srv, KOROAD, tmp_path=tmp_path).call(
            "koroad_test", {"year": 2023, "sido_code": "26", "gugun_code": "380"}, mode="live"
        )
    )
    assert out.status == "ok"
    assert out.output == {
        "items": [
            {
                "spot": "부산광역시 사하구 하단동(하단교차로 부근)",
                "accidents": 7,
                "casualties": 9,
                "lat": 35.1062,
            }
        ],
        "total_count": 12,
    }
    seen = srv.seen(KOROAD_PATH)[0]
    assert (
        seen.param("searchYearCd"),
        seen.param("siDo"),
        seen.param("guGun"),
        seen.param("type"),
    ) == ("2023", "26", "380", "json")


MFDS_PATH = "/1471000/DrbEasyDrugInfoService/getDrbEasyDrugList"
MFDS = manifest(
    "mfds_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    upstream={
        "profile": "data_go_kr",
        "path": MFDS_PATH,
        "format_param": {"type": "json"},
        "params": {"itemName": "drug_name"},
        "envelope": {"kind": "header_body"},
        "fields": {
            "name": "itemName",
            "efficacy": {"source": "efcyQesitm", "transform": "strip_html"},
            "warning": {"source": "atpnWarnQesitm", "transform": "strip_html"},
        },
    },
    input_schema={
        "type": "object",
        "required": ["drug_name"],
        "properties": {"drug_name": {"type": "string"}},
    },
    output_schema=item_schema(
        {
            "name": {"type": "string"},
            "efficacy": {"type": ["string", "null"]},
            "warning": {"type": ["string", "null"]},
        }
    ),
)


def test_mfds_header_body_with_html_in_text_fields(srv, tmp_path):
    items = [
        {
            "itemName": "타이레놀정500밀리그램(아세트아미노펜)",
            "efcyQesitm": "<p>이 약은 감기로 인한 발열 및 동통(통증)에 사용합니다.</p><br/><p>두통, 치통&nbsp;완화</p>",
            "atpnWarnQesitm": None,
        }
    ]
    srv.route(MFDS_PATH, Reply(body=header_body_json(items)))
    out = run(
        dispatcher(srv, MFDS, tmp_path=tmp_path).call(
            "mfds_test", {"drug_name": "타이레놀"}, mode="live"
        )
    )
    assert out.status == "ok"
    (item,) = out.output["items"]
    assert item == {
        "name": "타이레놀정500밀리그램(아세트아미노펜)",
        "efficacy": "이 약은 감기로 인한 발열 및 동통(통증)에 사용합니다.\n두통, 치통 완화",
        "warning": None,
    }
    assert srv.seen(MFDS_PATH)[0].param("itemName") == "타이레놀"


WELFARE_PATH = "/B554287/NationalWelfareInformationsV001/NationalWelfarelistV001"
WELFARE = manifest(
    "welfare_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    upstream={
        "profile": "data_go_kr",
        "path": WELFARE_PATH,
        "format": "xml",
        "params": {
            "searchWrd": "keyword",
            "lifeArray": "life_stage",
            "trgterIndvdlArray": "target_group",
        },
        "static_params": {"callTp": "L", "srchKeyCode": "003"},
        "envelope": {"kind": "wanted_list"},
        "fields": {
            "id": "servId",
            "name": "servNm",
            "ministry": "jurMnofNm",
            "online": "onapPsbltYn",
        },
    },
    input_schema={
        "type": "object",
        "properties": {
            "keyword": {"type": "string"},
            "life_stage": {"type": "string"},
            "target_group": {"type": "array", "items": {"type": "string"}},
        },
    },
    output_schema=item_schema(
        {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "ministry": {"type": "string"},
            "online": {"type": ["boolean", "null"]},
        }
    ),
)


@pytest.mark.parametrize("n", [1, 2])
def test_mohw_wanted_list_xml_with_camel_case_parameters(srv, tmp_path, n):
    servs = [
        {
            "servId": "WLF00001188",
            "servNm": "첫만남이용권",
            "jurMnofNm": "보건복지부",
            "onapPsbltYn": "Y",
        },
        {
            "servId": "WLF00000024",
            "servNm": "아동수당",
            "jurMnofNm": "보건복지부",
            "onapPsbltYn": "N",
        },
    ][:n]
    srv.route(WELFARE_PATH, Reply(body=wanted_list_xml(servs), content_type=XML))
    args = {"keyword": "출산", "life_stage": "001", "target_group": ["050", "060"]}
    out = run(dispatcher(srv, WELFARE, tmp_path=tmp_path).call("welfare_test", args, mode="live"))
    assert out.status == "ok"
    assert [i["id"] for i in out.output["items"]] == [s["servId"] for s in servs]
    assert out.output["items"][0]["online"] is True
    seen = srv.seen(WELFARE_PATH)[0]
    assert seen.param("searchWrd") == "출산" and seen.param("lifeArray") == "001"
    assert seen.param("trgterIndvdlArray") == "050,060" and seen.param("callTp") == "L"
    assert "life_stage" not in seen.query and "keyword" not in seen.query


# -- derived parameters, lookup, cache --------------------------------------------------------

KMA_PATH = "/1360000/VilageFcstInfoService_2.0/getUltraSrtNcst"
KMA = manifest(
    "nowcast_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    upstream={
        "profile": "data_go_kr",
        "path": KMA_PATH,
        "format_param": {"dataType": "JSON"},
        "static_params": {"numOfRows": 100},
        "derived_params": {
            "nx": "kma_grid.nx",
            "ny": "kma_grid.ny",
            "base_date": "kma_nowcast.date",
            "base_time": "kma_nowcast.time",
        },
        "postprocess": "kma_pivot_nowcast",
        "fields": {
            "observed_at": "baseTime",
            "temperature_c": {"source": "T1H", "transform": "float"},
            "rain_mm": "RN1",
            "humidity_pct": "REH",
        },
    },
    input_schema={
        "type": "object",
        "required": ["latitude", "longitude"],
        "properties": {"latitude": {"type": "number"}, "longitude": {"type": "number"}},
    },
    output_schema=item_schema(
        {
            "observed_at": {"type": "string"},
            "temperature_c": {"type": "number"},
            "rain_mm": {"type": "number"},
            "humidity_pct": {"type": "integer"},
        }
    ),
)


def test_kma_nowcast_sends_grid_and_base_and_pivots(srv, tmp_path):
    rows = [
        {
            "baseDate": "20261130",
            "baseTime": "0100",
            "category": c,
            "nx": 60,
            "ny": 127,
            "obsrValue": v,
        }
        for c, v in [
            ("T1H", "3.4"),
            ("RN1", "0"),
            ("REH", "61"),
            ("PTY", "0"),
            ("WSD", "1.9"),
            ("VEC", "287"),
        ]
    ]
    srv.route(KMA_PATH, Reply(body=data_go_kr_json(rows)))
    clock = FixedClock(
        dt.datetime(2026, 11, 29, 16, 45, tzinfo=dt.timezone.utc)
    )  # 01:45 KST on the 30th
    d = dispatcher(srv, KMA, tmp_path=tmp_path, clock=clock)
    out = run(d.call("nowcast_test", {"latitude": 37.5663, "longitude": 126.9779}, mode="live"))
    assert out.status == "ok"
    assert out.output == {
        "items": [{"observed_at": "0100", "temperature_c": 3.4, "rain_mm": 0, "humidity_pct": 61}],
        "total_count": 1,
    }
    seen = srv.seen(KMA_PATH)[0]
    assert (seen.param("nx"), seen.param("ny")) == ("60", "127")
    assert (seen.param("base_date"), seen.param("base_time")) == ("20261130", "0100")
    assert seen.param("dataType") == "JSON" and seen.param("numOfRows") == "100"


TAGO_STOPS = "/1613000/BusSttnInfoInqireService/getSttnNoList"
TAGO_PATH = "/1613000/ArvlInfoInqireService/getSttnAcctoArvlPrearngeInfoList"
TAGO = manifest(
    "tago_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    upstream={
        "profile": "data_go_kr",
        "path": TAGO_PATH,
        "format_param": {"_type": "json"},
        "params": {"cityCode": "city_code", "nodeId": "node_id"},
        "lookup": {
            "when_missing": "node_id",
            "path": TAGO_STOPS,
            "params": {"cityCode": "city_code", "nodeNm": "stop_name"},
            "record_path": "response.body.items.item",
            "pick": {"node_id": "nodeid"},
        },
        "fields": {"route": "routeno", "arrive_s": "arrtime"},
    },
    input_schema={
        "type": "object",
        "required": ["city_code"],
        "properties": {
            "city_code": {"type": "integer"},
            "node_id": {"type": "string"},
            "stop_name": {"type": "string"},
        },
    },
    output_schema=item_schema({"route": {"type": "string"}, "arrive_s": {"type": "integer"}}),
)


def test_lookup_fills_the_missing_input_first(srv, tmp_path):
    srv.route(
        TAGO_STOPS,
        Reply(
            body=data_go_kr_json([{"nodeid": "BSB167480102", "nodenm": "하단역"}], shape="single")
        ),
    )
    srv.route(TAGO_PATH, Reply(body=data_go_kr_json([{"routeno": 1001, "arrtime": "240"}])))
    d = dispatcher(srv, TAGO, tmp_path=tmp_path)
    out = run(d.call("tago_test", {"city_code": 21, "stop_name": "하단역"}, mode="live"))
    assert out.status == "ok" and out.output["items"] == [{"route": "1001", "arrive_s": 240}]
    lookup = srv.seen(TAGO_STOPS)[0]
    assert (
        lookup.param("nodeNm") == "하단역"
        and lookup.param("cityCode") == "21"
        and lookup.param("serviceKey") == DECODED_KEY
    )
    assert srv.seen(TAGO_PATH)[0].param("nodeId") == "BSB167480102"
    # Known node id: no lookup.
    run(d.call("tago_test", {"city_code": 21, "node_id": "BSB1"}, mode="live"))
    assert len(srv.seen(TAGO_STOPS)) == 1


def test_lookup_without_a_match_is_no_data(srv, tmp_path):
    srv.route(TAGO_STOPS, Reply(body=data_go_kr_json([], shape="empty")))
    out = run(
        dispatcher(srv, TAGO, tmp_path=tmp_path).call(
            "tago_test", {"city_code": 21, "stop_name": "없는정류장"}, mode="live"
        )
    )
    assert out.status == "no_data" and "node_id" in out.error_message
    assert srv.seen(TAGO_PATH) == []


def test_ttl_cache_answers_repeats_without_a_request(srv, tmp_path):
    m = manifest(
        "er_cached",
        **{
            **ER.model_dump(mode="json", exclude={"id"}),
            "upstream": {
                **ER.upstream.model_dump(mode="json", exclude_none=True),
                "cache_ttl_s": 60,
            },
        },
    )
    srv.route(ER_PATH, Reply(body=data_go_kr_xml(ROWS), content_type=XML))
    clock = FixedClock(dt.datetime(2026, 11, 30, 8, 0, tzinfo=dt.timezone.utc))
    d = dispatcher(srv, m, tmp_path=tmp_path, clock=clock)
    first = run(d.call("er_cached", ARGS, mode="live"))
    second = run(d.call("er_cached", ARGS, mode="live"))
    assert second.output == first.output and second.attempts == 0 and len(srv.seen(ER_PATH)) == 1
    run(d.call("er_cached", {**ARGS, "limit": 2}, mode="live"))  # other arguments, other entry
    assert len(srv.seen(ER_PATH)) == 2
    clock.advance(61)
    run(d.call("er_cached", ARGS, mode="live"))
    assert len(srv.seen(ER_PATH)) == 3


def test_ttl_cache_is_bounded(srv, tmp_path):
    m = manifest(
        "er_small_cache",
        **{
            **ER.model_dump(mode="json", exclude={"id"}),
            "upstream": {
                **ER.upstream.model_dump(mode="json", exclude_none=True),
                "cache_ttl_s": 60,
            },
        },
    )
    srv.route(ER_PATH, Reply(body=data_go_kr_xml(ROWS), content_type=XML))
    d = dispatcher(srv, m, tmp_path=tmp_path, cache_max_entries=2)
    for limit in (1, 2, 3, 1):  # the 3rd entry evicts limit=1, so the 4th call is a miss
        run(d.call("er_small_cache", {**ARGS, "limit": limit}, mode="live"))
    assert len(srv.seen(ER_PATH)) == 4
    run(d.call("er_small_cache", {**ARGS, "limit": 1}, mode="live"))  # now cached again
    assert len(srv.seen(ER_PATH)) == 4


def test_rate_limit_spaces_requests_to_one_host(srv, tmp_path):
    m = manifest(
        "er_paced",
        **{
            **ER.model_dump(mode="json", exclude={"id"}),
            "upstream": {
                **ER.upstream.model_dump(mode="json", exclude_none=True),
                "rate_limit_per_s": 10,
            },
        },
    )
    srv.route(ER_PATH, Reply(body=data_go_kr_xml(ROWS), content_type=XML))
    # The pacing's clock and wait are the dispatcher's injected ones: a clock that stands still
    # makes every request book its slot at the same moment, so the waits asked for are exactly
    # the spacing, on any machine.
    waits = SleepLog()
    d = dispatcher(srv, m, tmp_path=tmp_path, sleep=waits, monotonic=lambda: 1000.0)
    outs = run(d.call_many([("er_paced", ARGS)] * 4, mode="live"))
    assert all(o.status == "ok" for o in outs)
    assert len(srv.seen(ER_PATH)) == 4
    # 4 requests at 10/s: the first goes at once, each later one 0.1 s after the one before
    assert sorted(waits.delays) == pytest.approx([0.1, 0.2, 0.3])


# -- concurrency --------------------------------------------------------------------------------


def test_call_many_runs_calls_concurrently(srv, tmp_path):
    slow = manifest(
        "er_slow",
        **{
            **ER.model_dump(mode="json", exclude={"id"}),
            "upstream": {**ER.upstream.model_dump(mode="json", exclude_none=True), "timeout_s": 5},
        },
    )
    # Each upstream answers only once the other one has been asked: calls made one after the
    # other would leave the first waiting for a request that never comes (the barrier breaks,
    # the reply is a 500 and the call fails).
    both = threading.Barrier(2, timeout=10)

    def after_both(reply: Reply):
        def handler(seen):
            both.wait()
            return reply
        return handler

    srv.route(ER_PATH, after_both(Reply(body=data_go_kr_xml(ROWS), content_type=XML)))
    srv.route(HOSP_PATH, after_both(Reply(body=data_go_kr_json([{"yadmNm": "a", "drTotCnt": 1, "XPos": 1}]))))
    d = dispatcher(srv, slow, HOSP, tmp_path=tmp_path)
    outs = run(d.call_many([("er_slow", ARGS), ("hosp_test", {})], mode="live"))
    assert [o.adapter_id for o in outs] == ["er_slow", "hosp_test"]
    assert all(o.status == "ok" for o in outs), [(o.error_code, o.error_message) for o in outs]


def test_an_error_message_never_carries_the_key_or_personal_data(tmp_path):
    """A transport error's text can quote the request URL: the outcome (API response, trace,
    citizen) keeps the class and code, never the key or a phone number from the arguments."""
    import httpx

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"cannot reach {request.url} (caller 010-1234-5678)")

    d = Dispatcher(catalog(tmp_path, ER), env=ENV, base_url_overrides={"er_test": "http://127.0.0.1:9"},
                   transport=httpx.MockTransport(refuse), sleep=no_wait)
    out = run(d.call("er_test", ARGS, mode="live"))
    assert (out.error_class, out.error_code) == ("channel_unavailable", "CONNECT")
    assert "127.0.0.1" in out.error_message  # still says what failed
    assert DECODED_KEY not in out.error_message and "010-1234-5678" not in out.error_message
    assert "serviceKey=" not in out.error_message or "serviceKey=***" in out.error_message
