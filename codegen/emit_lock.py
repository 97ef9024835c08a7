"""``generated/registry.lock``: what a release is made of.

The release id is the sha256 of every input file (path and content), so it is the lock's key: same
registry -> same id, on any machine. Beside the input hashes the lock keeps a per-adapter
*interface summary* (required inputs, input properties, flattened output fields, version,
primitive, tier) — exactly what the breaking-change gate diffs between two releases — and the
hash of every emitted file, so a rebuild can prove it has nothing to do.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the no-op rebuild path imports this module and must not pay for pydantic
    from .manifest import Manifest

SCENARIOS_DIR = "scenarios"  # codegen.loader.SCENARIOS_DIR

LOCK_PATH = "generated/registry.lock"
LOCK_FORMAT = 1


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_json(obj: Any) -> bytes:
    """The one JSON spelling every committed artifact uses: sorted keys, 2-space indent, '\\n'."""
    return (json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=2) + "\n").encode("utf-8")


def input_files(root: Path) -> list[Path]:
    """Every file the build reads: profiles, manifests and fixture bodies under registry/.

    Scenarios are evaluation inputs, not build inputs, so editing one does not change the release.
    """
    reg = root / "registry"
    out = []
    for p in reg.rglob("*"):
        rel = p.relative_to(reg).parts
        if not p.is_file() or rel[0] == SCENARIOS_DIR or any(part.startswith(".") for part in rel):
            continue
        if "__pycache__" in rel:
            continue
        out.append(p)
    return sorted(out, key=lambda p: p.relative_to(root).as_posix())


def hash_inputs(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): sha256(p.read_bytes()) for p in input_files(root)}


def release_id(inputs: dict[str, str]) -> str:
    h = hashlib.sha256()
    for path in sorted(inputs):
        h.update(path.encode("utf-8") + b"\0" + inputs[path].encode("ascii") + b"\n")
    return h.hexdigest()


def _deref(schema: Any, root_schema: dict) -> Any:
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/") and seen < 32:
        node: Any = root_schema
        for part in schema["$ref"][2:].split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        schema, seen = node, seen + 1
    return schema


def flatten_fields(schema: Any, root_schema: dict | None = None, prefix: str = "") -> list[str]:
    """Output field paths: ``items[].name``. Union members (anyOf/oneOf/allOf) contribute theirs."""
    root_schema = root_schema if root_schema is not None else schema
    schema = _deref(schema, root_schema)
    if not isinstance(schema, dict):
        return []
    out: set[str] = set()
    for key in ("anyOf", "oneOf", "allOf"):
        for member in schema.get(key) or []:
            out.update(flatten_fields(member, root_schema, prefix))
    for name, sub in (schema.get("properties") or {}).items():
        path = f"{prefix}.{name}" if prefix else name
        out.add(path)
        out.update(flatten_fields(sub, root_schema, path))
    items = schema.get("items")
    if isinstance(items, dict) and prefix:
        out.update(flatten_fields(items, root_schema, f"{prefix}[]"))
    return sorted(out)


def interface(manifest: Manifest, source: str) -> dict[str, Any]:
    inp = manifest.input_schema
    return {
        "version": manifest.version,
        "primitive": manifest.primitive,
        "tier": manifest.tier,
        "source": source,
        "input_required": sorted(inp.get("required") or []),
        "input_properties": sorted((inp.get("properties") or {}).keys()),
        "output_fields": flatten_fields(manifest.output_schema),
    }


def emit_lock(
    inputs: dict[str, str],
    manifests: list[tuple[Manifest, str]],
    generator: str,
    outputs: dict[str, bytes],
) -> dict[str, bytes]:
    """The lock over ``outputs`` (every other emitted file), keyed by the release id."""
    lock = {
        "format": LOCK_FORMAT,
        "release_id": release_id(inputs),
        "generator": generator,
        "inputs": inputs,
        "adapters": {m.id: interface(m, src) for m, src in manifests},
        "outputs": {path: sha256(data) for path, data in sorted(outputs.items()) if path != LOCK_PATH},
    }
    return {LOCK_PATH: canonical_json(lock)}


def read_lock(data: bytes) -> dict[str, Any]:
    lock = json.loads(data)
    if not isinstance(lock, dict) or lock.get("format") != LOCK_FORMAT or "adapters" not in lock:
        raise ValueError(f"not a registry.lock of format {LOCK_FORMAT}")
    return lock
