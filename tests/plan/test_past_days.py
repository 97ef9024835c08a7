"""Issue 17: a day written without a year (「11월 20일」) is the coming one — unless the clause it
belongs to is told in the past (「이사했는데」, 「다녀왔어」), when it is the last such day, this year
before today or else last year. A day a past verb takes as its target (「12월 20일로 예약했는데」)
is still the coming one. Grammar (the past tense's ㅆ), no word list."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.support.offline_turns import NOW, ask


@pytest.mark.parametrize(("text", "want"), [
    ("11월 20일에 이사했는데 신고 늦었나?", dt.date(2026, 11, 20)),
    ("11월 3일에 다녀왔어", dt.date(2026, 11, 3)),
    ("12월 24일에 이사했어", dt.date(2025, 12, 24)),  # after today: last year's
    ("11월 20일에 이사할 건데", dt.date(2027, 11, 20)),
    ("12월 20일로 예약했는데", dt.date(2026, 12, 20)),
    ("11월 20일 공휴일이야?", dt.date(2027, 11, 20)),
])
def test_a_day_without_a_year_follows_the_tense(text, want):
    from ummaya.runtime.understand.dates import date_in

    assert date_in(text, NOW) == want


def test_a_past_move_in_date_is_before_today(engine):
    r = ask(engine, "11월 25일에 이사했는데 전입신고 기한 지났어?")
    [args] = [c["arguments"] for c in r.calls if c["adapter_id"] == "gov24_move_in_report"]
    assert args["move_date"] == "2026-11-25", args
