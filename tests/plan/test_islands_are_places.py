"""Issue 17 item 2: an island is a place, its 도 part of the name. Without a landmark entry the
reader took the final 도 for the particle 「도」 ("also") and sent the county that administers the
island (울릉도 → 경상북도 울릉군). The islands are registry data (registry/_vocab/landmarks.yaml)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("island, region", [
    ("백령도", "인천광역시 옹진군"),
    ("흑산도", "전라남도 신안군"),
    ("거제도", "경상남도 거제시"),
    ("독도", "경상북도 울릉군"),
])
def test_an_island_is_a_place_of_its_own_county(island, region):
    from ummaya.runtime.understand import places, regions

    assert places.bare_place(f"{island} 날씨 어때", "ko", frozenset()) == island
    assert not regions.is_region_name(island)
    found = regions.find_region(island)
    assert found is not None and found.text() == region


def test_an_island_before_an_anchor_is_sent_whole():
    from ummaya.runtime.understand.places import find_place

    assert find_place("강화도 근처 캠핑장", "ko") == "강화도"


def test_every_island_entry_names_a_county_the_regions_vocabulary_knows():
    """An island's 시·군·구 is checked like every landmark's: the build resolved it to its code."""
    from ummaya.runtime.understand import vocab

    islands = [p for p in vocab.places("landmarks") if p["name"].endswith(("도", "섬"))]
    assert len(islands) >= 20
    for p in islands:
        assert len(p.get("sigungu") or "") == 5 and p["sigungu"].startswith(p["sido"]), p["name"]
