"""Rank adapters for a citizen's request, or abstain.

Score = text score (BM25F over the Whoosh index, fields weighted) × signals the manifest carries:

* **primitive intent** — 신고/납부/신청/제출 → ``send``; 확인/인증/자격 → ``check``;
  어디/근처/위치 → ``locate`` and ``find``: adapters of an implied primitive get a boost;
* **context slots** — an adapter whose ``requires`` the session can already fill gets a boost; a
  ``locate`` adapter whose ``provides`` are all already known is demoted (a resolved location is
  reused, never re-guessed);
* **tier** — a tiny preference live > mock > handoff, a tie-breaker only.

Abstention: the best candidate must cover enough of the request. Coverage = the IDF-weighted
share of the request's gram terms (bigrams, English words) found anywhere in the candidate's
document; unknown words count against it. The best candidate is kept when its coverage is at least
``abstain_coverage`` *or* its text evidence, in units of ln N + 1 (IDF grows with the catalog
size), is at least ``abstain_text`` (a long paraphrase can match strongly on a few words);
otherwise ``[]`` (what the turn reports as ``no_adapter``). Time and quantity words (지금, 오늘,
언제, 얼마, 몇 …) and location cues rank but are no evidence: they belong to every kind of
question. One fallback: when nothing fits but the request asks *where* something is and is mostly
words no adapter knows, it is a named-place lookup, and the ``locate`` adapters that take a
free-text ``place`` go first. Thresholds were tuned on the eval set's tune split only
(evals/README.md).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from pydantic import BaseModel

from .analysis import Segmenter, grams
from .index import Compiled, IndexConfig, ensure_index


class RetrievalError(Exception):
    code = "retrieval_error"


class UnknownFilter(RetrievalError, ValueError):
    """A filter key the retriever does not know. ``code`` is stable: ``unknown_filter``."""

    code = "unknown_filter"

    def __init__(self, key: str):
        self.key = key
        super().__init__(f"unknown filter '{key}' (known: {', '.join(FILTER_KEYS)})")


FILTER_KEYS = ("primitive", "tier", "domain", "agency")


class Match(NamedTuple):
    scores: np.ndarray  # BM25F text score per document
    coverage: np.ndarray  # IDF-weighted share of the request's grams each document holds
    evidence: np.ndarray  # the text score without terms that are no evidence (deixis, 근처 …)
    unknown_share: float  # IDF-weighted share of the request's grams no document holds


def _accumulate(docs: list[np.ndarray], weights: list[np.ndarray], n: int) -> np.ndarray:
    if not docs:
        return np.zeros(n)
    return np.bincount(np.concatenate(docs), weights=np.concatenate(weights), minlength=n)


class Candidate(BaseModel):
    adapter_id: str
    primitive: str
    tier: str
    score: float
    domain: str
    agency: str
    # Diagnostics (not part of the seam's minimum): share of the request this adapter covers
    # and the raw text score before signals.
    coverage: float = 0.0
    text_score: float = 0.0


# Intent cues → implied primitives. Matched on the raw request (substring for Korean, word for
# English); generic across adapters — a new adapter needs nothing here.
INTENT_CUES: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"신고|납부|신청|제출|접수|내야|내려고|낼게|내고\s*싶|\b(pay|report|apply|submit|file|filing)\b", re.I), ("send",)),
    (re.compile(r"확인|인증|자격|\b(verify|verification|eligib\w*|check|authenticat\w*)\b", re.I), ("check",)),
    (re.compile(r"어디|어딨|어딘|근처|위치|가까운|주변|\b(where|near|nearby|nearest|closest|around|location)\b", re.I), ("locate", "find")),
)
# "Where is <name>": a request that asks where something is, around a name the catalog has never
# seen (다이소, Gamcheon Culture Village), is a named-place lookup. For a ``locate`` adapter that
# takes a free-text ``place`` slot, the unknown words are that slot's value, not an unserved topic,
# so they do not count against its coverage.
PLACE_LOOKUP_CUE = re.compile(r"어디|어딨|어딘|위치|\b(where|location|locate)\b", re.I)
# Location cues are carried by the intent signal; a request is not "covered" because an adapter
# also says 근처 or where, and they do not count against coverage either.
COVERAGE_NEUTRAL = frozenset(
    "g:어디 g:어딨 g:근처 g:가까 g:까운 g:주변 g:where g:near g:nearbi g:nearest g:closest g:around".split()
)
# Time and quantity deixis (지금, 오늘, 언제, 얼마, 몇 …) belongs to every kind of question — 「비트코인
# 지금 얼마」 and 「쿠팡 배송 언제 와」 are not about weather or buses. These words still rank (지금 날씨
# prefers the nowcast) but are no evidence that anything fits: they count neither for coverage nor
# for the text score the abstention reads. English counterparts are already stop words (now, when,
# how …) except the ones below.
# 법 stands alone only as "how to" (쓰는 법, 하는 법); as a topic it is part of a longer word (용법).
_DEIXIS_WORDS = "지금 현재 오늘 내일 어제 모레 언제 얼마 무슨 어떤 어느 몇 법 today tomorrow tonight current".split()
DEIXIS = frozenset(f"{family}:{g}" for family in "gm" for w in _DEIXIS_WORDS for g in grams(w))
NO_EVIDENCE = COVERAGE_NEUTRAL | DEIXIS
# Regional scope: an adapter run by a local government (its agency names a province or district)
# serves that region. Unless the request names the region, a nationwide adapter should win, so a
# regional adapter's score is multiplied by (1 - region_penalty) when the request names none of
# its regions. Province names map to the short forms citizens use.
SIDO_SHORT = {
    "서울특별시": "서울", "부산광역시": "부산", "대구광역시": "대구", "인천광역시": "인천",
    "광주광역시": "광주", "대전광역시": "대전", "울산광역시": "울산", "세종특별자치시": "세종",
    "경기도": "경기", "강원특별자치도": "강원", "강원도": "강원", "충청북도": "충북", "충청남도": "충남",
    "전북특별자치도": "전북", "전라북도": "전북", "전라남도": "전남", "경상북도": "경북",
    "경상남도": "경남", "제주특별자치도": "제주",
}
_SGG = re.compile(r"([가-힣]{1,4}?)(구|시|군)(?:청)?$")


def agency_regions(name_ko: str) -> frozenset[str]:
    """Region names a local-government agency serves ("부산광역시 사하구청" → 부산, 부산광역시,
    사하구, 사하); empty for national agencies."""
    words = name_ko.split()
    if not words or words[0] not in SIDO_SHORT:
        return frozenset()
    out = {words[0], SIDO_SHORT[words[0]]}
    for w in words[1:]:
        m = _SGG.match(w)
        if m:
            out.add(m.group(1) + m.group(2))
            if len(m.group(1)) >= 2:
                out.add(m.group(1))
    return frozenset(out)


TIER_PRIOR = {"live": 1.0, "mock": 0.995, "handoff": 0.99}


class Retriever:
    """Load once, search many times. Thread-safe for concurrent ``search`` calls."""

    def __init__(
        self,
        documents: bytes,
        *,
        generated: Path | None = None,
        cache_dir: Path | None = None,
        config: IndexConfig | None = None,
        kiwi_query: bool = False,
        intent_boost: float = 0.25,
        context_boost: float = 0.1,
        abstain_coverage: float = 0.3,
        abstain_text: float = 3.8,
        region_penalty: float = 0.5,
        dense: bool = False,
        deixis_is_evidence: bool = False,
        place_lookup: bool = True,
    ):
        raw = json.loads(documents)
        self.docs: list[dict[str, Any]] = raw["documents"]
        self.config = config or IndexConfig.make()
        self.folder = ensure_index(documents, self.docs, self.config, generated, cache_dir)
        self.compiled = Compiled.load(self.folder / "compiled.npz")
        self.n = len(self.docs)
        self.ids = [d["id"] for d in self.docs]
        self.kiwi_query = kiwi_query
        self.intent_boost = intent_boost
        self.context_boost = context_boost
        self.abstain_coverage = abstain_coverage
        self.abstain_text = abstain_text
        # Switches for the ablation (bench/analyzers.py); the defaults are the tuned behaviour.
        self.no_evidence = COVERAGE_NEUTRAL if deixis_is_evidence else NO_EVIDENCE
        self.place_lookup = place_lookup
        # BM25 scores grow with ln N through IDF; the text threshold is in units of ln N + 1 so
        # it means the same at 26 and at 10,000 adapters.
        self.idf_scale = float(np.log(max(self.n, 1)) + 1.0)
        self.segment = Segmenter(k[2:] for k in self.compiled.keys if k.startswith("m:"))
        self.primitive = np.array([d["primitive"] for d in self.docs])
        self.tier = np.array([d["tier"] for d in self.docs])
        self.domain = np.array([d["domain"] for d in self.docs])
        self.agency = np.array([d["agency"]["code"] for d in self.docs])
        self._prim_mask = {p: self.primitive == p for p in set(self.primitive.tolist())}
        self.tier_prior = np.array([TIER_PRIOR.get(t, 1.0) for t in self.tier], dtype=np.float32)
        self._requires = [frozenset(d.get("requires") or ()) for d in self.docs]
        self._place_slot = np.array(
            [d["primitive"] == "locate" and "place" in (d.get("input_slots") or ()) for d in self.docs]
        )
        self._provides = [frozenset(d.get("provides") or ()) for d in self.docs]
        self.region_penalty = region_penalty
        self._regions = [agency_regions(d["agency"]["name_ko"]) for d in self.docs]
        self._regional = np.array([bool(r) for r in self._regions])
        keys = sorted({k for r in self._regions for k in r}, key=len, reverse=True)
        self._region_re = re.compile("|".join(map(re.escape, keys))) if keys else None
        by_region: dict[str, list[int]] = {}
        for i, regions in enumerate(self._regions):
            for k in regions:
                by_region.setdefault(k, []).append(i)
        self._region_docs = {k: np.array(v, dtype=np.int64) for k, v in by_region.items()}
        self._whoosh = None
        self.dense = None
        if dense:
            from .dense import DenseIndex

            self.dense = DenseIndex.load_or_build(self.folder, self.docs)

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def load(cls, generated: Path | str | None = None, **kwargs: Any) -> Retriever:
        """From a generated/ folder (default: :func:`ummaya.paths.generated_dir`)."""
        if generated is None:
            from ummaya.paths import generated_dir

            generated = generated_dir()
        generated = Path(generated)
        path = generated / "index" / "documents.json"
        try:
            data = path.read_bytes()
        except FileNotFoundError as exc:
            raise RetrievalError(f"{path}: not built yet — run `ummaya build`") from exc
        return cls(data, generated=generated, **kwargs)

    @classmethod
    def from_documents(cls, path: Path | str, **kwargs: Any) -> Retriever:
        """From a documents.json anywhere (benchmarks, tests); the index goes to a cache folder."""
        return cls(Path(path).read_bytes(), **kwargs)

    # -- query analysis -------------------------------------------------------------------------

    def query_terms(self, query: str) -> Counter[str]:
        terms: Counter[str] = Counter(f"g:{t}" for t in grams(query))
        if self.kiwi_query:
            from .analysis import morphs

            terms.update(f"m:{t}" for t in morphs(query))
        else:
            terms.update(f"m:{t}" for t in self.segment(query))
        return terms

    # -- filters --------------------------------------------------------------------------------

    def _mask(self, filters: dict | None) -> np.ndarray | None:
        if not filters:
            return None
        mask = np.ones(self.n, dtype=bool)
        for key, value in filters.items():
            if key not in FILTER_KEYS:
                raise UnknownFilter(key)
            if value is None:
                continue
            values = [value] if isinstance(value, str) else list(value)
            column = getattr(self, key)
            if key == "agency":
                names = np.array(
                    [
                        {d["agency"]["code"].lower(), d["agency"]["name_ko"], d["agency"]["name_en"].lower()}
                        & {str(v).lower() for v in values}
                        != set()
                        for d in self.docs
                    ]
                )
                mask &= names
            else:
                mask &= np.isin(column, values)
        return mask

    # -- scoring --------------------------------------------------------------------------------

    def text_scores(self, terms: Counter[str]) -> tuple[np.ndarray, np.ndarray]:
        """(BM25F score per document, coverage per document)."""
        m = self.match(terms)
        return m.scores, m.coverage

    def match(self, terms: Counter[str]) -> Match:
        """Score every document against the request's terms, with what the abstention reads."""
        c = self.compiled
        d_parts: list[np.ndarray] = []
        w_parts: list[np.ndarray] = []
        n_parts: list[np.ndarray] = []  # contributions of terms that are no evidence (deixis …)
        nw_parts: list[np.ndarray] = []
        cov = np.zeros(self.n, dtype=np.float32)
        total = 0.0
        unknown = 0.0
        cov_docs: list[np.ndarray] = []
        cov_idfs: list[float] = []
        unknown_idf = float(np.log(self.n) + 1.0)
        for key, qtf in terms.items():
            p = c.postings(key)
            neutral = key in self.no_evidence
            if p is None:
                if not neutral and key[0] == "g":
                    total += unknown_idf
                    unknown += unknown_idf
                continue
            docs, imps = p
            w = imps * qtf if qtf != 1 else imps
            d_parts.append(docs)
            w_parts.append(w)
            if neutral:
                n_parts.append(docs)
                nw_parts.append(w)
                continue
            if key[0] != "g":
                continue
            # Coverage is measured on the gram family only: it sees every syllable of the
            # request, while the morpheme family (segmented against the index's own vocabulary)
            # never produces an unknown word, so it would overrate out-of-scope requests.
            idf = float(c.idf_any[c.keys[key]])
            total += idf
            cov_docs.append(docs)
            cov_idfs.append(idf)
        scores = _accumulate(d_parts, w_parts, self.n)
        evidence = scores - _accumulate(n_parts, nw_parts, self.n) if n_parts else scores
        if cov_docs and total > 0:
            w = np.repeat(np.asarray(cov_idfs, dtype=np.float32), [len(d) for d in cov_docs])
            cov = (np.bincount(np.concatenate(cov_docs), weights=w, minlength=self.n) / total).astype(np.float32)
        return Match(scores, cov, evidence, unknown / total if total > 0 else 0.0)

    def signals(self, query: str, context_slots: frozenset[str]) -> np.ndarray:
        mult = self.tier_prior.copy()
        implied: set[str] = set()
        for pattern, prims in INTENT_CUES:
            if pattern.search(query):
                implied.update(prims)
        if implied:
            hit = np.zeros(self.n, dtype=bool)
            for prim in implied:
                m = self._prim_mask.get(prim)
                if m is not None:
                    hit |= m
            mult *= np.where(hit, 1.0 + self.intent_boost, 1.0)
        if self.region_penalty and self._region_re is not None:
            off = self._regional.copy()
            for name in set(self._region_re.findall(query)):
                off[self._region_docs[name]] = False
            mult *= np.where(off, 1.0 - self.region_penalty, 1.0)
        if context_slots:
            for i in range(self.n):
                req, prov = self._requires[i], self._provides[i]
                if req and req <= context_slots:
                    mult[i] *= 1.0 + self.context_boost
                if prov and prov <= context_slots:
                    mult[i] *= 1.0 - self.context_boost
        return mult

    def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        filters: dict | None = None,
        context_slots: frozenset[str] = frozenset(),
    ) -> list[Candidate]:
        """Best first; ``[]`` when nothing fits (abstain). Raises :class:`UnknownFilter`."""
        mask = self._mask(filters)
        if top_k <= 0 or not query.strip():
            return []
        m = self.match(self.query_terms(query))
        text, cov = m.scores, m.coverage
        final = text * self.signals(query, frozenset(context_slots))
        if self.dense is not None:
            final, cov = self.dense.fuse(query, final, cov)
        if mask is not None:
            final = np.where(mask, final, 0.0)
        best = int(np.argmax(final))
        place_cue = self.place_lookup and m.unknown_share > 0 and PLACE_LOOKUP_CUE.search(query) is not None
        fits = final[best] > 0 and self.fits(self._coverage(best, cov, m, place_cue), float(m.evidence[best]))
        if not fits:
            place = self._place_slot if mask is None else self._place_slot & mask
            if not (place_cue and m.unknown_share >= 0.5 and place.any()):
                return []
            # Nothing fits, and the request is mostly a name nobody indexed, asked where it is
            # (스타벅스 서면점 어딨어, where is Gamcheon Culture Village): only a lookup that takes
            # a free-text place can answer, so those adapters go first, in their own order.
            final = np.where(place, final.max() * (1.0 + self.intent_boost) + final + 1e-3, final)
        order = [i for i in self._top(final, top_k) if final[i] > 0]
        return [self._candidate(i, float(final[i]), float(cov[i]), float(text[i])) for i in order]

    def _coverage(self, i: int, cov: np.ndarray, m: Match, place_cue: bool) -> float:
        """Coverage of the request by document ``i``; for a free-text place lookup asked where
        something is, the unknown words are the place's name and do not count against it."""
        if place_cue and self._place_slot[i] and m.unknown_share < 1.0:
            return float(cov[i]) / (1.0 - m.unknown_share)
        return float(cov[i])

    def fits(self, coverage: float, text_score: float) -> bool:
        """The abstention rule: enough of the request covered, or strong text evidence."""
        return coverage >= self.abstain_coverage or text_score / self.idf_scale >= self.abstain_text

    def _top(self, scores: np.ndarray, k: int) -> list[int]:
        k = min(k, self.n)
        if k == 0:
            return []
        if self.n > 4 * k:
            part = np.argpartition(-scores, k - 1)[:k]
        else:
            part = np.arange(self.n)
        # stable: score desc, then documents.json order (adapter id)
        return sorted(part.tolist(), key=lambda i: (-scores[i], i))[:k]

    def _candidate(self, i: int, score: float, cov: float, text: float) -> Candidate:
        d = self.docs[i]
        return Candidate(
            adapter_id=d["id"],
            primitive=d["primitive"],
            tier=d["tier"],
            score=round(score, 6),
            domain=d["domain"],
            agency=d["agency"]["code"],
            coverage=round(cov, 4),
            text_score=round(text, 6),
        )

    # -- the Whoosh path (index of record; used to verify the compiled view) ----------------------

    def whoosh_search(self, query: str, *, limit: int = 10) -> list[tuple[str, float]]:
        """Text-only ranking straight from the Whoosh searcher (reused across calls)."""
        from whoosh import index as windex
        from whoosh.query import Or, Term

        from .index import FAMILIES, FIELDS, field_name, weighting

        if self._whoosh is None:
            ix = windex.open_dir(str(self.folder))
            self._whoosh = ix.searcher(weighting=weighting(self.config))
        subqueries = []
        for key, qtf in sorted(self.query_terms(query).items()):
            fam, text = key[0], key[2:]
            for field in FIELDS:
                if fam in FAMILIES:
                    w = self.config.weight(field, fam) * qtf
                    subqueries.append(Term(field_name(field, fam), text, boost=w))
        if not subqueries:
            return []
        hits = self._whoosh.search(Or(subqueries), limit=limit)
        return [(h["id"], float(h.score)) for h in hits]

    def close(self) -> None:
        if self._whoosh is not None:
            self._whoosh.close()
            self._whoosh = None
