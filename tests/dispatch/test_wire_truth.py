"""Issue 12 ("wire truth") and issue 11 items 10–11: the *registry's own* manifests, on the Live
tier, against loopback upstreams answering bodies in the shapes the live services really send.

Each test names the fix it proves. The principle under test is general — envelope detection by
shape, a data-driven taxonomy of codes and messages, the announced-records check — so the
parametrised cases run it across every envelope kind, not only the body that revealed the bug.
"""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from tests.dispatch.helpers import REPO, FixedClock, no_wait, run
from tests.support.upstreams import (
    JSON,
    XML,
    Reply,
    UpstreamServer,
    data_go_kr_json,
    data_go_kr_xml,
    flat_result_json,
    gateway_error_xml,
    header_body_json,
    juso_json,
    kakao_json,
    sgis_json,
    sgis_token_json,
    standard_error_json,
    standard_error_xml,
    wanted_list_xml,
)
from ummaya import USER_AGENT
from ummaya.codegen.loader import load_registry
from ummaya.codegen.profile_merge import resolve_manifest
from ummaya.runtime.catalog import Catalog
from ummaya.runtime.dispatch import Dispatcher

_REG, _ = load_registry(REPO)
REAL = {lm.id: resolve_manifest(lm.manifest, _REG.profiles) for lm in _REG.manifests}
KEY = "decoded+key/=="
ENV = {
    "DATA_GO_KR_SERVICE_KEY": KEY,
    "KAKAO_REST_API_KEY": "kakao-key",
    "JUSO_CONFM_KEY": "juso-key",
    "SGIS_CONSUMER_KEY": "sgis-id",
    "SGIS_CONSUMER_SECRET": "sgis-secret",
    "NEIS_API_KEY": "neis-key",
    "KMA_APIHUB_AUTH_KEY": "apihub-key",
    "SAFETYDATA_SERVICE_KEY": "safetydata-key",
    "WORK24_JOB_POSTINGS_AUTH_KEY": "work24-jobs-key",
    "WORK24_TRAINING_AUTH_KEY": "work24-training-key",
    "LAW_GO_KR_OC": "law-oc",
    "DATA4LIBRARY_AUTH_KEY": "data4library-key",
}
KST = dt.timezone(dt.timedelta(hours=9))
NOON = FixedClock(dt.datetime(2026, 12, 1, 12, 30, tzinfo=KST))


def path_of(adapter_id: str) -> str:
    return REAL[adapter_id].upstream.path


def paths_of(adapter_id: str) -> list[str]:
    """Every path the adapter may call: its default and each operation an input can choose."""
    up = REAL[adapter_id].upstream
    return sorted({up.path, *(up.operations.paths() if up.operations is not None else ())})


# What these tests check is the wire shape, never the time: a loopback answer that takes more than
# a manifest's 10 s only on a machine loaded many times over (CI under a load average of 12 saw
# one) is no finding, so each call gets a roomy deadline unless the test sets its own.
LOOPBACK_DEADLINE_S = 120.0


def dispatcher(srv, *ids, clock=NOON, **manifest_overrides):
    manifest_overrides.setdefault("timeout_s", LOOPBACK_DEADLINE_S)
    adapters = {}
    for adapter_id in ids:
        m = REAL[adapter_id]
        if manifest_overrides:
            m = m.model_copy(deep=True)
            for k, v in manifest_overrides.items():
                setattr(m.upstream, k, v)
        adapters[adapter_id] = m
    cat = Catalog(root=REPO / "generated", release_id="test", adapters=adapters)
    return Dispatcher(
        cat,
        env=ENV,
        # steps on another profile (JUSO before the building register) go to the same loopback
        base_url_overrides={
            **{i: srv.url for i in ids},
            **{f"{i}.{st.id}": srv.url for i in ids for st in REAL[i].upstream.steps if st.profile},
        },
        clock=clock,
        sleep=no_wait,
    )


def call(srv, adapter_id, args, **kw):
    return run(dispatcher(srv, adapter_id, **kw).call(adapter_id, args, mode="live"))


@pytest.fixture
def srv():
    with UpstreamServer() as server:
        yield server


