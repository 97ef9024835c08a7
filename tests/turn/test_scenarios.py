"""registry/scenarios/*.yaml as end-to-end tests on the embedded default.

One engine and store serve the whole module; each scenario runs in a fresh session of its own, so
scenarios pass in any order. A multi-turn scenario (``turns:``) runs its turns in order in one
session and sees what the earlier turns carried (a resolved place), exactly as a citizen would.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.turn.conftest import REPO
from ummaya.runtime.scenarios import load_scenarios, run_scenario

SCENARIOS = load_scenarios(REPO)
MULTI_TURN = [sc for _, sc in SCENARIOS if sc.turns is not None]


@pytest.fixture(scope="module")
def scenario_engine(catalog, retriever, tmp_path_factory):
    from ummaya.runtime.scenarios import scenario_engine
    from ummaya.runtime.store import open_store

    store = open_store(f"sqlite:///{tmp_path_factory.mktemp('scenarios') / 'store.sqlite3'}")
    # The engine `ummaya check` runs the scenarios on (ci/scenario_gate.py): one engine, one verdict.
    yield scenario_engine(catalog.root, store=store, catalog=catalog, retriever=retriever)
    store.close()


def test_there_are_enough_scenarios_and_every_adapter_is_covered(catalog):
    assert len(SCENARIOS) >= 30
    covered = {a for _, sc in SCENARIOS for a in sc.calls}
    assert set(catalog.adapters) <= covered, sorted(set(catalog.adapters) - covered)


@pytest.mark.parametrize("scenario", [sc for _, sc in SCENARIOS], ids=[sc.id for _, sc in SCENARIOS])
def test_scenario(scenario_engine, scenario):
    outcome = asyncio.run(run_scenario(scenario_engine, scenario))
    assert not outcome.problems, "\n".join(outcome.problems) + "\n---\n" + outcome.result.answer
    assert len(outcome.results) == len(scenario.all_turns())


def test_multi_turn_scenarios_exist():
    assert MULTI_TURN, "no scenario uses turns:"
    assert all(len(sc.turns) >= 2 for sc in MULTI_TURN)
