"""The catalog the runtime loads: ``generated/catalog.json`` plus fixture bodies beside it.

catalog.json = {"format": 1, "release_id": "<lock hash>", "adapters": [<resolved manifest>, ...]}
where each adapter is ``Manifest.model_dump(mode="json")`` with its upstream profile merged in
(codegen/profile_merge.py), sorted by id. Fixture bodies are copied byte-for-byte to
``generated/fixtures/<adapter_id>/<file>`` so an installed runtime never needs registry/.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ummaya.model.manifest import Manifest
from ummaya.paths import generated_dir as default_generated_dir

CATALOG_FORMAT = 1


class CatalogError(Exception):
    pass


@dataclass
class Catalog:
    root: Path  # the generated/ folder
    release_id: str
    adapters: dict[str, Manifest] = field(default_factory=dict)

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
        adapters = {a["id"]: Manifest.model_validate(a) for a in raw["adapters"]}
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
        for adapter_id in self.ids:
            m = self.adapters[adapter_id]
            if m.primitive == "locate":
                for slot in m.provides:
                    out.setdefault(slot, []).append(m)
        return out

    @cached_property
    def guidance(self):  # -> runtime.guidance.Guidance (imported lazily: most commands never need it)
        """Emergencies, official channels and service words (``generated/guidance.json``)."""
        from .guidance_reader import Guidance

        return Guidance.load(self.root)