# Real-shaped records (field sets as the guides document them).
ER_ROW = {
    "cnt": "1",
    "distance": "4.06",
    "dutyAddr": "부산광역시 서구 대티로 170 (서대신동2가)",
    "dutyDiv": "B",
    "dutyDivName": "종합병원",
    "dutyFax": "051-600-7599",
    "dutyName": "삼육부산병원",
    "dutyTel1": "051-600-7575",
    "endTime": "2400",
    "hpid": "A2100011",
    "latitude": "35.1050612",
    "longitude": "129.0102843",
    "rnum": "1",
    "startTime": "0000",
}
ER_ARGS = {"latitude": 35.1167, "longitude": 128.968}
KOROAD_ROW = {
    "spot_nm": "부산광역시 사하구 하단동(하단오거리 부근)",
    "sido_sgg_nm": "부산 사하구1",
    "occrrnc_cnt": 9,
    "caslt_cnt": 13,
    "dth_dnv_cnt": 0,
    "se_dnv_cnt": 2,
    "sl_dnv_cnt": 10,
    "wnd_dnv_cnt": 1,
    "la_crd": 35.1062907,
    "lo_crd": 128.9668214,
}
KOROAD_ARGS = {"sido_code": "26", "gugun_code": "380"}
DRUG_ROW = {"itemName": "타이레놀정500밀리그람(아세트아미노펜)", "entpName": "한국존슨앤드존슨판매(유)", "itemSeq": "200300406"}
DRUG_ARGS = {"drug_name": "타이레놀"}


# -- 1. NMC category field ------------------------------------------------------------------------


def test_nmc_er_hospital_type_comes_from_a_field_the_operation_returns(srv):
    """getEgytLcinfoInqire has no dutyEmclsName: the manifest reads dutyDivName, so Live shows it."""
    srv.route(path_of("nmc_emergency_rooms"), Reply(body=data_go_kr_xml([ER_ROW]), content_type=XML))
    out = call(srv, "nmc_emergency_rooms", ER_ARGS)
    assert out.status == "ok", out.error_message
    assert out.output["items"][0]["hospital_type"] == "종합병원"
    fields = REAL["nmc_emergency_rooms"].upstream.fields
    assert "dutyEmclsName" not in json.dumps({k: str(v) for k, v in fields.items()})


# -- 2. resultCode 99 key messages --------------------------------------------------------------

KEY_MESSAGES = [
    "SERVICE KEY IS NOT REGISTERED ERROR.",
    "SERVICE ACCESS DENIED ERROR.",
    "등록되지 않은 서비스키입니다.",
    "SERVICE_KEY_IS_NOT_REGISTERED_ERROR",
]
# (adapter, args, body builder(code, msg)) — one per envelope kind the data.go.kr profile serves.
KEY_ERROR_CASES = [
    ("nmc_emergency_rooms", ER_ARGS, standard_error_xml, XML),  # data_go_kr, XML
    ("kma_ultra_short_nowcast", ER_ARGS, standard_error_json, JSON),  # data_go_kr, JSON
    ("mfds_easy_drug_info", DRUG_ARGS, standard_error_json, JSON),  # header_body kind
    ("koroad_accident_hotspots", KOROAD_ARGS, standard_error_xml, XML),  # flat_result kind
    ("mohw_welfare_services", {}, standard_error_xml, XML),  # wanted_list kind
    (
        "koroad_accident_hotspots",
        KOROAD_ARGS,
        lambda c, m: json.dumps({"resultCode": c, "resultMsg": m}).encode(),
        JSON,
    ),  # flat
    (
        "mfds_easy_drug_info",
        DRUG_ARGS,
        lambda c, m: json.dumps({"header": {"resultCode": c, "resultMsg": m}}).encode(),
        JSON,
    ),  # header/body without the response wrapper
]


@pytest.mark.parametrize("message", KEY_MESSAGES)
@pytest.mark.parametrize(
    ("adapter_id", "args", "body", "ctype"),
    KEY_ERROR_CASES,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(KEY_ERROR_CASES)],
)
def test_result_code_99_key_messages_are_credential_missing(srv, adapter_id, args, body, ctype, message):
    srv.route(path_of(adapter_id), Reply(body=body("99", message), content_type=ctype))
    out = call(srv, adapter_id, args)
    assert (out.status, out.error_class, out.error_code) == ("error", "credential_missing", "99")
    assert out.attempts == 1  # a refused key is not retried


def test_result_code_99_with_another_message_stays_an_adapter_error(srv):
    srv.route(path_of("nmc_emergency_rooms"), Reply(body=standard_error_xml("99", "UNKNOWN ERROR"), content_type=XML))
    out = call(srv, "nmc_emergency_rooms", ER_ARGS)
    assert (out.error_class, out.error_code) == ("adapter_error", "99")


