"""The compiled slot table (``generated/understand/slots.json``), loaded once per generated folder.

Every runtime decision about a slot type — is it personal, carried, derived, does it say where or
when, is it a span of the citizen's words — asks this table, never a Python set of names. The table
in use is the one of the catalog loaded last (``use``, called by ``Catalog.load``), else the one of
the default generated folder; a generated folder without one (a benchmark's catalog-only folder)
leaves the table in use unchanged.
"""

from __future__ import annotations

import json
import os
import threading
from functools import lru_cache
from pathlib import Path

from ummaya.model.slots import SlotQuestion, SlotTable, SlotType

SLOTS_FILE = Path("understand") / "slots.json"

_lock = threading.Lock()
_active: Path | None = None


class SlotTableMissing(RuntimeError):
    pass


def use(generated: Path | str) -> bool:
    """Make ``generated``'s slot table (and vocabularies) the ones in use; False when it has none."""
    global _active
    folder = Path(generated).resolve()
    if not (folder / SLOTS_FILE).is_file():
        return False
    with _lock:
        _active = folder
    return True


def folder() -> Path:
    """The generated folder whose understanding is in use."""
    if _active is not None:
        return _active
    # Asked for every word a turn classifies: the search upwards for the project is done once per
    # (UMMAYA_GENERATED, working directory), not per word (it cost a first turn seconds of stat calls).
    return _discover(os.environ.get("UMMAYA_GENERATED"), os.getcwd())


@lru_cache(maxsize=8)
def _discover(env: str | None, cwd: str) -> Path:
    from ummaya.paths import generated_dir, package_generated_dir

    for candidate in (generated_dir(), package_generated_dir()):
        if (candidate / SLOTS_FILE).is_file():
            return candidate
    raise SlotTableMissing("generated/understand/slots.json not found: run `ummaya build`")


def slot_table() -> SlotTable:
    return _load(folder())


@lru_cache(maxsize=8)
def _load(generated: Path) -> SlotTable:
    return SlotTable.model_validate(json.loads((generated / SLOTS_FILE).read_bytes()))


def slot(name: str | None) -> SlotType | None:
    """The slot type ``name`` (an x-slot value), or None when undeclared."""
    return slot_table().get(name) if name else None


def slot_of(prop: object, default: str | None = None) -> SlotType | None:
    """The slot type a field's schema declares (``x-slot``)."""
    name = prop.get("x-slot", default) if isinstance(prop, dict) else default
    return slot(name)


@lru_cache(maxsize=64)
def _facet(generated: Path, facet: str) -> frozenset[str]:
    return _load(generated).with_facet(facet)


def names_with(facet: str) -> frozenset[str]:
    """Slot names with a facet of their class: where, when, subject, span."""
    return _facet(folder(), facet)


@lru_cache(maxsize=64)
def _flag(generated: Path, flag: str) -> frozenset[str]:
    return _load(generated).where(lambda s: bool(getattr(s, flag)))


def personal() -> frozenset[str]:
    return _flag(folder(), "personal")


def carried() -> frozenset[str]:
    return _flag(folder(), "carried")


def derived() -> frozenset[str]:
    return _flag(folder(), "derived")


def is_personal(name: str | None) -> bool:
    s = slot(name)
    return bool(s and s.personal)


def has_facet(name: str | None, facet: str) -> bool:
    s = slot(name)
    return bool(s and facet in s.facets)


def asked_as(name: str) -> str:
    """What the engine asks the citizen for when ``name`` is missing (coordinates → place)."""
    s = slot(name)
    return s.asked_as if s is not None and s.asked_as else name


def question(name: str) -> SlotQuestion | None:
    """What the engine asks when a required field of slot type ``name`` is missing (registry/_slots
    ``question``, or the question of the slot it is asked as)."""
    return slot_table().question_for(name)


def parts_of(name: str) -> tuple[str, ...]:
    s = slot(name)
    return tuple(s.parts) if s is not None else ()


def whole_of(name: str) -> str | None:
    return slot_table().whole_of(name)


def expand(names: set[str] | frozenset[str]) -> set[str]:
    """``names`` with each whole's parts and each complete set of parts' whole (coordinates ⇄
    latitude + longitude)."""
    out = set(names)
    for n, s in slot_table().slots.items():
        if s.parts and n in out:
            out |= set(s.parts)
        if s.parts and set(s.parts) <= out:
            out.add(n)
    return out


__all__ = ["SlotTableMissing", "asked_as", "carried", "derived", "expand", "folder", "has_facet", "is_personal",
           "names_with", "parts_of", "personal", "question", "slot", "slot_of", "slot_table", "use", "whole_of"]
