"""``upstream.operations``: one question answered by one of two operations of the same service,
chosen by an input's value (NEC polling places: election day or early voting). Real-shape bodies
(the data.go.kr JSON envelope with the NEC guide's field names), over HTTP to a loopback upstream
(Live) and through the fixture transport (Mock)."""

from __future__ import annotations

import datetime as dt

import pytest
from pydantic import ValidationError

from tests.dispatch.helpers import FixedClock, catalog, item_schema, manifest, no_wait, run
from tests.support.upstreams import Reply, UpstreamServer, data_go_kr_json
from ummaya.codegen.link import check_declared_inputs
from ummaya.codegen.loader import LoadedManifest
from ummaya.model.manifest import Manifest
from ummaya.runtime.dispatch import Dispatcher

KEY = "data+key/=="
CLOCK = FixedClock(dt.datetime(2026, 12, 1, 1, 0, tzinfo=dt.timezone.utc))
SVC = "/9760000/PolplcInfoInqireService2"
DAY, EARLY = f"{SVC}/getPolplcOtlnmapTrnsportInfoInqire", f"{SVC}/getPrePolplcOtlnmapTrnsportInfoInqire"

UPSTREAM = {
    "profile": "data_go_kr",
    "path": DAY,
    "format_param": {"resultType": "json"},
    "params": {"sgId": "election_id", "sdName": "city", "wiwName": "district"},
    "operations": {
        "input": "voting",
        "choices": {
            "election_day": {"path": DAY},
            "early": {"path": EARLY, "fields": {"name": "evPsName"}},
        },
    },
    "fields": {"name": "psName", "dong": "emdName", "place": "placeName", "address": "addr"},
}
INPUTS = {
    "type": "object",
    "required": ["city"],
    "properties": {
        "election_id": {"type": "string", "default": "20260603"},
        "city": {"type": "string"},
        "district": {"type": "string"},
        "voting": {"type": "string", "enum": ["election_day", "early"], "default": "election_day"},
    },
}
OUTPUT = item_schema({k: {"type": ["string", "null"]} for k in ("name", "dong", "place", "address")})


def polling(**over) -> Manifest:
    return manifest(
        "polling_test",
        credentials=["DATA_GO_KR_SERVICE_KEY"],
        input_schema=over.pop("input_schema", INPUTS),
        upstream=over.pop("upstream", UPSTREAM),
        output_schema=OUTPUT,
        **over,
    )


DAY_BODY = data_go_kr_json([{"sgId": "20260603", "psName": "제1투표소", "sdName": "부산광역시", "wiwName": "사하구",
                             "emdName": "하단1동", "placeName": "하단1동 행정복지센터 2층 대회의실",
                             "addr": "부산광역시 사하구 하신중앙로 1", "floor": "2"}], msg="OK", total=1)
EARLY_BODY = data_go_kr_json([{"sgId": "20260603", "evPsName": "하단1동사전투표소", "sdName": "부산광역시",
                               "wiwName": "사하구", "emdName": "하단1동", "evOrder": "1",
                               "placeName": "하단1동 행정복지센터 3층", "addr": "부산광역시 사하구 하신중앙로 1",
                               "floor": "3"}], msg="OK", total=1)


@pytest.fixture
def srv():
    with UpstreamServer() as server:
        server.route(DAY, Reply(body=DAY_BODY)).route(EARLY, Reply(body=EARLY_BODY))
        yield server


def live(tmp_path, srv) -> Dispatcher:
    m = polling()
    return Dispatcher(catalog(tmp_path, m), env={"DATA_GO_KR_SERVICE_KEY": KEY},
                      base_url_overrides={m.id: srv.url}, clock=CLOCK, sleep=no_wait)