def test_gateway_envelope_with_code_99_and_a_key_message_is_credential_missing(srv):
    srv.route(path_of("hira_hospitals"), Reply(body=gateway_error_xml("99", "SERVICE_KEY_IS_NOT_REGISTERED_ERROR"), content_type=XML))
    out = call(srv, "hira_hospitals", ER_ARGS)
    assert out.error_class == "credential_missing"


def test_a_bare_text_key_error_is_classified_not_parse(srv):
    srv.route(path_of("nmc_aed_locations"), Reply(body=b"SERVICE KEY IS NOT REGISTERED ERROR.", content_type="text/plain"))
    out = call(srv, "nmc_aed_locations", ER_ARGS)
    assert out.error_class == "credential_missing"


# -- 3. the standard <response><header>…<body> form for MFDS and KOROAD ---------------------------


@pytest.mark.parametrize("fmt", ["xml", "json"])
def test_koroad_reads_its_documented_standard_envelope(srv, fmt):
    body = data_go_kr_xml([KOROAD_ROW]) if fmt == "xml" else data_go_kr_json([KOROAD_ROW])
    srv.route(path_of("koroad_accident_hotspots"), Reply(body=body, content_type=XML if fmt == "xml" else JSON))
    out = call(srv, "koroad_accident_hotspots", KOROAD_ARGS)
    assert out.status == "ok", out.error_message
    assert out.output["items"][0]["accidents"] == 9 and out.output["total_count"] == 1


@pytest.mark.parametrize("fmt", ["xml", "json"])
def test_mfds_reads_the_standard_envelope(srv, fmt):
    body = data_go_kr_xml([DRUG_ROW]) if fmt == "xml" else data_go_kr_json([DRUG_ROW], shape="plain")
    srv.route(path_of("mfds_easy_drug_info"), Reply(body=body, content_type=XML if fmt == "xml" else JSON))
    out = call(srv, "mfds_easy_drug_info", DRUG_ARGS)
    assert out.status == "ok", out.error_message
    assert out.output["items"][0]["item_seq"] == "200300406"


@pytest.mark.parametrize("adapter_id,args", [("koroad_accident_hotspots", KOROAD_ARGS), ("mfds_easy_drug_info", DRUG_ARGS)])
@pytest.mark.parametrize("fmt", ["xml", "json"])
def test_a_standard_zero_result_is_no_data_and_a_standard_key_error_is_classified(srv, adapter_id, args, fmt):
    zero = data_go_kr_xml([]) if fmt == "xml" else data_go_kr_json([], shape="empty")
    srv.route(path_of(adapter_id), Reply(body=zero, content_type=JSON))
    out = call(srv, adapter_id, args)
    assert (out.status, out.error_class) == ("no_data", None), out.error_message
    err = standard_error_xml("30", "SERVICE_KEY_IS_NOT_REGISTERED_ERROR") if fmt == "xml" else standard_error_json("30", "SERVICE_KEY_IS_NOT_REGISTERED_ERROR")
    srv.route(path_of(adapter_id), Reply(body=err, content_type=JSON))
    out = call(srv, adapter_id, args)
    assert (out.error_class, out.error_code) == ("credential_missing", "30")


@pytest.mark.parametrize(
    ("adapter_id", "args"),
    [
        ("juso_address_search", {"keyword": "동아대학교"}),
        ("kakao_keyword_search", {"query": "동아대"}),
        ("kakao_coord_to_region", ER_ARGS),
        ("mohw_welfare_services", {}),
    ],
)
def test_every_envelope_kind_reads_a_standard_key_error(srv, adapter_id, args):
    srv.route(path_of(adapter_id), Reply(body=standard_error_xml("30", "SERVICE KEY IS NOT REGISTERED ERROR."), content_type=XML))
    out = call(srv, adapter_id, args)
    assert out.error_class == "credential_missing", out.error_message


# -- 4. records announced but absent → RECORD_PATH ---------------------------------------------

