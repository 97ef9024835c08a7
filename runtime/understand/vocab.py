"""The compiled vocabularies (``generated/understand/vocab/<name>.json``), each loaded on first use.

A reader asks for a vocabulary by name (the slot type's ``vocabulary``, or a shared one such as
``function_words``); nothing is read until then, and each file is read once per generated folder.
Word classes come back as frozensets, terms and places as lists, the regions and the calendar as
their compiled look-ups.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import table


@lru_cache(maxsize=64)
def _file(generated: Path, name: str) -> dict[str, Any]:
    path = generated / "understand" / "vocab" / f"{name}.json"
    try:
        return json.loads(path.read_bytes())
    except FileNotFoundError:
        return {}


def load(name: str) -> dict[str, Any]:
    """The compiled vocabulary ``name`` ({} when the registry has none by that name)."""
    return _file(table.folder(), name)


@lru_cache(maxsize=256)
def _words(generated: Path, name: str, cls: str) -> frozenset[str]:
    return frozenset(_file(generated, name).get("words", {}).get(cls, ()))


def words(name: str, cls: str) -> frozenset[str]:
    """The word class ``cls`` of vocabulary ``name``."""
    return _words(table.folder(), name, cls)


def fw(cls: str) -> frozenset[str]:
    """A class of the shared function words (registry/_vocab/function_words.yaml)."""
    return _words(table.folder(), "function_words", cls)


def terms(name: str) -> list[dict[str, Any]]:
    return load(name).get("terms", [])


def places(name: str = "landmarks") -> list[dict[str, Any]]:
    return load(name).get("places", [])


def regions() -> dict[str, Any]:
    return load("regions").get("regions", {"sido": {}, "sigungu": {}, "dong": {}})


def calendar() -> dict[str, Any]:
    return load("calendar").get("calendar", {})


@lru_cache(maxsize=4)
def _nouns(generated: Path) -> frozenset[str]:
    try:
        return frozenset(json.loads((generated / "understand" / "nouns.json").read_bytes()).get("nouns", ()))
    except FileNotFoundError:
        return frozenset()


def nouns() -> frozenset[str]:
    """Nouns the build's Kiwi found in the registry's text and vocabularies."""
    return _nouns(table.folder())


__all__ = ["calendar", "fw", "load", "nouns", "places", "regions", "terms", "words"]
