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
question (registry/_vocab/retrieval_words.yaml). One fallback: when nothing fits but the request asks *where* something is and is mostly
words no adapter knows, it is a named-place lookup, and the ``locate`` adapters that take a
free-text ``place`` go first. Thresholds were tuned on the eval set's tune split only
(evals/README.md).
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from pydantic import BaseModel

from ummaya.model.analysis import _RUN, Segmenter, _en_words, grams
from ummaya.model.intent_cues import INTENT_CUES

from .doc_table import DocTable
from .counter_examples import AGAINST_NOTHING, EXAMPLES_FILE, CounterExamples
from .index import TABLE_FILE, Compiled, IndexConfig, ensure_index

if TYPE_CHECKING:  # whoosh is imported on the first whoosh_search, not on import
    from whoosh.searching import Searcher


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


_HANGUL_RUN = re.compile(r"[가-힣]+")
# The Revised Romanization writes an administrative unit after a hyphen (Haeundae-gu, Seo-gu,
# Gyeonggi-do, Sinnae-dong, Jongno 1-ga): grammar of the romanization, not a list of places. Such a
# word is a district named in English, an argument like 사하구 (:meth:`Retriever.argument_terms`).
# The unit itself (gu, dong) says only that a district is named, as the hyphen does: it is no word
# of any topic, and ranks nothing (an adapter whose English examples say 「Saha-gu」 is no better
# an answer to 「the ER in Yeonje-gu」).
_ROMANIZED_UNIT = re.compile(r"\b[a-z0-9]+-(do|si|gun|gu|eup|myeon|ri|dong|ga)\b", re.I)
_LATIN_WORD = re.compile(r"[a-z0-9]+")
# A number's unit is part of the value, as the number is, when the vocabulary says it is a value's
# unit (retrieval_words.yaml value_units: 2024년, 3곳): an adapter whose summary says 「2021년
# 자료부터」 is no better an answer to 「2024년 … 교통사고 다발지역」 for it.
_NUMBER_UNIT = re.compile(r"\d([가-힣]+)")
_WORD_RUN = _RUN