RECORD_PATH_CASES = [
    # (adapter, args, body) — each announces records that are not where the adapter reads them
    ("nmc_emergency_rooms", ER_ARGS, data_go_kr_xml([], total=40)),
    ("kma_ultra_short_nowcast", ER_ARGS, data_go_kr_json([], total=8, shape="empty")),
    ("airkorea_air_quality", {"sido": "부산"}, json.dumps({"response": {"header": {"resultCode": "00", "resultMsg": "NORMAL_CODE"}, "body": {"totalCount": 31, "pageNo": 1, "numOfRows": 10, "stations": []}}}).encode()),
    ("mfds_easy_drug_info", DRUG_ARGS, header_body_json([], total=12)),
    ("koroad_accident_hotspots", KOROAD_ARGS, flat_result_json([], total=3)),
    ("juso_address_search", {"keyword": "동아대학교"}, juso_json([], total=5)),
    ("kakao_keyword_search", {"query": "동아대"}, kakao_json([], total=3)),
    ("mohw_welfare_services", {}, wanted_list_xml([], total=2)),
    ("tago_bus_arrivals", {"city_code": "21", "stop_name": "동아대승학캠퍼스", "node_id": "BSB163020101"}, data_go_kr_json([], total=4, shape="empty")),
]


@pytest.mark.parametrize(("adapter_id", "args", "body"), RECORD_PATH_CASES, ids=[c[0] for c in RECORD_PATH_CASES])
def test_records_announced_but_absent_is_an_error_never_no_data(srv, adapter_id, args, body):
    srv.route(path_of(adapter_id), Reply(body=body, content_type=JSON))
    out = call(srv, adapter_id, args)
    assert (out.status, out.error_class, out.error_code) == ("error", "adapter_error", "RECORD_PATH"), out
    assert out.attempts == 1


def test_a_lookup_announcing_stops_it_does_not_carry_is_an_error_too(srv):
    lookup = REAL["tago_bus_arrivals"].upstream.lookup
    srv.route(lookup.path, Reply(body=data_go_kr_json([], total=2, shape="empty")))
    out = call(srv, "tago_bus_arrivals", {"city_code": "21", "stop_name": "동아대승학캠퍼스"})
    assert (out.error_class, out.error_code) == ("adapter_error", "RECORD_PATH")
    assert srv.seen(path_of("tago_bus_arrivals")) == []  # the arrivals were never asked for


def test_a_page_past_the_end_is_legitimately_empty(srv):
    body = data_go_kr_xml([], total=4, page_no=2, num_of_rows=10)
    srv.route(path_of("nmc_emergency_rooms"), Reply(body=body, content_type=XML))
    assert call(srv, "nmc_emergency_rooms", ER_ARGS).status == "no_data"


def test_a_success_code_without_any_body_is_an_error(srv):
    body = standard_error_xml("00", "NORMAL SERVICE.")
    srv.route(path_of("nmc_emergency_rooms"), Reply(body=body, content_type=XML))
    out = call(srv, "nmc_emergency_rooms", ER_ARGS)
    assert (out.error_class, out.error_code) == ("adapter_error", "RECORD_PATH")


# -- 5. AirKorea ver=1.3: hourly grades, 장비점검, code 34 --------------------------------------

AIR_ROW = {
    "stationName": "장림동",
    "mangName": "도시대기",
    "sidoName": "부산",
    "dataTime": "2026-12-01 02:00",
    "pm10Value": "68",
    "pm25Value": "37",
    "pm10Grade": "2",
    "pm25Grade": "2",
    "pm10Grade1h": "2",
    "pm25Grade1h": "3",
    "pm10Flag": None,
    "pm25Flag": None,
}


def test_airkorea_asks_ver_1_3_and_shows_the_hourly_grade_beside_the_hourly_value(srv):
    broken = dict(AIR_ROW, stationName="녹산동", pm25Value="-", pm25Grade1h=None, pm25Grade=None, pm25Flag="장비점검")
    srv.route(path_of("airkorea_air_quality"), Reply(body=data_go_kr_json([AIR_ROW, broken], shape="plain")))
    out = call(srv, "airkorea_air_quality", {"sido": "부산"})
    assert out.status == "ok", out.error_message
    (seen,) = srv.seen(path_of("airkorea_air_quality"))
    assert seen.param("ver") == "1.3"
    first, second = out.output["items"]
    assert (first["pm25"], first["pm25_grade"], first["pm25_grade_24h"]) == (37, 3, 2)
    assert (second["pm25"], second["pm25_grade"], second["pm25_flag"]) == (None, None, "장비점검")


