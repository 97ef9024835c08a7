"""Issue 19 hole 10 / item 11: a stored trace keeps only what the consent notice says it will.

Before: under the default ``redacted`` retention a consented application's trace kept the
citizen's name (4 times) and birth date (6 times) inside call arguments, and ``none`` kept them
too, while the notice promised 「기록(trace)에는 가린 값만 남고」. Now the turn's personal values —
the arguments of personal fields and the outputs marked ``x-personal`` — are masked wherever they
occur in the stored trace, under every policy, and a field marked ``x-trace: none`` leaves no raw
text at all. Each test walks a whole stored trace (SQLite and PostgreSQL).
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from tests.store.conftest import db_url, pg_base_url, pg_url  # noqa: F401  (both backends)
from ummaya.runtime.catalog import Catalog
from ummaya.runtime.store import RetentionPolicy, open_store
from ummaya.runtime.store.retention import MASK
from ummaya.runtime.turn import TurnRequest

NAME, BIRTH = "홍길동", "1990-01-01"
SPELLINGS = ["홍길동", "홍 길 동", "1990-01-01", "19900101", "1990.01.01", "1990년 1월 1일", "900101"]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.load()


def everything(trace) -> str:
    """Every key and value of a stored trace, as one text."""
    return json.dumps(trace.to_dict(), ensure_ascii=False)


def run_turn(catalog, url: str, policy: str, query: str, consents: tuple[str, ...]):
    from ummaya.runtime.assemble import build_engine
    from ummaya.runtime.dispatch import Dispatcher

    store = open_store(url)
    try:
        engine = build_engine(catalog.root, catalog=catalog, dispatcher=Dispatcher(catalog, env={}), store=store,
                              retention=RetentionPolicy(raw_text=policy))
        r = asyncio.run(engine.ask(TurnRequest(query, session_id="s-ret", mode="mock", consents=consents)))
        return r, store.get_trace(r.trace_id)
    finally:
        store.close()


@pytest.mark.parametrize("policy", ["redacted", "none", "full"])
@pytest.mark.parametrize("query", ["홍길동 1990-01-01 기초연금 신청해줘", "이름은 홍길동, 생년월일 1990.01.01 기초연금 신청해줘",
                                   "홍길동 19900101 기초연금 신청해줘"])
def test_a_consented_application_keeps_no_raw_name_or_birth_date(catalog, db_url, policy, query) -> None:  # noqa: F811
    r, t = run_turn(catalog, db_url, policy, query, ("welfare_application_submit",))
    assert [c["adapter_id"] for c in r.calls] == ["welfare_application_submit"], r.calls
    text = everything(t)
    for s in SPELLINGS:
        assert s not in text, (policy, s)
    # Where the values were, the mask is (or nothing at all under none).
    args = next(c["arguments"] for c in t.calls if c["adapter_id"] == "welfare_application_submit")
    assert args["person_name"] == (None if policy == "none" else MASK)
    assert args["birth_date"] == (None if policy == "none" else MASK)
    if policy == "none":
        assert t.request_text is None and t.answer_text is None
    else:
        assert MASK in t.request_text and "기초연금" in t.request_text


def test_the_events_and_the_evidence_are_masked_too(catalog, db_url) -> None:  # noqa: F811
    r, t = run_turn(catalog, db_url, "redacted", "홍길동 1990-01-01 모바일 신분증으로 본인 확인해줘", ("mobile_id_verify",))
    started = [e for e in t.events if e["type"] == "call_started"]
    assert started and all(e["data"]["arguments"].get("person_name") == MASK for e in started)
    assert NAME not in everything(t) and BIRTH not in everything(t)


def test_a_field_the_notice_keeps_out_of_traces_leaves_no_raw_text(catalog, db_url) -> None:  # noqa: F811
    # 「소득·가구 정보는 기록(trace)에 남기지 않습니다」: household size and income ratio are x-trace: none.
    r, t = run_turn(catalog, db_url, "redacted", "홍길동 1990-01-01 기초연금 받을 수 있는지 확인해줘",
                    ("welfare_eligibility_check",))
    assert r.stop_reason == "completed"
    out = next(e for e in r.events if e.type == "evidence").data["summary"]
    assert out.get("household_size") is not None  # the citizen saw it …
    text = everything(t)
    assert t.request_text is None and t.answer_text is None  # … the trace keeps no text built from it
    ratio = str(out["income_ratio_percent"])
    assert not re.search(rf"(?<![\d.]){re.escape(ratio)}(?!\d)", text), ratio
    for e in t.events:
        if e["type"] == "evidence":
            assert e["data"]["summary"].get("household_size") is None
    assert NAME not in text


def test_the_serving_path_keeps_the_promise(catalog, tmp_path, monkeypatch) -> None:
    from tests.serve.conftest import client
    from ummaya.paths import generated_dir

    url = f"sqlite:///{tmp_path / 'serve.sqlite3'}"
    with client(generated_dir(), url, tmp_path) as c:
        j = c.post("/v1/answer", json={"query": "홍길동 1990-01-01 기초연금 신청해줘", "mode": "mock",
                                      "consents": ["welfare_application_submit"]}).json()
        trace = c.get(f"/v1/traces/{j['trace_id']}").text
    for s in SPELLINGS:
        assert s not in trace, s


def test_every_retention_promise_in_a_notice_is_kept_by_construction(catalog) -> None:
    """What each consent notice says about traces is what the adapter declares: 「가린 값만」 /
    "masked values" needs personal fields to mask; 「남기지 않습니다」 / "never written" needs the
    fields marked x-trace: none."""
    from ummaya.runtime.turn.provenance import personal_fields

    checked = 0
    for m in catalog.adapters.values():
        c = m.permission.consent
        if c is None:
            continue
        text = f"{c.retention.ko} {c.retention.en}"
        if "가린 값" in text or "masked" in text:
            assert personal_fields(m), m.id
            checked += 1
        if "남기지 않" in text or "never written" in text:
            props = (m.output_schema.get("properties") or {})
            assert any(isinstance(p, dict) and p.get("x-trace") == "none" for p in props.values()), m.id
            checked += 1
    assert checked >= 5
