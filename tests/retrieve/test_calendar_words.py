"""A word of the calendar vocabulary (구월, 시월) says *when*: a value the readers know, not an unknown
topic word held against coverage, and its 에 is of time, not of place (runtime/retrieve:
Retriever.argument_terms, runtime/understand/dates.names_time)."""


def test_a_month_in_words_no_adapter_holds_is_an_argument(retriever):
    terms = retriever.argument_terms("구월에 연휴 있어?")
    assert {"g:구월"} <= terms, sorted(terms)
    assert "g:연휴" not in terms and "m:연휴" not in terms  # the topic stays the topic


def test_a_calendar_word_an_adapter_holds_stays_evidence(retriever):
    # 일요일 is in the pharmacies adapter's own example (「일요일에 여는 약국」): evidence, not an argument.
    assert "g:일요" not in retriever.argument_terms("일요일에 여는 약국")


def test_a_verb_of_being_after_a_time_is_no_clause_of_place(retriever):
    # 「일요일에 계신데요」 carries 에 of time: the verb of being is not taken for a clause of place.
    terms = retriever.argument_terms("일요일에 계신데요 약국")
    assert not (terms & {"g:계신", "g:일요"}), sorted(terms)
    # ... while a place before the same verb still is.
    assert {"g:계신", "g:광장"} <= retriever.argument_terms("광장시장에 계신데요 약국")


def test_names_time_reads_the_calendar_vocabulary():
    from ummaya.runtime.understand.dates import names_time

    assert all(names_time(w) for w in ("구월", "9월", "내일", "어린이날", "주말", "오후"))
    assert not any(names_time(w) for w in ("광장시장", "해수욕장", "연휴"))


def test_names_month_reads_months_and_holidays_not_days():
    from ummaya.runtime.understand.dates import names_month

    assert all(names_month(w) for w in ("구월", "시월", "9월"))
    # A holiday is a day the holiday adapter's own text may hold: evidence, never made an argument.
    assert not any(names_month(w) for w in ("오늘", "주말", "연휴", "광복절", "어린이날"))
