"""Red-team variants for stored traces (each was kept before its fix): personal data as a key of
an object (a lying model's arguments, recorded in events) and a 주민등록번호 or card number sent as
a JSON number. Under the "none" and "redacted" policies ("full" keeps the citizen's words by
design; its URLs are covered by test_trace_redaction)."""

from __future__ import annotations

import json

import pytest

from ummaya.wire.redact import redact_value


def test_redact_value_covers_keys_and_personal_numbers() -> None:
    value = {"010-1234-5678": "x", "args": {"n": 9001011234567, "card": 4111111111111111,
                                            "ms": 1764561234567, "count": 5, "ok": True}}
    assert redact_value(value)["010-1234-5678"] == "x"  # keys are kept by default (log filter)
    out = redact_value(value, keys=True)
    assert out == {"[전화번호]": "x", "args": {"n": "[주민등록번호]", "card": "[카드번호]",
                                            "ms": 1764561234567, "count": 5, "ok": True}}


@pytest.mark.parametrize("policy", ["none", "redacted"])
def test_stored_trace_keeps_no_personal_key_or_number(policy: str) -> None:
    from ummaya.runtime.store import RetentionPolicy
    from ummaya.runtime.store.sql import apply_retention
    from ummaya.runtime.store.records import Trace, utcnow

    now = utcnow()
    trace = Trace(trace_id="01TESTVARIANT0000000000000", created_at=now, expires_at=now,
                  release_id="r", release_alias="production", session_id="s", stop_reason="completed",
                  state="completed", states=[], timings={}, request_text="약국", answer_text="",
                  events=[], calls=[{"adapter_id": "a", "arguments": {"010-1234-5678": 1, "rrn": 9001011234567}}],
                  meta={"proposed": {"hong@example.com": "x"}})
    kept = apply_retention(trace, RetentionPolicy(raw_text=policy))
    text = json.dumps([kept.calls, kept.meta], ensure_ascii=False)
    for leak in ("010-1234-5678", "9001011234567", "hong@example.com"):
        assert leak not in text, (policy, text)
