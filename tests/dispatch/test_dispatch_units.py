"""Resolvers, transforms, coercion, XML mapping and post-processors on their own."""

from __future__ import annotations

import datetime as dt

import pytest

from ummaya.wire.envelopes import decode_body
from ummaya.wire.errors import UpstreamError
from ummaya.wire.resolvers import kma_forecast_base, kma_grid, kma_nowcast_base, resolve
from ummaya.wire.transforms import (
    POSTPROCESSORS,
    TransformError,
    apply_transform,
    coerce,
    records_at,
)
from ummaya.wire.xmltree import xml_to_dict

UTC = dt.timezone.utc


def kst(y, mo, d, h, mi):
    return dt.datetime(y, mo, d, h, mi, tzinfo=dt.timezone(dt.timedelta(hours=9)))


# -- KMA grid ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lat", "lon", "cell"),
    [
        (37.5663, 126.9779, (60, 127)),  # Seoul City Hall
        (35.1798, 129.0750, (98, 76)),  # Busan City Hall
        (38.0, 126.0, (43, 136)),  # the projection origin is the origin cell
        (33.4996, 126.5312, (53, 38)),  # Jeju City
    ],
)
def test_kma_grid(lat, lon, cell):
    assert kma_grid(lat, lon) == cell


def test_grid_resolver_needs_coordinates():
    with pytest.raises(UpstreamError) as exc:
        resolve("kma_grid.nx", {"latitude": 37.5}, dt.datetime.now(UTC))
    assert exc.value.code == "INVALID_ARGUMENTS" and "longitude" in exc.value.message
    assert (
        resolve(
            "kma_grid.ny", {"latitude": "37.5663", "longitude": "126.9779"}, dt.datetime.now(UTC)
        )
        == "127"
    )


# -- KMA publication times -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("now", "base"),
    [
        (kst(2026, 11, 30, 2, 9), ("20261129", "2300")),  # 0200 not published until 02:10
        (kst(2026, 11, 30, 2, 10), ("20261130", "0200")),
        (kst(2026, 11, 30, 0, 30), ("20261129", "2300")),
        (kst(2026, 11, 30, 14, 59), ("20261130", "1400")),
        (kst(2026, 11, 30, 23, 10), ("20261130", "2300")),
        (kst(2027, 1, 1, 1, 0), ("20261231", "2300")),  # across a year
        (dt.datetime(2026, 11, 30, 17, 15, tzinfo=UTC), ("20261201", "0200")),  # 02:15 KST next day
    ],
)
def test_forecast_base(now, base):
    assert kma_forecast_base(now) == base


@pytest.mark.parametrize(
    ("now", "base"),
    [
        # KMA guide of 2024-11-28: HH00 is callable from HH:10 (not HH:40 as older guides said).
        (kst(2026, 11, 30, 13, 9), ("20261130", "1200")),
        (kst(2026, 11, 30, 13, 10), ("20261130", "1300")),
        (kst(2026, 11, 30, 13, 39), ("20261130", "1300")),
        (kst(2026, 11, 30, 0, 5), ("20261129", "2300")),
        (dt.datetime(2026, 11, 30, 17, 5), ("20261201", "0100")),  # a naive clock is UTC
    ],
)
def test_nowcast_base(now, base):
    assert kma_nowcast_base(now) == base


def test_calendar_resolvers_use_kst():
    late_utc = dt.datetime(2026, 11, 30, 16, 0, tzinfo=UTC)  # already 1 December in Korea
    assert resolve("today.yyyymmdd", {}, late_utc) == "20261201"
    assert resolve("days_ago_7.yyyymmdd", {}, late_utc) == "20261124"
    new_year_kst = dt.datetime(2025, 12, 31, 15, 30, tzinfo=UTC)  # 00:30 on 1 January 2026 in Korea
    assert resolve("last_year.yyyy", {}, new_year_kst) == "2025"
    assert resolve("last_year.yyyy", {}, new_year_kst - dt.timedelta(hours=1)) == "2024"
    with pytest.raises(UpstreamError, match="unknown derived parameter"):
        resolve("kma_grid.lat", {}, late_utc)


# -- transforms and coercion -------------------------------------------------------------------------


def test_transforms():
    assert apply_transform("int", "1,234") == 1234
    assert apply_transform("float", " 4.12 ") == 4.12
    assert apply_transform("none_if_dash", "-") is None
    assert apply_transform("none_if_dash|float", "-") is None
    assert apply_transform("str", 1001) == "1001"
    assert apply_transform("yyyymmddhhmmss", "20261130171502") == "2026-11-30T17:15:02+09:00"
    assert apply_transform("yyyymmddhhmmss", "202611301715") == "2026-11-30T17:15:00+09:00"
    assert apply_transform("yyyymmddhhmmss", "20261130") == "2026-11-30"
    assert (
        apply_transform("strip_html", "<p>식후 30분&amp;취침 전</p><p>1일 3회</p>")
        == "식후 30분&취침 전\n1일 3회"
    )
    for spec, value in [("int", "1.5"), ("float", "abc"), ("yyyymmddhhmmss", "2026-11-30")]:
        with pytest.raises(TransformError):
            apply_transform(spec, value)
    with pytest.raises(TransformError, match="unknown transform 'upper'"):
        apply_transform("upper", "x")