def test_the_input_picks_the_operation_and_its_field_names(tmp_path, srv):
    d = live(tmp_path, srv)
    early = run(d.call("polling_test", {"city": "부산광역시", "district": "사하구", "voting": "early"}, mode="live"))
    assert early.status == "ok", early.error_message
    assert early.output["items"][0]["name"] == "하단1동사전투표소"  # evPsName, the early operation's
    assert early.output["items"][0]["place"] == "하단1동 행정복지센터 3층"  # shared fields still map
    day = run(d.call("polling_test", {"city": "부산광역시", "district": "사하구", "voting": "election_day"}, mode="live"))
    assert day.status == "ok" and day.output["items"][0]["name"] == "제1투표소"
    assert [len(srv.seen(EARLY)), len(srv.seen(DAY))] == [1, 1]
    sent = srv.seen(EARLY)[0]
    assert sent.param("sgId") == "20260603" and sent.param("wiwName") == "사하구" and sent.param("voting") is None


def test_without_the_input_the_declared_default_operation_is_called(tmp_path, srv):
    schema = {**INPUTS, "properties": {**INPUTS["properties"], "voting": {"type": "string", "enum": ["election_day", "early"]}}}
    m = polling(input_schema=schema)
    d = Dispatcher(catalog(tmp_path, m), env={"DATA_GO_KR_SERVICE_KEY": KEY},
                   base_url_overrides={m.id: srv.url}, clock=CLOCK, sleep=no_wait)
    out = run(d.call("polling_test", {"city": "부산광역시"}, mode="live"))
    assert out.status == "ok" and out.output["items"][0]["name"] == "제1투표소"
    assert len(srv.seen(DAY)) == 1 and not srv.seen(EARLY)


def test_mock_reads_each_operations_fixture_with_that_operations_fields(tmp_path):
    m = polling(fixtures=[
        {"name": "day", "source": "synthetic", "request": {"city": "부산광역시", "voting": "election_day"},
         "response": "day.json", "expected": {"items": [], "total_count": 0}},
        {"name": "early", "source": "synthetic", "request": {"city": "부산광역시", "voting": "early"},
         "response": "early.json", "expected": {"items": [], "total_count": 0}},
    ])
    d = Dispatcher(catalog(tmp_path, m, bodies={m.id: {"day.json": DAY_BODY, "early.json": EARLY_BODY}}), env={}, clock=CLOCK)
    early = run(d.call("polling_test", {"city": "부산광역시", "voting": "early"}))
    assert early.tier == "mock" and early.fixture == "early"
    assert early.output["items"][0]["name"] == "하단1동사전투표소"
    day = run(d.call("polling_test", {"city": "부산광역시", "voting": "election_day"}))
    assert day.fixture == "day" and day.output["items"][0]["name"] == "제1투표소"


def test_a_value_naming_no_operation_is_refused():
    up = polling().upstream
    assert up is not None
    with pytest.raises(KeyError, match="names no operation"):
        up.for_arguments({"voting": "by_post"})
    assert up.for_arguments({"voting": "early"}).path == EARLY
    assert up.for_arguments({}).path == DAY


def test_the_default_path_must_be_one_of_the_choices():
    with pytest.raises(ValidationError, match="must be one of upstream.operations.choices"):
        polling(upstream={**UPSTREAM, "path": f"{SVC}/getSomethingElse"})


def test_the_link_stage_wants_an_enum_of_exactly_the_choices(tmp_path):
    schema = {**INPUTS, "properties": {**INPUTS["properties"], "voting": {"type": "string", "enum": ["early"]}}}

    class Src:
        rel = "registry/test/polling_test.yaml"

        def line_of(self, loc):
            return 1

    problems = check_declared_inputs(LoadedManifest(manifest=polling(input_schema=schema), source=Src()))
    assert any("needs an enum listing exactly the choices" in p.message for p in problems)
    assert not check_declared_inputs(LoadedManifest(manifest=polling(), source=Src()))


def test_the_link_stage_parses_each_fixture_with_its_own_operations_fields():
    from ummaya.model.manifest import Fixture
    from ummaya.wire.fixture_reader import parse_fixture

    m = polling()
    early = Fixture(name="early", source="synthetic", request={"city": "부산광역시", "voting": "early"},
                    response="early.json", expected={"items": [], "total_count": 0})
    assert parse_fixture(m, early, EARLY_BODY).output["items"][0]["name"] == "하단1동사전투표소"
    day = early.model_copy(update={"name": "day", "request": {"city": "부산광역시"}})
    assert parse_fixture(m, day, DAY_BODY).output["items"][0]["name"] == "제1투표소"
