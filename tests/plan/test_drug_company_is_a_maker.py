"""Issue 17: a medicine's maker named in the request (「종근당 거」, 「한미약품에서 나온」) is sent as the
maker, never as the product and never dropped. The makers are registry data
(registry/_vocab/drug_companies.yaml, slot type drug_company)."""

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

    store = open_store(f"sqlite:///{tmp_path_factory.mktemp('maker') / 's.sqlite3'}")
    yield build_engine(store=store)
    store.close()


def ask(engine, message: str):
    from ummaya.runtime.request_context import fixed_clock
    from ummaya.runtime.turn import TurnRequest

    async def run():
        return await engine.ask(TurnRequest(message, session_id=f"maker-{abs(hash(message))}", mode="mock"))

    with fixed_clock(NOW):
        return asyncio.run(run())


def drug_args(result) -> dict | None:
    return next((c["arguments"] for c in result.calls if c["adapter_id"] == "mfds_easy_drug_info"), None)


@pytest.mark.parametrize("request_, drug, maker", [
    ("한미약품에서 나온 타이레놀 부작용 알려줘", "타이레놀", "한미약품"),
    ("광동제약 베아제 먹는 법", "베아제", "광동제약"),
])
def test_the_maker_is_sent_as_the_maker(engine, request_, drug, maker):
    args = drug_args(ask(engine, request_))
    assert args is not None
    assert args.get("drug_name") == drug
    assert args.get("company") == maker


def test_no_maker_is_guessed_when_none_is_named(engine):
    args = drug_args(ask(engine, "베아제 먹는 법 알려줘"))
    assert args is not None and "company" not in args
