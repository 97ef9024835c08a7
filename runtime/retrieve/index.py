"""The Whoosh index (the index of record) built from documents.json, and its compiled view.

``documents.json`` is the committed, canonical form. On first use the Whoosh index is built from
it into ``generated/index/whoosh/<content-hash>/`` (git-ignored; a cache folder under
``UMMAYA_HOME`` or ``~/.cache/ummaya`` when generated/ is not writable). The hash covers the
documents, the analyzer version and the field weights, so a stale index is never reused.

Beside the Whoosh segments the same folder keeps ``compiled.npz``: the index's own postings read
back once (term frequencies, Whoosh's quantised field lengths and average field lengths) and
multiplied out into one impact list per term. Two ways of folding the fields together:

* ``saturation="document"`` (the default) — BM25F as Robertson and Zaragoza define it: each
  field's length-normalised term frequency, times the field weight, is summed *before* one
  saturation (k1 = 3), with the document-level IDF. A word the manifest repeats in its title,
  hints and examples (주소 in the road-address search) saturates once instead of scoring in every
  field, so the one word that separates two look-alikes (좌표 in the reverse geocoder) decides.
  On the tune split this lifted Recall@1 with abstention off from 0.933 to 0.969 (evals/README.md).
* ``saturation="fields"`` — each field saturated on its own and the weighted scores summed:
  exactly what Whoosh's own BM25F scorer gives for an OR of per-field terms. Tests compare this
  mode with Whoosh's searcher to 1e-5, which is what shows the postings are read back exactly.

A query then costs one ``numpy.bincount`` over the postings of its terms. Nothing is
re-tokenised at load: the compiled view comes from Whoosh's postings, and on later loads straight
from the npz.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable, Sequence
from typing import Any, TYPE_CHECKING

import numpy as np

from ummaya.model.analysis import ANALYZER_VERSION, grams
from .counter_examples import EXAMPLES_FILE, CounterExamples
from .doc_table import DocTable

if TYPE_CHECKING:  # whoosh is imported where an index is built or searched, not on import
    from whoosh.fields import Schema
    from whoosh.scoring import BM25F

TABLE_FILE = "table.json"

# Text fields of a document and the families of terms each is indexed with.
# "redirect": other adapters' negative examples whose belongs_to names this adapter — a manifest
# saying "this request is not mine, it is X's" is evidence for X.
FIELDS = ("title", "summary", "hints", "examples", "agency", "meta", "redirect")
FAMILIES = ("g", "m")  # g: grams (bigrams + English words); m: Kiwi morphemes

# Per-field weights (multiplying Whoosh's BM25F per-field score), tuned on the eval set's tune
# split — see evals/README.md for the comparison table.
DEFAULT_WEIGHTS: dict[str, float] = {
    "title": 2.0,
    "summary": 0.7,
    "hints": 3.0,
    "examples": 1.5,
    "agency": 1.0,
    "meta": 0.4,
    "redirect": 0.6,
}
DEFAULT_FAMILY_WEIGHTS: dict[str, float] = {"g": 1.0, "m": 1.0}
K1 = 1.2  # Whoosh's BM25F, per field ("fields" saturation)
K1_DOCUMENT = 3.0  # one saturation over the weighted fields; tuned on the tune split (2, 3, 5)
B = 0.75
FORMAT = "5"
SATURATIONS = ("document", "fields")


@dataclass(frozen=True)
class IndexConfig:
    weights: tuple[tuple[str, float], ...] = tuple(sorted(DEFAULT_WEIGHTS.items()))
    families: tuple[tuple[str, float], ...] = tuple(sorted(DEFAULT_FAMILY_WEIGHTS.items()))
    saturation: str = "document"

    @classmethod
    def make(cls, weights: dict[str, float] | None = None,
             families: dict[str, float] | None = None, saturation: str = "document") -> IndexConfig:
        if saturation not in SATURATIONS:
            raise ValueError(f"saturation must be one of {SATURATIONS}, not {saturation!r}")
        w = {**DEFAULT_WEIGHTS, **(weights or {})}
        f = {**DEFAULT_FAMILY_WEIGHTS, **(families or {})}
        return cls(tuple(sorted(w.items())), tuple(sorted(f.items())), saturation)

    def weight(self, field: str, family: str) -> float:
        return dict(self.weights)[field] * dict(self.families)[family]

    def key(self) -> str:
        return json.dumps([FORMAT, ANALYZER_VERSION, self.weights, self.families, K1, K1_DOCUMENT, B,
                           self.saturation])


def field_name(field: str, family: str) -> str:
    return f"{field}_{family}"


def redirects(docs: list[dict[str, Any]]) -> dict[str, list[tuple[str, str]]]:
    """belongs_to id -> [(negative example text, its morphemes)] from every other document."""
    out: dict[str, list[tuple[str, str]]] = {}
    for d in docs:
        negm = (d.get("morphs") or {}).get("negatives") or []
        for i, n in enumerate(d.get("negative_examples") or []):
            if n.get("belongs_to") and n["belongs_to"] != d["id"]:
                out.setdefault(n["belongs_to"], []).append((n["text"], negm[i] if i < len(negm) else ""))
    return out


def _doc_field_texts(doc: dict[str, Any], redirected: Sequence[tuple[str, str]] = ()) -> dict[str, dict[str, str]]:
    """Space-joined terms per (field, family) for one document of documents.json."""
    out: dict[str, dict[str, str]] = {}
    morph = doc.get("morphs") or {}
    g_red = [g for text, _ in redirected for g in grams(text)]
    m_red = [m for _, ms in redirected for m in ms.split(" ") if m]
    out["redirect"] = {"g": " ".join(g_red), "m": " ".join(m_red)}
    for field in FIELDS:
        if field == "redirect":
            continue
        sources = ("domain", "primitive", "tier") if field == "meta" else (field,)
        g_terms: list[str] = []
        m_terms: list[str] = []
        for lang in ("ko", "en"):
            for src in sources:
                value = doc["text"][lang][src]
                for text in [value] if isinstance(value, str) else value:
                    g_terms.extend(grams(text))
                m = (morph.get(lang) or {}).get(src, "")
                if m:
                    m_terms.extend(m.split(" "))
        out[field] = {"g": " ".join(g_terms), "m": " ".join(m_terms)}
    return out


def schema() -> Schema:
    from whoosh.fields import ID, TEXT, Schema

    from .whoosh_analyzer import PretokenizedTokenizer

    fields: dict[str, Any] = {
        "id": ID(stored=True, unique=True),
        "primitive": ID(stored=True),
        "tier": ID(stored=True),
        "domain": ID(stored=True),
        "agency": ID(stored=True),
    }
    for field in FIELDS:
        for fam in FAMILIES:
            fields[field_name(field, fam)] = TEXT(
                analyzer=PretokenizedTokenizer(), phrase=False, stored=False
            )
    return Schema(**fields)


def weighting(config: IndexConfig) -> BM25F:
    from whoosh.scoring import BM25F

    return BM25F(B=B, K1=K1)


def content_hash(documents: bytes, config: IndexConfig) -> str:
    h = hashlib.sha256()
    h.update(config.key().encode())
    h.update(b"\0")
    h.update(documents)
    return h.hexdigest()[:20]


def cache_roots(generated: Path | None) -> list[Path]:
    roots = []
    if generated is not None:
        roots.append(generated / "index" / "whoosh")
    home = os.environ.get("UMMAYA_HOME")
    if home:
        roots.append(Path(home) / "cache" / "whoosh")
    xdg = os.environ.get("XDG_CACHE_HOME")
    roots.append((Path(xdg) if xdg else Path.home() / ".cache") / "ummaya" / "whoosh")
    return roots


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=folder, prefix=".probe", delete=True)
        probe.close()
        return True
    except OSError:
        return False


def build_whoosh(target: Path, docs: list[dict[str, Any]], config: IndexConfig) -> None:
    """Build the Whoosh index into ``target`` (a fresh folder), one segment, docs in order."""
    from whoosh import index as windex

    ix = windex.create_in(str(target), schema())
    writer = ix.writer(procs=1, limitmb=256)
    red = redirects(docs)
    for doc in docs:
        texts = _doc_field_texts(doc, red.get(doc["id"], []))
        fields = {
            "id": doc["id"],
            "primitive": doc["primitive"],
            "tier": doc["tier"],
            "domain": doc["domain"],
            "agency": doc["agency"]["code"],
        }
        for field in FIELDS:
            for fam in FAMILIES:
                fields[field_name(field, fam)] = texts[field][fam]
        writer.add_document(**fields)
    writer.commit(optimize=True)


@dataclass
class Compiled:
    """Impact postings per term key ("g:응급", "m:응급실"), all fields and weights folded in."""

    keys: dict[str, int]
    offsets: np.ndarray  # int64, len = n_keys + 1
    docs: np.ndarray  # int32
    impacts: np.ndarray  # float32: Σ_fields weight × BM25F(term, field, doc)
    idf_any: np.ndarray  # float32 per key: idf over "contains the term in any field"
    n_docs: int

    def postings(self, key: str) -> tuple[np.ndarray, np.ndarray] | None:
        i = self.keys.get(key)
        if i is None:
            return None
        a, b = self.offsets[i], self.offsets[i + 1]
        return self.docs[a:b], self.impacts[a:b]

    def save(self, path: Path) -> None:
        keys = sorted(self.keys, key=self.keys.__getitem__)
        np.savez(
            path,
            keys=np.array(json.dumps(keys, ensure_ascii=False)),
            offsets=self.offsets,
            docs=self.docs,
            impacts=self.impacts,
            idf_any=self.idf_any,
            n_docs=np.array(self.n_docs),
        )

    @classmethod
    def load(cls, path: Path) -> Compiled:
        with np.load(path, allow_pickle=False) as z:
            keys = json.loads(str(z["keys"]))
            return cls(
                {k: i for i, k in enumerate(keys)},
                z["offsets"],
                z["docs"],
                z["impacts"],
                z["idf_any"],
                int(z["n_docs"]),
            )


def compile_from_whoosh(folder: Path, config: IndexConfig, order: list[str]) -> Compiled:
    """Read the Whoosh index's postings once and fold them into per-term impact lists.

    Uses Whoosh's own statistics (term frequency, quantised field lengths, average field length).
    With ``config.saturation == "fields"`` the impacts equal what Whoosh's BM25F scorer computes
    per field, summed with the field weights; with ``"document"`` the weighted, length-normalised
    frequencies are summed first and saturated once (see the module docstring).
    """
    from whoosh import index as windex

    per_field = config.saturation == "fields"
    ix = windex.open_dir(str(folder))
    per_key: dict[str, dict[int, float]] = {}
    with ix.searcher(weighting=weighting(config)) as s:
        r = s.reader()
        n = r.doc_count_all()
        # Whoosh docnum -> position in `order` (documents.json order)
        pos = {r.stored_fields(d)["id"]: d for d in range(n)}
        remap = np.empty(n, dtype=np.int32)
        for i, adapter_id in enumerate(order):
            remap[pos[adapter_id]] = i
        for field in FIELDS:
            for fam in FAMILIES:
                fname = field_name(field, fam)
                w = config.weight(field, fam)
                avgfl = s.avg_field_length(fname) or 1
                lengths = [r.doc_field_length(d, fname, 1) for d in range(n)]
                for term in r.lexicon(fname):
                    text = term.decode("utf-8") if isinstance(term, bytes) else term
                    idf = math.log(n / (r.doc_frequency(fname, text) + 1)) + 1
                    bucket = per_key.setdefault(f"{fam}:{text}", {})
                    m = r.postings(fname, text)
                    while m.is_active():
                        d = int(remap[m.id()])
                        tf = m.weight()
                        norm = (1 - B) + B * lengths[m.id()] / avgfl
                        if per_field:
                            value = w * idf * ((tf * (K1 + 1)) / (tf + K1 * norm))
                        else:
                            value = w * tf / norm  # pseudo-frequency, saturated below
                        bucket[d] = bucket.get(d, 0.0) + value
                        m.next()
    if not per_field:
        for bucket in per_key.values():
            idf = math.log(n / (len(bucket) + 1)) + 1
            for d, tf in bucket.items():
                bucket[d] = idf * tf * (K1_DOCUMENT + 1) / (K1_DOCUMENT + tf)
    keys = sorted(per_key)
    offsets = np.zeros(len(keys) + 1, dtype=np.int64)
    docs_l: list[np.ndarray] = []
    imps_l: list[np.ndarray] = []
    idf_any = np.zeros(len(keys), dtype=np.float32)
    for i, k in enumerate(keys):
        items = sorted(per_key[k].items())
        docs_l.append(np.fromiter((d for d, _ in items), dtype=np.int32, count=len(items)))
        imps_l.append(np.fromiter((v for _, v in items), dtype=np.float32, count=len(items)))
        offsets[i + 1] = offsets[i] + len(items)
        idf_any[i] = math.log(n / (len(items) + 1)) + 1
    return Compiled(
        {k: i for i, k in enumerate(keys)},
        offsets,
        np.concatenate(docs_l) if docs_l else np.zeros(0, np.int32),
        np.concatenate(imps_l) if imps_l else np.zeros(0, np.float32),
        idf_any,
        n,
    )


KEEP_BUILDS = 4


def prune(root: Path, keep: int) -> None:
    """Drop all but the ``keep`` most recent index builds in a cache root (every documents.json
    change makes a new one). A process still holding an older build keeps working: its compiled
    arrays are in memory and open Whoosh files survive unlinking."""
    builds = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")
              and (p / "compiled.npz").exists()]
    builds.sort(key=lambda p: (p / "compiled.npz").stat().st_mtime, reverse=True)
    for old in builds[keep:]:
        shutil.rmtree(old, ignore_errors=True)


def ensure_index(
    documents: bytes, docs: Callable[[], list[dict[str, Any]]], config: IndexConfig,
    generated: Path | None, cache_dir: Path | None = None,
) -> Path:
    """The folder holding the Whoosh index + compiled.npz for these documents; built if missing.

    ``docs`` parses the documents only when the index has to be built: a cached index is found by
    the content hash alone. Built in a temporary sibling and renamed into place, so concurrent
    first uses never see a half-built index (the loser of the race discards its copy).
    """
    digest = content_hash(documents, config)
    roots = [cache_dir] if cache_dir is not None else cache_roots(generated)
    for root in roots:
        folder = root / digest
        if (folder / "compiled.npz").exists():
            return folder
    for root in roots:
        if not _writable(root):
            continue
        tmp = Path(tempfile.mkdtemp(prefix=f".{digest}-", dir=root))
        try:
            parsed = docs()
            build_whoosh(tmp, parsed, config)
            compiled = compile_from_whoosh(tmp, config, [d["id"] for d in parsed])
            compiled.save(tmp / "compiled.npz")
            DocTable.save_columns(parsed, tmp / TABLE_FILE)
            CounterExamples.from_documents(parsed).save(tmp / EXAMPLES_FILE)
            folder = root / digest
            try:
                os.rename(tmp, folder)
            except OSError:
                if not (folder / "compiled.npz").exists():
                    raise
            prune(root, keep=KEEP_BUILDS)
            return folder
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    raise OSError(f"no writable cache folder for the retrieval index (tried {', '.join(map(str, roots))})")
