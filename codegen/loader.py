"""Load manifests and profiles from YAML, keeping line numbers for every error.

Every problem is reported as ``path:line: message``, and loading never stops at the first one: a
contributor fixes a manifest in one pass, not one error per build.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ummaya.model.containment import bad_relative_name, inside, unreadable
# The located-document reader lives in the model layer (the runtime reads scenario files with it);
# its names are re-exported here for the build's modules and callers.
from ummaya.model.documents import (
    LoadError as LoadError,
    Located as Located,
    ParseCache as ParseCache,
    Problem as Problem,
    parse_document as parse_document,
    parse_yaml as parse_yaml,
    validate_doc as validate_doc,
)
from ummaya.model.manifest import Manifest, Profile

PROFILES_DIR = "_profiles"
SCENARIOS_DIR = "scenarios"
FIXTURES_DIR = "fixtures"


@dataclass
class LoadedManifest:
    manifest: Manifest
    source: Located

    @property
    def id(self) -> str:
        return self.manifest.id

    @property
    def fixtures_dir(self) -> Path:
        return self.source.path.parent / FIXTURES_DIR / self.manifest.id


@dataclass
class Registry:
    root: Path
    manifests: list[LoadedManifest]
    profiles: dict[str, Profile]
    profile_sources: dict[str, Located]
    # Slot types and vocabularies (registry/_slots/, registry/_vocab/): codegen/understand.py.
    understanding: Any = None

    def by_id(self) -> dict[str, LoadedManifest]:
        return {m.id: m for m in self.manifests}


def manifest_paths(root: Path) -> list[Path]:
    reg = root / "registry"
    out = []
    for p in sorted(reg.rglob("*.yaml")):
        parts = p.relative_to(reg).parts
        # registry/_<kind>/ folders hold shared data (profiles, channels, emergencies …), not manifests.
        if parts[0].startswith("_") or parts[0] == SCENARIOS_DIR or FIXTURES_DIR in parts:
            continue
        out.append(p)
    return out


def load_registry(root: Path, cache: ParseCache | None = None) -> tuple[Registry, list[Problem]]:
    """Parse and validate every profile and manifest under ``root/registry`` (``cache``: reuse
    parses of unchanged files).

    Returns the registry (with whatever loaded) and every problem found. Cross-manifest checks
    (unique ids, profiles exist, fixtures, requires) are the link stage's job.
    """
    root = root.resolve()
    registry = (root / "registry").resolve()
    if (root / "registry").is_symlink() or not inside(registry, root):
        # Containment is judged against registry/ itself: a registry/ that is a symlink would make
        # whatever it points at (another checkout, the CI workspace, /) count as "inside".
        return Registry(root, [], {}, {}), [Problem(
            "registry", 1, f"registry/ must be a real folder of the checkout, not a symlink "
            f"(it resolves to {registry})")]
    problems: list[Problem] = _unreadable_inputs(root, registry)
    profiles: dict[str, Profile] = {}
    profile_sources: dict[str, Located] = {}
    for p in sorted((root / "registry" / PROFILES_DIR).glob("*.yaml")):
        rel = p.relative_to(root).as_posix()
        doc, errs = parse_yaml(p, rel, cache, within=registry)
        problems += errs
        if doc is None:
            continue
        prof, errs = validate_doc(doc, Profile)
        problems += errs
        if prof is not None:
            if prof.id != p.stem:
                problems.append(Problem(rel, doc.line_of(("id",)), f"profile id '{prof.id}' must match file name '{p.stem}'"))
            profiles[prof.id] = prof
            profile_sources[prof.id] = doc

    manifests: list[LoadedManifest] = []
    for p in manifest_paths(root):
        rel = p.relative_to(root).as_posix()
        doc, errs = parse_yaml(p, rel, cache, within=registry)
        problems += errs
        if doc is None:
            continue
        m, errs = validate_doc(doc, Manifest)
        problems += errs
        if m is None:
            continue
        if m.id != p.stem:
            problems.append(Problem(rel, doc.line_of(("id",)), f"id '{m.id}' must match file name '{p.stem}'"))
        lm = LoadedManifest(m, doc)
        errs = _fixture_path_problems(lm, registry)
        problems += errs
        if not errs:  # never handed on: link and the emitters would read (and copy) the file
            manifests.append(lm)
    manifests.sort(key=lambda lm: lm.id)
    from .understand import load_understanding

    understanding, errs = load_understanding(root, cache)
    problems += errs
    return Registry(root, manifests, profiles, profile_sources, understanding), problems


def _fixture_path_problems(lm: LoadedManifest, registry: Path) -> list[Problem]:
    """Every fixture body a manifest names stays inside its fixtures folder and inside registry/
    after symlinks, and is a regular file of bounded size (a missing one is link's to report)."""
    problems = []
    for i, fx in enumerate(lm.manifest.fixtures):
        if fx.response is None:
            continue
        line = lm.source.line_of(("fixtures", i, "response"))
        why = bad_relative_name(fx.response)
        if why is None:
            path = lm.fixtures_dir / fx.response
            if not os.path.lexists(path):
                continue
            # The file or any folder on its way may be a symlink: contain the resolved path.
            if not inside(path, registry):
                why = f"resolves outside registry/ (symlink to {os.path.realpath(path)})"
            else:
                why = unreadable(path, registry)
        if why is not None:
            problems.append(Problem(lm.source.rel, line, f"fixtures.{i}.response '{fx.response}': {why}"))
    return problems


def _unreadable_inputs(root: Path, registry: Path) -> list[Problem]:
    """Every file under registry/ is a build input (hashed into the release id), so each must be a
    regular file inside registry/ — a symlink out, a FIFO or a device is refused, located."""
    from .emit_lock import input_files

    problems = []
    scenarios = sorted(p.relative_to(root).as_posix() for p in (root / "registry" / SCENARIOS_DIR).glob("*.yaml"))
    for rel in input_files(root) + scenarios:
        why = unreadable(root / rel, registry)
        if why is not None:
            problems.append(Problem(rel, 1, why))
    # Folders that are symlinks are not walked (nor hashed): one pointing out is refused too.
    for folder, dirs, _files in os.walk(root / "registry"):
        for d in dirs:
            path = Path(folder, d)
            if path.is_symlink() and not inside(path, registry):
                rel = path.relative_to(root).as_posix()
                problems.append(Problem(rel, 1, f"resolves outside registry/ (symlink to {os.path.realpath(path)})"))
    return problems
