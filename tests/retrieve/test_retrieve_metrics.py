"""The metric code itself, on a tiny example worked out by hand."""

import math

import pytest

from ummaya.runtime.retrieve.eval_retrieval import EvalRequest, evaluate, is_pending, ndcg, reciprocal_rank, score


def req(q, *ids, kind="k", split="tune"):
    return EvalRequest(q, tuple(ids), kind, split)


def test_hand_computed_example():
    results = [
        (req("a", "x"), ["x", "y"]),  # rank 1
        (req("b", "x"), ["y", "z", "x"]),  # rank 3
        (req("c", "x", "w"), ["y", "w", "x"]),  # ranks 2 and 3, two relevant
        (req("d", "x"), []),  # abstained wrongly
        (req("e"), []),  # out of scope, abstained: TP
        (req("f"), ["x"]),  # out of scope, answered: FN
    ]
    s = score(results)
    assert s.n == 6 and s.n_in_scope == 4 and s.n_out_of_scope == 2
    assert s.recall_at_1 == pytest.approx(1 / 4)
    assert s.recall_at_5 == pytest.approx(3 / 4)
    assert s.mrr == pytest.approx((1 + 1 / 3 + 1 / 2 + 0) / 4)
    l2 = math.log2
    nd_c = (1 / l2(3) + 1 / l2(4)) / (1 + 1 / l2(3))
    assert s.ndcg_at_10 == pytest.approx((1 + 1 / l2(4) + nd_c + 0) / 4)
    # abstention: TP=1 (e), FP=1 (d), FN=1 (f)
    assert (s.abstain_tp, s.abstain_fp, s.abstain_fn) == (1, 1, 1)
    assert s.abstain_precision == pytest.approx(0.5)
    assert s.abstain_recall == pytest.approx(0.5)
    assert s.abstain_f1 == pytest.approx(0.5)


def test_rank_helpers_cut_at_k():
    assert reciprocal_rank(["a"] * 10 + ["x"], ["x"]) == 0.0
    assert ndcg(["x"], ["x"]) == 1.0
    assert ndcg([], ["x"]) == 0.0


def test_evaluate_breaks_down_by_split_and_kind_and_applies_thresholds():
    reqs = [req("q1", "x", kind="a"), req("q2", "y", kind="b", split="holdout"), req("q3", kind="oos")]
    answers = {"q1": ["x"], "q2": ["x", "y"], "q3": []}
    rep = evaluate(reqs, answers.__getitem__, "all", {"all": {"recall_at_1": 0.9, "mrr": 0.5}})
    assert rep.overall.recall_at_1 == pytest.approx(0.5)
    assert rep.by_split["tune"].recall_at_1 == 1.0 and rep.by_split["holdout"].recall_at_1 == 0.0
    assert set(rep.by_kind) == {"a", "b", "oos"}
    assert rep.below == ["recall_at_1 0.500 < 0.9"]
    assert [f["query"] for f in rep.failures] == ["q2"]
    only = evaluate(reqs, answers.__getitem__, "holdout", {"holdout": {}})
    assert only.overall.n == 1 and only.below == []


def test_requests_for_adapters_not_in_the_registry_are_pending_not_scored():
    reqs = [
        req("built", "x"),                            # scored: x exists
        req("planned", "new_row", split="holdout"),   # pending: new_row does not exist yet
        req("either", "x", "new_row"),                # pending: not every expected id exists
        req("oos"),                                   # out of scope: never pending
    ]
    asked = []

    def rank(q):
        asked.append(q)
        return {"built": ["x"], "oos": []}[q]

    rep = evaluate(reqs, rank, "all", {"all": {"recall_at_1": 1.0}}, known={"x", "y"})
    assert asked == ["built", "oos"]
    assert rep.pending == 2 and rep.pending_adapters == ["new_row"]
    assert rep.overall.n == 2 and rep.overall.recall_at_1 == 1.0 and rep.below == []
    assert "holdout" not in rep.by_split and rep.failures == []
    assert rep.as_dict()["pending"] == 2
    held = evaluate(reqs, rank, "holdout", {"holdout": {}}, known={"x"})
    assert held.pending == 1 and held.overall.n == 0
    # Without the registry's ids nothing is pending: every request is ranked.
    assert evaluate(reqs[:1], rank, "all", {"all": {}}).pending == 0
    assert is_pending(req("q", "x", "z"), {"x"}) and not is_pending(req("q"), set())
