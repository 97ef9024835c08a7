"""The breaking-change gate: diff two releases' interface summaries (``registry.lock``).

A client built against the old release breaks when an adapter disappears or is renamed, when an
output field it reads disappears, or when a call it makes starts lacking a required input. Each is
allowed only with a major version bump of that adapter (semver); a plain removal has no new
version to bump and always fails.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ummaya.codegen.emit_lock import LOCK_PATH, interface, read_lock


@dataclass(frozen=True, order=True)
class Break:
    adapter_id: str
    kind: str  # removed | renamed | output_removed | required_added
    detail: str

    def __str__(self) -> str:
        return f"{self.adapter_id}: {self.kind}: {self.detail}"


def major(version: str) -> int:
    return int(version.split(".", 1)[0])


def load_reference(root: Path, ref: str) -> dict[str, Any]:
    """A lock from a file path, or ``generated/registry.lock`` as committed at a git ref."""
    path = Path(ref)
    if not path.is_absolute():
        path = Path.cwd() / ref
    if path.is_file():
        return read_lock(path.read_bytes())
    proc = subprocess.run(["git", "show", f"{ref}:{LOCK_PATH}"], cwd=root, capture_output=True)
    if proc.returncode != 0:
        raise ValueError(f"{ref}: neither a lock file nor a git ref with {LOCK_PATH} ({proc.stderr.decode(errors='replace').strip()})")
    return read_lock(proc.stdout)


def current_interfaces(root: Path) -> tuple[dict[str, Any], list]:
    from ummaya.codegen.loader import load_registry

    registry, problems = load_registry(root)
    return {lm.id: interface(lm.manifest, lm.source.rel) for lm in registry.manifests}, problems


def _shape(iface: dict[str, Any]) -> tuple:
    return (iface["primitive"], tuple(iface["input_properties"]), tuple(iface["input_required"]), tuple(iface["output_fields"]))


def breaking_changes(old: dict[str, dict], new: dict[str, dict]) -> list[Break]:
    breaks: list[Break] = []
    removed = sorted(set(old) - set(new))
    added = sorted(set(new) - set(old))
    for adapter_id in removed:
        # A removed id whose exact interface reappears under a new id is a rename.
        successor = next((a for a in added if _shape(new[a]) == _shape(old[adapter_id])), None)
        if successor is None:
            breaks.append(Break(adapter_id, "removed", f"adapter removed (was {old[adapter_id]['version']})"))
            continue
        added.remove(successor)
        if major(new[successor]["version"]) <= major(old[adapter_id]["version"]):
            breaks.append(Break(adapter_id, "renamed", f"renamed to '{successor}' without a major version bump ({old[adapter_id]['version']} -> {new[successor]['version']})"))
    for adapter_id in sorted(set(old) & set(new)):
        before, after = old[adapter_id], new[adapter_id]
        if major(after["version"]) > major(before["version"]):
            continue
        bump = f"without a major version bump ({before['version']} -> {after['version']})"
        gone = sorted(set(before["output_fields"]) - set(after["output_fields"]))
        if gone:
            breaks.append(Break(adapter_id, "output_removed", f"output field(s) removed {bump}: {', '.join(gone)}"))
        required = sorted(set(after["input_required"]) - set(before["input_required"]))
        if required:
            breaks.append(Break(adapter_id, "required_added", f"required input(s) added {bump}: {', '.join(required)}"))
    return sorted(breaks)
