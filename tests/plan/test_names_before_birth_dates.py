"""Issue 17 item 4: a name stated right before a date of birth is the name, in English requests too
("Lee Sora, born 2 April 1979"), with the label that introduces the date (born, DOB, 생년월일 …)
between them. The labels are registry data (function_words.yaml birth_labels), not Python."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("text, name", [
    ("Renew my ID for Lee Sora, born 2 April 1979", "Lee Sora"),
    ("Choi Dohyun born 1983-06-21, check my fines", "Choi Dohyun"),
    ("Name on file: Han Ye-jin DOB 1991.10.05", "Han Ye-jin"),
    ("I'm 최유리, date of birth August 9, 1987", "최유리"),
    ("정민수 생년월일 1977-12-01 로 조회해줘", "정민수"),
])
def test_the_name_before_a_date_of_birth_and_its_label(text, name):
    from ummaya.runtime.understand.names import person_name_in

    assert person_name_in(text) == name


@pytest.mark.parametrize("text", [
    "Is October 3 2027 a public holiday?",
    "What happened on 1 March 1919?",
    "Show Busan Station born 1990",  # no date of birth: a year alone is no date
    "Meet me at Busan Station 2 April 2027",  # a place the vocabularies know, never a person
])
def test_no_name_without_one_before_a_date(text):
    from ummaya.runtime.understand.names import person_name_in

    assert person_name_in(text) is None


def test_the_birth_labels_are_registry_data():
    from ummaya.runtime.understand import vocab

    labels = vocab.fw("birth_labels")
    assert {"born", "dob", "생년월일"} <= set(labels)
