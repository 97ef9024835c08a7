"""Negative examples as evidence *against* an adapter.

A manifest's ``negative_examples`` say "this request looks like mine but is not": with
``belongs_to: X`` it is X's (the index credits it to X's redirect field); with ``belongs_to: null``
it belongs to nothing in the catalog (「오늘 저녁 메뉴 추천해줘」 for the school-meals adapter). The
postings cannot say that — they only add evidence — so each document also keeps its example
sentences one by one: its own hints, examples and title (and the negatives other manifests
credit to it) as *for*, its negative examples as *against*. When a request is closer to one of an
adapter's counter-examples than to anything the adapter says of itself, that adapter is refuted
for this request.

Closeness is the cosine of IDF-weighted bigram sets (the gram family: it sees every syllable and
needs no model). Only the few best-ranked candidates are checked, so the cost does not grow with
the catalog. Saved beside compiled.npz as ``examples.npz``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ummaya.model.analysis import grams

EXAMPLES_FILE = "examples.npz"
FOR, AGAINST_NOTHING, AGAINST_OTHER = 0, 1, 2
# A word the request adds to a negative example keeps the redirect from happening when it is this
# many times more the demoted adapter's than the owner's (:meth:`CounterExamples._whose`). Between
# the shares seen for words both adapters say (open: 2.6) and words of one (소득: 4.4, 관광: 6.2)
# on the tune split.
OWN_RATIO = 3.0


@dataclass
class CounterExamples:
    vocab: dict[str, int]
    idf: np.ndarray  # float32 per vocabulary term, over example sentences
    doc_offsets: np.ndarray  # int64, len n_docs + 1: the sentences of document i
    kind: np.ndarray  # int8 per sentence: FOR / AGAINST_NOTHING / AGAINST_OTHER
    norm: np.ndarray  # float32 per sentence: sqrt of the sum of its terms' idf
    term_offsets: np.ndarray  # int64, len n_sentences + 1
    terms: np.ndarray  # int32 vocabulary ids
    # int32 per sentence: for an AGAINST_OTHER sentence the document its belongs_to names (-1 for
    # every other sentence, and when the named adapter is not in the catalog).
    owner: np.ndarray | None = None

    def __post_init__(self) -> None:
        # Documents with at least one sentence that belongs to nothing: the only ones a refutation
        # can drop, so the others are never read.
        doc_of = np.repeat(np.arange(len(self.doc_offsets) - 1), np.diff(self.doc_offsets))
        self.refutable = np.zeros(len(self.doc_offsets) - 1, dtype=bool)
        self.refutable[doc_of[self.kind == AGAINST_NOTHING]] = True
        # Documents with a negative example credited to another adapter in the catalog: the only
        # ones a redirect can move behind that adapter.
        self.redirectable = np.zeros(len(self.doc_offsets) - 1, dtype=bool)
        if self.owner is not None:
            self.redirectable[doc_of[(self.kind == AGAINST_OTHER) & (self.owner >= 0)]] = True

    @classmethod
    def from_documents(cls, docs: list[dict[str, Any]]) -> CounterExamples:
        credited: dict[str, list[str]] = {}
        for d in docs:
            for n in d.get("negative_examples") or []:
                if n.get("belongs_to") and n["belongs_to"] != d["id"]:
                    credited.setdefault(n["belongs_to"], []).append(n["text"])
        index = {d["id"]: i for i, d in enumerate(docs)}
        vocab: dict[str, int] = {}
        sentences: list[tuple[int, list[int]]] = []
        owners: list[int] = []
        doc_offsets = [0]
        for d in docs:
            texts: list[tuple[int, str, int]] = []
            for lang in ("ko", "en"):
                t = d["text"][lang]
                texts.append((FOR, t["title"], -1))
                texts.extend((FOR, h, -1) for h in t["hints"])
                texts.extend((FOR, e, -1) for e in t["examples"])
            texts.extend((FOR, x, -1) for x in credited.get(d["id"], ()))
            for n in d.get("negative_examples") or []:
                if n.get("belongs_to") != d["id"]:
                    if not n.get("belongs_to"):
                        texts.append((AGAINST_NOTHING, n["text"], -1))
                    else:
                        texts.append((AGAINST_OTHER, n["text"], index.get(n["belongs_to"], -1)))
            for kind, text, owner in texts:
                ids = sorted({vocab.setdefault(g, len(vocab)) for g in grams(text)})
                if ids:
                    sentences.append((kind, ids))
                    owners.append(owner)
            doc_offsets.append(len(sentences))
        df = np.zeros(len(vocab), dtype=np.int64)
        for _, ids in sentences:
            df[ids] += 1
        n = max(len(sentences), 1)
        idf = (np.log(n / (df + 1)) + 1).astype(np.float32)
        term_offsets = np.zeros(len(sentences) + 1, dtype=np.int64)
        term_offsets[1:] = np.cumsum([len(ids) for _, ids in sentences])
        terms = np.fromiter((i for _, ids in sentences for i in ids), dtype=np.int32, count=int(term_offsets[-1]))
        norm = np.array([math.sqrt(float(idf[ids].sum())) for _, ids in sentences], dtype=np.float32)
        return cls(vocab, idf, np.array(doc_offsets, dtype=np.int64),
                   np.array([k for k, _ in sentences], dtype=np.int8), norm, term_offsets, terms,
                   np.array(owners, dtype=np.int32))

    def save(self, path: Path) -> None:
        keys = sorted(self.vocab, key=self.vocab.__getitem__)
        np.savez(path, vocab=np.array(json.dumps(keys, ensure_ascii=False)), idf=self.idf,
                 doc_offsets=self.doc_offsets, kind=self.kind, norm=self.norm,
                 term_offsets=self.term_offsets, terms=self.terms,
                 owner=self.owner if self.owner is not None else np.full(len(self.kind), -1, np.int32))

    @classmethod
    def load(cls, path: Path) -> CounterExamples | None:
        try:
            with np.load(path, allow_pickle=False) as z:
                keys = json.loads(str(z["vocab"]))
                return cls({k: i for i, k in enumerate(keys)}, z["idf"], z["doc_offsets"], z["kind"],
                           z["norm"], z["term_offsets"], z["terms"], z["owner"])
        except (OSError, ValueError, KeyError):
            return None

    def query(self, query_grams: list[str] | tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        """(sorted vocabulary ids, their idf) of a request's grams; unknown grams still count in
        the request's norm, with the highest idf."""
        ids = sorted({self.vocab[g] for g in query_grams if g in self.vocab})
        return np.array(ids, dtype=np.int32), self.idf[ids] if ids else np.zeros(0, np.float32)

    def _similarities(self, doc: int, qids: np.ndarray, qidf: np.ndarray, qnorm: float) -> tuple[int, np.ndarray]:
        a, b = int(self.doc_offsets[doc]), int(self.doc_offsets[doc + 1])
        lo, hi = int(self.term_offsets[a]), int(self.term_offsets[b])
        terms = self.terms[lo:hi]
        pos = np.searchsorted(qids, terms)
        pos[pos >= len(qids)] = 0
        hit = qids[pos] == terms
        weights = np.where(hit, qidf[pos], 0.0)
        starts = self.term_offsets[a:b] - lo
        shared = np.add.reduceat(weights, starts) if len(weights) else np.zeros(b - a)
        return a, shared / (self.norm[a:b] * qnorm + 1e-9)

    def _own_terms(self, doc: int) -> tuple[np.ndarray, int]:
        """Vocabulary ids of the sentences *for* document ``doc`` (its own words; an id once per
        sentence that holds it), and how many such sentences there are."""
        a, b = int(self.doc_offsets[doc]), int(self.doc_offsets[doc + 1])
        parts = [self.terms[int(self.term_offsets[k]):int(self.term_offsets[k + 1])]
                 for k in range(a, b) if self.kind[k] == FOR]
        return (np.concatenate(parts) if parts else np.zeros(0, np.int32)), len(parts)

    def _whose(self, words: np.ndarray, doc: int, owner: int) -> bool:
        """Whether one of ``words`` is markedly document ``doc``'s rather than ``owner``'s: ``doc``
        says it, in a share of its own sentences at least ``OWN_RATIO`` times its share of ``owner``'s
        (add-one smoothed, so a word one says once and the other never is not decisive alone)."""
        mine, n_mine = self._own_terms(doc)
        theirs, n_theirs = self._own_terms(owner)
        for t in words:
            said = int(np.count_nonzero(mine == t))
            if not said:
                continue  # a word neither says (청주 of 「청주 미세먼지 심해?」) is no one's
            ours = (said + 1) / (n_mine + 2)
            other = (int(np.count_nonzero(theirs == t)) + 1) / (n_theirs + 2)
            if ours >= OWN_RATIO * other:
                return True
        return False

    def redirect(self, doc: int, qids: np.ndarray, qidf: np.ndarray, qnorm: float,
                 topic: np.ndarray | None = None, floor: float = 0.0) -> tuple[float, float, int]:
        """(best similarity to a sentence *for* the document, best to one of its negative examples
        that belongs to another adapter, that adapter's document index or -1). ``topic``: the
        request's vocabulary ids that are not arguments; when one the negative example lacks is
        markedly a word of the document's own sentences rather than of the owner's (:meth:`_whose`:
        다음 주 in 「다음 주 서울 날씨」 against 「서울 날씨 어때?」, 관광 in 「서울시청 근처 관광지」
        against 「서울시청 근처 축제 일정」), the request says more than the example, in the
        document's words, and there is no redirect. A word both say of themselves about as often
        (초 of 「초미세먼지 나쁨이야?」 against 「지금 미세먼지 나쁨이야?」, open, a city) tells them
        apart no better than the example does, and the example decides. With a ``floor`` (the
        retriever's), a negative example under it, or no closer than the document's own best
        sentence, redirects nothing whatever the topic says, so the topic is not read for it."""
        a, b = int(self.doc_offsets[doc]), int(self.doc_offsets[doc + 1])
        if a == b or len(qids) == 0 or qnorm <= 0 or self.owner is None:
            return 0.0, 0.0, -1
        a, sim = self._similarities(doc, qids, qidf, qnorm)
        kinds = self.kind[a:b]
        owners = self.owner[a:b]
        for_ = sim[kinds == FOR]
        best_for = float(for_.max()) if len(for_) else 0.0
        other = np.where((kinds == AGAINST_OTHER) & (owners >= 0), sim, -1.0)
        j = int(np.argmax(other))
        if other[j] <= 0:
            return best_for, 0.0, -1
        owner = int(owners[j])
        if floor and (other[j] < floor or other[j] <= best_for):
            return best_for, float(other[j]), owner
        if topic is not None and len(topic):
            sentence = self.terms[int(self.term_offsets[a + j]):int(self.term_offsets[a + j + 1])]
            extra = np.setdiff1d(topic, sentence)
            if len(extra) and self._whose(extra, doc, owner):
                return best_for, 0.0, -1
        return best_for, float(other[j]), owner

    def verdict(self, doc: int, qids: np.ndarray, qidf: np.ndarray, qnorm: float) -> tuple[float, float, int]:
        """(best similarity to a sentence *for* the document, best to one *against* it, the kind
        of that counter-example). Zeros when the document has no sentences or nothing is shared."""
        a, b = int(self.doc_offsets[doc]), int(self.doc_offsets[doc + 1])
        if a == b or len(qids) == 0 or qnorm <= 0:
            return 0.0, 0.0, FOR
        a, sim = self._similarities(doc, qids, qidf, qnorm)
        kinds = self.kind[a:b]
        for_ = sim[kinds == FOR]
        against = np.where(kinds != FOR, sim, -1.0)
        j = int(np.argmax(against))
        best_against = float(against[j]) if against[j] >= 0 else 0.0
        return (float(for_.max()) if len(for_) else 0.0), best_against, int(kinds[j]) if best_against > 0 else FOR
