"""Issue 17 item 3, through the real planner on the committed catalog (offline, Mock): an address
or a road reaches the adapter whole — the road name with its ending and building number, never
cut to the district or to a known place inside it."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest

KST = dt.timezone(dt.timedelta(hours=9))
NOW = dt.datetime(2026, 12, 1, 10, 0, tzinfo=KST)


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    from ummaya.runtime.assemble import build_engine
    from ummaya.runtime.store import open_store

    store = open_store(f"sqlite:///{tmp_path_factory.mktemp('whole') / 's.sqlite3'}")
    yield build_engine(store=store)
    store.close()


def ask(engine, message: str):
    from ummaya.runtime.request_context import fixed_clock
    from ummaya.runtime.turn import TurnRequest

    async def run():
        return await engine.ask(TurnRequest(message, session_id=f"whole-{abs(hash(message))}", mode="mock"))

    with fixed_clock(NOW):
        return asyncio.run(run())


def sent(result) -> list[dict]:
    return [c["arguments"] for c in result.calls]


def test_an_address_search_gets_the_road_with_its_number(engine):
    r = ask(engine, "서울 종로구 대학로 101 도로명주소 알려줘")
    assert {"keyword": "서울 종로구 대학로 101"} in sent(r)


def test_a_road_named_before_an_anchor_is_the_place_searched(engine):
    r = ask(engine, "해운대로 주변 약국 어디 있어?")
    queries = [a.get("query") for a in sent(r) if "query" in a]
    assert queries and queries[0] == "해운대로"
