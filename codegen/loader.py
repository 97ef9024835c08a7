"""Load manifests and profiles from YAML, keeping line numbers for every error.

Every problem is reported as ``path:line: message``, and loading never stops at the first one: a
contributor fixes a manifest in one pass, not one error per build.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
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
    # What the build derived from this adapter alone (link verdicts, catalog part, service words …),
    # plain marshal-able values by name: AdapterStates keeps it per manifest state, so the next
    # build reads it instead of re-deriving it (codegen/adapter_state.py).
    state: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def id(self) -> str:
        return self.manifest.id

    @property
    def fixtures_dir(self) -> Path:
        return self.source.path.parent / FIXTURES_DIR / self.manifest.id

    @property
    def rel(self) -> str:
        return self.source.rel

    def derived(self, name: str, compute: Callable[..., Any], *args: Any) -> Any:
        """``state[name]``, else ``compute(*args)`` (from the manifest), remembered."""
        try:
            return self.state[name]
        except KeyError:
            value = self.state[name] = compute(*args)
            return value


class LazyManifest(LoadedManifest):
    """A manifest whose file, shared registry data and generator are exactly those of a build that
    loaded it cleanly: its derived ``state`` is that build's, and the YAML is parsed and validated
    only when a step asks for something the state does not hold (then exactly as a fresh load)."""

    def __init__(self, path: Path, rel: str, state: dict, cache: ParseCache | None, registry: Path):
        self._path, self._rel, self._cache, self._registry = path, rel, cache, registry
        self._loaded: tuple[Manifest, Located] | None = None
        self.state = state

    def _load(self) -> tuple[Manifest, Located]:
        if self._loaded is None:
            doc, errs = parse_yaml(self._path, self._rel, self._cache, within=self._registry)
            m, verrs = validate_doc(doc, Manifest) if doc is not None else (None, [])
            if doc is None or m is None:  # its file changed under the build
                raise LoadError([*errs, *verrs] or [Problem(self._rel, 1, "no longer loads as it did when the build started")])
            self._loaded = (m, doc)
        return self._loaded

    @property
    def manifest(self) -> Manifest:
        return self._load()[0]

    @property
    def source(self) -> Located:
        return self._load()[1]

    @property
    def id(self) -> str:
        return self.state["id"]

    @property
    def fixtures_dir(self) -> Path:
        return self._path.parent / FIXTURES_DIR / self.state["id"]

    @property
    def rel(self) -> str:
        return self._rel


@dataclass
class Registry:
    root: Path
    manifests: list[LoadedManifest]
    profiles: dict[str, Profile]
    profile_sources: dict[str, Located]
    # Slot types and vocabularies (registry/_slots/, registry/_vocab/): codegen/understand.py.
    understanding: Any = None
    # Every manifest file's path (manifest_paths), loaded or not: link reads their names.
    paths: list[Path] | None = None

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


def load_registry(root: Path, cache: ParseCache | None = None, states=None,
                  inputs: dict[str, str] | None = None) -> tuple[Registry, list[Problem]]:
    """Parse and validate every profile and manifest under ``root/registry`` (``cache``: reuse
    parses of unchanged files; ``states``: codegen.adapter_state.AdapterStates, whose hits are
    not parsed at all but handed on as LazyManifest; ``inputs``: the build's ``{path: sha256}``,
    whose "unreadable" verdicts need not be taken again).

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
    problems: list[Problem] = _unreadable_inputs(root, registry, inputs)
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
    fresh: list[LoadedManifest] = []
    paths = manifest_paths(root)
    for p in paths:
        rel = p.relative_to(root).as_posix()
        state = states.get(rel) if states is not None else None
        if state is not None and state["id"] == p.stem:
            manifests.append(LazyManifest(p, rel, state, cache, registry))
            continue
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
            fresh.append(lm)
    manifests.sort(key=lambda lm: lm.id)
    if states is not None:
        # Kept only for a manifest with no load problem of its own: its errors come from a fresh load.
        troubled = {p.path for p in problems}
        for lm in fresh:
            if lm.source.rel not in troubled:
                lm.state["id"] = lm.id  # the builder stores only states with an id
    from .understand import load_understanding

    understanding, errs = load_understanding(root, cache)
    problems += errs
    return Registry(root, manifests, profiles, profile_sources, understanding, paths), problems


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


def _unreadable_inputs(root: Path, registry: Path, inputs: dict[str, str] | None = None) -> list[Problem]:
    """Every file under registry/ is a build input (hashed into the release id), so each must be a
    regular file inside registry/ — a symlink out, a FIFO or a device is refused, located.
    (``inputs``: emit_lock.hash_inputs of this build, which judged each input file already; only
    those it found unreadable are judged again, for the reason.)"""
    from .emit_lock import input_files

    problems = []
    scenarios = sorted(p.relative_to(root).as_posix() for p in (root / "registry" / SCENARIOS_DIR).glob("*.yaml"))
    files = input_files(root) if inputs is None else [r for r, h in inputs.items() if h == "unreadable"]
    for rel in sorted(files + scenarios):
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
