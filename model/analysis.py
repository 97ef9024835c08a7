"""Korean-aware analysis for retrieval: character bigrams, Kiwi morphemes, and English words.

Two term families, kept apart by prefix so they can be weighted per field:

* ``g`` — *grams*: Hangul runs become character bigrams (a one-syllable run stays a unigram);
  Latin/digit runs become lower-cased, Porter-stemmed words. Cheap, needs no model, and splits a
  word the same way wherever it appears — 「승학」 is 「승학」 in 「승학캠퍼스」 and alone.
* ``m`` — *morphemes*: Kiwi content morphemes (nouns, verb/adjective stems, roots, foreign words,
  numbers) with user-dictionary entries for landmarks and place names. Documents are analysed
  with Kiwi at **build time** (``codegen/emit_index.py`` stores the result in documents.json);
  queries are segmented **without Kiwi** by longest match against that morpheme vocabulary,
  because loading Kiwi costs 2.4–6 s and ``ummaya ask`` must answer cold in ≤ 1.5 s
  (docs/DESIGN.md). ``kiwi_query=True`` analyses queries with Kiwi instead (long-running
  processes).

The issue's trap — Whoosh's query parser feeding a Kiwi-only analyzer word by word, so 「승학」
splits into 승/학 alone but stays whole inside a sentence — is avoided twice: the whole query is
analysed at once and the query is built from terms (never parsed), and 「승학」 is a user-dictionary
entry, so Kiwi keeps it whole in every context.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from functools import lru_cache

from whoosh.lang.porter import stem as _porter

ANALYZER_VERSION = "3"

# Landmarks and place names Kiwi would otherwise split (승학 → 승/학) or glue to a neighbour.
# (form, tag, score) — NNP with a positive score so the entry wins over a split.
USER_DICTIONARY: tuple[tuple[str, str, float], ...] = (
    ("승학", "NNP", 10.0),
    ("승학캠퍼스", "NNP", 0.0),
    ("동아대", "NNP", 10.0),
    ("부산대", "NNP", 10.0),
    ("경성대", "NNP", 10.0),
    ("부경대", "NNP", 10.0),
    ("서울대", "NNP", 10.0),
    ("연세대", "NNP", 10.0),
    ("고려대", "NNP", 10.0),
    ("해운대", "NNP", 10.0),
    ("광안리", "NNP", 10.0),
    ("서면", "NNP", 5.0),
    ("하단", "NNP", 5.0),
    ("사하구", "NNP", 10.0),
    ("강남역", "NNP", 10.0),
    ("홍대입구", "NNP", 10.0),
    ("신촌", "NNP", 5.0),
    ("잠실", "NNP", 5.0),
    ("여의도", "NNP", 10.0),
    ("광화문", "NNP", 10.0),
    ("시청역", "NNP", 10.0),
    ("센텀시티", "NNP", 10.0),
    ("정부24", "NNP", 10.0),
    ("홈택스", "NNP", 10.0),
    ("위택스", "NNP", 10.0),
    ("복지로", "NNP", 10.0),
    ("안전신문고", "NNP", 10.0),
    ("교통민원24", "NNP", 10.0),
    ("에어코리아", "NNP", 10.0),
    ("e약은요", "NNP", 10.0),
    ("전입신고", "NNG", 5.0),
    ("미세먼지", "NNG", 5.0),
    ("초미세먼지", "NNG", 5.0),
    ("심정지", "NNG", 5.0),
)

# Kiwi tags kept as content morphemes.
CONTENT_TAGS = frozenset({"NNG", "NNP", "NR", "NP", "VV", "VA", "XR", "SL", "SN", "SH", "MAG", "XPN"})
# Adverbs are mostly filler; keep only these.
KEEP_MAG = frozenset({"갑자기", "지금", "당장", "빨리", "근처", "가까이", "언제", "얼마나"})

EN_STOP = frozenset(
    """a an the and or of to in on at for from by with is are was were be been am do does did i me my
    we our you your it its this that these those there here can could would should will shall
    please pls want need know tell show give let get got some any what which who whom how when
    just now also about up out into over than then so if but not no yes hi hello thanks thank
    ok okay hey im i'm id i'd ive i've dont don't""".split()
)
# Korean fillers that say nothing about which service: dropped from the gram family for coverage
# and scoring alike (they match every example sentence).
KO_STOP_GRAMS = frozenset(
    """알려 려줘 려주 주세 세요 해줘 해주 줘요 있어 있나 나요 어요 뭐야 거야 싶어 싶은 는데 할래
    어떻 떻게 어때 하는 하고 해요 합니 니다 입니 요즘 혹시 좀더""".split()
)

# Colloquial endings: the last bigram of a word of three or more syllables that ends in one of
# these (…겨야, …는데, …어요, …디야) is an inflection, not content; likewise these words standing
# alone (돼, 해, 줘 …). Dropped on both sides, so it cannot make a query and a document disagree.
ENDING_SYLLABLES = frozenset("요야어아데지까줘돼해죠네게면며니냐래")
# Syllables a Korean word's tail of particles, endings and light verbs is made of (은/는/이/가/을/
# 를/에서/으로/의/도/만/까지 …, 하려면/었는지/다는데 …, 치료받을/등록되면/신청시켜): what may follow a
# known stem without making it another word. Linguistic closed class, not service vocabulary.
TAIL_SYLLABLES = frozenset(
    "은는이가을를에서로으의도만와과랑고하한할해했며면려요야어아데지까줘돼됐죠네게니냐래다던든"
    "었았겠는을까나내좀씩께보부터처럼라서받되된될시켜드려"
)
KO_STOP_WORDS = frozenset("돼 해 줘 좀 요 야 다 게 줄 거 것 수 때 더 잘 꼭 또 왜 뭐 이 그 저 나 너 걍 막 할".split())

_RUN = re.compile(r"[가-힣]+|[A-Za-z][A-Za-z0-9'&+\-]*|\d+(?:\.\d+)?")
_HANGUL = re.compile(r"[가-힣]+")


def _en(word: str) -> str | None:
    w = word.lower().strip("'-")
    if not w or w in EN_STOP:
        return None
    if len(w) <= 3:
        return w  # ER, AED, A&E, PM: acronyms stay as they are
    return _porter(w)


def _en_words(run: str) -> list[str]:
    """A Latin/digit run as index words; move-in, check-up split at the hyphen as Kiwi splits
    them and as citizens also write them apart."""
    parts = run.split("-") if "-" in run.strip("-") else (run,)
    return [w for w in map(_en, parts) if w]


@lru_cache(maxsize=65536)
def grams(text: str) -> tuple[str, ...]:
    """Character bigrams of Hangul runs, stemmed English words, numbers. Order kept, repeats kept."""
    out: list[str] = []
    for m in _RUN.finditer(text):
        run = m.group(0)
        if "가" <= run[0] <= "힣":
            if len(run) == 1:
                if run not in KO_STOP_WORDS:
                    out.append(run)
                continue
            last = len(run) - 2
            for i in range(len(run) - 1):
                g = run[i : i + 2]
                if g in KO_STOP_GRAMS or (i == last and i > 0 and g[1] in ENDING_SYLLABLES):
                    continue
                out.append(g)
        else:
            out.extend(_en_words(run))
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Kiwi (build time, or query time behind an option)

_kiwi = None
_kiwi_lock = threading.Lock()


def kiwi():
    """The process-wide Kiwi with the user dictionary (loaded on first use: seconds)."""
    global _kiwi
    if _kiwi is None:
        with _kiwi_lock:
            if _kiwi is None:
                from kiwipiepy import Kiwi

                # The multi-word and typo dictionaries cost ~3 s of loading (most of it on the
                # first analysis) and change nothing the index keeps: manifests are edited text,
                # and the morphemes are compared on the eval set (evals/README.md).
                k = Kiwi(load_multi_dict=False, load_typo_dict=False)
                for form, tag, score in USER_DICTIONARY:
                    k.add_user_word(form, tag, score)
                _kiwi = k
    return _kiwi


def kiwi_version() -> str:
    import kiwipiepy

    return kiwipiepy.__version__


def _morph_terms(tokens: Iterable) -> list[str]:
    out: list[str] = []
    for t in tokens:
        tag = t.tag.split("-")[0]
        if tag not in CONTENT_TAGS:
            continue
        form = t.form
        if tag == "SL":
            w = _en(form)
            if w:
                out.append(w)
            continue
        if tag == "MAG" and form not in KEEP_MAG:
            continue
        if tag in ("VV", "VA") and len(form) == 1 and form in "하되있없주보가오":
            continue  # light verbs: 하다, 되다, 있다 … carry no service meaning
        out.append(form)
    return out


@lru_cache(maxsize=65536)
def morphs(text: str) -> tuple[str, ...]:
    """Kiwi content morphemes of the whole text (English words stemmed like :func:`grams`)."""
    if not text.strip():
        return ()
    return tuple(_morph_terms(kiwi().tokenize(text)))


def morphs_many(texts: list[str]) -> list[tuple[str, ...]]:
    """Batch form for the build (Kiwi's own batching is faster than one call per text)."""
    todo = sorted({t for t in texts if t.strip()} - set(_morph_cache))
    if todo:
        for text, toks in zip(todo, kiwi().tokenize(todo), strict=False):
            _morph_cache[text] = tuple(_morph_terms(toks))
    return [_morph_cache.get(t, ()) for t in texts]


_morph_cache: dict[str, tuple[str, ...]] = {}


# ---------------------------------------------------------------------------------------------
# Kiwi-free query segmentation against the documents' morpheme vocabulary


class Segmenter:
    """Longest-match segmentation of Hangul words into morphemes the index knows.

    Built from the document side's Kiwi output, so a query term matches a document term exactly
    when Kiwi produced that morpheme for some document. English words go through the same
    stemmer as the documents.
    """

    def __init__(self, vocabulary: Iterable[str]):
        ko = {w for w in vocabulary if _HANGUL.fullmatch(w)}
        self.words = frozenset(ko)
        self.maxlen = max((len(w) for w in ko), default=1)

    def __call__(self, text: str) -> tuple[str, ...]:
        out: list[str] = []
        for m in _RUN.finditer(text):
            run = m.group(0)
            if not ("가" <= run[0] <= "힣"):
                out.extend(_en_words(run))
                continue
            out.extend(self._pieces(run)[0])
        return tuple(out)

    def _pieces(self, run: str) -> tuple[list[str], list[int]]:
        """Longest-match morphemes of one Hangul run, and the positions nothing matched."""
        pieces: list[str] = []
        left: list[int] = []
        i, n = 0, len(run)
        while i < n:
            for j in range(min(n, i + self.maxlen), i, -1):
                piece = run[i:j]
                # one-syllable morphemes only at the start of a short word (차, 약을, 비올까):
                # in a longer unknown word the syllable is part of a name (비트코인 ≠ 비)
                if piece in self.words and (j - i > 1 or (i == 0 and n <= 3)):
                    pieces.append(piece)
                    i = j
                    break
            else:
                left.append(i)
                i += 1
        return pieces, left

    def is_whole(self, run: str) -> bool:
        """Does the index know this Hangul word whole — its stem made of known morphemes, with at
        most a tail of particles and endings (응급실은, 날씨야, 아프다는데)? A known morpheme
        inside a longer word nobody indexed is another word: 자동차 is not 자동 (자동심장충격기),
        대학교 is not 학교, 자격득실확인서 is not 자격 or 확인."""
        return self.whole_from(run, *self._pieces(run))

    @staticmethod
    def whole_from(run: str, pieces: list[str], left: list[int]) -> bool:
        """:meth:`is_whole` from a segmentation already made."""
        if not pieces:
            return False
        if not left:
            return True
        start = left[0]
        return left == list(range(start, len(run))) and start > 0 and all(ch in TAIL_SYLLABLES for ch in run[start:])
