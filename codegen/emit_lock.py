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
import os
from json.encoder import encode_basestring as _enc_str  # the C encoder when _json is there
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the no-op rebuild path imports this module and must not pay for pydantic
    from ummaya.model.manifest import Manifest

SCENARIOS_DIR = "scenarios"  # codegen.loader.SCENARIOS_DIR

LOCK_PATH = "generated/registry.lock"
LOCK_FORMAT = 1


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_json(obj: Any) -> bytes:
    """The one JSON spelling every committed artifact uses: sorted keys, 2-space indent, '\\n'."""
    return (dumps_indented(obj, 2) + "\n").encode("utf-8")


def dumps_indented(obj: Any, indent: int) -> str:
    """``json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=indent)``, character for
    character, without the standard library's generator-based pure-Python encoder (which ``indent``
    forces; it was an eighth of an incremental build): strings go through the C string encoder,
    containers through one recursive function. A type the fast path does not know (anything but
    dict/list/tuple/str/int/float/bool/None, or a key that is not a str) falls back to
    ``json.dumps`` itself, so the spelling never depends on which path ran."""
    try:
        parts: list[str] = []
        _walk(obj, parts, "\n", " " * indent)
        return "".join(parts)
    except _Unsupported:
        if _has_encoded(obj):  # json.dumps would spell it as a string
            raise TypeError("an Encoded value inside a document the fast path cannot encode") from None
        return json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=indent)


class Encoded(str):
    """A value already spelled by :func:`item_json` for depth two (``{"key": {"id": value}}`` or
    ``{"key": [value]}``), which :func:`dumps_indented` writes as it is: the lock's interfaces and
    guidance's service words are kept encoded per adapter, so a build encodes one, not 1,000."""


def _has_encoded(o: Any) -> bool:
    if type(o) is Encoded:
        return True
    if isinstance(o, dict):
        return any(_has_encoded(v) for v in o.values())
    if isinstance(o, (list, tuple)):
        return any(_has_encoded(v) for v in o)
    return False


def splice_list(obj: dict, key: str, items: list[str], indent: int) -> str:
    """``dumps_indented(obj | {key: [...]}, indent)`` where ``obj[key]`` is a list whose items are
    already encoded by :func:`item_json` (cached per adapter): only the envelope is encoded here."""
    if not items:
        return dumps_indented({**obj, key: []}, indent)
    text = dumps_indented({**obj, key: [_PLACEHOLDER]}, indent)
    marker = _enc_str(_PLACEHOLDER)
    if text.count(marker) != 1:  # a value spelling the marker itself: never in practice, still exact
        raise ValueError("splice marker found in the envelope")
    return text.replace(marker, (",\n" + " " * (2 * indent)).join(items))


def splice_list_bytes(obj: dict, key: str, items: list[bytes], indent: int) -> bytes:
    """:func:`splice_list` encoded as UTF-8, from items already encoded (the catalog's parts:
    twenty megabytes at 1,000 adapters, not decoded and encoded again)."""
    if not items:
        return splice_list(obj, key, [], indent).encode("utf-8")
    text = dumps_indented({**obj, key: [_PLACEHOLDER]}, indent)
    marker = _enc_str(_PLACEHOLDER)
    if text.count(marker) != 1:
        raise ValueError("splice marker found in the envelope")
    head, tail = text.split(marker)
    return head.encode("utf-8") + (",\n" + " " * (2 * indent)).encode("utf-8").join(items) + tail.encode("utf-8")


def item_json(item: Any, indent: int) -> str:
    """One item of a list at depth two (``{"key": [item, …]}``), as :func:`splice_list` joins it."""
    return dumps_indented(item, indent).replace("\n", "\n" + " " * (2 * indent))


_PLACEHOLDER = "\x00ummaya-splice\x00"
_FLOAT_REPR = float.__repr__
_INT_REPR = int.__repr__


class _Unsupported(Exception):
    pass


def _float(o: float) -> str:
    if o != o:
        return "NaN"
    if o == float("inf"):
        return "Infinity"
    if o == -float("inf"):
        return "-Infinity"
    return _FLOAT_REPR(o)


