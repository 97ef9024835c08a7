"""``generated/catalog.json``, the fixture bodies beside it, and ``generated/manifest.schema.json``.

The catalog carries every manifest with its upstream profile merged in, so the runtime never reads
registry/ or the profile files; fixture bodies are copied byte for byte for the Mock transport.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .emit_lock import canonical_json, item_json, splice_list_bytes
from ummaya.model.fixture_files import fixture_files
from .loader import LoadedManifest
from ummaya.model.manifest import Manifest

CATALOG_FORMAT = 1  # runtime/catalog.py reads this format
CATALOG_PATH = "generated/catalog.json"
SCHEMA_PATH = "generated/manifest.schema.json"


def emit_catalog(resolved: list[Manifest], release_id: str) -> dict[str, bytes]:
    adapters = [m.model_dump(mode="json") for m in sorted(resolved, key=lambda m: m.id)]
    return {CATALOG_PATH: canonical_json({"format": CATALOG_FORMAT, "release_id": release_id, "adapters": adapters})}


def catalog_part(resolved: Manifest) -> bytes:
    """One adapter of the catalog, encoded as it sits in the file (the build caches it per adapter)."""
    return item_json(resolved.model_dump(mode="json"), 2).encode("utf-8")


def assemble_catalog(parts: list[tuple[str, bytes]], release_id: str) -> dict[str, bytes]:
    """:func:`emit_catalog`'s bytes from ``(id, catalog_part)`` pairs."""
    items = [p for _, p in sorted(parts, key=lambda ip: ip[0])]
    body = splice_list_bytes({"format": CATALOG_FORMAT, "release_id": release_id}, "adapters", items, 2)
    return {CATALOG_PATH: body + b"\n"}


def emit_fixtures(manifests: list[LoadedManifest], resolved: Callable[[LoadedManifest], Manifest]) -> dict[str, bytes]:
    """Exactly the files ``model.fixtures.fixture_files`` says a Mock call reads (a fixture's body and,
    for an adapter with a lookup, its ``.lookup`` sibling): one contract shared with the runtime,
    so the shipped Mock runs the same requests the registry's fixtures describe. ``resolved``:
    the manifest with its profile merged. The names are kept in each adapter's state (they read its
    manifest and which files its fixtures folder holds: both in the state's key)."""
    out: dict[str, bytes] = {}
    for lm in manifests:
        def names(lm=lm) -> list[str]:
            m = resolved(lm)
            return [name for fx in m.fixtures for name in fixture_files(m, fx, lm.fixtures_dir)]

        folder = lm.fixtures_dir
        for name in lm.derived("fixture_files", names):
            out[f"generated/fixtures/{lm.id}/{name}"] = (folder / name).read_bytes()
    return out


def emit_schema(slots: Any = None) -> dict[str, bytes]:
    return {SCHEMA_PATH: canonical_json(manifest_json_schema(slots))}


def manifest_json_schema(slots: Any = None) -> dict[str, Any]:
    """The manifest model's JSON Schema as published in generated/, with the x- keys documented
    (``slots``: the registry's slot table, whose types x-slot may name)."""
    from .extension_check import document_x_keys  # the registered names, documented

    schema = document_x_keys(Manifest.model_json_schema(), slots)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "urn:ummaya:schema:manifest"  # no URL: the project owns no domain
    return schema
