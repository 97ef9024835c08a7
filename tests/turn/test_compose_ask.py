"""The question the engine asks for a missing required argument is the slot type's own, in both
languages — 「다음 정보가 필요합니다: law_name」 showed a citizen an internal name. The words are
registry data (registry/_slots ``question``), compiled into the slot table; compose.py keeps only
the engine's words for a request too vague to pick a service."""

from __future__ import annotations

import pytest

from ummaya.runtime.compose import ASK, compose_ask
from ummaya.runtime.understand import table

# Every slot a required input of the registry is asked as (moleg_law_search's law_name, the
# timetables' origin/destination, the HIRA detail lookups' hospital_name, ...).
WORDED = ["law_name", "sigungu_name", "hospital_name", "school_name", "route_number", "origin",
          "destination", "flight_number", "month", "day_code", "election", "election_office",
          "ocean_station", "welfare_program", "auth_provider", "isbn", "life_stage", "target_group"]


@pytest.mark.parametrize("language", ["ko", "en"])
@pytest.mark.parametrize("slot", WORDED)
def test_a_missing_slot_is_asked_for_in_words_not_by_its_name(slot: str, language: str) -> None:
    question = compose_ask([slot], language)
    declared = table.slot(slot).question
    assert declared is not None
    assert question == getattr(declared, language) != ASK[language]["default"].format(slots=slot)


def test_the_law_name_question_names_a_statute() -> None:
    assert "법령 이름" in compose_ask(["law_name"], "ko")
    assert "statute" in compose_ask(["law_name"], "en")
    # an unworded slot still falls back to naming it
    assert compose_ask(["no_such_slot"], "en").endswith("no_such_slot")


def test_a_slot_asked_as_another_takes_its_question_and_each_question_is_said_once() -> None:
    place = compose_ask(["place"], "ko")
    assert compose_ask(["latitude"], "ko") == place  # coordinates are asked as a place
    assert compose_ask(["latitude", "longitude", "place"], "ko") == place
    assert compose_ask(["request"], "en") == ASK["en"]["request"]


def test_every_required_input_of_the_registry_can_be_asked_for() -> None:
    """What `ummaya check` enforces, seen from the compiled catalog: no required field's slot type
    lacks a question."""
    from ummaya.runtime.catalog import Catalog

    catalog = Catalog.load()
    for m in catalog.adapters.values():
        schema = m.input_schema
        props = schema.get("properties", {})
        wanted = [*schema.get("required", []), *(f for k in ("anyOf", "oneOf") for alt in schema.get(k, [])
                                                  for f in alt.get("required", []))]
        for name in wanted:
            slot = props.get(name, {}).get("x-slot")
            assert table.question(slot) is not None, (m.id, name, slot)
