"""Issue 9 item 1: one typed dialogue state, stored with the session (SQLite and PostgreSQL), expiring."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest

from ummaya.runtime.dialogue import DialogueState, Intent, PendingQuestion, Place


def test_round_trip_and_expiry() -> None:
    s = DialogueState(pending=PendingQuestion(adapter_id="nmc_emergency_rooms", missing=["place"]),
                      last_intent=Intent(adapter_id="airkorea_air_quality", primitive="find", arguments={"sido": "서울"}),
                      place=Place(place="서울특별시청", latitude=37.5665, longitude=126.978),
                      references={"service_name": "주거급여"}, language="ko", policy="lookup_only")
    s.touch()
    back = DialogueState.load(s.model_dump(mode="json"))
    assert back == s and back.carried_slots() == {"place": "서울특별시청", "latitude": 37.5665, "longitude": 126.978}
    s.expires_at = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=1)).isoformat()
    assert DialogueState.load(s.model_dump(mode="json")) == DialogueState()
    assert DialogueState.load({"version": 99}) == DialogueState()  # unreadable → fresh, never an error


def test_personal_arguments_are_never_kept(engine) -> None:
    from .conftest import Talk

    talk = Talk(engine, consents=("welfare_eligibility_check",))
    talk("주거급여 받을 수 있는지 확인해줘. 이름은 최현우, 1990-05-14")
    stored = engine.store.get_session("talk")
    text = str(stored.dialogue)
    assert "최현우" not in text and "1990-05-14" not in text
    assert stored.dialogue["last_intent"]["adapter_id"] == "welfare_eligibility_check"


def _conversation(engine, session_id: str):
    from ummaya.runtime.turn import TurnRequest

    def ask(text: str):
        return asyncio.run(engine.ask(TurnRequest(text, session_id=session_id, mode="mock")))
    return ask


def test_session_state_in_the_store(db_url: str, catalog, retriever) -> None:
    """SQLite and PostgreSQL: the state saved by one engine is what a fresh engine (another
    process, another replica) resumes from; purge forgets an expired conversation."""
    from ummaya.runtime.assemble import build_engine
    from ummaya.runtime.dispatch import Dispatcher
    from ummaya.runtime.store import open_store

    def fresh(store):
        return build_engine(catalog.root, catalog=catalog, retriever=retriever, store=store,
                            dispatcher=Dispatcher(catalog, env={}))

    with open_store(db_url) as store:
        assert "m004_session_dialogue" in store.applied_migrations()
        r = _conversation(fresh(store), "pg-or-sqlite")("근처 응급실 알려줘")
        assert r.stop_reason == "needs_input"
        saved = store.get_session("pg-or-sqlite")
        assert saved.dialogue["pending"]["adapter_id"] == "nmc_emergency_rooms"
        assert saved.dialogue_expires_at is not None
    with open_store(db_url) as store:  # a new connection, a new engine
        r = _conversation(fresh(store), "pg-or-sqlite")("하단동")
        assert [c["adapter_id"] for c in r.calls] == ["kakao_keyword_search", "nmc_emergency_rooms"]
        later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)
        store.purge_expired(later)
        purged = store.get_session("pg-or-sqlite")
        assert purged.dialogue is None and purged.dialogue_expires_at is None


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'dialogue.sqlite3'}"
    return request.getfixturevalue("pg_url")