def _walk(o: Any, out: list, nl: str, step: str) -> None:
    t = type(o)
    if t is str:
        out.append(_enc_str(o))
    elif t is Encoded:
        if nl != "\n" + step * 2:
            raise ValueError("an Encoded value is spelled for depth two only")
        out.append(str(o))
    elif t is dict:
        if not o:
            out.append("{}")
            return
        inner = nl + step
        keys = list(o)
        for k in keys:
            if type(k) is not str:
                raise _Unsupported
        keys.sort()
        values = [o[k] for k in keys]
        if all(type(v) is str for v in values):  # a flat map (the lock's inputs and outputs): one join
            sep = "," + inner
            out.append("{" + inner + sep.join([_enc_str(k) + ": " + _enc_str(v) for k, v in zip(keys, values, strict=True)]) + nl + "}")
            return
        first = True
        for k in keys:
            out.append(("{" if first else ",") + inner + _enc_str(k) + ": ")
            first = False
            _walk(o[k], out, inner, step)
        out.append(nl + "}")
    elif t is list or t is tuple:
        if not o:
            out.append("[]")
            return
        inner = nl + step
        first = True
        for v in o:
            out.append(("[" if first else ",") + inner)
            first = False
            _walk(v, out, inner, step)
        out.append(nl + "]")
    elif o is None:
        out.append("null")
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif t is int:
        out.append(_INT_REPR(o))
    elif t is float:
        out.append(_float(o))
    else:
        raise _Unsupported


def input_files(root: Path) -> list[str]:
    """Every file the build reads, root-relative: profiles, manifests and fixture bodies under
    registry/. Scenarios are evaluation inputs, not build inputs, so editing one does not change
    the release. (os.walk, not pathlib: this runs on every no-op build.)"""
    reg = os.path.join(root, "registry")
    out: list[str] = []
    for folder, dirs, files in os.walk(reg):
        rel_dir = os.path.relpath(folder, root).replace(os.sep, "/")
        if folder == reg:
            dirs[:] = [d for d in dirs if d != SCENARIOS_DIR]
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        out.extend(f"{rel_dir}/{name}" for name in files if not name.startswith("."))
    return sorted(out)


def hash_inputs(root: Path, hashes=None) -> dict[str, str]:
    """``{root-relative path: sha256}``; ``hashes`` (emit_cache.FileHashes) skips unchanged files.
    A file the build must not read (a symlink out of registry/, a FIFO, a device, an oversized
    file: containment.unreadable) is never opened; the loader reports it, located."""
    from ummaya.model.containment import unreadable

    base = str(root)
    registry = os.path.realpath(os.path.join(base, "registry"))
    out: dict[str, str] = {}
    for rel in input_files(root):
        path = os.path.join(base, rel)
        if unreadable(path, registry) is not None:
            out[rel] = "unreadable"
        elif hashes is None:
            out[rel] = sha256(Path(path).read_bytes())
        else:
            out[rel] = hashes.hash(path)
    return out


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


def _interface_json(lm: Any) -> str:
    return item_json(interface(lm.manifest, lm.rel), 2)


def emit_lock(
    inputs: dict[str, str],
    manifests: list[Any],
    generator: str,
    outputs: dict[str, bytes],
    digests: dict[str, str] | None = None,
) -> dict[str, bytes]:
    """The lock over ``outputs`` (every other emitted file), keyed by the release id.
    ``manifests``: (Manifest, source path) pairs, or LoadedManifest (whose state keeps its interface)."""
    adapters: dict[str, Any] = {}
    for item in manifests:
        if isinstance(item, tuple):
            adapters[item[0].id] = interface(*item)
        else:
            adapters[item.id] = Encoded(item.derived("interface_json", _interface_json, item))
    lock = {
        "format": LOCK_FORMAT,
        "release_id": release_id(inputs),
        "generator": generator,
        "inputs": inputs,
        "adapters": adapters,
        "outputs": {path: digests[path] if digests is not None and path in digests else sha256(data)
                    for path, data in sorted(outputs.items()) if path != LOCK_PATH},
    }
    return {LOCK_PATH: canonical_json(lock)}


def read_lock(data: bytes) -> dict[str, Any]:
    lock = json.loads(data)
    if not isinstance(lock, dict) or lock.get("format") != LOCK_FORMAT or "adapters" not in lock:
        raise ValueError(f"not a registry.lock of format {LOCK_FORMAT}")
    return lock
