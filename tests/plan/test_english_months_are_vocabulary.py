"""Issue 17, item 2: English month names are the calendar vocabulary's (registry/_vocab/calendar.yaml
``months``), not a list written into a regular expression in runtime/understand/dates.py: a month
word the vocabulary gains is read in English dates with no Python edit."""

from __future__ import annotations


def test_english_dates_read_the_calendar_vocabulary():
    from ummaya.runtime.understand.dates import english_dates

    assert [d[:3] for d in english_dates("born 14 May 1990")] == [(5, 14, 1990)]
    assert [d[:3] for d in english_dates("on November 20")] == [(11, 20, None)]
    assert [d[:3] for d in english_dates("Sept 5th")] == [(9, 5, None)]


def test_a_month_word_added_to_the_vocabulary_is_read(monkeypatch):
    from ummaya.runtime.understand import dates

    real = dates._cal

    def with_new_word(generated):
        cal = dict(real(generated))
        cal["months"] = {**cal["months"], "novembre": 11}  # as a contributor would add it in YAML
        return cal

    monkeypatch.setattr(dates, "_cal", with_new_word)
    rx = getattr(dates, "_en_date_rx", None)
    assert rx is not None, "English dates must be compiled from the calendar vocabulary"
    rx.cache_clear()
    try:
        assert [d[:3] for d in dates.english_dates("le 20 novembre 2026")] == [(11, 20, 2026)]
    finally:
        rx.cache_clear()
