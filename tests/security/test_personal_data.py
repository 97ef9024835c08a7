"""The shared personal-data detector (``find_personal``) and the redaction built on it (issue 11,
item 5): variant forms are found, coordinates and other decimals never are."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ummaya.wire.redact import PLACEHOLDERS, Finding, find_personal, redact


@pytest.mark.parametrize(
    "text, kind, value",
    [
        ("주민번호 900101-1234567", "rrn", "900101-1234567"),
        ("주민번호 900101–1234567", "rrn", "900101–1234567"),  # en dash
        ("주민번호 900101 - 1234567", "rrn", "900101 - 1234567"),
        ("주민번호 900101.1234567", "rrn", "900101.1234567"),
        ("주민번호 ９００１０１－１２３４５６７", "rrn", "９００１０１－１２３４５６７"),
        ("900101-1******", "rrn", "900101-1******"),
        ("연락처 010–1234–5678", "phone", "010–1234–5678"),
        ("연락처 010 - 1234 - 5678", "phone", "010 - 1234 - 5678"),
        ("연락처 010.1234.5678", "phone", "010.1234.5678"),
        ("연락처 010 1234 5678", "phone", "010 1234 5678"),
        ("연락처 ０１０－１２３４－５６７８", "phone", "０１０－１２３４－５６７８"),
        ("연락처 010ㅡ1234ㅡ5678", "phone", "010ㅡ1234ㅡ5678"),
        ("연락처 +82 10-1234-5678", "phone", "+82 10-1234-5678"),
        ("연락처 ＋８２ １０ １２３４ ５６７８", "phone", "＋８２ １０ １２３４ ５６７８"),
        ("메일 hong＠korea.kr", "email", "hong＠korea.kr"),
        ("카드 4111 – 1111 – 1111 – 1111", "card", "4111 – 1111 – 1111 – 1111"),
        ("카드 ４１１１１１１１１１１１１１１１", "card", "４１１１１１１１１１１１１１１１"),
        ("여권번호 M12345678", "passport", "M12345678"),
        ("여권번호는 S98765432 입니다", "passport", "S98765432"),
        ("여권 M123A4567", "passport", "M123A4567"),
        ("여권 Ｍ１２３４５６７８", "passport", "Ｍ１２３４５６７８"),
        ("면허번호 11-12-345678-90", "driver_licence", "11-12-345678-90"),
        ("면허번호 28 12 345678 90", "driver_licence", "28 12 345678 90"),
        ("면허 서울 12-345678-90", "driver_licence", "서울 12-345678-90"),
        # URL-encoded forms: the finding covers the escaped span
        ("?q=010%2D1234%2D5678&n=1", "phone", "010%2D1234%2D5678"),
        ("?q=010+1234+5678", "phone", "010+1234+5678"),
        ("?email=hong%40example.com&x=1", "email", "hong%40example.com"),
        ("?q=%EC%A3%BC%EB%AF%BC+900101%2D1234567", "rrn", "900101%2D1234567"),
    ],
)
def test_finds_each_variant(text: str, kind: str, value: str) -> None:
    found = find_personal(text)
    assert [(f.kind, f.value) for f in found] == [(kind, value)]
    f = found[0]
    assert text[f.start:f.end] == f.value
    assert redact(text) == text[:f.start] + PLACEHOLDERS[kind] + text[f.end:]


def test_findings_are_ordered_disjoint_and_located() -> None:
    text = "hong@x.io 010-1234-5678 M12345678 11-12-345678-90 4111111111111111 900101-1234567"
    found = find_personal(text)
    assert [f.kind for f in found] == ["email", "phone", "passport", "driver_licence", "card", "rrn"]
    for a, b in zip(found, found[1:]):
        assert a.end <= b.start
    assert all(isinstance(f, Finding) and text[f.start:f.end] == f.value for f in found)
    assert redact(text) == ("[이메일] [전화번호] [여권번호] [운전면허번호] [카드번호] [주민등록번호]")


@pytest.mark.parametrize(
    "text",
    [
        "129.050504421228",  # the coordinate the old redactor turned into 129.[전화번호]
        "37.01012345678",
        "35.9001011234567",
        "127.4111111111111111",
        "x=129.050504421228&y=35.1158",
        "M6405번 광역버스",  # an M-bus, not a passport
        "A12345678",  # not a passport letter
        "XM12345678",  # inside a longer code
        "2026-11-30",
        "11-12-3456",
    ],
)
def test_leaves_alone(text: str) -> None:
    assert find_personal(text) == []
    assert redact(text) == text


def test_unrelated_region_code_is_not_a_licence() -> None:
    assert find_personal("10-12-345678-90") == []  # 10 is no issuing region
    assert find_personal("29-12-345678-90") == []


_lat = st.floats(min_value=-90, max_value=90, allow_nan=False, allow_infinity=False)
_lon = st.floats(min_value=-180, max_value=180, allow_nan=False, allow_infinity=False)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lat=_lat, lon=_lon, decimals=st.integers(min_value=4, max_value=15))
def test_coordinates_are_never_touched(lat: float, lon: float, decimals: int) -> None:
    y, x = f"{lat:.{decimals}f}", f"{lon:.{decimals}f}"
    for text in (
        x, y, f"{y}, {x}", f"{y},{x}", f"x={x}&y={y}", f"위도 {y} 경도 {x}",
        json.dumps({"x": x, "y": y}), json.dumps({"lat": float(y), "lon": float(x)}),
        f"https://dapi.kakao.com/v2/local/search/keyword.json?x={x}&y={y}&radius=2000",
    ):
        assert find_personal(text) == [], text
        assert redact(text) == text
