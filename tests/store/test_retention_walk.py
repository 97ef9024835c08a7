"""The stored trace is cleaned in one walk (sql._Keeper); what it keeps must be exactly what the
three passes kept — redact_value(keys=True), then strip_credentials_value, then escape_surrogates —
for every policy, whatever the values hold: personal data in keys and in JSON numbers, credentials,
lone surrogates, keys that collide once redacted, tuples, repeated strings."""

from __future__ import annotations

import pytest

from ummaya.runtime.store import RetentionPolicy
from ummaya.runtime.store.records import Trace, utcnow
from ummaya.runtime.store.retention import PersonalValue
from ummaya.runtime.store.sql import _drop_raw_text, _event_dict, _redact_urls, apply_retention, escape_surrogates
from ummaya.wire.credentials import env_secrets, strip_credentials, strip_credentials_value
from ummaya.wire.redact import redact, redact_value

SECRET = "sk-test-SECRET-0123456789"


def _three_passes(trace: Trace, mode: str) -> tuple:
    """The reference: apply_retention's cleaning as it was written before the one walk."""
    events = [_event_dict(e) for e in trace.events]
    if mode == "full":
        req, ans = trace.request_text, trace.answer_text
        events = [{**e, "data": _redact_urls(e.get("data", {}))} for e in events]
        calls, meta = _redact_urls(trace.calls), _redact_urls(trace.meta)
    elif mode == "redacted":
        req = redact(trace.request_text) if trace.request_text is not None else None
        ans = redact(trace.answer_text) if trace.answer_text is not None else None
        events = [{**e, "data": redact_value(e.get("data", {}), keys=True)} for e in events]
        calls, meta = redact_value(trace.calls, keys=True), redact_value(trace.meta, keys=True)
    else:
        req = ans = None
        events = [{**e, "data": redact_value(_drop_raw_text(e.get("data", {})), keys=True)} for e in events]
        calls = redact_value(_drop_raw_text(trace.calls), keys=True)
        meta = redact_value(_drop_raw_text(trace.meta), keys=True)
    secrets = env_secrets()
    events, calls, meta = (strip_credentials_value(v, secrets) for v in (events, calls, meta))
    req, ans = (strip_credentials(v, secrets) if v else v for v in (req, ans))
    return tuple(escape_surrogates(v) for v in (req, ans, events, calls, meta))


def _hostile() -> Trace:
    now = utcnow()
    shared = "부산 사하구 낙동대로550번길 37 ☎ 051-204-0313"  # the same string in events and calls
    value = {
        "010-1234-5678": "x", "010 1234 5678": "y",  # two keys that redact to one placeholder
        "n": 9001011234567, "card": 4111111111111111, "ms": 1764561234567, "ok": True, "f": 1.5,
        "url": "https://apis.example/x?serviceKey=abc123def456&tel=010-1234-5678",
        "token": f"Bearer {SECRET}", "raw": SECRET, "lone": "a\ud800b", "\udc00key": "v",
        "t": ("hong@example.com", shared), "text": "주민번호 900101-1234567", "none": None,
        "nested": [{"request": "내 번호 010-9876-5432", "x_url": "http://h/?q=%EB%8F%99&p=010%2D1234%2D5678"}],
        "shared": shared, "empty": "",
    }
    # Redacted, then escaped, these three keys become one: which value wins is the passes' rule.
    # (Not in events: an event's JSON cannot hold a lone surrogate in a key.)
    collide = {"010-1234-5678\ud800": 1, "[전화번호]\\ud800": 2, "010 1234 5678\ud800": 3}
    events = [{"seq": 0, "type": "candidates", "stage": "retrieve", "t_ms": 1.0, "data": value},
              {"seq": 1, "type": "call_finished", "stage": "call", "t_ms": 2.0, "data": {"shared": shared}}]
    return Trace(trace_id="01TESTWALK0000000000000000", created_at=now, expires_at=now, release_id="r",
                 release_alias="production", session_id="s\ud800", stop_reason="completed",
                 state="completed", states=[], timings={}, request_text=f"010-1234-5678 {SECRET} \ud801",
                 answer_text="", events=events, calls=[value, {"adapter_id": "a", "arguments": {**value, "c": collide}}],
                 meta={"proposed": value, "hong@example.com": 1, "collide": collide})


@pytest.mark.parametrize("mode", ["full", "redacted", "none"])
def test_one_walk_keeps_what_the_three_passes_kept(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UMMAYA_TEST_API_KEY", SECRET)
    trace = _hostile()
    req, ans, events, calls, meta = _three_passes(trace, mode)
    kept = apply_retention(trace, RetentionPolicy(raw_text=mode))
    assert kept.text_policy == mode
    assert (kept.request_text, kept.answer_text) == (req, ans)
    assert kept.events == events
    assert kept.calls == list(calls) and kept.meta == dict(meta)
    assert [list(d) for d in kept.calls] == [list(d) for d in calls]  # keys in the same order too
    assert SECRET not in repr((kept.request_text, kept.events, kept.calls, kept.meta))


def test_personal_values_are_masked_before_the_walk() -> None:
    trace = _hostile()
    kept = apply_retention(trace, RetentionPolicy(raw_text="redacted"),
                           [PersonalValue("name", "홍길동"), PersonalValue("birth", "1990-01-01")])
    assert kept.text_policy == "redacted"
    trace.calls.append({"adapter_id": "b", "arguments": {"name": "홍길동", "memo": "홍 길 동 1990.1.1"}})
    kept = apply_retention(trace, RetentionPolicy(raw_text="redacted"), [PersonalValue("name", "홍길동"),
                                                                        PersonalValue("birth", "1990-01-01")])
    assert "홍길동" not in repr(kept.calls) and "1990.1.1" not in repr(kept.calls)
