"""The declared capabilities of the shared engine, each once against real-shape bodies: over real
HTTP to a loopback upstream (Live), and the same bodies through the fixture transport (Mock).

odcloud and head/row envelopes, cond[FIELD::OP] filters, a date window, paging, pyproj coordinate
systems, after-call match / nearest-first / sort / top-N, resolver steps (one on another profile),
POST with a JSON body and headers, a per-day quota, and no credential over plain http.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from pydantic import ValidationError

from tests.dispatch.helpers import FixedClock, catalog, item_schema, manifest, no_wait, run
from tests.support.upstreams import (
    Reply,
    UpstreamServer,
    data_go_kr_json,
    head_row_json,
    head_row_result,
    juso_json,
    odcloud_error,
    odcloud_json,
)
from ummaya.model.manifest import Manifest, Profile
from ummaya.runtime.dispatch import Dispatcher
from ummaya.wire.geo import from_wgs84, to_wgs84

KEY = "data+key/=="
ENV = {"DATA_GO_KR_SERVICE_KEY": KEY, "NEIS_API_KEY": "neis-key", "JUSO_CONFM_KEY": "juso-key"}
CLOCK = FixedClock(dt.datetime(2026, 12, 1, 1, 0, tzinfo=dt.timezone.utc))  # 10:00 KST
SEOUL_HALL = (37.5665, 126.978)
BUSAN_HALL = (35.1798, 129.0750)


@pytest.fixture
def srv():
    with UpstreamServer() as server:
        yield server


def live(tmp_path, m: Manifest, srv, **kw) -> Dispatcher:
    overrides = {m.id: srv.url, **kw.pop("overrides", {})}
    return Dispatcher(catalog(tmp_path, m), env=ENV, base_url_overrides=overrides, clock=CLOCK,
                      sleep=no_wait, **kw)


def mock(tmp_path, m: Manifest, bodies: dict[str, bytes]) -> Dispatcher:
    return Dispatcher(catalog(tmp_path, m, bodies={m.id: bodies}), env={}, clock=CLOCK)


# -- odcloud ----------------------------------------------------------------------------------

BENEFITS = manifest(
    "benefits_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    input_schema={"type": "object", "properties": {"keyword": {"type": "string"},
                  "limit": {"type": "integer", "default": 10}}},
    upstream={
        "profile": "odcloud",
        "path": "/api/gov24/v3/serviceList",
        "params": {"perPage": "limit"},
        "filters": [{"field": "서비스명", "op": "LIKE", "input": "keyword"}],
        "fields": {"id": "서비스ID", "name": "서비스명"},
        "response_fields": {"guide": {"name": "t", "version": "1"}, "record": ["서비스ID", "서비스명"]},
    },
    output_schema=item_schema({"id": {"type": "string"}, "name": {"type": "string"}}),
    fixtures=[{"name": "youth", "source": "synthetic", "request": {"keyword": "청년"},
               "response": "youth.json", "expected": {"items": [], "total_count": 0}}],
)
ODCLOUD_BODY = odcloud_json(
    [{"서비스ID": "WLF0000001", "서비스명": "청년월세 특별지원"}, {"서비스ID": "WLF0000002", "서비스명": "청년 전세자금"}],
    total=10742, match=37,
)


def test_odcloud_records_come_from_data_and_total_is_the_filtered_match_count(tmp_path, srv):
    srv.route("/api/gov24/v3/serviceList", Reply(body=ODCLOUD_BODY))
    out = run(live(tmp_path, BENEFITS, srv).call("benefits_test", {"keyword": "청년"}, mode="live"))
    assert out.status == "ok", out.error_message
    assert [i["id"] for i in out.output["items"]] == ["WLF0000001", "WLF0000002"]
    assert out.output["total_count"] == 37  # matchCount, not the unfiltered totalCount 10742
    seen = srv.seen("/api/gov24/v3/serviceList")[0]
    assert seen.param("cond[서비스명::LIKE]") == "청년"
    assert "cond%5B" in seen.raw_query  # brackets percent-encoded once, as the gateway expects
    assert seen.param("serviceKey") == KEY and seen.param("returnType") == "JSON"
    assert seen.param("page") == "1" and seen.param("perPage") == "10"


def test_odcloud_mock_reads_the_same_body_the_same_way(tmp_path):
    out = run(mock(tmp_path, BENEFITS, {"youth.json": ODCLOUD_BODY}).call("benefits_test", {"keyword": "청년"}))
    assert out.tier == "mock" and out.output["total_count"] == 37 and len(out.output["items"]) == 2


@pytest.mark.parametrize(("status", "body", "error_class", "code"), [
    (401, odcloud_error(-4), "credential_missing", "-4"),
    (200, odcloud_error(-10, "트래픽 허용 횟수를 초과하였습니다."), "channel_unavailable", "-10"),
    (500, odcloud_error(-5, "API 서버 오류가 발생하였습니다."), "channel_unavailable", "-5"),
    (200, odcloud_error(-2, "요청하신 파라미터가 적합하지 않습니다."), "adapter_error", "-2"),
    (200, b'{"page": 1, "perPage": 10}', "adapter_error", "PARSE"),
])
def test_odcloud_errors_are_classified_by_their_code(tmp_path, srv, status, body, error_class, code):
    srv.route("/api/gov24/v3/serviceList", Reply(status=status, body=body))
    out = run(live(tmp_path, BENEFITS, srv, max_attempts=1).call("benefits_test", {"keyword": "청년"}, mode="live"))
    assert (out.status, out.error_class, out.error_code) == ("error", error_class, code)


def test_odcloud_zero_matches_is_no_data(tmp_path, srv):
    srv.route("/api/gov24/v3/serviceList", Reply(body=odcloud_json([], total=10742, match=0)))
    out = run(live(tmp_path, BENEFITS, srv).call("benefits_test", {"keyword": "없는말"}, mode="live"))
    assert out.status == "no_data" and out.output == {"items": [], "total_count": 0}


# -- head/row ---------------------------------------------------------------------------------

MEALS = manifest(
    "meals_test",
    credentials=["NEIS_API_KEY"],
    input_schema={"type": "object", "properties": {"office": {"type": "string"}, "school": {"type": "string"}}},
    upstream={
        "profile": "neis",
        "path": "/hub/mealServiceDietInfo",
        "params": {"ATPT_OFCDC_SC_CODE": "office", "SD_SCHUL_CODE": "school"},
        "record_path": "row",
        "fields": {"date": "MLSV_YMD", "menu": {"source": "DDISH_NM", "transform": "strip_html"}},
    },
    output_schema=item_schema({"date": {"type": "string"}, "menu": {"type": ["string", "null"]}}),
)
MEAL_ROW = {"ATPT_OFCDC_SC_CODE": "B10", "SD_SCHUL_CODE": "7010057", "MLSV_YMD": "20261201",
            "DDISH_NM": "현미밥 <br/>소고기미역국 (5.6.16)<br/>배추김치 (9)"}


def test_head_row_code_under_head_and_records_under_row(tmp_path, srv):
    srv.route("/hub/mealServiceDietInfo", Reply(body=head_row_json("mealServiceDietInfo", [MEAL_ROW], total=1)))
    out = run(live(tmp_path, MEALS, srv).call("meals_test", {"office": "B10", "school": "7010057"}, mode="live"))
    assert out.status == "ok", out.error_message
    assert out.output["items"] == [{"date": "20261201", "menu": "현미밥\n소고기미역국 (5.6.16)\n배추김치 (9)"}]
    seen = srv.seen("/hub/mealServiceDietInfo")[0]
    assert seen.param("KEY") == "neis-key" and seen.param("Type") == "json" and seen.param("pIndex") == "1"


@pytest.mark.parametrize(("body", "status", "error_class"), [
    (head_row_result("INFO-200", "해당하는 데이터가 없습니다."), "no_data", None),
    (head_row_result("ERROR-290", "인증키가 유효하지 않습니다."), "error", "credential_missing"),
    (head_row_result("ERROR-337", "일별 트래픽 제한을 초과했습니다."), "error", "channel_unavailable"),
    (head_row_result("ERROR-300", "필수 값이 누락되어 있습니다."), "error", "adapter_error"),
])
def test_head_row_top_level_result_is_no_data_or_an_error(tmp_path, srv, body, status, error_class):
    srv.route("/hub/mealServiceDietInfo", Reply(body=body))
    out = run(live(tmp_path, MEALS, srv, max_attempts=1).call("meals_test", {"office": "B10", "school": "1"}, mode="live"))
    assert (out.status, out.error_class) == (status, error_class), out.error_message


def test_head_row_announcing_rows_it_does_not_have_is_an_error_not_no_data(tmp_path, srv):
    srv.route("/hub/mealServiceDietInfo", Reply(body=head_row_json("mealServiceDietInfo", [], total=3)))
    out = run(live(tmp_path, MEALS, srv).call("meals_test", {"office": "B10", "school": "1"}, mode="live"))
    assert (out.error_class, out.error_code) == ("adapter_error", "RECORD_PATH")


SHELTERS = manifest(
    "shelters_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    upstream={
        "profile": "data_go_kr",
        "path": "/1741000/HeatWaveShelter2/getHeatWaveShelterList2",
        "envelope": {"kind": "head_row", "success_codes": ["INFO-0"], "no_data_codes": ["INFO-3"]},
        "record_path": "row",
        "fields": {"name": "restname"},
    },
    output_schema=item_schema({"name": {"type": "string"}}),
)


def test_legacy_mois_head_row_spells_its_head_otherwise(tmp_path, srv):
    body = head_row_json("HeatWaveShelter", [{"restname": "삼호경로당"}], code="INFO-0", msg="NORMAL SERVICE", total=1, style="mois")
    srv.route("/1741000/HeatWaveShelter2/getHeatWaveShelterList2", Reply(body=body))
    out = run(live(tmp_path, SHELTERS, srv).call("shelters_test", {}, mode="live"))
    assert out.status == "ok" and out.output == {"items": [{"name": "삼호경로당"}], "total_count": 1}
    srv.route("/1741000/HeatWaveShelter2/getHeatWaveShelterList2", Reply(body=head_row_result("INFO-3", "데이터없음 에러", style="mois")))
    assert run(live(tmp_path, SHELTERS, srv).call("shelters_test", {}, mode="live")).status == "no_data"


def test_head_row_in_xml_is_read_like_json(tmp_path, srv):
    xml = ('<?xml version="1.0" encoding="UTF-8"?><mealServiceDietInfo><head><list_total_count>1</list_total_count>'
           '<RESULT><CODE>INFO-000</CODE><MESSAGE>정상 처리되었습니다.</MESSAGE></RESULT></head>'
           '<row><MLSV_YMD>20261201</MLSV_YMD><DDISH_NM>현미밥</DDISH_NM></row></mealServiceDietInfo>').encode()
    srv.route("/hub/mealServiceDietInfo", Reply(body=xml, content_type="text/xml;charset=UTF-8"))
    out = run(live(tmp_path, MEALS, srv).call("meals_test", {"office": "B10", "school": "1"}, mode="live"))
    assert out.output["items"] == [{"date": "20261201", "menu": "현미밥"}]


# -- standard data v2: non-00 success code, single item, cond filters, nearest-first -------------

BELLS = manifest(
    "bells_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    input_schema={"type": "object", "required": ["latitude", "longitude"], "properties": {
        "latitude": {"type": "number"}, "longitude": {"type": "number"}, "district": {"type": "string"},
        "limit": {"type": "integer", "default": 2}}},
    upstream={
        "profile": "data_go_kr_v2",
        "path": "/1741000/emergency_call_box_info/info",
        "filters": [{"field": "LCTN_ROAD_NM_ADDR", "op": "LIKE", "input": "district"}],
        "paging": {"size": 100, "max_pages": 3},
        "coordinates": {"x": "WGS84_LOT", "y": "WGS84_LAT"},
        "after": {"nearest": {"max_km": 5}, "limit": "limit"},
        "fields": {"place": "INSTL_PSTN", "distance_km": "$distance_km", "latitude": "$latitude"},
    },
    output_schema=item_schema({"place": {"type": "string"}, "distance_km": {"type": "number"},
                               "latitude": {"type": "number"}}),
)


def bell(place: str, lat: float, lon: float) -> dict:
    return {"INSTL_PSTN": place, "WGS84_LAT": str(lat), "WGS84_LOT": str(lon)}


def test_success_code_0_and_a_single_item_object(tmp_path, srv):
    body = data_go_kr_json([bell("시청 앞", 37.5663, 126.9779)], code="0", msg="정상", shape="single")
    srv.route("/1741000/emergency_call_box_info/info", Reply(body=body))
    out = run(live(tmp_path, BELLS, srv).call("bells_test", {"latitude": SEOUL_HALL[0], "longitude": SEOUL_HALL[1]}, mode="live"))
    assert out.status == "ok", out.error_message
    assert out.output["items"][0]["place"] == "시청 앞" and out.output["items"][0]["distance_km"] < 0.05


def test_pages_are_read_then_nearest_first_within_max_km_then_top_n(tmp_path, srv):
    far = [bell(f"먼 곳 {i}", 37.70, 127.10) for i in range(100)]  # ~18 km away: dropped
    page2 = [bell("덕수궁 돌담길", 37.5658, 126.9752), *[bell(f"먼 곳 b{i}", 37.70, 127.10) for i in range(99)]]
    page3 = [bell("시청역 5번 출구", 37.5657, 126.9770), bell("위치 없음", "", "")]

    def by_page(seen):
        n = int(seen.param("pageNo"))
        rows = {1: far, 2: page2, 3: page3}[n]
        return Reply(body=data_go_kr_json(rows, code="0", msg="정상", total=202, page_no=n, num_of_rows=100))

    srv.route("/1741000/emergency_call_box_info/info", by_page)
    d = live(tmp_path, BELLS, srv)
    out = run(d.call("bells_test", {"latitude": SEOUL_HALL[0], "longitude": SEOUL_HALL[1], "district": "중구"}, mode="live"))
    assert out.status == "ok", out.error_message
    assert [i["place"] for i in out.output["items"]] == ["시청역 5번 출구", "덕수궁 돌담길"]
    dists = [i["distance_km"] for i in out.output["items"]]
    assert dists == sorted(dists) and dists[1] < 0.5
    assert out.output["total_count"] == 2  # what nearest-first kept within 5 km, not the upstream's 202
    pages = [s.param("pageNo") for s in srv.seen("/1741000/emergency_call_box_info/info")]
    assert pages == ["1", "2", "3"]
    first = srv.seen("/1741000/emergency_call_box_info/info")[0]
    assert first.param("numOfRows") == "100" and first.param("cond[LCTN_ROAD_NM_ADDR::LIKE]") == "중구"
    assert first.param("returnType") == "json" and first.param("serviceKey") == KEY


def test_paging_stops_at_a_short_page(tmp_path, srv):
    srv.route("/1741000/emergency_call_box_info/info", Reply(body=data_go_kr_json([bell("시청 앞", 37.5663, 126.9779)], code="0", total=1)))
    run(live(tmp_path, BELLS, srv).call("bells_test", {"latitude": 37.5665, "longitude": 126.978}, mode="live"))
    assert len(srv.seen("/1741000/emergency_call_box_info/info")) == 1


def test_mock_reads_later_pages_from_side_files(tmp_path):
    page1 = data_go_kr_json([bell(f"먼 곳 {i}", 37.70, 127.10) for i in range(100)], code="0", total=101, num_of_rows=100)
    page2 = data_go_kr_json([bell("시청역 5번 출구", 37.5657, 126.9770)], code="0", total=101, page_no=2, num_of_rows=100)
    m = BELLS.model_copy(update={"fixtures": []})
    m = Manifest.model_validate({**m.model_dump(), "fixtures": [{
        "name": "seoul", "source": "synthetic", "request": {"latitude": 37.5665, "longitude": 126.978},
        "response": "seoul.json", "expected": {"items": [], "total_count": 0}}]})
    out = run(mock(tmp_path, m, {"seoul.json": page1, "seoul.page2.json": page2}).call(
        "bells_test", {"latitude": 37.5665, "longitude": 126.978}))
    assert [i["place"] for i in out.output["items"]] == ["시청역 5번 출구"]


# -- coordinate systems (pyproj) ----------------------------------------------------------------

def test_epsg_5174_and_2097_round_trip_seoul_and_busan_city_halls():
    for lat, lon in (SEOUL_HALL, BUSAN_HALL):
        for crs in ("EPSG:5174", "EPSG:2097", "EPSG:5181"):
            x, y = from_wgs84(crs, lat, lon)
            back = to_wgs84(crs, x, y)
            assert abs(back[0] - lat) < 1e-7 and abs(back[1] - lon) < 1e-7
    x, y = from_wgs84("EPSG:5174", *SEOUL_HALL)
    # The Bessel 중부원점 TM origin is (200000, 500000) at 38°N, 127.0029°E: Seoul City Hall lies
    # ~2 km west and ~48 km south of it (the EPSG datum shift moves it ~300 m from a naive one).
    assert 197_000 < x < 199_000 and 451_000 < y < 452_500


BATHS = manifest(
    "baths_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    input_schema={"type": "object", "properties": {"latitude": {"type": "number"}, "longitude": {"type": "number"},
                  "name": {"type": "string"}}},
    upstream={
        "profile": "data_go_kr_v2",
        "path": "/1741000/public_baths/info",
        "filters": [{"field": "SALS_STTS_CD", "op": "EQ", "value": "01"}],
        "coordinates": {"x": "CRD_INFO_X", "y": "CRD_INFO_Y", "crs": "EPSG:5174"},
        "after": {"match": [{"input": "name", "fields": ["BPLC_NM"], "words": "all"}],
                  "nearest": {}},
        "fields": {"name": "BPLC_NM", "latitude": "$latitude", "longitude": "$longitude", "distance_km": "$distance_km"},
    },
    output_schema=item_schema({"name": {"type": "string"}, "latitude": {"type": ["number", "null"]},
                               "longitude": {"type": ["number", "null"]}, "distance_km": {"type": ["number", "null"]}}),
)


def test_records_in_epsg_5174_get_wgs84_positions_and_distances(tmp_path, srv):
    x1, y1 = from_wgs84("EPSG:5174", 35.1530, 129.1186)  # 광안리 near 수영구
    x2, y2 = from_wgs84("EPSG:5174", 35.1631, 129.1635)  # 해운대
    rows = [{"BPLC_NM": "해운대 온천 사우나", "CRD_INFO_X": f"{x2:.4f}", "CRD_INFO_Y": f"{y2:.4f}"},
            {"BPLC_NM": "광안 사우나", "CRD_INFO_X": f"{x1:.4f}", "CRD_INFO_Y": f"{y1:.4f}"},
            {"BPLC_NM": "광안 목욕탕", "CRD_INFO_X": "", "CRD_INFO_Y": ""}]
    srv.route("/1741000/public_baths/info", Reply(body=data_go_kr_json(rows, code="0")))
    out = run(live(tmp_path, BATHS, srv).call("baths_test", {"latitude": 35.1545, "longitude": 129.1180, "name": "사우나"}, mode="live"))
    items = out.output["items"]
    assert [i["name"] for i in items] == ["광안 사우나", "해운대 온천 사우나"]  # match, then nearest; no position dropped
    assert abs(items[0]["latitude"] - 35.1530) < 1e-5 and abs(items[0]["longitude"] - 129.1186) < 1e-5
    assert 0.1 < items[0]["distance_km"] < 0.3
    assert srv.seen("/1741000/public_baths/info")[0].param("cond[SALS_STTS_CD::EQ]") == "01"


NEAREST_STATION = manifest(
    "tm_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    input_schema={"type": "object", "required": ["latitude", "longitude"], "properties": {
        "latitude": {"type": "number"}, "longitude": {"type": "number"}}},
    upstream={
        "profile": "data_go_kr",
        "path": "/B552584/MsrstnInfoInqireSvc/getNearbyMsrstnList",
        "project_params": {"crs": "EPSG:2097", "x": "tmX", "y": "tmY"},
        "fields": {"station": "stationName"},
    },
    output_schema=item_schema({"station": {"type": "string"}}),
)


def test_the_citizens_wgs84_position_is_sent_as_tm_coordinates(tmp_path, srv):
    srv.route("/B552584/MsrstnInfoInqireSvc/getNearbyMsrstnList", Reply(body=data_go_kr_json([{"stationName": "중구"}])))
    run(live(tmp_path, NEAREST_STATION, srv).call("tm_test", {"latitude": SEOUL_HALL[0], "longitude": SEOUL_HALL[1]}, mode="live"))
    seen = srv.seen("/B552584/MsrstnInfoInqireSvc/getNearbyMsrstnList")[0]
    x, y = float(seen.param("tmX")), float(seen.param("tmY"))
    ex, ey = from_wgs84("EPSG:2097", *SEOUL_HALL)
    assert abs(x - ex) < 0.01 and abs(y - ey) < 0.01 and 197_000 < x < 199_500


def test_an_unknown_crs_is_refused_by_the_schema():
    with pytest.raises(ValidationError):
        manifest("bad_crs", upstream={"path": "/x", "coordinates": {"x": "a", "y": "b", "crs": "WGS84"}},
                 output_schema=item_schema({}))


# -- sort, window ---------------------------------------------------------------------------

JOBS = manifest(
    "jobs_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    input_schema={"type": "object", "properties": {"since": {"type": "string"}, "limit": {"type": "integer", "default": 2}}},
    upstream={
        "profile": "data_go_kr",
        "path": "/1760000/PblJobService/getList",
        "format": "xml",
        "window": {"start_param": "Begin_de", "end_param": "End_de", "days_back": 30, "format": "yyyy-mm-dd", "start_input": "since"},
        "after": {"sort": [{"field": "regdate", "descending": True}], "limit": "limit"},
        "fields": {"title": "title", "posted": "regdate"},
    },
    output_schema=item_schema({"title": {"type": "string"}, "posted": {"type": "string"}}),
)


def test_a_date_window_in_kst_and_newest_first_after_the_call(tmp_path, srv):
    from tests.support.upstreams import data_go_kr_xml

    rows = [{"title": "오래된 공고", "regdate": "20261105"}, {"title": "새 공고", "regdate": "20261130"},
            {"title": "중간 공고", "regdate": "20261120"}]
    srv.route("/1760000/PblJobService/getList", Reply(body=data_go_kr_xml(rows), content_type="text/xml"))
    out = run(live(tmp_path, JOBS, srv).call("jobs_test", {}, mode="live"))
    assert [i["title"] for i in out.output["items"]] == ["새 공고", "중간 공고"]
    assert out.output["total_count"] == 3
    seen = srv.seen("/1760000/PblJobService/getList")[0]
    assert (seen.param("Begin_de"), seen.param("End_de")) == ("2026-11-01", "2026-12-01")
    run(live(tmp_path, JOBS, srv).call("jobs_test", {"since": "2026-11-25"}, mode="live"))
    assert srv.seen("/1760000/PblJobService/getList")[1].param("Begin_de") == "2026-11-25"


# -- resolver steps ---------------------------------------------------------------------------

TRAINS = manifest(
    "trains_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    input_schema={"type": "object", "properties": {
        "from_city": {"type": "string"}, "from_station": {"type": "string"},
        "to_city": {"type": "string"}, "to_station": {"type": "string"},
        "dep_id": {"type": "string"}, "arr_id": {"type": "string"}}},
    upstream={
        "profile": "data_go_kr",
        "path": "/1613000/TrainInfoService/getStrtpntAlocFndTrainInfo",
        "format_param": {"_type": "json"},
        "params": {"depPlaceId": "dep_id", "arrPlaceId": "arr_id"},
        "steps": [
            {"id": "origin", "when_missing": "dep_id", "path": "/1613000/TrainInfoService/getCtyAcctoTrainSttnList",
             "params": {"cityCode": "from_city"}, "static_params": {"numOfRows": 100},
             "match": {"input": "from_station", "fields": ["nodename"]}, "pick": {"dep_id": "nodeid"}},
            {"id": "destination", "when_missing": "arr_id", "path": "/1613000/TrainInfoService/getCtyAcctoTrainSttnList",
             "params": {"cityCode": "to_city"}, "static_params": {"numOfRows": 100},
             "match": {"input": "to_station", "fields": ["nodename"]}, "pick": {"arr_id": "nodeid"}},
        ],
        "fields": {"train": "trainno"},
    },
    output_schema=item_schema({"train": {"type": "string"}}),
)
STATIONS = {"25": [{"nodeid": "NAT011668", "nodename": "대전"}, {"nodeid": "NAT011403", "nodename": "서대전"}],
            "21": [{"nodeid": "NAT014445", "nodename": "구포"}, {"nodeid": "NAT014445X", "nodename": "부산"}]}


def test_two_steps_resolve_origin_and_destination_then_the_main_request(tmp_path, srv):
    srv.route("/1613000/TrainInfoService/getCtyAcctoTrainSttnList",
              lambda seen: Reply(body=data_go_kr_json(STATIONS[seen.param("cityCode")])))
    srv.route("/1613000/TrainInfoService/getStrtpntAlocFndTrainInfo", Reply(body=data_go_kr_json([{"trainno": "101"}])))
    args = {"from_city": "25", "from_station": "대전", "to_city": "21", "to_station": "부산"}
    out = run(live(tmp_path, TRAINS, srv).call("trains_test", args, mode="live"))
    assert out.status == "ok", out.error_message
    main = srv.seen("/1613000/TrainInfoService/getStrtpntAlocFndTrainInfo")[0]
    assert (main.param("depPlaceId"), main.param("arrPlaceId")) == ("NAT011668", "NAT014445X")
    assert all(s.param("serviceKey") == KEY for s in srv.requests)
    # the upstream URL shown is the main request's, without the key
    assert "getStrtpntAlocFndTrainInfo" in out.upstream_url and KEY not in out.upstream_url


def test_a_step_with_no_matching_record_is_no_data_naming_the_step(tmp_path, srv):
    srv.route("/1613000/TrainInfoService/getCtyAcctoTrainSttnList",
              lambda seen: Reply(body=data_go_kr_json(STATIONS[seen.param("cityCode")])))
    out = run(live(tmp_path, TRAINS, srv).call("trains_test", {"from_city": "25", "from_station": "대전", "to_city": "21",
                                                              "to_station": "강릉"}, mode="live"))
    assert out.status == "no_data" and "destination" in out.error_message
    assert not srv.seen("/1613000/TrainInfoService/getStrtpntAlocFndTrainInfo")


def test_given_ids_skip_their_steps(tmp_path, srv):
    srv.route("/1613000/TrainInfoService/getStrtpntAlocFndTrainInfo", Reply(body=data_go_kr_json([{"trainno": "101"}])))
    run(live(tmp_path, TRAINS, srv).call("trains_test", {"dep_id": "NAT011668", "arr_id": "NAT014445X"}, mode="live"))
    assert [s.path for s in srv.requests] == ["/1613000/TrainInfoService/getStrtpntAlocFndTrainInfo"]


SCHOOL_FIGURES = manifest(
    "school_figures_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    input_schema={"type": "object", "properties": {"school_name": {"type": "string"}, "school_id": {"type": "string"}}},
    upstream={
        "profile": "data_go_kr",
        "path": "/B340014/FinancesService/getComparisonTuitionCrntSt",
        "format_param": {"_type": "json"},
        "params": {"schlId": "school_id"},
        "derived_params": {"svyYr": "last_year.yyyy"},
        "steps": [{"id": "school", "when_missing": "school_id", "path": "/B340014/SchoolInfoService/getSchoolInfo",
                   "params": {"schlKrnNm": "school_name"}, "derived_params": {"svyYr": "today.yyyy"},
                   "match": {"input": "school_name", "fields": ["schlNm"]}, "pick": {"school_id": "schlId"}}],
        "fields": {"value": "indctVal1"},
    },
    output_schema=item_schema({"value": {"type": "string"}}),
)


def test_a_step_sends_its_own_derived_parameters_and_not_the_main_requests(tmp_path, srv):
    srv.route("/B340014/SchoolInfoService/getSchoolInfo",
              Reply(body=data_go_kr_json([{"schlId": "0000001", "schlNm": "가나대학교 분교"}, {"schlId": "0000149", "schlNm": "가나대학교"}])))
    srv.route("/B340014/FinancesService/getComparisonTuitionCrntSt", Reply(body=data_go_kr_json([{"indctVal1": "5666.7"}])))
    out = run(live(tmp_path, SCHOOL_FIGURES, srv).call("school_figures_test", {"school_name": "가나대학교 분교"}, mode="live"))
    assert out.status == "ok", out.error_message
    step = srv.seen("/B340014/SchoolInfoService/getSchoolInfo")[0]
    main = srv.seen("/B340014/FinancesService/getComparisonTuitionCrntSt")[0]
    # CLOCK is 2026-12-01 KST: the step asks for this year, the main request for the year before
    assert (step.param("svyYr"), main.param("svyYr")) == ("2026", "2025")
    assert main.param("schlId") == "0000001"


def test_mock_answers_each_step_from_its_own_side_file(tmp_path):
    m = Manifest.model_validate({**TRAINS.model_dump(), "fixtures": [{
        "name": "daejeon_busan", "source": "synthetic",
        "request": {"from_city": "25", "from_station": "대전", "to_city": "21", "to_station": "부산"},
        "response": "dj.json", "expected": {"items": [], "total_count": 0}}]})
    bodies = {"dj.json": data_go_kr_json([{"trainno": "101"}]),
              "dj.origin.json": data_go_kr_json(STATIONS["25"]),
              "dj.destination.json": data_go_kr_json(STATIONS["21"])}
    d = mock(tmp_path, m, bodies)
    out = run(d.call("trains_test", {"from_city": "25", "from_station": "대전", "to_city": "21", "to_station": "부산"}))
    assert out.status == "ok" and out.output["items"] == [{"train": "101"}]
    assert "depPlaceId=NAT011668" in out.upstream_url and "arrPlaceId=NAT014445X" in out.upstream_url


EXPRESS = manifest(
    "express_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    input_schema={"type": "object", "properties": {
        "origin": {"type": "string"}, "destination": {"type": "string"},
        "dep_id": {"type": "string"}, "arr_id": {"type": "string"}}},
    upstream={
        "profile": "data_go_kr",
        "path": "/1613000/ExpBusInfoService/getStrtpntAlocFndExpbusInfo",
        "format_param": {"_type": "json"},
        "params": {"depTerminalId": "dep_id", "arrTerminalId": "arr_id"},
        "steps": [
            {"id": f"{end}", "when_missing": pick, "path": "/1613000/ExpBusInfoService/getExpBusTrminlList",
             "params": {"terminalNm": end}, "static_params": {"numOfRows": 100},
             "match": {"input": end, "fields": ["terminalNm"], "prefer": prefer}, "pick": {pick: "terminalId"}}
            for end, pick, prefer in (("origin", "dep_id", "closest"), ("destination", "arr_id", "closest"))
        ],
        "fields": {"grade": "gradeNm"},
    },
    output_schema=item_schema({"grade": {"type": "string"}}),
)
# getExpBusTrminlList's terminalNm is a partial match: 서울 also returns 동서울 and 센트럴시티(서울),
# 대전 also 대전복합 and 서대전 — listed in the upstream's order, not by closeness.
TERMINALS = {
    "서울": [{"terminalId": "NAEK032", "terminalNm": "동서울"}, {"terminalId": "NAEK020", "terminalNm": "센트럴시티(서울)"},
             {"terminalId": "NAEK010", "terminalNm": "서울경부"}],
    "대전": [{"terminalId": "NAEK305", "terminalNm": "서대전"}, {"terminalId": "NAEK300", "terminalNm": "대전복합"},
             {"terminalId": "NAEK301", "terminalNm": "대전"}],
    "동서울": [{"terminalId": "NAEK032", "terminalNm": "동서울"}],
}


def test_a_closest_step_match_prefers_the_whole_name_then_its_prefix_over_upstream_order(tmp_path, srv):
    srv.route("/1613000/ExpBusInfoService/getExpBusTrminlList",
              lambda seen: Reply(body=data_go_kr_json(TERMINALS[seen.param("terminalNm")])))
    srv.route("/1613000/ExpBusInfoService/getStrtpntAlocFndExpbusInfo", Reply(body=data_go_kr_json([{"gradeNm": "우등"}])))
    out = run(live(tmp_path, EXPRESS, srv).call("express_test", {"origin": "서울", "destination": "대전"}, mode="live"))
    assert out.status == "ok", out.error_message
    main = srv.seen("/1613000/ExpBusInfoService/getStrtpntAlocFndExpbusInfo")[0]
    # 서울 → 서울경부 (starts with it), not 동서울 listed first; 대전 → 대전 (whole), not 서대전 or 대전복합
    assert (main.param("depTerminalId"), main.param("arrTerminalId")) == ("NAEK010", "NAEK301")


def test_the_default_step_choice_is_still_the_first_match_listed(tmp_path, srv):
    first = Manifest.model_validate({**EXPRESS.model_dump(), "upstream": {**EXPRESS.model_dump()["upstream"], "steps": [
        {**s, "match": {**s["match"], "prefer": "first"}} for s in EXPRESS.model_dump()["upstream"]["steps"]]}})
    srv.route("/1613000/ExpBusInfoService/getExpBusTrminlList",
              lambda seen: Reply(body=data_go_kr_json(TERMINALS[seen.param("terminalNm")])))
    srv.route("/1613000/ExpBusInfoService/getStrtpntAlocFndExpbusInfo", Reply(body=data_go_kr_json([{"gradeNm": "우등"}])))
    out = run(live(tmp_path, first, srv).call("express_test", {"origin": "동서울", "destination": "대전"}, mode="live"))
    assert out.status == "ok", out.error_message
    main = srv.seen("/1613000/ExpBusInfoService/getStrtpntAlocFndExpbusInfo")[0]
    assert (main.param("depTerminalId"), main.param("arrTerminalId")) == ("NAEK032", "NAEK305")


BUILDING = manifest(
    "building_test",
    credentials=["DATA_GO_KR_SERVICE_KEY", "JUSO_CONFM_KEY"],
    input_schema={"type": "object", "required": ["address"], "properties": {"address": {"type": "string"}}},
    upstream={
        "profile": "data_go_kr",
        "path": "/1613000/BldRgstHubService/getBrTitleInfo",
        "format_param": {"_type": "json"},
        "params": {"sigunguCd": "sigungu_cd", "bjdongCd": "bjdong_cd", "bun": "bun", "ji": "ji"},
        "steps": [{"id": "address", "profile": "juso", "path": "/addrlink/addrLinkApi.do",
                   "params": {"keyword": "address"}, "static_params": {"countPerPage": 1},
                   "pick": {"sigungu_cd": {"source": "admCd", "slice": [0, 5]}, "bjdong_cd": {"source": "admCd", "slice": [5, 10]},
                            "bun": {"source": "lnbrMnnm", "zfill": 4}, "ji": {"source": "lnbrSlno", "zfill": 4}}}],
        "fields": {"name": "bldNm"},
    },
    output_schema=item_schema({"name": {"type": ["string", "null"]}}),
)


def test_a_step_on_another_profile_goes_to_that_host_with_that_key_only(tmp_path, srv):
    with UpstreamServer() as juso:
        juso.route("/addrlink/addrLinkApi.do", Reply(body=juso_json([{"admCd": "2635010500", "lnbrMnnm": "1413", "lnbrSlno": "0", "roadAddr": "부산 해운대구"}])))
        srv.route("/1613000/BldRgstHubService/getBrTitleInfo", Reply(body=data_go_kr_json([{"bldNm": "해운대빌딩"}])))
        d = live(tmp_path, BUILDING, srv, overrides={"building_test.address": juso.url})
        out = run(d.call("building_test", {"address": "해운대로 570"}, mode="live"))
        assert out.status == "ok", out.error_message
        j = juso.seen("/addrlink/addrLinkApi.do")[0]
        assert j.param("confmKey") == "juso-key" and j.param("serviceKey") is None
        assert j.param("resultType") == "json" and j.param("keyword") == "해운대로 570"
        main = srv.seen("/1613000/BldRgstHubService/getBrTitleInfo")[0]
        assert (main.param("sigunguCd"), main.param("bjdongCd"), main.param("bun"), main.param("ji")) == ("26350", "10500", "1413", "0000")
        assert main.param("confmKey") is None and main.param("serviceKey") == KEY


def test_a_step_on_another_profile_cannot_be_pointed_at_the_main_host_by_accident(tmp_path, srv):
    # Without an override the JUSO step goes to business.juso.go.kr, never to the main override.
    srv.route("/1613000/BldRgstHubService/getBrTitleInfo", Reply(body=data_go_kr_json([{"bldNm": "x"}])))
    d = live(tmp_path, BUILDING, srv, max_attempts=1)
    d.transport = None
    base = d.step_base_url(BUILDING, BUILDING.upstream.steps[0], srv.url)
    assert base == "https://business.juso.go.kr"


# -- POST with a JSON body, headers -------------------------------------------------------------

NTS = manifest(
    "nts_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    input_schema={"type": "object", "required": ["numbers"], "properties": {"numbers": {"type": "array", "items": {"type": "string"}}}},
    upstream={
        "profile": "odcloud",
        "path": "/api/nts-businessman/v1/status",
        "method": "POST",
        "headers": {"Accept": "application/json"},
        "json_params": {"b_no": "numbers"},
        "record_path": "data",
        "fields": {"number": "b_no", "state": "b_stt"},
    },
    output_schema=item_schema({"number": {"type": "string"}, "state": {"type": ["string", "null"]}}),
)


def test_post_sends_the_declared_json_body_and_headers(tmp_path, srv):
    body = json.dumps({"request_cnt": 1, "match_cnt": 1, "status_code": "OK", "data": [
        {"b_no": "1234567890", "b_stt": "계속사업자", "b_stt_cd": "01"}]}, ensure_ascii=False).encode()
    srv.route("/api/nts-businessman/v1/status", Reply(body=body))
    out = run(live(tmp_path, NTS, srv).call("nts_test", {"numbers": ["1234567890"]}, mode="live"))
    assert out.status == "ok", out.error_message
    assert out.output["items"] == [{"number": "1234567890", "state": "계속사업자"}]
    seen = srv.seen("/api/nts-businessman/v1/status")[0]
    assert seen.method == "POST" and json.loads(seen.body) == {"b_no": ["1234567890"]}
    assert seen.headers["content-type"] == "application/json" and seen.headers["accept"] == "application/json"
    assert seen.param("serviceKey") == KEY


def test_auth_and_user_agent_headers_are_the_engines_not_a_manifests():
    with pytest.raises(ValidationError, match="engine"):
        manifest("bad_headers", upstream={"path": "/x", "headers": {"Authorization": "Infuser x"}}, output_schema=item_schema({}))


# -- quotas, plain http --------------------------------------------------------------------------

def test_a_per_day_quota_refuses_past_the_cap_before_sending(tmp_path, srv):
    m = manifest("quota_test", credentials=["DATA_GO_KR_SERVICE_KEY"],
                 upstream={"profile": "data_go_kr", "path": "/q", "quota": {"per_day": 2, "source": "guide"},
                           "fields": {"n": "n"}},
                 output_schema=item_schema({"n": {"type": ["string", "null"]}}))
    srv.route("/q", Reply(body=data_go_kr_json([{"n": "1"}])))
    d = live(tmp_path, m, srv)
    outs = [run(d.call("quota_test", {}, mode="live")) for _ in range(3)]
    assert [o.status for o in outs] == ["ok", "ok", "error"]
    assert (outs[2].error_class, outs[2].error_code) == ("channel_unavailable", "QUOTA_LOCAL")
    assert len(srv.seen("/q")) == 2
    CLOCK.advance(24 * 3600)
    try:
        assert run(d.call("quota_test", {}, mode="live")).status == "ok"  # a new KST day
    finally:
        CLOCK.advance(-24 * 3600)


def test_a_credential_on_a_plain_http_upstream_is_refused_by_the_schema():
    with pytest.raises(ValidationError, match="plain http"):
        manifest("http_test", upstream={"base_url": "http://apis.data.go.kr", "path": "/x",
                                        "auth": {"style": "query", "param": "serviceKey", "credential": "K"}},
                 output_schema=item_schema({}))
    with pytest.raises(ValidationError, match="plain http"):
        Profile.model_validate({"id": "p", "title": "t", "base_url": "http://openapi.example.kr",
                                "auth": {"style": "query", "param": "key", "credential": "K"}})
    # http without a credential is allowed (some portals serve open data over http only)
    manifest("http_open", upstream={"base_url": "http://openapi.example.kr", "path": "/x"}, output_schema=item_schema({}))


def test_the_engine_never_attaches_a_key_to_a_non_loopback_http_url(tmp_path):
    from ummaya.wire.errors import UpstreamError
    from ummaya.runtime.dispatch.request import BuiltRequest, apply_auth

    req = BuiltRequest("GET", "http://apis.data.go.kr/x", [])
    with pytest.raises(UpstreamError, match="over http"):
        apply_auth(req, BELLS.upstream.auth, ENV, None)
    assert req.params == []


def test_mock_replaying_another_places_recording_filters_as_recorded(tmp_path):
    """A recording replayed for another place keeps what the service answered there (labelled
    Mock, with the other-place note) instead of an empty nearest-first list."""
    x, y = from_wgs84("EPSG:5174", 35.1530, 129.1186)
    body = data_go_kr_json([{"BPLC_NM": "광안 사우나", "CRD_INFO_X": f"{x:.3f}", "CRD_INFO_Y": f"{y:.3f}"}], code="0")
    m = Manifest.model_validate({**BATHS.model_dump(), "fixtures": [{
        "name": "suyeong", "source": "synthetic", "request": {"latitude": 35.1545, "longitude": 129.1180},
        "response": "s.json", "expected": {"items": [], "total_count": 0}}]})
    d = mock(tmp_path, m, {"s.json": body})
    far = run(d.call("baths_test", {"latitude": 37.5665, "longitude": 126.978}))
    assert [i["name"] for i in far.output["items"]] == ["광안 사우나"] and far.fixture == "suyeong"


def test_mock_replaying_another_items_recording_matches_its_steps_as_recorded(tmp_path):
    """A step's name match in a replayed recording uses the recording's own request, so a request
    for another station answers with the recording (and its other-item note), not no_data."""
    m = Manifest.model_validate({**TRAINS.model_dump(), "fixtures": [{
        "name": "daejeon_busan", "source": "synthetic",
        "request": {"from_city": "25", "from_station": "대전", "to_city": "21", "to_station": "부산"},
        "response": "dj.json", "expected": {"items": [], "total_count": 0}}]})
    bodies = {"dj.json": data_go_kr_json([{"trainno": "101"}]),
              "dj.origin.json": data_go_kr_json(STATIONS["25"]),
              "dj.destination.json": data_go_kr_json(STATIONS["21"])}
    d = mock(tmp_path, m, bodies)
    out = run(d.call("trains_test", {"from_city": "25", "from_station": "서대전", "to_city": "21", "to_station": "강릉"}))
    assert out.status == "ok" and out.output["items"] == [{"train": "101"}] and out.fixture == "daejeon_busan"
    assert "depPlaceId=NAT011668" in out.upstream_url and "arrPlaceId=NAT014445X" in out.upstream_url


# -- an output field from the call's own arguments ($input.<field>) -------------------------------

# 도서관 정보나루's bookExist answers about a library code and an ISBN without naming either:
# {"response": {"request": {isbn13, libCode}, "result": {hasBook, loanAvailable}}}. The names
# come from the steps that resolved the codes (srchBooks, libSrchByBook).
HOLDING = manifest(
    "holding_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    input_schema={"type": "object", "properties": {
        "title": {"type": "string"}, "region": {"type": "string"}, "isbn": {"type": "string"},
        "book_title": {"type": "string"}, "lib_code": {"type": "string"}, "lib_name": {"type": "string"}}},
    upstream={
        "profile": "data_go_kr",
        "path": "/api/bookExist",
        "envelope": {"kind": "json"},
        "params": {"isbn13": "isbn", "libCode": "lib_code"},
        "steps": [
            {"id": "book", "when_missing": "isbn", "path": "/api/srchBooks", "params": {"title": "title"},
             "envelope": {"kind": "json"}, "record_path": "response.docs",
             "pick": {"isbn": "doc.isbn13", "book_title": "doc.bookname"}},
            {"id": "library", "when_missing": "lib_code", "path": "/api/libSrchByBook",
             "params": {"isbn": "isbn", "region": "region"}, "envelope": {"kind": "json"}, "record_path": "response.libs",
             "pick": {"lib_code": "lib.libCode", "lib_name": "lib.libName"}},
        ],
        "record_path": "response.result",
        "fields": {"library": "$input.lib_name", "book": "$input.book_title", "has_book": "hasBook", "loan": "loanAvailable"},
    },
    output_schema=item_schema({"library": {"type": ["string", "null"]}, "book": {"type": ["string", "null"]},
                               "has_book": {"type": "string"}, "loan": {"type": "string"}}),
)
BOOKS = json.dumps({"response": {"request": {"title": "채식주의자"}, "numFound": 1,
                                 "docs": [{"doc": {"bookname": "채식주의자", "isbn13": "9788936433598"}}]}}, ensure_ascii=False).encode()
LIBS = json.dumps({"response": {"request": {"isbn": "9788936433598", "region": "21"}, "numFound": 1,
                                "libs": [{"lib": {"libCode": "121009", "libName": "부산광역시립시민도서관"}}]}}, ensure_ascii=False).encode()
EXIST = json.dumps({"response": {"request": {"isbn13": "9788936433598", "libCode": "121009"},
                                 "result": {"hasBook": "Y", "loanAvailable": "N"}}}).encode()


def test_an_output_field_can_quote_what_a_step_resolved(tmp_path, srv):
    srv.route("/api/srchBooks", Reply(body=BOOKS))
    srv.route("/api/libSrchByBook", Reply(body=LIBS))
    srv.route("/api/bookExist", Reply(body=EXIST))
    out = run(live(tmp_path, HOLDING, srv).call("holding_test", {"title": "채식주의자", "region": "21"}, mode="live"))
    assert out.status == "ok", out.error_message
    assert out.output["items"] == [{"library": "부산광역시립시민도서관", "book": "채식주의자", "has_book": "Y", "loan": "N"}]
    main = srv.seen("/api/bookExist")[0]
    assert (main.param("isbn13"), main.param("libCode")) == ("9788936433598", "121009")
    # The same bodies in Mock: the steps' picks reach the answer too.
    bodies = {"b.json": EXIST, "b.book.json": BOOKS, "b.library.json": LIBS}
    m = Manifest.model_validate({**HOLDING.model_dump(), "fixtures": [{
        "name": "busan", "source": "synthetic", "request": {"title": "채식주의자", "region": "21"},
        "response": "b.json", "expected": {"items": [], "total_count": 0}}]})
    out = run(mock(tmp_path, m, bodies).call("holding_test", {"title": "채식주의자", "region": "21"}))
    assert out.output["items"][0]["library"] == "부산광역시립시민도서관" and out.fixture == "busan"



def test_mock_picks_the_recording_whose_request_differs_only_by_step_picks():
    from ummaya.runtime.dispatch.fixtures import pick_fixture

    def fx(name: str, title: str) -> dict:
        return {"name": name, "source": "synthetic", "response": f"{name}.json",
                "request": {"title": title, "region": "21", "lib_name": f"{title} 도서관"},
                "expected": {"items": [], "total_count": 0}}

    m = Manifest.model_validate({**HOLDING.model_dump(), "fixtures": [fx("a", "채식주의자"), fx("b", "아몬드")]})
    assert pick_fixture(m, {"title": "아몬드", "region": "21"}, None).name == "b"
