"""A person "at" a place (「어머니가 광장시장에 계신데요 가까운 약국」): the place before a verb of being
somewhere, the verb and who is there are arguments of that clause, not topics no adapter covers
(runtime/retrieve: Retriever.argument_terms, the function_words vocabulary's existence and people)."""

ASKS = (
    "어머니가 지금 광장시장에 계신데요 가까운 약국 알려주세요",
    "아버지가 지금 남대문시장에 계시는데 가까운 약국 알려줘",
)


def test_being_somewhere_is_where_not_what(retriever):
    for ask in ASKS:
        found = retriever.search(ask)
        assert found and found[0].adapter_id == "pharmacies", ask


def test_without_the_clause_reading_the_request_abstains(small_generated):
    from ummaya.runtime.retrieve import Retriever

    r = Retriever.load(small_generated)
    r._existence = (frozenset(), frozenset())  # the vocabulary's verbs of being somewhere unread
    assert [c.adapter_id for c in r.search(ASKS[0])][:1] != ["pharmacies"]


def test_a_person_word_without_being_somewhere_stays_a_topic(retriever):
    # 어머니 in 「어머니가 드실 약」 is who the question is about, not the subject of being somewhere.
    assert not (retriever.argument_terms("어머니가 드실 약 알려줘") & {"g:어머", "m:어머니"})


def test_a_verb_of_being_without_a_place_before_it_leaves_the_clause_the_topic(retriever):
    # 「물에 빠졌다 나왔는데 의식이 없어」 says what happened (drowning, unconscious): 나왔는데 follows
    # 빠졌다, not a word marked as a place (에, 에서), so nothing of the clause is taken for where.
    terms = retriever.argument_terms("친구가 물에 빠졌다 나왔는데 의식이 없어")
    assert not (terms & {"m:빠졌다", "g:빠졌", "m:나왔는데", "g:나왔", "m:친구", "g:친구"}), sorted(terms)
    # ... while the same verb after a place still is a clause of being somewhere.
    here = retriever.argument_terms("친구가 해운대 해수욕장에 나왔는데 가까운 약국")
    assert here & {"g:나왔", "m:나왔는데"} and here & {"g:친구", "m:친구"}, sorted(here)