def _domain_spread(c: Compiled, domain: np.ndarray) -> np.ndarray:
    """Per term key, the number of distinct domains among the documents that hold it."""
    codes = np.unique(domain, return_inverse=True)[1].astype(np.int64)
    width = int(codes.max()) + 1 if len(codes) else 1
    key_of = np.repeat(np.arange(len(c.offsets) - 1, dtype=np.int64), np.diff(c.offsets))
    pairs = np.unique(key_of * width + codes[c.docs])
    return np.bincount(pairs // width, minlength=len(c.offsets) - 1)


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


# The action cues (신청, 신고, 납부, 확인 …) say what to do, never about what: like the location cues
# they are carried by the intent signal, and a request is not "covered" because an adapter also
# says 신청 (정화조 청소 신청하고 싶어). They rank, and are otherwise neutral (:meth:`cue_terms`).
ACTION_PRIMITIVES = frozenset({"send", "check"})
# "Where is <name>": a request that asks where something is, around a name the catalog has never
# seen (다이소, Gamcheon Culture Village), is a named-place lookup. For a ``locate`` adapter that
# takes a free-text ``place`` slot, the unknown words are that slot's value, not an unserved topic,
# so they do not count against its coverage. 어디서 (where to do something: 어디서 사, 어디서 하는 게
# 싸) and 어디가 (which place is best: 어디가 좋아) ask for a recommendation, not where a named place
# is, so they are no such cue.
PLACE_LOOKUP_CUE = re.compile(r"어디(?![서가])|어딨|어딘|위치|\b(where|location|locate)\b", re.I)
# Words that are the shape of a request, never its topic, are registry vocabulary
# (registry/_vocab/retrieval_words.yaml): location cues (근처, where) are carried by the intent
# signal, and time and quantity deixis (지금, 오늘, 언제, 얼마, 몇 …) belongs to every kind of question
# (「비트코인 지금 얼마」 is not about weather). They still rank (지금 날씨 prefers the nowcast) but are
# no evidence that anything fits: they count neither for coverage nor for the text score the
# abstention reads. English counterparts are already stop words (now, when, how …) except the ones
# the vocabulary lists.
RETRIEVAL_WORDS = "retrieval_words"


def _terms(words: frozenset[str], families: str) -> frozenset[str]:
    return frozenset(f"{family}:{g}" for family in families for w in words for g in grams(w))


def location_cues() -> frozenset[str]:
    """Gram terms of the vocabulary's location cues: neutral for coverage (the intent signal
    carries them)."""
    from ummaya.runtime.understand import vocab

    return _terms(vocab.words(RETRIEVAL_WORDS, "location_cues"), "g")


@functools.cache
def value_units() -> frozenset[str]:
    """The units that make a number's word a value (``value_units``): left out with the number."""
    from ummaya.runtime.understand import vocab

    return vocab.words(RETRIEVAL_WORDS, "value_units")


def deixis() -> frozenset[str]:
    """Terms (both families) of the vocabulary's time and quantity deixis, and of the words that
    say what is asked of the answer (``asks``: 추천)."""
    from ummaya.runtime.understand import vocab

    return _terms(vocab.words(RETRIEVAL_WORDS, "deixis") | vocab.words(RETRIEVAL_WORDS, "asks"), "gm")
# The calendar vocabulary's relative time words (registry/_vocab/calendar.yaml: days, weeks,
# relative months and years, now — 이번 달, 지난주, 내년) are deixis too: 「수도요금 이번 달 얼마야」
# is not about the health-insurance premium because its examples say 이번 달. Weekdays, months and
# times of day are left out: 점심 and 주말 can be what an adapter is about (급식, 주말 약국).
CALENDAR_DEIXIS = ("days", "weeks", "relative_months", "relative_years", "now")


def calendar_deixis() -> frozenset[str]:
    """Terms of the calendar vocabulary's relative time words (``CALENDAR_DEIXIS``)."""
    from ummaya.runtime.understand import vocab

    cal = vocab.calendar()
    words = {w for cls in CALENDAR_DEIXIS for phrase in cal.get(cls, ()) for w in str(phrase).lower().split()}
    return _terms(frozenset(words), "gm")
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


# A candidate that one of its own negative examples redirects (:meth:`Retriever.redirect`) scores
# this share of the adapter the example belongs to: just behind it, still a candidate.
REDIRECT_SHARE = 0.95
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
        whole_words: bool = True,
        generic_domains: int = 0,
        refute_top: int = 3,
        catalog: Any = None,
        refute_floor: float = 0.4,
        evidence_words: int = 2,
        word_floor: float = 0.3,
        district_arguments: bool = True,
        named_service: float = 0.4,
        runnable: bool = True,
        numbers_are_values: bool = True,
        district_boost: float = 0.1,
        example_fit: float = 0.5,
        fit_depth: int = 3,
        fit_coverage: float = 0.6,
    ):
        parsed: list[list[dict[str, Any]]] = []

        def docs() -> list[dict[str, Any]]:
            # Parsed only when something must be built from the documents; never kept.
            if not parsed:
                parsed.append(json.loads(documents)["documents"])
            return parsed[0]

        self.config = config or IndexConfig.make()
        self.folder = ensure_index(documents, docs, self.config, generated, cache_dir)
        self.compiled = Compiled.load(self.folder / "compiled.npz")
        table = DocTable.load(self.folder / TABLE_FILE)
        if table is None:  # an index cached before the table existed
            table = DocTable.from_documents(docs())
            try:
                DocTable.save_columns(docs(), self.folder / TABLE_FILE)
            except OSError:
                pass
        self.table = table
        examples = CounterExamples.load(self.folder / EXAMPLES_FILE)
        if examples is None or len(examples.doc_offsets) != table.n + 1:
            examples = CounterExamples.from_documents(docs())
            try:
                examples.save(self.folder / EXAMPLES_FILE)
            except OSError:
                pass
        self.examples = examples
        # Counter-examples are read for this many of the best candidates; a candidate is refuted
        # when the request is at least refute_floor close to one of its negative examples and
        # closer to it than to anything the adapter says of itself.
        self.refute_top = refute_top
        self.refute_floor = refute_floor
        # The text path of the abstention wants evidence from at least evidence_words of the
        # request's words, each worth word_floor (units of ln N + 1): one word shared with a
        # document is a coincidence of everyday language (영어 이메일 다듬어줘, 다이어트 식단 짜줘,
        # 생일 축하 문자 써줘); a paraphrase that fits says two things the adapter says. 1 (or 0)
        # switches the rule off. Chosen on the tune split (evals/README.md).
        self.evidence_words = evidence_words
        self.word_floor = word_floor
        self.district_arguments = district_arguments
        # A handoff only points to an official channel and a send adapter files something in the
        # citizen's name: neither is a near answer to a request on a neighbouring topic (자동차
        # 보험 비교해줘 is no health-insurance premium, 자동차 이전등록 no move-in report). Such a
        # candidate whose coverage is under ``named_service`` fits only when the request names its
        # service (:meth:`names_service`); one that covers more of the request is named by it in
        # other words. 0 switches the rule off. Tune is flat from 0.4 to 1.0; 0.4 is the least that
        # does the work (evals/README.md).
        self.named_service = named_service
        self.runnable = runnable
        # A number in a request is a value (route 1001, 58번, 2023, 3곳), an argument the slot
        # readers take, not a topic: an adapter whose example happens to say 「1001번 버스」 is no
        # better an answer to 「1001번 버스 언제 와?」 than its neighbour whose example says 58-1.
        # Such terms neither rank nor count for coverage. A number an adapter's title holds
        # (119, 정부24, PM10) names a service and stays a word. False switches the rule off.
        self.numbers_are_values = numbers_are_values
        # A request that names a district (사하구, Haeundae-gu) gives a where-slot (a district, a
        # province, coordinates through a locate step): the adapters that require one are scored
        # (1 + district_boost), as a session that already knows a slot does (context_boost), so
        # the local-welfare search leads the national catalogue for 「동래구는 뭐가 있어」. 0 switches
        # the rule off.
        self.district_boost = district_boost
        # A request at least this close (the counter-examples' cosine of IDF-weighted bigram sets)
        # to one of the best candidate's own sentences, sharing words of at least evidence_words
        # of the request's words with it, fits whatever its coverage: 「하단동 튼튼정형외과에 MRI
        # 있어?」 is the equipment lookup's own 「동네 정형외과에 MRI 있는 곳」 around a clinic's name
        # the index cannot know. One word in common with a one-word hint (빨래, 바우처) stays the
        # coincidence the two-word rule is for. Flat from 0.4 to 0.5 on the tune split
        # (evals/README.md). 0 switches the rule off.
        self.example_fit = example_fit
        # When the best candidate does not fit, a runner-up among the best fit_depth that covers
        # at least fit_coverage of the request (twice the abstention's bar) and fits on its own
        # answers instead: among look-alikes the leader can rank on words that are no evidence.
        # Neutral on the real registry's eval set; at 1,000 adapters +2 held-out answers, −1
        # out-of-scope abstention (bench/README.md). 1 switches the rule off.
        self.fit_depth = fit_depth
        self.fit_coverage = fit_coverage
        self._where: np.ndarray | None = None
        self._title_numbers = frozenset(re.findall(r"\d+", " ".join(table.titles)))
        # The release's catalog when the caller has it loaded already (an engine, a served
        # release): loading 3 MB of manifests a second time was a third of a cold `ummaya ask`.
        self._catalog_cache: Any = catalog
        self.generated = generated
        self._intent_words: tuple[str, ...] | None = None
        self._districts: tuple[frozenset[str], tuple[str, ...]] | None = None
        self.n = table.n
        self.ids = table.ids
        self.kiwi_query = kiwi_query
        self.intent_boost = intent_boost
        self.context_boost = context_boost
        self.abstain_coverage = abstain_coverage
        self.abstain_text = abstain_text
        self._existence: tuple[frozenset[str], frozenset[str]] | None = None
        self._facility_kinds: tuple[str, ...] | None = None
        self._facility_suffixes: dict[str, tuple[str, ...]] = {}
        self._stems: tuple[str, dict[str, str]] = ("", {})
        self._last_example_query: tuple[str, tuple[np.ndarray, np.ndarray, float]] | None = None
        # Switches for the ablation (bench/analyzers.py); the defaults are the tuned behaviour.
        self.deixis = deixis()
        self.no_evidence = location_cues() | (frozenset() if deixis_is_evidence else self.deixis | calendar_deixis())
        # The Korean deixis words themselves (two syllables or more), longest first, for the
        # bigram their ending makes with them (:meth:`shape_tails`). Location cues are left out:
        # 어디로 and 근처에 say where, which the intent signal reads and the place lookup keys on.
        self._shape_words: dict[str, tuple[str, ...]] = {}
        for w in sorted({t[2:] for t in self.no_evidence - location_cues()
                         if t[0] == "g" and len(t) > 3 and "가" <= t[2] <= "힣"}, key=len, reverse=True):
            self._shape_words[w[0]] = (*self._shape_words.get(w[0], ()), w)
        self.place_lookup = place_lookup
        # BM25 scores grow with ln N through IDF; the text threshold is in units of ln N + 1 so
        # it means the same at 26 and at 10,000 adapters.
        self.idf_scale = float(np.log(max(self.n, 1)) + 1.0)
        self.segment = Segmenter(k[2:] for k in self.compiled.keys if k.startswith("m:"))
        self.whole_words = whole_words
        # Terms found in documents of at least this many domains are everyday words (신청, 어떻게,
        # where): they rank but are no evidence that anything fits. 0 switches the rule off.
        self.generic_domains = generic_domains
        self._spread = _domain_spread(self.compiled, self.table.domain) if generic_domains else None
        self.primitive = table.primitive
        self.tier = table.tier
        self.domain = table.domain
        self.agency = table.agency
        self._prim_mask = {p: self.primitive == p for p in set(self.primitive.tolist())}
        self.tier_prior = np.array([TIER_PRIOR.get(t, 1.0) for t in self.tier], dtype=np.float32)
        self._place_slot = table.place_slot
        self.region_penalty = region_penalty
        regions = [agency_regions(name) for name in table.agency_ko]
        self._regional = np.array([bool(r) for r in regions], dtype=bool)
        keys = sorted({k for r in regions for k in r}, key=len, reverse=True)
        self._region_re = re.compile("|".join(map(re.escape, keys))) if keys else None
        by_region: dict[str, list[int]] = {}
        for i, names in enumerate(regions):
            for k in names:
                by_region.setdefault(k, []).append(i)
        self._region_docs = {k: np.array(v, dtype=np.int64) for k, v in by_region.items()}
        self._agency_names: np.ndarray | None = None  # (n, 3) agency keys, built on first use
        self._whoosh: Searcher | None = None
        self.dense = None
        if dense:
            from .dense import DenseIndex

            self.dense = DenseIndex.load_or_build(self.folder, docs())

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

    def analyse(self, query: str) -> tuple[Counter[str], frozenset[str]]:
        """The request's terms, and those of them that come only from words the index does not
        know whole (:meth:`Segmenter.is_whole`): those rank, but are no evidence that anything
        fits. One pass over the request's words."""
        if self.kiwi_query:
            return self.query_terms(query), self.partial_terms(query)
        terms: Counter[str] = Counter()
        whole: set[str] = set()
        partial: set[str] = set()
        keys = self.compiled.keys
        for m in _WORD_RUN.finditer(query):
            run = m.group(0)
            g = [f"g:{t}" for t in grams(run)]
            if not ("가" <= run[0] <= "힣"):
                terms.update(g)
                terms.update(f"m:{t}" for t in _en_words(run))
                continue
            pieces, left = self.segment._pieces(run)
            ms = [f"m:{t}" for t in pieces]
            terms.update(g)
            terms.update(ms)
            if not self.whole_words:
                continue
            # Whole when the segmenter finds it whole, or when every bigram of it is indexed (the
            # segmenter's longest match can miss a word Kiwi kept in one piece: 제세동기).
            ok = len(run) < 2 or all(t in keys for t in g) or self.segment.whole_from(run, pieces, left)
            (whole if ok else partial).update(g)
            (whole if ok else partial).update(ms)
        return terms, frozenset(partial - whole)

    def shape_tails(self, query: str) -> frozenset[str]:
        """The bigram a deixis word (retrieval_words: 추천, 지금, 이번 …) makes with the particle or
        ending glued to it (추천해줘 → 천해, 지금은 → 금은): as much the shape of the request as the
        word, so no evidence either — it made 「고양이 이름 추천해줘」 a third covered by the tour
        search's 「추천해줘」. Not when the index knows a longer word at its start (내일배움카드) or
        a word in the rest of it: then it is a compound, a topic."""
        out: set[str] = set()
        for m in _HANGUL_RUN.finditer(query):
            run = m.group(0)
            for w in self._shape_words.get(run[0], ()):
                if len(run) > len(w) and run.startswith(w):
                    whole, _ = self.segment._pieces(run)
                    rest, _ = self.segment._pieces(run[len(w):])
                    if not (whole and len(whole[0]) > len(w)) and not any(len(p) > 1 for p in rest):
                        out.add(f"g:{run[len(w) - 1:len(w) + 1]}")
                    break
        return frozenset(out)

    def argument_terms(self, query: str) -> frozenset[str]:
        """Terms of the request's words that name a district (신내동, 광안리, 사하구): a place the
        registry's place vocabulary knows (registry/_vocab) that carries an administrative suffix
        (place_words.admin_suffixes). Such a word is an argument — where — not a topic: it ranks,
        but counts neither for nor against coverage and is no evidence. A bare name that is also an
        everyday word (경기, 서면) is not read so; the regional signal reads it."""
        if not self.district_arguments:
            return frozenset()
        out: set[str] = set()
        for unit in _ROMANIZED_UNIT.finditer(query):
            out.update(f"g:{t}" for t in grams(unit.group(0)))
            out.update(f"m:{t}" for t in _en_words(unit.group(0)))
        places, suffixes = self._district_vocab()
        from ummaya.runtime.understand.dates import names_month, names_time
        from ummaya.runtime.understand.grammar import LOCATIVE, split_particle, strip_particle

        def argument(w: str) -> None:
            out.update(f"g:{t}" for t in grams(w))
            out.update(f"m:{t}" for t in self.segment(w))

        runs = [m.group(0) for m in _HANGUL_RUN.finditer(query)]
        existence, people = self._existence_words()
        keys = self.compiled.keys
        for k, w in enumerate(runs):
            stem = self._stem(query, w)  # 「둔산동에서」 names 둔산동
            if not any(f"g:{t}" in keys for t in grams(stem)) and names_month(stem):
                # A month in words no adapter's text holds (구월, 시월) is a value the month reader
                # sends — when — not an unknown topic word held against coverage. Deixis (오늘)
                # is neutral already and stays out.
                argument(w)
            for name in {w, stem}:
                if name in places and any(name.endswith(x) and len(name) > len(x) + 1 for x in suffixes):
                    argument(w)
            if (w in existence and k > 0 and split_particle(runs[k - 1])[1] in LOCATIVE
                    and not names_time(strip_particle(runs[k - 1]))):
                # Being somewhere (「광장시장에 계신데요」, function_words.existence): the word before,
                # marked as a place (에, 에서), is where, an argument whatever it names, and the verb
                # says nothing of the topic either. Without that particle the clause is not about a
                # place (「의식이 없어」, 「물에 빠졌다 나왔는데」): its words stay the topic; nor with a
                # word that says when (「구월에 연휴 있어?」: 에 of time, the calendar vocabulary).
                argument(w)
                argument(runs[k - 1])
                # ... and who is there (「어머니가 지금 광장시장에 계신데요」) is its subject, not a
                # topic: the person words of the same clause before it.
                for before in reversed(runs[max(0, k - 4): max(0, k - 1)]):
                    if strip_particle(before) in people:
                        argument(before)
        return frozenset(out)

    def _where_mask(self) -> np.ndarray:
        """Per document, whether one of its required inputs says where (the slot table's ``where``
        facet: a district, a province, coordinates); none without a generated slot table."""
        if self._where is None:
            try:
                from ummaya.runtime.understand import table as slot_table

                where = slot_table.names_with("where")
            except Exception:  # a folder without a slot table names no where-slot
                where = frozenset()
            self._where = np.array([bool(where.intersection(s)) for s in self.table.input_slots], dtype=bool)
        return self._where

    def names_district(self, query: str) -> bool:
        """Whether the request names a district (:meth:`argument_terms`' districts: a known place
        with an administrative suffix, or a romanized one)."""
        if not self.district_arguments:
            return False
        if _ROMANIZED_UNIT.search(query):
            return True
        places, suffixes = self._district_vocab()
        for m in _HANGUL_RUN.finditer(query):
            w = m.group(0)
            for name in {w, self._stem(query, w)}:
                if name in places and any(name.endswith(x) and len(name) > len(x) + 1 for x in suffixes):
                    return True
        return False

    def _stem(self, query: str, word: str) -> str:
        """``strip_particle`` against the place vocabulary, once per word of a request (the
        district terms and the district signal both read it; the last request's are kept)."""
        q, memo = self._stems
        if q != query:
            memo = {}
            self._stems = (query, memo)
        stem = memo.get(word)
        if stem is None:
            from ummaya.runtime.understand.grammar import strip_particle

            stem = memo[word] = strip_particle(word, known=self._district_vocab()[0])
        return stem

    def _district_vocab(self) -> tuple[frozenset[str], tuple[str, ...]]:
        if self._districts is None:
            from ummaya.runtime.understand import vocab
            from ummaya.runtime.understand.places import known_places

            suffixes = tuple(sorted(vocab.words("place_words", "admin_suffixes"), key=len, reverse=True))
            self._districts = (known_places(), suffixes)
        return self._districts

    def named_facility(self, query: str) -> tuple[frozenset[str], str] | None:
        """A facility the request names by its own name, glued to the kind's suffix
        (registry/_vocab/facility_names.yaml: 행복약국, 새봄약국): the terms of the name's head and
        the suffix. The head is a name when no adapter about that kind (its text holds the suffix)
        knows it, other than those that search by name: 심야 of 심야약국 is what the nearby-pharmacy
        adapters say of themselves, a kind of pharmacy, not a name."""
        if self._facility_kinds is None:
            from ummaya.runtime.understand import vocab

            try:
                classes = vocab.load("facility_names").get("words") or {}
            except Exception:  # a registry without the vocabulary names no facility
                classes = {}
            self._facility_kinds = tuple(k[: -len("_suffixes")] for k in classes if k.endswith("_suffixes"))
        if not self._facility_kinds:
            return None
        from ummaya.runtime.understand import vocab
        from ummaya.runtime.understand.facilities import facility_in

        for kind in self._facility_kinds:
            if kind not in self._facility_suffixes:
                self._facility_suffixes[kind] = tuple(vocab.words("facility_names", f"{kind}_suffixes"))
            if not any(x in query for x in self._facility_suffixes[kind]):
                continue  # the name must end with the kind's suffix as the citizen wrote it (below)
            name = (facility_in(query, kind) or "").split(" ")[-1]  # 「종로 행복약국」: the glued name
            if name not in query:
                continue  # a short form read out (전입신고 → 전입신고등학교) is no name the citizen wrote
            suffix = max((x for x in vocab.words("facility_names", f"{kind}_suffixes") if name.endswith(x)),
                         key=len, default="")
            head = name[: len(name) - len(suffix)]
            if not suffix or len(head) < 2 or not all("가" <= ch <= "힣" for ch in head):
                continue
            keys = {f"g:{t}" for t in grams(head)} | {f"m:{t}" for t in self.segment(head)}
            kind_docs = self.compiled.postings(f"m:{suffix}") or self.compiled.postings(f"g:{suffix[:2]}")
            about = {int(j) for j in kind_docs[0]} if kind_docs is not None else set()
            known = [p for k in keys if not self._is_generic(k) and (p := self.compiled.postings(k)) is not None]
            if any(int(j) in about and not self.table.name_slot[int(j)] for p in known for j in p[0]):
                continue  # an adapter about that kind says the head of itself (심야 약국)
            return frozenset(keys | {f"g:{t}" for t in grams(head[-1] + suffix[0])}), suffix
        return None

    def prefer_name_search(self, final: np.ndarray, order: list[int],
                           suffix: str) -> tuple[np.ndarray, list[int], set[int]]:
        """A request naming one facility (행복약국) asks for that facility: the ranked adapters that
        search such facilities by name (a required search word, the suffix in their title) go
        first, unless a by-name search leads already. Only among the ranked: a name never brings in an adapter retrieval did not find."""
        hit = [i for i in order if final[i] > 0 and self.table.name_slot[i] and suffix in self.table.titles[i]]
        if not hit:
            return final, order, set()
        if self.table.name_slot[order[0]]:
            return final, order, set(hit)  # a by-name search leads already: its own words decide
        final = final.copy()
        top = float(final[order[0]])
        for i in hit:
            final[i] = top * (1.0 + self.intent_boost) + final[i]
        return final, sorted(order, key=lambda i: (-final[i], i)), set(hit)

    def _existence_words(self) -> tuple[frozenset[str], frozenset[str]]:
        """The function-word vocabulary's verbs of being somewhere and its people words
        (registry/_vocab/function_words.yaml)."""
        if self._existence is None:
            from ummaya.runtime.understand import vocab

            try:
                self._existence = (vocab.fw("existence"), vocab.fw("people"))
            except Exception:  # a registry without the vocabulary reads no such verb
                self._existence = (frozenset(), frozenset())
        return self._existence

    def cue_terms(self, query: str) -> frozenset[str]:
        """Terms of the request's action cues: ``ACTION_PRIMITIVES``' patterns in INTENT_CUES, and
        the words of the registry's intents that UMMAYA cannot carry out itself
        (registry/_intents/ with a ``cannot``: 예약, 연장, 변경 …). Those say what the citizen
        wants done, not about what: 「헌혈 예약하고 싶어」 is no hospital search because hospital
        examples say 예약. An intent word some adapter's title uses names that service as well
        (지원 in 청년 월세 지원, 발급 in a certificate's title) and stays evidence."""
        out: set[str] = set()
        spans = [m.group(0) for pattern, prims in INTENT_CUES if ACTION_PRIMITIVES.intersection(prims)
                 for m in pattern.finditer(query)]
        folded = query.lower()
        spaced = f" {' '.join(_LATIN_WORD.findall(folded))} "
        words = self.intent_words()
        single = {w for w in words if " " not in w}
        for w in words:
            if (w in folded) if "가" <= w[0] <= "힣" else (f" {w} " in spaced):
                # Of a phrase (진료 예약, ticket booking) only the action is a cue: 진료 still says
                # what the citizen wants booked, so it stays evidence for the hospital search.
                parts = w.split()
                spans.extend(parts if len(parts) == 1 else [p for p in parts if p in single])
        for span in spans:
            out.update(f"g:{t}" for t in grams(span))
            out.update(f"m:{t}" for t in self.segment(span))
        return frozenset(out)

    def intent_words(self) -> tuple[str, ...]:
        """Words of the registry's intents that have a ``cannot`` (generated/guidance.json) and that
        no adapter's title uses, read once; none when the generated folder has no guidance."""
        if self._intent_words is None:
            from ..guidance_reader import Guidance
            from ..understand.table import SlotTableMissing, folder

            try:
                g = Guidance.load(self.generated or folder())
            except (SlotTableMissing, ValueError):
                g = Guidance()
            titles = "\n".join(self.table.titles)
            words = {w.lower() for i in g.intents if i.cannot is not None for w in i.words.all()
                     if w.strip() and w.lower() not in titles}
            self._intent_words = tuple(sorted(words, key=len, reverse=True))
        return self._intent_words

    def partial_terms(self, query: str) -> frozenset[str]:
        """See :meth:`analyse`."""
        if not self.whole_words:
            return frozenset()
        whole: set[str] = set()
        partial: set[str] = set()
        for m in _HANGUL_RUN.finditer(query):
            run = m.group(0)
            terms = {f"g:{t}" for t in grams(run)} | {f"m:{t}" for t in self.segment(run)}
            known = all(t in self.compiled.keys for t in terms if t[0] == "g")
            (whole if len(run) < 2 or known or self.segment.is_whole(run) else partial).update(terms)
        return frozenset(partial - whole)

    def query_terms(self, query: str) -> Counter[str]:
        terms: Counter[str] = Counter(f"g:{t}" for t in grams(query))
        if self.kiwi_query:
            from ummaya.model.analysis import morphs

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
                mask &= np.isin(self._agency_keys(), [str(v).lower() for v in values]).any(axis=1)
                continue
            mask &= np.isin(column, values)
        return mask

    # -- scoring --------------------------------------------------------------------------------

    def text_scores(self, terms: Counter[str]) -> tuple[np.ndarray, np.ndarray]:
        """(BM25F score per document, coverage per document)."""
        m = self.match(terms)
        return m.scores, m.coverage

    def match(self, terms: Counter[str], partial: frozenset[str] = frozenset(),
              arguments: frozenset[str] = frozenset(), values: frozenset[str] = frozenset()) -> Match:
        """Score every document against the request's terms, with what the abstention reads.
        ``partial``: terms of words the index does not know whole — they rank, count against
        coverage like an unknown word, and are no evidence. ``arguments``: terms of words that are
        a request's arguments (:meth:`argument_terms`) — they rank and are otherwise neutral.
        ``values``: terms of the request's values (numbers, ``numbers_are_values``) — left out."""
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
            if key in values:
                continue
            p = c.postings(key)
            neutral = key in self.no_evidence or key in arguments
            if p is not None and not neutral and (key in partial or self._is_generic(key)):
                d_parts.append(p[0])
                w = p[1] * qtf if qtf != 1 else p[1]
                w_parts.append(w)
                n_parts.append(p[0])
                nw_parts.append(w)
                if key[0] == "g":
                    total += float(c.idf_any[c.keys[key]])
                continue
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

    def _is_generic(self, key: str) -> bool:
        return self._spread is not None and self._spread[self.compiled.keys[key]] >= self.generic_domains

    def signals(self, query: str, context_slots: frozenset[str], district: bool = False) -> np.ndarray:
        mult = self.tier_prior.copy()
        if district and self.district_boost:
            mult *= np.where(self._where_mask(), 1.0 + self.district_boost, 1.0)
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
            # One step per distinct declared slot set (a handful), never per adapter.
            for slots, idx in self.table.requires.items():
                if slots <= context_slots:
                    mult[idx] *= 1.0 + self.context_boost
            for slots, idx in self.table.provides.items():
                if slots <= context_slots:
                    mult[idx] *= 1.0 - self.context_boost
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
        places = self.argument_terms(query)
        arguments = places | self.cue_terms(query) | self.shape_tails(query)
        named = self.named_facility(query)
        if named is not None:
            arguments |= named[0]
        terms, partial = self.analyse(query)
        values = frozenset(k for k in terms if k[2:].isdigit() and k[2:] not in self._title_numbers) \
            if self.numbers_are_values else frozenset()
        if self.numbers_are_values:
            from ummaya.runtime.understand.grammar import split_particle

            units = value_units()  # the unit with its particle, as the gram is: 2024년에, 3곳만
            values |= {f"g:{u.group(1)}" for u in _NUMBER_UNIT.finditer(query)
                       if split_particle(u.group(1), min_stem=1)[0] in units}
        if self.district_arguments:
            values |= {f"{family}:{unit.group(1).lower()}" for unit in _ROMANIZED_UNIT.finditer(query) for family in "gm"}
        m = self.match(terms, partial, arguments, values)
        text, cov = m.scores, m.coverage
        final = text * self.signals(query, frozenset(context_slots), self.names_district(query))
        if self.dense is not None:
            final, cov = self.dense.fuse(query, final, cov)
        if mask is not None:
            final = np.where(mask, final, 0.0)
        # One partial sort serves the refutation and the answer (a refuted candidate's place is
        # taken by the next one, so a few more than top_k are kept).
        order = self._top(final, top_k + self.refute_top)
        by_name: set[int] = set()
        if named is not None:
            final, order, by_name = self.prefer_name_search(final, order, named[1])
        if self.refute_top:
            final = self.refute(query, final, order[: self.refute_top])
            final = self.redirect(query, final, order[: self.refute_top], order, places)
            order = sorted((i for i in order if final[i] > 0), key=lambda i: (-final[i], i))
        best = order[0] if order else 0
        place_cue = self.place_lookup and m.unknown_share > 0 and PLACE_LOOKUP_CUE.search(query) is not None

        def candidate_fits(i: int) -> bool:
            # A follow-up whose context already fills what the candidate requires (거기 지금 기온은?)
            # says its topic in one word: the two-word rule is for requests that stand alone.
            follow_up = bool(context_slots) and self._context_fills(i, frozenset(context_slots))
            ok = final[i] > 0 and self.fits(
                self._coverage(i, cov, m, place_cue), float(m.evidence[i]),
                None if follow_up else (lambda: self.word_evidence(query, i, arguments)),
            )
            # A facility named by its own name (행복약국) is what an adapter that searches that kind
            # by name is for, however few other words the request has.
            ok = ok or (i in by_name and final[i] > 0)
            if not ok and self.example_fit and final[i] > 0:
                ok = self.close_to_own_sentence(query, i)
            if (ok and self.named_service and not follow_up and float(cov[i]) < self.named_service
                    and not self.names_service(query, i)):
                ok = False
            return ok

        fits = candidate_fits(best)
        if not fits and self.fit_depth > 1:
            # The best candidate can lead on words that are no evidence (이번 주말 for the festivals
            # among look-alikes that share them) while the next one covers the request (우산 챙겨야
            # for the forecast): a runner-up that covers most of the request and fits on its own
            # answers, moved to the front; the others keep their order behind it.
            for i in order[1:self.fit_depth]:
                if float(cov[i]) >= self.fit_coverage and candidate_fits(i):
                    order = [i] + [j for j in order if j != i]
                    final = final.copy()
                    final[i] = final[best] * (1.0 + 1e-6)
                    best, fits = i, True
                    break
        if not fits:
            place = self._place_slot if mask is None else self._place_slot & mask
            if not (place_cue and m.unknown_share >= 0.5 and place.any()):
                return []
            # Nothing fits, and the request is mostly a name nobody indexed, asked where it is
            # (스타벅스 서면점 어딨어, where is Gamcheon Culture Village): only a lookup that takes
            # a free-text place can answer, so those adapters go first, in their own order.
            final = np.where(place, final.max() * (1.0 + self.intent_boost) + final + 1e-3, final)
            order = self._top(final, top_k)
        order = [i for i in order[:top_k] if final[i] > 0]
        order, final = self.prefer_runnable(query, final, order, frozenset(context_slots))
        return [self._candidate(i, float(final[i]), float(cov[i]), float(text[i])) for i in order]

    def _catalog(self) -> Any:
        """The release's catalog (manifests' inputs), loaded once; None without a generated/ folder."""
        if self._catalog_cache is None:
            cat: Any = False
            if self.generated is not None and (Path(self.generated) / "catalog.json").exists():
                try:
                    from ..catalog import Catalog

                    cat = Catalog.load(Path(self.generated))
                except Exception:  # a catalog that does not load leaves the ranking as it is
                    cat = False
            self._catalog_cache = cat
        return self._catalog_cache or None

    def prefer_runnable(self, query: str, final: np.ndarray, order: list[int],
                        context_slots: frozenset[str]) -> tuple[list[int], np.ndarray]:
        """A candidate lacking a required input that neither the request, the session nor a locate
        step can give scores ``RUNNABLE_TIE`` of itself when a sibling of the same primitive that
        lacks nothing follows within that share (runtime/retrieve/runnable.py)."""
        if len(order) < 2 or not self.runnable:
            return order, final
        catalog = self._catalog()
        if catalog is None:
            return order, final
        from .runnable import RUNNABLE_TIE, yields

        language = "ko" if re.search("[가-힣]", query) else "en"
        ranked = [{"adapter_id": self.ids[i], "score": float(final[i])} for i in order]
        lose = yields(ranked, catalog, query, language, context_slots)
        if not lose:
            return order, final
        final = final.copy()
        for k in lose:
            final[order[k]] *= RUNNABLE_TIE
        return sorted(order, key=lambda i: (-final[i], i)), final

    def _example_query(self, query: str) -> tuple[np.ndarray, np.ndarray, float]:
        """The request against the example sentences: its known grams (ids, idf) and its norm, in
        which unknown grams count with the highest idf (:meth:`refute` and :meth:`redirect`); the
        last request's is kept, as one search reads it up to three times."""
        last = self._last_example_query
        if last is not None and last[0] == query:
            return last[1]
        out = self._example_query_of(query)
        self._last_example_query = (query, out)
        return out

    def _example_query_of(self, query: str) -> tuple[np.ndarray, np.ndarray, float]:
        q = [g for g in grams(query) if f"g:{g}" not in self.no_evidence]
        qids, qidf = self.examples.query(q)
        unknown = len(set(q)) - len(qids)
        return qids, qidf, float(np.sqrt(qidf.sum() + unknown * float(self.examples.idf.max(initial=1.0))))

    def refute(self, query: str, final: np.ndarray, best: list[int]) -> np.ndarray:
        """Drop those of the ``best`` candidates that one of their own negative examples describes
        better than anything they say of themselves (:mod:`.counter_examples`): a few candidates,
        whatever the catalog's size."""
        top = [i for i in best if final[i] > 0 and self.examples.refutable[i]]
        if not top:
            return final
        qids, qidf, qnorm = self._example_query(query)
        if not len(qids):
            return final
        out = final
        for i in top:
            for_, against, kind = self.examples.verdict(i, qids, qidf, qnorm)
            # Only a request that belongs to nothing refutes here: one that belongs to another
            # adapter is already that adapter's evidence (the redirect field), and a shared
            # product or place name (타이레놀) would otherwise outweigh the words of the intent.
            if kind == AGAINST_NOTHING and against >= self.refute_floor and against > for_:
                if out is final:
                    out = final.copy()
                out[i] = 0.0
        return out

    def redirect(self, query: str, final: np.ndarray, best: list[int], ranked: list[int],
                 arguments: frozenset[str] | None = None) -> np.ndarray:
        """Move those of the ``best`` candidates behind another candidate when one of their negative
        examples that ``belongs_to`` that candidate describes the request better than anything they
        say of themselves (「대구 미세먼지 어때?」 is closer to the dust alerts' 「서울 미세먼지 어때?
        → air quality」 than to any of its alert phrases), and the request adds none of the
        candidate's own words to the example (places and other arguments aside). Only within the
        ranked candidates: a negative example never brings in an adapter retrieval did not find."""
        top = [i for i in best if final[i] > 0 and self.examples.redirectable[i]]
        if not top:
            return final
        qids, qidf, qnorm = self._example_query(query)
        if not len(qids):
            return final
        present = set(ranked)
        if arguments is None:
            arguments = self.argument_terms(query)
        # Calendar words count here (다음 주 is no evidence of a topic, but it is what a mid-term
        # forecast's own sentences say and a short-term one's example does not); plain deixis
        # (지금, 오늘) and arguments do not.
        topic, _ = self.examples.query([g for g in grams(query)
                                        if f"g:{g}" not in arguments and f"g:{g}" not in self.deixis])
        out = final
        for i in top:
            for_, against, owner = self.examples.redirect(i, qids, qidf, qnorm, topic, self.refute_floor)
            if (owner >= 0 and owner in present and owner != i and against >= self.refute_floor
                    and against > for_ and 0 < final[owner] < out[i]):
                if out is final:
                    out = final.copy()
                out[i] = float(final[owner]) * REDIRECT_SHARE
        return out

    def close_to_own_sentence(self, query: str, i: int) -> bool:
        """Whether the request is at least ``example_fit`` close to one of document ``i``'s own
        sentences, sharing terms of at least ``evidence_words`` of the request's words (one word in
        common with a one-word hint is the coincidence the two-word rule is for)."""
        qids, qidf, qnorm = self._example_query(query)
        if not len(qids):
            return False
        ex = self.examples
        a, sim = ex._similarities(i, qids, qidf, qnorm)
        own = np.where(ex.kind[a:a + len(sim)] == 0, sim, -1.0)
        k = int(np.argmax(own)) if len(own) else 0
        if not len(own) or own[k] < self.example_fit:
            return False
        shared = set(ex.terms[int(ex.term_offsets[a + k]):int(ex.term_offsets[a + k + 1])].tolist())
        words = sum(any(ex.vocab.get(g, -1) in shared for g in grams(w.group(0))) for w in _WORD_RUN.finditer(query))
        return words >= max(self.evidence_words, 1)

    def _coverage(self, i: int, cov: np.ndarray, m: Match, place_cue: bool) -> float:
        """Coverage of the request by document ``i``; for a free-text place lookup asked where
        something is, the unknown words are the place's name and do not count against it."""
        if place_cue and self._place_slot[i] and m.unknown_share < 1.0:
            return float(cov[i]) / (1.0 - m.unknown_share)
        return float(cov[i])

    def fits(self, coverage: float, text_score: float, words: Callable[[], list[float]] | None = None) -> bool:
        """The abstention rule: enough of the request covered, or strong text evidence from at
        least ``evidence_words`` of its words (``words``: per word, its evidence for the
        candidate, read only when the text path decides)."""
        if coverage >= self.abstain_coverage:
            return True
        if text_score / self.idf_scale < self.abstain_text:
            return False
        if self.evidence_words <= 1 or words is None:
            return True
        return sum(e >= self.word_floor for e in words()) >= self.evidence_words

    def names_service(self, query: str, i: int) -> bool:
        """Whether the request names document ``i``'s service, when that matters: always for an
        adapter that answers (live, mock ``find``/``check``/``locate``); for a handoff or a
        ``send`` adapter, one of its service words (codegen/emit_index.py) must be in the request
        (matched as the engine's scope check matches them: runtime/guidance_reader.py)."""
        words = self.table.service_words[i]
        if not words or (self.tier[i] != "handoff" and self.primitive[i] != "send"):
            return True
        from ..guidance_reader import Text, longest_in

        return longest_in(words, Text.of(query)) > 0

    def _context_fills(self, i: int, context_slots: frozenset[str]) -> bool:
        return any(slots and slots <= context_slots and i in idx for slots, idx in self.table.requires.items())

    def word_evidence(self, query: str, i: int, arguments: frozenset[str] = frozenset()) -> list[float]:
        """Per word of the request, its text evidence for document ``i`` (units of ln N + 1):
        the terms that are evidence in :meth:`match`, looked up for one document only."""
        c = self.compiled
        out = []
        for run in _WORD_RUN.finditer(query):
            terms, partial = self.analyse(run.group(0))
            e = 0.0
            for key, qtf in terms.items():
                if key in self.no_evidence or key in partial or key in arguments:
                    continue
                p = c.postings(key)
                if p is None or self._is_generic(key):
                    continue
                docs, imps = p
                j = int(np.searchsorted(docs, i))
                if j < len(docs) and docs[j] == i:
                    e += float(imps[j]) * qtf
            out.append(e / self.idf_scale)
        return out

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

    def _agency_keys(self) -> np.ndarray:
        """Per document, the one agency key a filter value matches: code, Korean or English name.
        Three columns side by side, so a value matching any of them selects the document."""
        if self._agency_names is None:
            t = self.table
            self._agency_names = np.array(
                [[c.lower(), ko, en.lower()] for c, ko, en in zip(t.agency.tolist(), t.agency_ko, t.agency_en, strict=False)],
                dtype=str,
            ).reshape(self.n, 3)
        return self._agency_names

    def _candidate(self, i: int, score: float, cov: float, text: float) -> Candidate:
        return Candidate(
            adapter_id=self.ids[i],
            primitive=str(self.primitive[i]),
            tier=str(self.tier[i]),
            score=round(score, 6),
            domain=str(self.domain[i]),
            agency=str(self.agency[i]),
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
