"""The question the engine asks for a missing required argument is worded for the slot, in both
languages — 「다음 정보가 필요합니다: law_name」 showed a citizen an internal name."""

from __future__ import annotations

import pytest

from ummaya.runtime.compose import ASK, compose_ask

# Every slot a required input of the registry is asked as (moleg_law_search's law_name, the
# timetables' origin/destination, the HIRA detail lookups' hospital_name, ...).
WORDED = ["law_name", "sigungu_name", "hospital_name", "school_name", "route_number", "origin",
          "destination", "flight_number", "month", "day_code", "election", "election_office",
          "ocean_station", "welfare_program", "auth_provider"]


@pytest.mark.parametrize("language", ["ko", "en"])
@pytest.mark.parametrize("slot", WORDED)
def test_a_missing_slot_is_asked_for_in_words_not_by_its_name(slot: str, language: str) -> None:
    question = compose_ask([slot], language)
    assert question == ASK[language][slot] != ASK[language]["default"].format(slots=slot)


def test_the_law_name_question_names_a_statute() -> None:
    assert "법령 이름" in compose_ask(["law_name"], "ko")
    assert "statute" in compose_ask(["law_name"], "en")
    # an unworded slot still falls back to naming it
    assert compose_ask(["no_such_slot"], "en").endswith("no_such_slot")
