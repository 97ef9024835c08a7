"""Issue 17 stage 3: a search word may be a term of a registry vocabulary that the medicine
readers never take as a product (「노인 관련 혜택」 → 노인); a medicine is still never named by who
takes it."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("request_, word", [("노인 관련 혜택 뭐 있어?", "노인"), ("어린이 관련 혜택", "어린이")])
def test_a_who_word_of_a_vocabulary_is_a_search_word(request_, word):
    from ummaya.runtime.understand.names import content_words

    assert word in content_words(request_, keyword=True)


def test_a_who_word_is_never_a_product():
    from ummaya.runtime.understand.names import content_words, product_in

    assert "노인" not in content_words("노인 먹어도 돼?")
    assert product_in("노인이 타이레놀 먹어도 돼?") == "타이레놀"


@pytest.mark.parametrize("request_, name", [
    ("새로 입사할 회사 한빛정밀 국민연금 가입 사업장이야?", "한빛정밀"),
    ("이번에 옮긴 직장 대성산업 국민연금 가입돼 있어?", "대성산업"),
    ("한빛정밀 국민연금 가입 사업장 맞아?", "한빛정밀"),  # the kind noun after the name is its head
])
def test_a_name_after_a_kind_noun_leaves_its_modifiers_out(request_, name):
    from ummaya.runtime.understand.names import _after_kind_noun, _may_be_keyword, content_words

    words = [w for w in content_words(_after_kind_noun(request_), keyword=True) if _may_be_keyword(w)]
    assert words[0] == name


@pytest.mark.parametrize("word", ["새로", "이번에", "처음으로"])
def test_adverbs_are_function_words_of_the_registry(word):
    from ummaya.runtime.understand import vocab
    from ummaya.runtime.understand.places import is_function

    assert word in vocab.fw("adverbs") and is_function(word)
