"""The elections vocabulary and the two NEC manifests agree (registry/_vocab/elections.yaml says how
to move them after an election): every kind of election the citizen's words name is one election id
of nec_election_results, each id is a real voting day, and the polling places default to an
election no older than the latest counted one."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def _load(rel: str) -> dict:
    return yaml.safe_load((REPO / rel).read_text(encoding="utf-8"))


def _ids(manifest: dict) -> tuple[list[str], dict[str, str]]:
    field = manifest["input_schema"]["properties"]["election_id"]
    return list(field.get("enum", [])), dict(field.get("x-enum-labels", {}))


def test_each_kind_of_election_names_one_id_of_the_results_adapter() -> None:
    words = _load("registry/_vocab/elections.yaml")
    results = _load("registry/nec/nec_election_results.yaml")
    ids, labels = _ids(results)
    assert set(labels) == set(ids)
    kinds = [t["label"] for t in words["terms"]]
    assert sorted(labels.values()) == sorted(kinds), "one id per kind of election, labelled as the vocabulary"
    for sg_id in ids:
        dt.datetime.strptime(sg_id, "%Y%m%d")  # an sgId is the voting day


def test_the_polling_places_ask_for_the_latest_election_or_a_newer_one() -> None:
    ids, _ = _ids(_load("registry/nec/nec_election_results.yaml"))
    polling = _load("registry/nec/nec_polling_places.yaml")["input_schema"]["properties"]["election_id"]
    assert polling["default"] >= max(ids), (
        "nec_polling_places still defaults to an election older than the latest counted one")
