"""Envelope variants the live services really send, replayed on the Live tier against loopback
upstreams, through the registry's own manifests and each adapter's own recorded fixture bodies.

Each variant keeps the records of the body it came from, so the outcome must match the original's
(status, error class and code, number of records): a BOM, a legacy EUC-KR encoding announced or
not, CDATA sections, a trailer after the JSON object must never turn records into an error or into
"no data". Then the zero-result and error forms each envelope family documents.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from tests.dispatch.helpers import REPO, step_answers
from tests.dispatch.test_wire_truth import ER_ARGS, ER_ROW, LIVE, REAL, call, path_of, paths_of
from tests.support.upstreams import (
    JSON,
    XML,
    Reply,
    UpstreamServer,
    data_go_kr_json,
    data_go_kr_xml,
    juso_json,
    kakao_json,
    sgis_json,
    sgis_token_json,
)


@pytest.fixture
def srv():
    with UpstreamServer() as server:
        yield server


def fixture_file(adapter_id: str, name: str) -> Path:
    return next(p for p in REPO.glob(f"registry/*/fixtures/{adapter_id}/{name}"))


def _first_ok_fixture(adapter_id: str):
    m = REAL[adapter_id]
    for f in m.fixtures:
        if f.response and (f.expected or {}).get("status", "ok") == "ok" and f.status == 200:
            return f
    return None


CASES = [(a, _first_ok_fixture(a)) for a in LIVE if _first_ok_fixture(a) is not None]

EUC_KR_XML = "text/xml;charset=EUC-KR"
EUC_KR_JSON = "application/json;charset=EUC-KR"
BARE_XML = "text/xml"
BARE_JSON = "application/json"


def _no_prolog(text: str) -> str:
    return re.sub(r"^\s*<\?xml[^>]*\?>", "", text)


def _as_cdata(m: re.Match[str]) -> str:
    decoded = html.unescape(m.group(1))
    return m.group(0) if "]]>" in decoded else f"><![CDATA[{decoded}]]><"


def variants(body: bytes, is_json: bool) -> dict[str, tuple[bytes, str]]:
    text = body.decode("utf-8-sig")
    out = {
        "utf8_bom": (b"\xef\xbb\xbf" + body, BARE_JSON if is_json else BARE_XML),
        "leading_newline": (b"\r\n" + body, JSON if is_json else XML),
    }
    try:  # EUC-KR cannot carry every character (e.g. MFDS's non-breaking spaces): no such variant
        cp949: bytes | None = text.encode("cp949")
    except UnicodeEncodeError:
        cp949 = None
    if is_json:
        if cp949 is not None:
            out["euc_kr_declared_in_header"] = (cp949, EUC_KR_JSON)
            out["euc_kr_no_charset"] = (cp949, BARE_JSON)
        out["trailing_garbage_after_object"] = (body + b"\n<!-- served by was01 -->\n", JSON)
        out["charset_header_lies_utf8"] = (body, EUC_KR_JSON)
    else:
        bare = _no_prolog(text)
        if cp949 is not None:
            out["euc_kr_prolog"] = (
                ('<?xml version="1.0" encoding="EUC-KR"?>' + bare).encode("cp949"),
                EUC_KR_XML,
            )
            out["euc_kr_no_prolog_header_charset"] = (bare.encode("cp949"), EUC_KR_XML)
            out["euc_kr_no_prolog_no_charset"] = (bare.encode("cp949"), BARE_XML)
        out["trailing_garbage_after_root"] = (body + b"\n<!-- was01 --><script>x</script>", XML)
        out["nul_padding_after_root"] = (body + b"\x00" * 16, XML)
        # A service that uses CDATA sends the characters themselves inside it (「<br>」, not
        # 「&lt;br&gt;」: CDATA decodes no entity), so the wrapped text is the decoded text.
        out["cdata_text"] = (re.sub(r">([^<>]*[가-힣][^<>]*)<", _as_cdata, text).encode(), XML)
    return out


def _serve(srv, adapter_id: str, body: bytes, ctype: str, fixture: str = "",
           request: dict | None = None) -> None:
    m = REAL[adapter_id]
    for path in paths_of(adapter_id):
        srv.route(path, Reply(body=body, content_type=ctype))
    stem, _dot, suffix = fixture.rpartition(".")
    by_path: dict[str, list] = {}
    for step in m.upstream.chain() if fixture else []:
        side = next(REPO.glob(f"registry/*/fixtures/{adapter_id}/{stem}.{step.id}.{suffix}"), None)
        if side is not None:
            by_path.setdefault(step.path, []).append((step, side.read_bytes()))
    for path, answers in by_path.items():
        srv.route(path, step_answers(request or {}, answers, JSON if suffix == "json" else XML))
    if m.upstream.auth is not None and m.upstream.auth.token_path:
        srv.route(m.upstream.auth.token_path, Reply(body=sgis_token_json("tok")))


def _sig(out):
    return out.status, out.error_class, out.error_code, len((out.output or {}).get("items") or [])


VARIANT_NAMES = [
    "utf8_bom",
    "leading_newline",
    "euc_kr_declared_in_header",
    "euc_kr_no_charset",
    "trailing_garbage_after_object",
    "charset_header_lies_utf8",
    "euc_kr_prolog",
    "euc_kr_no_prolog_header_charset",
    "euc_kr_no_prolog_no_charset",
    "cdata_text",
    "trailing_garbage_after_root",
    "nul_padding_after_root",
]


def _applicable() -> list[tuple[str, object, str]]:
    """Only the (adapter, variant) pairs a body can carry: EUC-KR variants exist only where the text
    encodes in CP949, JSON variants only for JSON bodies — so no case is generated to be skipped."""
    out = []
    for adapter_id, fx in CASES:
        vs = variants(fixture_file(adapter_id, fx.response).read_bytes(), fx.response.endswith(".json"))
        out += [(adapter_id, fx, v) for v in VARIANT_NAMES if v in vs]
    return out


APPLICABLE = _applicable()


def test_every_variant_is_exercised_by_some_recorded_body():
    assert {v for _a, _fx, v in APPLICABLE} == set(VARIANT_NAMES)


@pytest.mark.parametrize(("adapter_id", "fx", "variant"), APPLICABLE, ids=[f"{a}-{v}" for a, _fx, v in APPLICABLE])
def test_an_encoding_or_framing_variant_keeps_the_records(srv, adapter_id, fx, variant):
    body = fixture_file(adapter_id, fx.response).read_bytes()
    is_json = fx.response.endswith(".json")
    vs = variants(body, is_json)
    _serve(srv, adapter_id, body, JSON if is_json else XML, fx.response, fx.request)
    base = call(srv, adapter_id, fx.request)
    assert base.status == "ok" and base.output["items"], (base.error_code, base.error_message)
    vbody, ctype = vs[variant]
    _serve(srv, adapter_id, vbody, ctype, fx.response, fx.request)
    out = call(srv, adapter_id, fx.request)
    assert _sig(out) == _sig(base), (variant, out.error_code, out.error_message)
    assert out.output["items"] == base.output["items"]


# -- data.go.kr family: zero results, strings for numbers, one record as an object ----------------


def test_json_items_empty_string_with_total_count_as_string_is_no_data(srv):
    doc = json.loads(data_go_kr_json([], shape="empty"))
    doc["response"]["body"]["totalCount"] = "0"
    srv.route(path_of("nmc_emergency_rooms"), Reply(body=json.dumps(doc).encode(), content_type=JSON))
    out = call(srv, "nmc_emergency_rooms", ER_ARGS)
    assert (out.status, out.error_class) == ("no_data", None), out.error_message


def test_json_single_record_object_with_numbers_as_strings_is_one_record(srv):
    doc = json.loads(data_go_kr_json([ER_ROW], shape="single"))
    body = doc["response"]["body"]
    body["totalCount"], body["pageNo"], body["numOfRows"] = "1", "1", "10"
    srv.route(path_of("nmc_emergency_rooms"), Reply(body=json.dumps(doc, ensure_ascii=False).encode(), content_type=JSON))
    out = call(srv, "nmc_emergency_rooms", ER_ARGS)
    assert out.status == "ok" and len(out.output["items"]) == 1, out.error_message


def test_xml_empty_tags_in_a_record_still_project(srv):
    row = dict(ER_ROW, dutyFax="", dutyTel1="")
    body = data_go_kr_xml([row]).replace(b"<dutyFax></dutyFax>", b"<dutyFax/>")
    assert b"<dutyFax/>" in body
    srv.route(path_of("nmc_emergency_rooms"), Reply(body=body, content_type=XML))
    out = call(srv, "nmc_emergency_rooms", ER_ARGS)
    assert out.status == "ok" and len(out.output["items"]) == 1, out.error_message


def test_xml_total_count_with_whitespace_and_a_zero_result_empty_items_tag(srv):
    body = data_go_kr_xml([]).replace(b"<totalCount>0</totalCount>", b"<totalCount>\n 0 \n</totalCount>")
    srv.route(path_of("nmc_emergency_rooms"), Reply(body=body, content_type=XML))
    out = call(srv, "nmc_emergency_rooms", ER_ARGS)
    assert (out.status, out.error_class) == ("no_data", None), out.error_message


# -- JUSO common.errorCode variants (도로명주소 검색 API 가이드 오류 메시지 표) --------------------

JUSO_ARGS = {"keyword": "중구 세종대로 110"}
JUSO_ROW = {
    "roadAddr": "서울특별시 중구 세종대로 110 (태평로1가)",
    "jibunAddr": "서울특별시 중구 태평로1가 31",
    "zipNo": "04524",
    "admCd": "1114010300",
    "rnMgtSn": "111403005012",
    "bdMgtSn": "1114010300100310000000001",
    "siNm": "서울특별시",
    "sggNm": "중구",
    "emdNm": "태평로1가",
    "rn": "세종대로",
    "buldMnnm": "110",
    "buldSlno": "0",
    "bdNm": "서울특별시청",
    "engAddr": "110 Sejong-daero, Jung-gu, Seoul",
    "roadAddrPart1": "서울특별시 중구 세종대로 110",
    "roadAddrPart2": " (태평로1가)",
}

JUSO_ANSWERS = [
    ("E0001", "승인되지 않은 KEY 입니다.", ("error", "credential_missing")),
    ("E0014", "개발승인키 기간이 만료되어 서비스를 이용하실 수 없습니다.", ("error", "credential_missing")),
    ("-999", "시스템에러", ("error", "channel_unavailable")),
    ("E0005", "검색어가 입력되지 않았습니다.", ("error", "adapter_error")),
    ("E0006", "주소를 상세히 입력해 주시기 바랍니다.", ("error", "adapter_error")),
    ("E0008", "검색어는 두글자 이상 입력되어야 합니다.", ("error", "adapter_error")),
]


@pytest.mark.parametrize(("code", "message", "expected"), JUSO_ANSWERS, ids=[a[0] for a in JUSO_ANSWERS])
def test_juso_error_codes_are_classified(srv, code, message, expected):
    srv.route(path_of("juso_address_search"), Reply(body=juso_json([], error_code=code, error_message=message, total=0)))
    out = call(srv, "juso_address_search", JUSO_ARGS)
    assert (out.status, out.error_class) == expected, (out.error_code, out.error_message)
    assert out.error_code == code


@pytest.mark.parametrize("juso", [None, []], ids=["juso_null", "juso_empty_list"])
def test_juso_zero_result_is_no_data(srv, juso):
    doc = json.loads(juso_json([], total=0))
    doc["results"]["juso"] = juso
    srv.route(path_of("juso_address_search"), Reply(body=json.dumps(doc, ensure_ascii=False).encode()))
    out = call(srv, "juso_address_search", JUSO_ARGS)
    assert (out.status, out.error_class) == ("no_data", None), out.error_message


def test_juso_single_record_with_total_count_string(srv):
    srv.route(path_of("juso_address_search"), Reply(body=juso_json([JUSO_ROW])))
    out = call(srv, "juso_address_search", JUSO_ARGS)
    assert out.status == "ok" and len(out.output["items"]) == 1, out.error_message


# -- Kakao Local meta ---------------------------------------------------------------------------

KAKAO_ARGS = {"query": "부산시청"}


def test_kakao_matches_none_of_which_may_be_shown_is_no_data(srv):
    # meta.total_count counts every match; meta.pageable_count "total_count 중 노출 가능 문서 수".
    doc = json.loads(kakao_json([], total=12))
    doc["meta"]["pageable_count"] = 0
    srv.route(path_of("kakao_keyword_search"), Reply(body=json.dumps(doc).encode()))
    out = call(srv, "kakao_keyword_search", KAKAO_ARGS)
    assert (out.status, out.error_class) == ("no_data", None), out.error_message


@pytest.mark.parametrize("pageable", [12, "12"], ids=["number", "string"])
def test_kakao_showable_matches_with_empty_documents_is_an_error(srv, pageable):
    doc = json.loads(kakao_json([], total=12, is_end=True))
    doc["meta"]["pageable_count"] = pageable
    srv.route(path_of("kakao_keyword_search"), Reply(body=json.dumps(doc).encode()))
    out = call(srv, "kakao_keyword_search", KAKAO_ARGS)
    assert (out.status, out.error_class, out.error_code) == ("error", "adapter_error", "RECORD_PATH")


def test_kakao_zero_total_is_no_data(srv):
    srv.route(path_of("kakao_keyword_search"), Reply(body=kakao_json([], total=0)))
    out = call(srv, "kakao_keyword_search", KAKAO_ARGS)
    assert (out.status, out.error_class) == ("no_data", None), out.error_message


# -- SGIS errCd / errMsg ------------------------------------------------------------------------

SGIS_ARGS = {"latitude": 35.1062907, "longitude": 128.9668214}


@pytest.mark.parametrize(
    ("err_cd", "expected"),
    [("-401", ("error", "credential_missing")), ("-100", ("no_data", None)), (-100, ("no_data", None))],
    ids=["minus_401_as_string", "minus_100_as_string", "minus_100_as_number"],
)
def test_sgis_err_cd_as_string_or_number_is_classified(srv, err_cd, expected):
    srv.route(REAL["sgis_reverse_geocode"].upstream.auth.token_path, Reply(body=sgis_token_json("tok")))
    doc = json.loads(sgis_json(None, err_msg="검색결과가 존재하지 않습니다" if str(err_cd) == "-100" else "인증 정보가 존재하지 않습니다"))
    doc["errCd"] = err_cd
    srv.route(path_of("sgis_reverse_geocode"), Reply(body=json.dumps(doc, ensure_ascii=False).encode()))
    out = call(srv, "sgis_reverse_geocode", SGIS_ARGS)
    assert (out.status, out.error_class) == expected, (out.error_code, out.error_message)


# -- bodies that are not the envelope but say what went wrong -----------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"message": "SERVICE KEY IS NOT REGISTERED ERROR."}', ("error", "credential_missing")),
        (b'{"resultMsg": "LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR"}', ("error", "channel_unavailable")),
        (b'"API not found"', ("error", "adapter_error")),
    ],
    ids=["json_key_message_without_code", "json_quota_message_without_code", "json_bare_string"],
)
def test_a_json_body_without_the_envelope_is_classified_by_its_words_or_parse(srv, body, expected):
    srv.route(path_of("nmc_emergency_rooms"), Reply(body=body, content_type=JSON))
    out = call(srv, "nmc_emergency_rooms", ER_ARGS)
    assert (out.status, out.error_class) == expected, (out.error_code, out.error_message)
