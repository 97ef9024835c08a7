"""Issue 17 stage 3: what is asked about a place (날씨, 기온, 좌표 — registry/_vocab/place_words.yaml
asked_about) ends its span whichever adapters retrieval ranked: the span never depends on which
candidates' vocabulary happened to be in the turn."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("text, place", [
    ("내일 불국사 날씨 어때?", "불국사"),
    ("모레 첨성대 날씨 알려줘", "첨성대"),
    ("협재해수욕장 지금 기온 알려줘", "협재해수욕장"),
    ("성산일출봉 좌표 알려줘", "성산일출봉"),
    ("광안리 해수욕장은?", "광안리 해수욕장"),
])
def test_a_place_span_ends_at_what_is_asked_about_it(text, place):
    from ummaya.runtime.understand.places import bare_place

    assert bare_place(text, "ko", frozenset()) == place