def test_airkorea_result_code_34_is_classified_and_not_retried(srv):
    srv.route(path_of("airkorea_air_quality"), Reply(body=standard_error_json("34", "등록되지 않은 보고서")))
    out = call(srv, "airkorea_air_quality", {"sido": "부산"})
    assert (out.error_class, out.error_code, out.attempts) == ("channel_unavailable", "34", 1)


# -- 6. KMA nowcast from HH:10 -------------------------------------------------------------------


@pytest.mark.parametrize(("minute", "base"), [(9, "1100"), (10, "1200"), (39, "1200")])
def test_kma_nowcast_asks_for_the_hour_from_hh10(srv, minute, base):
    rows = [{"baseDate": "20261201", "baseTime": base, "category": "T1H", "nx": 98, "ny": 75, "obsrValue": "7.1"}]
    srv.route(path_of("kma_ultra_short_nowcast"), Reply(body=data_go_kr_json(rows)))
    clock = FixedClock(dt.datetime(2026, 12, 1, 12, minute, tzinfo=KST))
    out = call(srv, "kma_ultra_short_nowcast", ER_ARGS, clock=clock)
    assert out.status == "ok", out.error_message
    (seen,) = srv.seen(path_of("kma_ultra_short_nowcast"))
    assert (seen.param("base_date"), seen.param("base_time")) == ("20261201", base)


# -- 7. User-Agent on every upstream request -----------------------------------------------------


def test_every_upstream_request_carries_the_project_user_agent(srv):
    # product/version plus a comment; no URL or domain the project does not own
    assert re.fullmatch(r"ummaya/\d+\.\d+\.\d+\S* \([^()]+\)", USER_AGENT)
    assert "http" not in USER_AGENT and ".dev" not in USER_AGENT
    srv.route(path_of("nmc_emergency_rooms"), Reply(body=data_go_kr_xml([ER_ROW]), content_type=XML))
    srv.route(path_of("kakao_keyword_search"), Reply(body=kakao_json([])))
    srv.route("/OpenAPI3/auth/authentication.json", Reply(body=sgis_token_json("tok")))
    srv.route(path_of("sgis_reverse_geocode"), Reply(body=sgis_json([{"sido_nm": "부산광역시", "sgg_nm": "사하구", "emdong_nm": "하단1동", "full_addr": "부산광역시 사하구 하단1동", "sido_cd": "21", "sgg_cd": "21100", "emdong_cd": "21100510"}])))
    lookup = REAL["tago_bus_arrivals"].upstream.lookup
    srv.route(lookup.path, Reply(body=data_go_kr_json([{"nodeid": "BSB163020101", "nodenm": "동아대승학캠퍼스", "nodeno": "13020", "citycode": "21", "gpslati": 35.1, "gpslong": 128.9}])))
    srv.route(path_of("tago_bus_arrivals"), Reply(body=data_go_kr_json([], shape="empty")))
    ids = ("nmc_emergency_rooms", "kakao_keyword_search", "sgis_reverse_geocode", "tago_bus_arrivals")
    d = dispatcher(srv, *ids)
    outs = run(
        d.call_many(
            [
                ("nmc_emergency_rooms", ER_ARGS),
                ("kakao_keyword_search", {"query": "동아대"}),
                ("sgis_reverse_geocode", ER_ARGS),
                ("tago_bus_arrivals", {"city_code": "21", "stop_name": "동아대승학캠퍼스"}),
            ],
            mode="live",
        )
    )
    assert all(o.status in ("ok", "no_data") for o in outs), [o.error_message for o in outs]
    seen = srv.seen()
    assert len(seen) == 6  # ER, Kakao, SGIS token + call, TAGO lookup + call
    assert {s.headers.get("user-agent") for s in seen} == {USER_AGENT}


# -- 8. key parameter name per profile/manifest; KOROAD's default year --------------------------


@pytest.mark.parametrize(
    ("adapter_id", "args", "name"),
    [
        ("koroad_accident_hotspots", KOROAD_ARGS, "ServiceKey"),
        ("hira_hospitals", ER_ARGS, "ServiceKey"),
        ("nmc_emergency_rooms", ER_ARGS, "serviceKey"),
    ],
)
def test_the_key_goes_under_the_name_the_guide_spells(srv, adapter_id, args, name):
    srv.route(path_of(adapter_id), Reply(body=data_go_kr_xml([]), content_type=XML))
    out = call(srv, adapter_id, args)
    (seen,) = srv.seen(path_of(adapter_id))
    other = "serviceKey" if name == "ServiceKey" else "ServiceKey"
    assert seen.param(name) == KEY and seen.param(other) is None
    assert KEY not in (out.upstream_url or "") and "ervicekey" not in (out.upstream_url or "").lower()