def test_coercion_follows_schema_types():
    nullable_number = {"type": ["number", "null"]}
    assert coerce("-", nullable_number) is None
    assert coerce("", nullable_number) is None
    assert coerce("-", {"type": "string"}) == "-"  # not nullable: kept, the schema check decides
    assert coerce("35.1", nullable_number) == 35.1
    assert coerce("12", {"type": "integer"}) == 12
    assert coerce("12", {"type": "number"}) == 12
    assert coerce("통신장애", nullable_number) == "통신장애"  # left for the schema check to name
    assert coerce(129.075, {"type": "string"}) == "129.075"
    assert coerce(1001, {"type": "string"}) == "1001"
    assert (
        coerce("Y", {"type": "boolean"}) is True
        and coerce("N", {"type": ["boolean", "null"]}) is False
    )
    assert coerce(
        {"a": "1"},
        {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "integer"}}}},
    ) == [{"a": 1}]


# -- XML mapping and records -------------------------------------------------------------------------


def test_xml_repeated_elements_become_lists_and_single_ones_wrap_at_record_path():
    one = xml_to_dict(b"<response><body><items><item><a>1</a></item></items></body></response>")
    two = xml_to_dict(
        b"<response><body><items><item><a>1</a></item><item><a>2</a></item></items></body></response>"
    )
    empty = xml_to_dict(b"<response><body><items/></body></response>")
    path = "response.body.items.item"
    assert records_at(one, path) == [{"a": "1"}]
    assert records_at(two, path) == [{"a": "1"}, {"a": "2"}]
    assert records_at(empty, path) == []
    assert records_at({"response": {"body": {"items": ""}}}, path) == []


def test_xml_namespaces_are_dropped_and_text_kept_as_is():
    doc = xml_to_dict('<r xmlns="urn:x"><name> 동아대학교병원 </name><e/></r>'.encode())
    assert doc == {"r": {"name": "동아대학교병원", "e": ""}}


def test_external_entities_are_refused():
    body = b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>'
    with pytest.raises(UpstreamError) as exc:
        xml_to_dict(body)
    assert exc.value.code == "PARSE" and "hostile" in exc.value.message


# -- post-processors ----------------------------------------------------------------------------------


def test_kma_pivot_forecast_groups_by_date_and_time():
    rows = [
        {
            "baseDate": "20261130",
            "baseTime": "0500",
            "fcstDate": "20261130",
            "fcstTime": "0700",
            "category": c,
            "fcstValue": v,
            "nx": 98,
            "ny": 76,
        }
        for c, v in [("TMP", "7"), ("POP", "20"), ("PCP", "강수없음")]
    ] + [
        {
            "baseDate": "20261130",
            "baseTime": "0500",
            "fcstDate": "20261130",
            "fcstTime": "0600",
            "category": c,
            "fcstValue": v,
            "nx": 98,
            "ny": 76,
        }
        for c, v in [("TMP", "6"), ("TMN", "5.0")]
    ]
    out = POSTPROCESSORS["kma_pivot_forecast"](rows)
    assert [(r["fcstTime"], r["TMP"]) for r in out] == [("0600", "6"), ("0700", "7")]
    assert out[0]["TMN"] == "5.0" and "TMN" not in out[1]
    assert out[1]["PCP"] == "강수없음" and out[1]["baseTime"] == "0500" and out[1]["nx"] == 98


def test_kma_pivot_nowcast_makes_one_record():
    rows = [
        {"baseDate": "20261130", "baseTime": "1300", "category": c, "obsrValue": v}
        for c, v in [("T1H", "3.4"), ("RN1", "0"), ("VEC", "287")]
    ]
    assert POSTPROCESSORS["kma_pivot_nowcast"](rows) == [
        {"baseDate": "20261130", "baseTime": "1300", "T1H": "3.4", "RN1": "0", "VEC": "287"}
    ]
    assert POSTPROCESSORS["kma_pivot_nowcast"]([]) == []


# -- body decoding ----------------------------------------------------------------------------------


def test_decode_body_tolerates_what_real_servers_send():
    assert decode_body(b"\r\n  <?xml version='1.0' encoding='UTF-8'?><r><a>1</a></r>") == (
        "xml",
        {"r": {"a": "1"}},
    )
    assert decode_body("\ufeff<r><a>한글</a></r>".encode()) == ("xml", {"r": {"a": "한글"}})
    assert decode_body(
        "<?xml version='1.0' encoding='EUC-KR'?><r><a>부산</a></r>".encode("cp949")
    ) == ("xml", {"r": {"a": "부산"}})
    assert decode_body('{"sido": "부산"}'.encode("cp949")) == ("json", {"sido": "부산"})


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"", "empty body"),
        (b"[" * 100_000, "nested too deeply"),
        (b"<a>" * 5_000 + b"</a>" * 5_000, "nested too deeply"),
        (b"Unauthorized", "invalid JSON"),
        (b"<html><body>502 Bad Gateway</body></html>", "HTML page"),
    ],
)
def test_decode_body_refuses_with_parse(body, fragment):
    with pytest.raises(UpstreamError) as exc:
        decode_body(body)
    assert exc.value.code == "PARSE" and fragment in exc.value.message
