"""What a query reads of each document besides its postings: compact columns, not documents.

``documents.json`` holds every adapter's text in two languages, its morphemes and its negative
examples — 86–114 MB once parsed at 10,000 adapters, almost none of it read at query time (the
text is already folded into the postings). The retriever keeps this table instead: one array per
fact (id, primitive, tier, domain, agency), the regions a local agency serves, and the slot sets
an adapter ``requires``/``provides`` grouped by distinct set, so the context signal loops over the
few distinct sets rather than over every adapter.

The table is written beside ``compiled.npz`` (``table.json``), so a later load reads neither the
documents nor Whoosh.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

import numpy as np

TABLE_FORMAT = 5


_SEP = "\x1f"


class Packed(Sequence[list[str]]):
    """Per document, a short list of words kept as one joined string and split when read: a
    query reads it for a few candidates only, and 10,000 documents' lists of separate strings
    held about two thirds of the loaded table."""

    __slots__ = ("_joined",)

    def __init__(self, lists: Iterable[Iterable[str]]):
        self._joined = [_SEP.join(w) for w in lists]

    def __len__(self) -> int:
        return len(self._joined)

    @overload
    def __getitem__(self, i: int) -> list[str]: ...
    @overload
    def __getitem__(self, i: slice) -> list[list[str]]: ...
    def __getitem__(self, i: int | slice) -> list[str] | list[list[str]]:
        if isinstance(i, slice):
            return [j.split(_SEP) if j else [] for j in self._joined[i]]
        j = self._joined[i]
        return j.split(_SEP) if j else []


@dataclass
class DocTable:
    ids: list[str]
    primitive: np.ndarray
    tier: np.ndarray
    domain: np.ndarray
    agency: np.ndarray  # agency code
    agency_ko: list[str]
    agency_en: list[str]
    place_slot: np.ndarray  # bool: a locate adapter whose required inputs take a free-text place
    # bool: a find/check adapter whose required inputs take a search word (a name: 약국 이름으로 찾기)
    name_slot: np.ndarray
    # distinct requires / provides sets -> the documents that declare exactly that set
    requires: dict[frozenset[str], np.ndarray]
    provides: dict[frozenset[str], np.ndarray]
    # per document, the words that name its service (codegen/emit_index.py); read for the best
    # candidate only
    service_words: Packed
    titles: list[str]  # per document, its Korean and English title, lower case
    # per document, the slots of its required inputs (what the citizen or a chain must give)
    input_slots: Packed

    @property
    def n(self) -> int:
        return len(self.ids)

    @classmethod
    def from_documents(cls, docs: list[dict[str, Any]]) -> DocTable:
        return cls.from_columns(_columns(docs))

    @classmethod
    def from_columns(cls, c: dict[str, Any]) -> DocTable:
        return cls(
            ids=list(c["id"]),
            primitive=np.array(c["primitive"], dtype=str),
            tier=np.array(c["tier"], dtype=str),
            domain=np.array(c["domain"], dtype=str),
            agency=np.array(c["agency"], dtype=str),
            # one string per agency, not per document (agencies run many adapters each)
            agency_ko=[sys.intern(a) for a in c["agency_ko"]],
            agency_en=[sys.intern(a) for a in c["agency_en"]],
            place_slot=np.array(c["place_slot"], dtype=bool),
            name_slot=np.array(c["name_slot"], dtype=bool),
            requires=_groups(c["requires"]),
            provides=_groups(c["provides"]),
            service_words=Packed(c.get("service_words") or [[] for _ in c["id"]]),
            titles=list(c.get("titles") or ["" for _ in c["id"]]),
            input_slots=Packed(c.get("input_slots") or [[] for _ in c["id"]]),
        )

    @staticmethod
    def save_columns(docs: list[dict[str, Any]], path: Path) -> None:
        body = {"format": TABLE_FORMAT, "columns": _columns(docs)}
        path.write_text(json.dumps(body, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> DocTable | None:
        """The saved table, or None when missing or of another format (then rebuilt)."""
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if body.get("format") != TABLE_FORMAT:
            return None
        return cls.from_columns(body["columns"])


def _columns(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": [d["id"] for d in docs],
        "primitive": [d["primitive"] for d in docs],
        "tier": [d["tier"] for d in docs],
        "domain": [d["domain"] for d in docs],
        "agency": [d["agency"]["code"] for d in docs],
        "agency_ko": [d["agency"]["name_ko"] for d in docs],
        "agency_en": [d["agency"]["name_en"] for d in docs],
        "place_slot": [d["primitive"] == "locate" and "place" in (d.get("input_slots") or ()) for d in docs],
        "name_slot": [d["primitive"] in ("find", "check") and "keyword" in (d.get("input_slots") or ()) for d in docs],
        "requires": [sorted(d.get("requires") or ()) for d in docs],
        "provides": [sorted(d.get("provides") or ()) for d in docs],
        "service_words": [list(d.get("service_words") or ()) for d in docs],
        "titles": [" ".join(d["text"][lang]["title"] for lang in ("ko", "en")).lower() for d in docs],
        "input_slots": [list(d.get("input_slots") or ()) for d in docs],
    }


def _groups(sets: list[list[str]]) -> dict[frozenset[str], np.ndarray]:
    by: dict[frozenset[str], list[int]] = {}
    for i, s in enumerate(sets):
        if s:
            by.setdefault(frozenset(s), []).append(i)
    return {k: np.array(v, dtype=np.int64) for k, v in by.items()}