def test_koroad_defaults_to_a_documented_year(srv):
    srv.route(path_of("koroad_accident_hotspots"), Reply(body=flat_result_json([KOROAD_ROW])))
    call(srv, "koroad_accident_hotspots", KOROAD_ARGS)
    (seen,) = srv.seen(path_of("koroad_accident_hotspots"))
    assert int(seen.param("searchYearCd")) <= 2024


# -- issue 11 item 10: one deadline per call ------------------------------------------------------


def test_the_default_deadline_is_ten_seconds():
    assert REAL["nmc_emergency_rooms"].upstream.timeout_s == 10


def test_a_one_byte_a_second_drip_ends_as_timeout_within_the_deadline(srv):
    body = data_go_kr_xml([ER_ROW] * 3)
    srv.route(path_of("nmc_emergency_rooms"), Reply(body=body, content_type=XML, drip_s=0.25))
    out = call(srv, "nmc_emergency_rooms", ER_ARGS, timeout_s=1.0)  # the per-manifest override
    # Each byte comes well within any per-read timeout, so only a deadline on the whole call can
    # end it (the full body would take minutes); and it is one deadline, not one per attempt.
    assert (out.status, out.error_class, out.error_code) == ("error", "channel_unavailable", "TIMEOUT")
    assert out.attempts == 1
    # The upstream was asked once: no retry was started past the deadline.
    assert len(srv.seen(path_of("nmc_emergency_rooms"))) == 1


# -- issue 11 item 11: a body that is not the envelope's is an error, never "no data" ------------

GARBAGE = [b"{}", b"[]", b'"hello"', b'{"documents": "none"}', b'{"meta": {"total_count": 0}}', b"null", b"42"]


@pytest.mark.parametrize("body", GARBAGE, ids=[g.decode() for g in GARBAGE])
@pytest.mark.parametrize(
    ("adapter_id", "args"),
    [
        ("kakao_keyword_search", {"query": "동아대"}),
        ("juso_address_search", {"keyword": "동아대학교"}),
        ("nmc_emergency_rooms", ER_ARGS),
        ("mfds_easy_drug_info", DRUG_ARGS),
        ("sgis_reverse_geocode", ER_ARGS),
    ],
)
def test_a_body_that_is_not_the_envelope_is_an_adapter_error(srv, adapter_id, args, body):
    srv.route("/OpenAPI3/auth/authentication.json", Reply(body=sgis_token_json("tok")))
    srv.route(path_of(adapter_id), Reply(body=body))
    out = call(srv, adapter_id, args)
    assert (out.status, out.error_class) == ("error", "adapter_error"), out
    assert out.error_code in ("PARSE", "RECORD_PATH")


# -- the taxonomy is data: profile rules, inherited by manifests that override the envelope -----


def test_manifests_that_override_the_envelope_inherit_the_profile_taxonomy():
    profile = _REG.profiles["data_go_kr"].envelope
    for adapter_id in ("koroad_accident_hotspots", "mfds_easy_drug_info", "airkorea_air_quality", "mohw_welfare_services"):
        env = REAL[adapter_id].upstream.envelope
        assert set(profile.credential_codes) <= set(env.credential_codes), adapter_id
        assert [r.message for r in profile.errors if r.message] == [r.message for r in env.errors if r.message][-len([r for r in profile.errors if r.message]):], adapter_id
    assert REAL["airkorea_air_quality"].upstream.envelope.errors[0].codes == ["34"]  # own rule first


@pytest.mark.parametrize(
    ("rule", "body", "expected"),
    [
        ({"message": "점검\\s*중", "means": "channel_unavailable", "retry": False}, standard_error_xml("99", "서비스 점검 중입니다"), ("channel_unavailable", 1)),
        ({"codes": ["77"], "means": "quota"}, standard_error_xml("77", "daily cap"), ("channel_unavailable", 3)),
        ({"codes": ["99"], "message": "NO RESULT", "means": "no_data"}, standard_error_xml("99", "NO RESULT"), (None, 1)),
    ],
)
def test_a_profile_rule_decides_the_class(srv, tmp_path, rule, body, expected):
    from tests.dispatch.helpers import catalog, item_schema, manifest

    m = manifest(
        "rule_test",
        credentials=["DATA_GO_KR_SERVICE_KEY"],
        upstream={"profile": "data_go_kr", "path": "/x", "format": "xml", "envelope": {"kind": "data_go_kr", "errors": [rule]}},
        output_schema=item_schema({}),
    )
    srv.route("/x", Reply(body=body, content_type=XML))
    d = Dispatcher(catalog(tmp_path, m), env=ENV, base_url_overrides={"rule_test": srv.url}, sleep=no_wait)
    out = run(d.call("rule_test", {}, mode="live"))
    assert (out.error_class, out.attempts) == expected, out


