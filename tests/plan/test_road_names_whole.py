"""Issue 17 item 3: a road name stays whole. The road endings 로 / 대로 have the shape of the
directional particle (으)로, and a known place before them (해운대, 대학) made the reader take the
ending off (해운대로 → 해운대). The particle never stands before a building number or a place
anchor noun, so there the ending is the road's (runtime/understand/grammar.py DIRECTIONAL)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("text, place", [
    ("해운대로 근처 편의점", "해운대로"),
    ("중앙대로 주변 주차장 있어?", "중앙대로"),
    ("대학로 근처 공영주차장", "대학로"),
])
def test_a_road_before_an_anchor_keeps_its_ending(text, place):
    from ummaya.runtime.understand.places import find_place

    assert find_place(text, "ko") == place


@pytest.mark.parametrize("text, place", [
    ("해운대로 570", "해운대로 570"),
    ("서울 종로구 대학로 101", "서울 종로구 대학로 101"),
    ("부산 동구 중앙대로 206", "부산 동구 중앙대로 206"),
])
def test_a_road_before_its_building_number_keeps_its_ending(text, place):
    from ummaya.runtime.understand.places import bare_place

    assert bare_place(text, "ko", frozenset()) == place


def test_a_road_before_its_number_survives_the_topics_own_words():
    """The topic's vocabulary drops a word it starts (대학 정보 → not a place); a road before its
    building number is never such a word (대학로 101)."""
    from ummaya.runtime.understand.places import bare_place

    assert bare_place("종로구 대학로 101 주소", "ko", frozenset({"대학", "주소"})) == "종로구 대학로 101"


@pytest.mark.parametrize("text, place", [
    ("해운대로 가고 싶어", "해운대"),      # motion: the particle
    ("부산역으로 가는 중", "부산역"),
])
def test_the_directional_particle_still_comes_off_before_a_verb(text, place):
    from ummaya.runtime.understand.places import bare_place

    assert bare_place(text, "ko", frozenset()) == place


def test_the_grammar_names_the_directional_particle():
    from ummaya.runtime.understand import grammar

    assert grammar.DIRECTIONAL == {"으로", "로"}
    assert grammar.ends_like_directional("해운대로")
    assert not grammar.ends_like_directional("로")
