"""Analyzer and weighting ablation on the eval set (the real registry): which Korean analysis,
which field weights, which signals. Prints one markdown table (tune and holdout side by side).

    python bench/analyzers.py

Rows: bigrams only, Kiwi morphemes only, both (default), both with Kiwi at query time instead of
the Kiwi-free segmenter, uniform field weights, without the negative-example redirect field,
without the intent signal, with Whoosh's per-field saturation instead of one saturation over the
weighted fields, with time/quantity words (지금, 얼마 …) counted as evidence, and without the
"where is <unknown name>" fallback to place-name lookups. "no-abst" columns rank without abstention (pure ranking quality).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from synth import real_manifests  # noqa: E402

from ummaya.codegen.emit_index import DOCUMENTS_PATH, emit_index, registry_domains  # noqa: E402
from ummaya.runtime.retrieve import Retriever  # noqa: E402
from ummaya.runtime.retrieve.eval_retrieval import is_pending, load_eval_set, score  # noqa: E402
from ummaya.runtime.retrieve.index import DEFAULT_WEIGHTS, IndexConfig  # noqa: E402

CONFIGS = [
    ("bigrams only", dict(config=IndexConfig.make(families={"g": 1.0, "m": 0.0}))),
    ("Kiwi morphemes only", dict(config=IndexConfig.make(families={"g": 0.0, "m": 1.0}))),
    ("bigrams + morphemes (default)", dict()),
    ("both, Kiwi at query time", dict(kiwi_query=True)),
    ("both, uniform field weights", dict(config=IndexConfig.make(weights={k: 1.0 for k in DEFAULT_WEIGHTS}))),
    ("both, no redirect field", dict(config=IndexConfig.make(weights={"redirect": 0.0}))),
    ("both, no intent signal", dict(intent_boost=0.0)),
    # Whoosh's own BM25F (each field saturated separately, scores summed), with the text
    # threshold that was tuned for it before document-level saturation became the default
    ("both, per-field saturation", dict(config=IndexConfig.make(saturation="fields"), abstain_text=9.0)),
    ("both, deixis counts as evidence", dict(deixis_is_evidence=True)),
    ("both, no place-name fallback", dict(place_lookup=False)),
]


def main() -> None:
    manifests = real_manifests(ROOT)
    data = emit_index(manifests, registry_domains(ROOT))[DOCUMENTS_PATH]
    # Requests for adapters not built yet (docs/registry-plan.md) are pending, as in `ummaya eval retrieval`.
    ids = {m.id for m in manifests}
    reqs = [q for q in load_eval_set(ROOT / "evals" / "retrieval.yaml") if not is_pending(q, ids)]
    cache = Path(tempfile.mkdtemp(prefix="ummaya-analyzers-"))
    head = ["configuration", "R@1 tune", "R@5 tune", "F1 tune", "R@1 holdout", "R@5 holdout",
            "F1 holdout", "R@1 no-abst (all)", "R@5 no-abst (all)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, kw in CONFIGS:
        r = Retriever(data, cache_dir=cache, **kw)
        res = [(q, [c.adapter_id for c in r.search(q.query, top_k=10)]) for q in reqs]
        tune = score([x for x in res if x[0].split == "tune"])
        hold = score([x for x in res if x[0].split == "holdout"])
        r.abstain_coverage, r.abstain_text = 0.0, 0.0
        raw = score([(q, [c.adapter_id for c in r.search(q.query, top_k=10)]) for q in reqs if q.expected])
        lines.append("| " + " | ".join([
            name, f"{tune.recall_at_1:.3f}", f"{tune.recall_at_5:.3f}", f"{tune.abstain_f1:.3f}",
            f"{hold.recall_at_1:.3f}", f"{hold.recall_at_5:.3f}", f"{hold.abstain_f1:.3f}",
            f"{raw.recall_at_1:.3f}", f"{raw.recall_at_5:.3f}",
        ]) + " |")
        print(lines[-1], file=sys.stderr, flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