def test_the_standard_fallback_taxonomy_is_the_data_go_kr_profiles():
    """One taxonomy, two places: the profile (data) and the engine's fallback for data.go.kr-shaped
    bodies under other profiles. They must not drift apart."""
    from ummaya.wire.taxonomy import STANDARD

    profile = _REG.profiles["data_go_kr"].envelope
    assert [(r.codes, r.message, r.means) for r in profile.errors] == [
        (r.codes, r.message, r.means) for r in STANDARD.errors
    ]
    for name in ("no_data_codes", "transient_codes", "quota_codes", "credential_codes"):
        assert set(getattr(profile, name)) <= set(getattr(STANDARD, name)), name


@pytest.mark.parametrize(
    ("code", "message", "expected"),
    [
        ("99", "SERVICE KEY IS NOT REGISTERED ERROR.", "credential_missing"),
        ("99", "Service key is not registered", "credential_missing"),
        ("31", "DEADLINE_HAS_EXPIRED_ERROR", "credential_missing"),
        ("99", "API key is invalid", "credential_missing"),
        ("99", "승인되지 않은 KEY 입니다.", "credential_missing"),
        ("99", "LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR", "channel_unavailable"),
        ("05", "SERVICETIME_OUT", "channel_unavailable"),
        ("99", "SERVICE TIMEOUT ERROR", "channel_unavailable"),
        ("10", "INVALID_REQUEST_PARAMETER_ERROR", "adapter_error"),
        ("12", "NO_OPENAPI_SERVICE_ERROR", "adapter_error"),
        ("99", "UNKNOWN_ERROR", "adapter_error"),
    ],
)
def test_gateway_codes_and_messages_map_to_classes(srv, code, message, expected):
    srv.route(path_of("nmc_pharmacies"), Reply(body=standard_error_xml(code, message), content_type=XML))
    out = call(srv, "nmc_pharmacies", ER_ARGS)
    assert out.error_class == expected, out.error_message


# -- the principle across the whole registry: every live adapter, every standard-form answer -----

LIVE = sorted(
    i for i, m in REAL.items() if m.tier == "live" and m.upstream is not None and m.upstream.callable
)
STANDARD_ANSWERS = [
    ("key_30", standard_error_xml("30", "SERVICE_KEY_IS_NOT_REGISTERED_ERROR"), ("error", "credential_missing")),
    ("key_99", standard_error_xml("99", "SERVICE KEY IS NOT REGISTERED ERROR."), ("error", "credential_missing")),
    ("key_99_ko", standard_error_json("99", "등록되지 않은 서비스키입니다."), ("error", "credential_missing")),
    ("gateway_quota", gateway_error_xml("22", "LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR"), ("error", "channel_unavailable")),
    ("zero_xml", data_go_kr_xml([]), ("no_data", None)),
    ("announced_40", data_go_kr_xml([], total=40), ("error", "adapter_error")),
]


@pytest.mark.parametrize(("name", "body", "expected"), STANDARD_ANSWERS, ids=[a[0] for a in STANDARD_ANSWERS])
@pytest.mark.parametrize("adapter_id", LIVE)
def test_every_live_adapter_reads_the_standard_forms(srv, adapter_id, name, body, expected):
    m = REAL[adapter_id]
    args = next(f.request for f in m.fixtures if f.expected is not None)
    for path in paths_of(adapter_id):
        srv.route(path, Reply(body=body, content_type=XML))
    for step in m.upstream.chain():
        srv.route(step.path, Reply(body=body, content_type=XML))
    if m.upstream.auth is not None and m.upstream.auth.token_path:
        srv.route(m.upstream.auth.token_path, Reply(body=sgis_token_json("tok")))
    out = call(srv, adapter_id, args)
    assert (out.status, out.error_class) == expected, (adapter_id, out.error_code, out.error_message)
