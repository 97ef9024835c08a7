"""Mock on today's calendar (wire/calendar.py): a replayed recording's declared
x-datetime fields move by whole days to today, the rest of every record stays as recorded, the
answer's Mock label says so once, and Live is never moved (test_dispatch_registry checks that)."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest

from tests.dispatch.helpers import REPO, FixedClock, no_wait, run
from ummaya.runtime.catalog import Catalog
from ummaya.runtime.dispatch import Dispatcher
from ummaya.wire.calendar import days_to_today, move, to_today

KST = dt.timezone(dt.timedelta(hours=9))
BUSAN = {"latitude": 35.1167, "longitude": 128.968}


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.load(REPO / "generated")


@pytest.mark.parametrize("fmt,value,moved", [
    ("yyyymmdd", "20261201", "20261205"),
    ("yyyy-mm-dd", "2026-12-01", "2026-12-05"),
    ("yyyy-mm-dd hh:mm", "2026-12-01 02:00", "2026-12-05 02:00"),
    ("yyyymmddhhmm", "202612010200", "202612050200"),
    ("iso8601", "2026-12-01T02:14:05+09:00", "2026-12-05T02:14:05+09:00"),
    ("yyyymmdd", "20261231", "20270104"),  # across a year
    ("yyyymmdd", "-", "-"),  # not in the declared form: left as recorded
    ("yyyymmdd", None, None),
])
def test_a_value_moves_in_its_own_format(fmt, value, moved):
    assert move(value, fmt, 4) == moved


def test_the_recording_moment_stays_in_the_past():
    taken = dt.datetime(2026, 12, 1, 2, 10, tzinfo=KST)
    assert days_to_today(taken, dt.datetime(2026, 12, 5, 10, 0, tzinfo=KST)) == 4
    # replayed at 01:00, a body taken at 02:10 becomes yesterday's: no observation from the future
    assert days_to_today(taken, dt.datetime(2026, 12, 5, 1, 0, tzinfo=KST)) == 3
    # a UTC clock is read in KST (2026-12-04 20:00 UTC is 12-05 05:00 KST)
    assert days_to_today(taken, dt.datetime(2026, 12, 4, 20, 0, tzinfo=dt.timezone.utc)) == 4


def test_a_forecast_replayed_days_later_is_for_today_and_keeps_every_value(catalog):
    clock = FixedClock(dt.datetime(2026, 12, 5, 10, 0, tzinfo=KST))
    recorded = run(Dispatcher(catalog, env={}, clock=FixedClock(dt.datetime(2026, 12, 1, 10, 0, tzinfo=KST)), sleep=no_wait)
                   .call("kma_short_term_forecast", BUSAN, mode="mock"))
    moved = run(Dispatcher(catalog, env={}, clock=clock, sleep=no_wait).call("kma_short_term_forecast", BUSAN, mode="mock"))
    assert recorded.moved_from is None and moved.moved_from == "2026-12-01"
    assert moved.tier == "mock" and moved.status == "ok"
    before, after = recorded.output["items"], moved.output["items"]
    assert len(before) == len(after) == 69
    assert after[0]["forecast_date"] == "20261205" and after[-1]["forecast_date"] == "20261207"
    assert {r["base_date"] for r in after} == {"20261205"}
    for b, a in zip(before, after):
        # only the declared fields move; the hour and every measured value stay as recorded
        assert {k: v for k, v in a.items() if k not in ("forecast_date", "base_date")} == \
               {k: v for k, v in b.items() if k not in ("forecast_date", "base_date")}


def test_a_fixture_that_names_no_day_is_replayed_as_it_is(catalog):
    m = catalog.get("kma_short_term_forecast")
    fx = next(f for f in m.fixtures if f.name == "busan_saha_3days").model_copy(update={"as_of": None, "recorded_on": None})
    out = run(Dispatcher(catalog, env={}, sleep=no_wait).call("kma_short_term_forecast", BUSAN, mode="mock"))
    assert to_today(m, fx, out.model_copy(update={"moved_from": None}), dt.datetime(2027, 1, 1, tzinfo=KST)).moved_from is None


def test_tomorrows_rain_in_busan_on_the_embedded_default_days_after_the_recording(catalog, tmp_path):
    from ummaya.runtime.assemble import build_engine, fixed_clock
    from ummaya.runtime.store import open_store
    from ummaya.runtime.turn import TurnRequest

    clock = fixed_clock("2026-12-05T10:00:00+09:00")
    store = open_store(f"sqlite:///{tmp_path / 's.sqlite3'}")
    try:
        engine = build_engine(catalog.root, catalog=catalog, store=store, clock=clock,
                              dispatcher=Dispatcher(catalog, env={}, clock=clock))
        r = asyncio.run(engine.ask(TurnRequest("내일 부산 비 와?", mode="mock")))
    finally:
        store.close()
    assert r.stop_reason == "completed" and r.grounded, (r.answer, r.removed_claims)
    assert r.answer.splitlines()[0].startswith("요청하신 12월 6일(일)의 자료입니다"), r.answer
    rows = [ln for ln in r.answer.splitlines() if ln.startswith("- ")]
    assert rows and all(ln.startswith("- 6일") for ln in rows)
    assert any("비, 강수확률 80%" in ln for ln in rows)
    assert r.answer.count("12월 1일 기록을 오늘 날짜로 옮김") == 1
    assert "[Mock · 모의]" in r.answer
