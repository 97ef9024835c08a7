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
    from ummaya.runtime.assemble import build_engine, fixed_clock
    from ummaya.runtime.dispatch import Dispatcher
    from ummaya.runtime.scenarios import SCENARIO_CLOCK
    from ummaya.runtime.store import open_store

    store = open_store(f"sqlite:///{tmp_path_factory.mktemp('scenarios') / 'store.sqlite3'}")
    clock = fixed_clock(SCENARIO_CLOCK)  # the same dates on every machine and day
    yield build_engine(catalog.root, catalog=catalog, retriever=retriever, dispatcher=Dispatcher(catalog, env={}, clock=clock),
                       store=store, clock=clock)
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
