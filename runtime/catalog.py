"""The catalog the runtime loads: ``generated/catalog.json`` plus fixture bodies beside it.

catalog.json = {"format": 1, "release_id": "<lock hash>", "adapters": [<resolved manifest>, ...]}
where each adapter is ``Manifest.model_dump(mode="json")`` with its upstream profile merged in
(codegen/profile_merge.py), sorted by id. Fixture bodies are copied byte-for-byte to
``generated/fixtures/<adapter_id>/<file>`` so an installed runtime never needs registry/.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ummaya.model.manifest import Manifest
from ummaya.paths import generated_dir as default_generated_dir

CATALOG_FORMAT = 1


class CatalogError(Exception):
    pass


class CompiledAdapters(Mapping[str, Manifest]):
    """The adapters of a loaded catalog.json, by id, each validated into its ``Manifest`` the first
    time it is read. A cold ``ummaya ask`` reads a handful of the catalog's adapters; validating
    all of them (159 today, 10,000 in the benchmarks) at start cost most of ``Catalog.load``. The
    ids, membership and size come from the raw JSON without validating anything; ``values()`` and
    ``items()`` validate every adapter, once. An adapter the build wrote that does not validate
    raises ``CatalogError`` naming it, when it is read."""

    __slots__ = ("_raw", "_done", "_path")

    def __init__(self, raw: dict[str, dict], path: Path) -> None:
        self._raw = raw
        self._done: dict[str, Manifest] = {}
        self._path = path

    def __getitem__(self, adapter_id: str) -> Manifest:
        m = self._done.get(adapter_id)
        if m is None:
            data = self._raw[adapter_id]  # KeyError: an unknown id, as a dict says it
            from pydantic import ValidationError

            try:
                m = Manifest.model_validate(data)
            except ValidationError as exc:
                raise CatalogError(f"{self._path}: adapter '{adapter_id}' does not validate: {exc}") from exc
            self._done[adapter_id] = m
        return m

    def __contains__(self, adapter_id: object) -> bool:
        return adapter_id in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def primitive(self, adapter_id: str) -> str:
        """An adapter's primitive, read from the build's JSON without validating the adapter
        (``Catalog.locate_providers`` picks the few ``locate`` adapters by it)."""
        m = self._done.get(adapter_id)
        return m.primitive if m is not None else str(self._raw[adapter_id]["primitive"])

    def validated(self) -> int:
        """How many adapters have been validated so far (benchmarks and tests read it)."""
        return len(self._done)


@dataclass
class Catalog:
    root: Path  # the generated/ folder
    release_id: str
    adapters: Mapping[str, Manifest] = field(default_factory=dict)

    @classmethod
    def load(cls, generated: Path | None = None) -> Catalog:
        generated = Path(generated) if generated else default_generated_dir()
        path = generated / "catalog.json"
        try:
            raw = json.loads(path.read_bytes())
        except FileNotFoundError as exc:
            raise CatalogError(f"{path}: not built yet — run `ummaya build`") from exc
        except json.JSONDecodeError as exc:
            raise CatalogError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from exc
        if raw.get("format") != CATALOG_FORMAT:
            raise CatalogError(f"{path}: catalog format {raw.get('format')} is not {CATALOG_FORMAT}")
        adapters = CompiledAdapters({a["id"]: a for a in raw["adapters"]}, path)
        # The slot table and vocabularies compiled beside this catalog are the ones in use (a
        # catalog-only folder, e.g. a benchmark's, keeps the ones already in use).
        from .understand.table import use

        use(generated)
        return cls(generated, raw["release_id"], adapters)

    def get(self, adapter_id: str) -> Manifest:
        try:
            return self.adapters[adapter_id]
        except KeyError as exc:
            raise CatalogError(f"unknown adapter '{adapter_id}'") from exc

    def fixture_path(self, adapter_id: str, filename: str) -> Path:
        return self.root / "fixtures" / adapter_id / filename

    @cached_property
    def ids(self) -> list[str]:
        return sorted(self.adapters)

    @cached_property
    def locate_providers(self) -> dict[str, list[Manifest]]:
        """Slot → the ``locate`` adapters that provide it, by id. Built once, so a turn that
        widens its candidates with providers looks up the few slots it needs instead of scanning
        every adapter."""
        out: dict[str, list[Manifest]] = {}
        adapters = self.adapters
        for adapter_id in self.ids:
            if isinstance(adapters, CompiledAdapters) and adapters.primitive(adapter_id) != "locate":
                continue
            m = adapters[adapter_id]
            if m.primitive == "locate":
                for slot in m.provides:
                    out.setdefault(slot, []).append(m)
        return out

    @cached_property
    def guidance(self):  # -> runtime.guidance.Guidance (imported lazily: most commands never need it)
        """Emergencies, official channels and service words (``generated/guidance.json``)."""
        from .guidance_reader import Guidance

        return Guidance.load(self.root)
