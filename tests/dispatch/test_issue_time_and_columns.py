"""Two declared engine capabilities, each against real-shape KMA bodies: ``upstream.issue_time``
(the latest *published* issue of a product, from the engine's clock in KST) and
``upstream.columns_to_rows`` (one record with numbered columns → one row per day/hour).

Bodies follow the data.go.kr guides: 중기예보 getMidLandFcst (regId, rnSt3Am…rnSt10, wf3Am…wf10,
no issue time in the record: it is the tmFc sent), 생활기상지수 getUVIdxV4 (code, areaNo, date
YYYYMMDDHH, h0…h75) and 보건기상지수 getOakPollenRiskIdxV3 (today, tomorrow, dayaftertomorrow,
twodaysaftertomorrow).
"""

from __future__ import annotations

import datetime as dt

import pytest
from pydantic import ValidationError

from tests.dispatch.helpers import FixedClock, catalog, item_schema, manifest, no_wait, run
from tests.support.upstreams import Reply, UpstreamServer, data_go_kr_json
from ummaya.model.manifest import ColumnsToRows, IssueTime, Manifest
from ummaya.runtime.dispatch import Dispatcher
from ummaya.runtime.dispatch.request import build_request
from ummaya.wire.resolvers import issue_params, kma_forecast_base, kma_nowcast_base
from ummaya.wire.transforms import columns_to_rows

KST = dt.timezone(dt.timedelta(hours=9))
ENV = {"DATA_GO_KR_SERVICE_KEY": "data+key/=="}


def at(y, mo, d, h, mi):
    return dt.datetime(y, mo, d, h, mi, tzinfo=KST)


ULTRA = IssueTime(minute=30, ready_after_min=15, params={"base_date": "yyyymmdd", "base_time": "hhmm"})
MID = IssueTime(hours=[6, 18], params={"tmFc": "yyyymmddhhmm"})
LIVING = IssueTime(hours=[6, 18], ready_after_min=30, params={"time": "yyyymmddhh"})


@pytest.mark.parametrize("now, expected", [
    (at(2026, 12, 1, 10, 44), {"base_date": "20261201", "base_time": "0930"}),  # HH30 not out until HH45
    (at(2026, 12, 1, 10, 45), {"base_date": "20261201", "base_time": "1030"}),
    (at(2026, 12, 1, 0, 20), {"base_date": "20261130", "base_time": "2330"}),  # crosses midnight
])
def test_ultra_short_base_is_the_last_half_hour_already_published(now, expected):
    assert issue_params(ULTRA, now) == expected


@pytest.mark.parametrize("now, tm_fc", [
    (at(2026, 12, 1, 5, 59), "202611301800"),
    (at(2026, 12, 1, 6, 0), "202612010600"),
    (at(2026, 12, 1, 23, 0), "202612011800"),
    (dt.datetime(2026, 12, 1, 0, 30, tzinfo=dt.timezone.utc), "202612010600"),  # 09:30 KST, the clock is UTC
])
def test_mid_term_tmfc_is_the_last_0600_or_1800_issue_in_kst(now, tm_fc):
    assert issue_params(MID, now) == {"tmFc": tm_fc}


def test_living_index_time_waits_for_publication_and_writes_yyyymmddhh():
    assert issue_params(LIVING, at(2026, 7, 1, 6, 29)) == {"time": "2026063018"}
    assert issue_params(LIVING, at(2026, 7, 1, 6, 30)) == {"time": "2026070106"}


def test_the_named_kma_bases_are_the_same_rule():
    assert kma_forecast_base(at(2026, 12, 1, 2, 9)) == ("20261130", "2300")
    assert kma_forecast_base(at(2026, 12, 1, 2, 10)) == ("20261201", "0200")
    assert kma_nowcast_base(at(2026, 12, 1, 0, 5)) == ("20261130", "2300")


def test_issue_time_declarations_are_checked():
    with pytest.raises(ValidationError):
        IssueTime(hours=[6, 24], params={"tmFc": "yyyymmddhhmm"})
    with pytest.raises(ValidationError):
        IssueTime(params={"tmFc": "dd/mm/yyyy"})
    with pytest.raises(ValidationError, match="sent twice"):
        manifest("twice_test", credentials=["DATA_GO_KR_SERVICE_KEY"], upstream={
            "profile": "data_go_kr", "path": "/x", "static_params": {"tmFc": "1"},
            "issue_time": {"params": {"tmFc": "yyyymmddhhmm"}}})


# -- numbered columns → rows ------------------------------------------------------------------

LAND_RECORD = {
    "regId": "11B00000",
    "rnSt4Am": 20, "rnSt4Pm": 30, "rnSt7Am": 60, "rnSt7Pm": 70, "rnSt8": 40, "rnSt10": 30,
    "wf4Am": "맑음", "wf4Pm": "구름많음", "wf7Am": "흐리고 비", "wf7Pm": "흐리고 비", "wf8": "흐림", "wf10": "맑음",
    "rnSt5Am": "", "wf5Am": "",  # blank columns give no row
}
LAND_ROWS = ColumnsToRows(
    numbers=list(range(3, 11)),
    columns={"rain_am": "rnSt{n}Am", "rain_pm": "rnSt{n}Pm", "rain": "rnSt{n}",
             "sky_am": "wf{n}Am", "sky_pm": "wf{n}Pm", "sky": "wf{n}"},
    number_field="day_offset", keep=["regId"],
    base={"param": "tmFc", "format": "yyyymmddhhmm", "unit": "day", "date_field": "date"},
)


