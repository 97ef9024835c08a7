"""Issue 17: a place named only by its kind (시청, 터미널 — a place suffix with no name of its own)
is in every city, so the engine asks which place rather than searching for the word; a named one
(부산시청, 시청역, 하단역) is still searched. The kinds are registry/_vocab/place_words.yaml's
suffixes, the names its known places."""

from __future__ import annotations

import pytest

from tests.support.offline_turns import ask


@pytest.mark.parametrize("request_", ["시청 앞 정류장 버스 언제 와?", "터미널 근처 약국 어디야?"])
def test_a_kind_alone_asks_which_place(engine, request_):
    r = ask(engine, request_)
    assert r.stop_reason == "needs_input" and not r.calls, r.calls


def test_a_named_place_of_that_kind_is_searched(engine):
    r = ask(engine, "부산시청 앞 정류장 버스 언제 와?")
    assert ("kakao_keyword_search", "부산시청") in [(c["adapter_id"], c["arguments"].get("query")) for c in r.calls]


def test_the_rule_reads_the_vocabulary():
    from ummaya.runtime.understand.places import is_only_a_kind

    assert is_only_a_kind("시청") and is_only_a_kind("터미널")
    assert not is_only_a_kind("부산시청") and not is_only_a_kind("하단역")
