"""Closed vocabularies: a concept the citizen names, in the spelling the field's upstream wants.

The slot type's vocabulary (registry/_vocab/<name>.yaml ``terms``) maps citizens' words to an
official label (소아과 → 소아청소년과, 싱글맘 → 한부모·조손); the field's own ``enum`` and
``x-enum-labels`` (code → label) map the label to the code its upstream takes. A new closed
vocabulary is therefore a YAML file and an x-slot, never code.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import grammar, table, vocab


_KO_BEFORE = frozenset(" \t\n,.!?~([「'\"")


def _mentions(low: str, term: str) -> bool:
    """``term`` in the text at the start of a word (a Korean word may continue: 「한부모가족」 names 한부모;
    「청년월세 지원」 does not name 「월세 지원」). String search, no regex: this runs per term."""
    if not term:
        return False
    one_syllable = len(term) == 1 and not term.isascii()
    at = low.find(term)
    while at >= 0:
        before = low[at - 1] if at else " "
        if (before not in "abcdefghijklmnopqrstuvwxyz0123456789") if term.isascii() else (before in _KO_BEFORE):
            # One syllable (코, 귀, 눈) is a word only on its own or before a particle: 코드 and
            # 귀가 are not the nose or the ear.
            if not one_syllable or _ends_word(low, at + 1):
                return True
        at = low.find(term, at + 1)
    return False


def _ends_word(low: str, at: int) -> bool:
    rest = low[at:]
    if not rest or rest[0] in _KO_BEFORE or rest[0] in ")」'\"":
        return True
    return any(rest.startswith(p) and (len(rest) == len(p) or not "가" <= rest[len(p)] <= "힣")
               for p in grammar.PARTICLES)


@lru_cache(maxsize=64)
def _terms(generated: Path, name: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    out = []
    for t in vocab.terms(name):
        names = {t["label"].lower(), *(w.lower() for w in t.get("ko", [])), *(w.lower() for w in t.get("en", []))}
        out.append((t["label"], tuple(sorted(names, key=len, reverse=True))))
    return tuple(out)


def terms_of(name: str | None) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return _terms(table.folder(), name) if name else ()


def named_terms(text: str, vocabulary: str | None) -> list[tuple[int, str]]:
    """(length of the longest word matched, label) of every term of ``vocabulary`` the text names,
    longest match first."""
    return list(_named_terms(table.folder(), text, vocabulary))


@lru_cache(maxsize=2048)
def _named_terms(generated: Path, text: str, vocabulary: str | None) -> tuple[tuple[int, str], ...]:
    low = text.lower()
    found = []
    for label, names in terms_of(vocabulary):
        best = max((len(n) for n in names if _mentions(low, n)), default=0)
        if best:
            found.append((best, label))
    return tuple(sorted(found, key=lambda x: -x[0]))


def match_labels(text: str, labels: dict[str, str], vocabulary: str | None) -> str | None:
    """The code whose label — or a citizen's word for that label in ``vocabulary`` — the text
    names (the longest match wins)."""
    low = text.lower()
    synonyms = {label: names for label, names in terms_of(vocabulary)}
    best: tuple[int, str] | None = None
    for code, label in labels.items():
        words = {label.lower(), *synonyms.get(label, ())}
        for syn_label, names in synonyms.items():
            if syn_label != label and syn_label in label:  # the field's label is a kind of the term (소아청소년과 의원)
                words |= set(names)
        for w in words:
            if w and _mentions(low, w) and (best is None or len(w) > best[0]):
                best = (len(w), code)
    return best[1] if best else None


def names_official_label(text: str, prop: dict[str, Any], label: str) -> bool:
    """Whether ``label`` (a term of the slot type's vocabulary the text names) is one of the
    field's official labels (``x-enum-labels``; a part of a joined one: 한부모·조손 → 한부모) and the
    text names it itself, as a whole word. The manifest declares these as the words its upstream's
    categories go by, so a short one (청년) is as clear as a long synonym; a longer word it only
    starts (아동수당) is another thing."""
    low, want = text.lower(), label.lower()
    official = {part for v in (prop.get("x-enum-labels") or {}).values()
                for part in {str(v).lower(), *re.split(r"[·,/()\s]+", str(v).lower())} if len(part) >= 2}
    if want not in official:
        return False
    at = low.find(want)
    while at >= 0:
        if (at == 0 or low[at - 1] in _KO_BEFORE) and _ends_word(low, at + len(want)):
            return True
        at = low.find(want, at + 1)
    return False


def typed(code: Any, enum: list[Any]) -> Any:
    for value in enum:
        if str(value) == str(code):
            return value
    return code


def resolve_enum(prop: dict[str, Any], candidates: list[str]) -> Any | None:
    """The field's own spelling for a concept known under several names (서울 / 서울특별시 / Seoul)."""
    enum = prop.get("enum")
    labels = prop.get("x-enum-labels") or {}
    if not enum:
        return candidates[0] if candidates else None
    for name in candidates:
        if not name:
            continue
        if name in enum:
            return name
        for code, label in labels.items():
            if label == name or (len(name) >= 2 and label.startswith(name)):
                return typed(code, enum)
    # A label that names several regions (「대전·세종·충남 (대전지방기상청)」): one of its parts.
    for name in candidates:
        if not name or len(name) < 2:
            continue
        for code, label in labels.items():
            parts = re.split(r"[·,/()\s]+", label)
            if name in parts:
                return typed(code, enum)
    return None


def read_label(req: Any) -> Any:
    """The ``vocabulary`` reader: the concept named, as the field's code (or label without an enum)."""
    prop = req.prop
    labels = prop.get("x-enum-labels")
    if labels:
        code = match_labels(req.text, {str(k): str(v) for k, v in labels.items()}, req.vocabulary)
        return typed(code, prop.get("enum", [code])) if code else None
    codes = codes_of(req.vocabulary)
    if prop.get("enum"):
        if codes:  # an enum of standard codes (ISO alpha-2 …): the term named, by its code
            for _n, label in named_terms(req.text, req.vocabulary):
                if codes.get(label) is not None and str(codes[label]) in {str(v) for v in prop["enum"]}:
                    return typed(codes[label], prop["enum"])
        code = match_labels(req.text, {str(v): str(v) for v in prop["enum"]}, req.vocabulary)
        return typed(code, prop["enum"]) if code else None
    found = named_terms(req.text, req.vocabulary)
    if not found:
        return None
    return codes.get(found[0][1]) or found[0][1]


def codes_of(name: str | None) -> dict[str, str]:
    """Label → code of a vocabulary whose terms carry a standard code."""
    return _codes(table.folder(), name) if name else {}


@lru_cache(maxsize=32)
def _codes(generated: Path, name: str) -> dict[str, str]:
    return {t["label"]: t["code"] for t in vocab.terms(name) if t.get("code")}


__all__ = ["match_labels", "named_terms", "names_official_label", "read_label", "resolve_enum", "terms_of", "typed"]