def test_mid_term_columns_become_one_row_per_day_dated_from_the_issue_sent():
    rows = columns_to_rows([LAND_RECORD], LAND_ROWS, {"tmFc": "202612011800"})
    assert [r["day_offset"] for r in rows] == [4, 7, 8, 10]
    assert [r["date"] for r in rows] == ["20261205", "20261208", "20261209", "20261211"]
    assert rows[1] == {"regId": "11B00000", "day_offset": 7, "rain_am": 60, "rain_pm": 70,
                       "sky_am": "흐리고 비", "sky_pm": "흐리고 비", "date": "20261208"}
    assert rows[2]["rain"] == 40 and "rain_am" not in rows[2]


def test_hourly_columns_with_the_base_in_the_record_and_zero_padding():
    spec = ColumnsToRows(numbers=[0, 3, 6, 9], columns={"uv": "h{n}"}, keep=["areaNo"],
                         base={"field": "date", "format": "yyyymmddhh", "unit": "hour", "time_field": "time"})
    uv = {"code": "A07", "areaNo": "1100000000", "date": "2026070106", "h0": "3", "h3": "8", "h6": "9", "h9": ""}
    rows = columns_to_rows([uv], spec, {})
    assert [(r["date"], r["time"], r["uv"]) for r in rows] == [
        ("20260701", "0600", "3"), ("20260701", "0900", "8"), ("20260701", "1200", "9")]
    padded = ColumnsToRows(numbers=[1, 2], columns={"votes": "jd{n:02d}"})
    assert columns_to_rows([{"jd01": 10, "jd02": 7}], padded, {}) == [{"n": 1, "votes": 10}, {"n": 2, "votes": 7}]


def test_named_columns_one_per_number_and_bad_shapes_refused():
    spec = ColumnsToRows(numbers=[0, 1, 2, 3], columns={"grade": ["today", "tomorrow", "dayaftertomorrow", "twodaysaftertomorrow"]},
                         base={"field": "date", "format": "yyyymmddhh", "unit": "day"})
    rows = columns_to_rows([{"date": "2026041506", "today": "2", "tomorrow": "1", "dayaftertomorrow": "", "twodaysaftertomorrow": ""}], spec, {})
    assert [(r["date"], r["grade"]) for r in rows] == [("20260415", "2"), ("20260416", "1")]
    with pytest.raises(ValidationError):
        ColumnsToRows(numbers=[0, 1], columns={"grade": ["today"]})
    with pytest.raises(ValidationError):
        ColumnsToRows(numbers=[0], columns={"grade": "today"})  # a template must name {n}
    with pytest.raises(ValidationError, match="not a parameter"):
        manifest("nobase_test", credentials=["DATA_GO_KR_SERVICE_KEY"], upstream={
            "profile": "data_go_kr", "path": "/x",
            "columns_to_rows": {"numbers": [4], "columns": {"a": "x{n}"}, "base": {"param": "tmFc", "unit": "day"}}})


LAND = manifest(
    "land_test",
    credentials=["DATA_GO_KR_SERVICE_KEY"],
    input_schema={"type": "object", "properties": {"region_id": {"type": "string", "default": "11B00000"}}},
    upstream={
        "profile": "data_go_kr",
        "path": "/1360000/MidFcstInfoService/getMidLandFcst",
        "format_param": {"dataType": "JSON"},
        "params": {"regId": "region_id"},
        "issue_time": {"hours": [6, 18], "params": {"tmFc": "yyyymmddhhmm"}},
        "columns_to_rows": LAND_ROWS.model_dump(exclude_none=True),
        "fields": {"date": "date", "day_offset": "day_offset", "rain_am": "rain_am", "sky": "sky"},
    },
    output_schema=item_schema({
        "date": {"type": "string", "x-day": True, "x-datetime": "yyyymmdd"},
        "day_offset": {"type": "integer"}, "rain_am": {"type": ["integer", "null"]}, "sky": {"type": ["string", "null"]}}),
    fixtures=[{"name": "seoul", "source": "synthetic", "as_of": "2026-11-20T19:00:00+09:00", "request": {},
               "response": "seoul.json", "expected": {"items": [], "total_count": 0}}],
)


def test_live_sends_the_issue_time_and_dates_rows_from_it(tmp_path):
    with UpstreamServer() as srv:
        srv.route("/1360000/MidFcstInfoService/getMidLandFcst", Reply(body=data_go_kr_json([LAND_RECORD])))
        clock = FixedClock(at(2026, 12, 2, 7, 0))
        d = Dispatcher(catalog(tmp_path, LAND), env=ENV, base_url_overrides={"land_test": srv.url},
                       clock=clock, sleep=no_wait)
        out = run(d.call("land_test", {}, mode="live"))
        assert srv.seen("/1360000/MidFcstInfoService/getMidLandFcst")[0].param("tmFc") == "202612020600"
    assert out.status == "ok"
    assert [(i["date"], i["day_offset"]) for i in out.output["items"]] == [
        ("20261206", 4), ("20261209", 7), ("20261210", 8), ("20261212", 10)]
    assert out.output["total_count"] == 4


def test_mock_dates_rows_from_the_recordings_issue_then_moves_them_to_today_once(tmp_path):
    body = data_go_kr_json([LAND_RECORD])
    d = Dispatcher(catalog(tmp_path, LAND, bodies={"land_test": {"seoul.json": body}}), env={},
                   clock=FixedClock(at(2026, 12, 2, 7, 0)))
    out = run(d.call("land_test", {}, mode="mock"))
    # Recorded 2026-11-20 19:00 → the tmFc it answered is 202611201800, day 4 = 11-24. Replayed at
    # 12-02 07:00 the recording moves 11 days (12-02 19:00 has not come yet) → 12-05. Dating rows
    # from today's tmFc instead would give 12-06 before the move and 12-17 after it.
    assert out.moved_from == "2026-11-20"
    assert [i["date"] for i in out.output["items"]] == ["20261205", "20261208", "20261209", "20261211"]
