"""Load manifests and profiles from YAML, keeping line numbers for every error.

Every problem is reported as ``path:line: message``, and loading never stops at the first one: a
contributor fixes a manifest in one pass, not one error per build.
"""

from __future__ import annotations

import hashlib
import marshal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from .emit_cache import write_atomic
from .manifest import Manifest, Profile

PROFILES_DIR = "_profiles"
SCENARIOS_DIR = "scenarios"
FIXTURES_DIR = "fixtures"


@dataclass(frozen=True, order=True)
class Problem:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class LoadError(Exception):
    """Raised with every problem found, not only the first."""

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(set(problems))
        super().__init__("\n".join(str(p) for p in self.problems))


@dataclass
class Located:
    """A parsed document with a map from key paths to the line they start on (1-based)."""

    path: Path
    rel: str
    data: Any
    lines: dict[tuple[Any, ...], int] = field(default_factory=dict)

    def line_of(self, loc: tuple[Any, ...]) -> int:
        # Walk up until a located ancestor is found; the document start is line 1.
        loc = tuple(loc)
        while loc:
            if loc in self.lines:
                return self.lines[loc]
            loc = loc[:-1]
        return 1


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

    def by_id(self) -> dict[str, LoadedManifest]:
        return {m.id: m for m in self.manifests}


def _index_lines(node: yaml.Node, prefix: tuple[Any, ...], out: dict[tuple[Any, ...], int]) -> None:
    out.setdefault(prefix, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            _index_lines(value_node, prefix + (key,), out)
            # A key's own line wins over its value's (a nested mapping starts a line later).
            out[prefix + (key,)] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index_lines(item, prefix + (i,), out)


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys instead of silently keeping the last one."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"duplicate key '{key}' (first on line {seen[key]})",
                key_node.start_mark,
            )
        seen[key] = key_node.start_mark.line + 1
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping
)
# Dates stay strings in schemas/fixtures unless a model field asks for a date: YAML's implicit
# timestamp resolution would otherwise turn "2026-11-30" in a fixture request into a date object.
_UniqueKeyLoader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


# libyaml when present: the pure-Python parser costs ~60 ms per manifest, which a 1,000-adapter
# build cannot afford. Only the happy path uses it; any error is re-parsed by the pure-Python loader
# so messages and line marks stay the ones documented and tested.
_CUniqueKeyLoader: type | None = None
if getattr(yaml, "__with_libyaml__", False):

    class _CUniqueKeyLoader(yaml.CSafeLoader):  # type: ignore[no-redef]
        pass

    _CUniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    _CUniqueKeyLoader.yaml_implicit_resolvers = _UniqueKeyLoader.yaml_implicit_resolvers


def _parse_fast(text: str) -> tuple[Any, Any] | None:
    if _CUniqueKeyLoader is None:
        return None
    loader = _CUniqueKeyLoader(text)
    try:
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()


class ParseCache:
    """Parsed YAML (data and line map) by the sha256 of the file's bytes, so a build after editing
    one manifest re-parses that one: YAML parsing with line marks is ~7 ms a manifest, most of a
    1,000-adapter incremental build. Entries are marshal (exact Python values, no code on load);
    only documents that parsed cleanly are kept, so every error still comes from a fresh parse."""

    VERSION = b"parse-1"

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def key(self, raw: bytes) -> str:
        return hashlib.sha256(self.VERSION + b"\0" + raw).hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.marshal"

    def get(self, key: str) -> tuple[Any, dict[tuple[Any, ...], int]] | None:
        try:
            data, lines = marshal.loads(self._path(key).read_bytes())
            return data, lines
        except (OSError, ValueError, EOFError, TypeError):
            return None

    def put(self, key: str, data: Any, lines: dict[tuple[Any, ...], int]) -> None:
        try:
            blob = marshal.dumps((data, lines))
        except ValueError:  # a value marshal cannot hold: just not cached
            return
        write_atomic(self._path(key), blob)


def parse_yaml(path: Path, rel: str, cache: ParseCache | None = None) -> tuple[Located | None, list[Problem]]:
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Problem(rel, 1, f"cannot read: {exc}")]
    key = cache.key(raw) if cache is not None else ""
    if cache is not None and (hit := cache.get(key)) is not None:
        return Located(path, rel, hit[0], hit[1]), []
    try:
        fast = _parse_fast(text)
        if fast is not None:
            node, data = fast
        else:
            node = yaml.compose(text, Loader=_UniqueKeyLoader)
            data = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        msg = " ".join(s for s in (exc.context, exc.problem) if s)
        return None, [Problem(rel, line, f"YAML syntax error: {msg}")]
    except yaml.YAMLError as exc:
        return None, [Problem(rel, 1, f"YAML error: {exc}")]
    lines: dict[tuple[Any, ...], int] = {}
    if node is not None:
        _index_lines(node, (), lines)
    if cache is not None:
        cache.put(key, data, lines)
    return Located(path, rel, data, lines), []


def _validation_problems(doc: Located, exc: ValidationError) -> list[Problem]:
    problems = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        # pydantic puts union member names / validator tags into loc; drop anything that is not a
        # key or index of the document so the line lookup still finds the closest real node.
        clean = tuple(p for p in loc if isinstance(p, int) or (isinstance(p, str) and not p.startswith("function-")))
        where = ".".join(str(p) for p in clean) or "(document)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = f"unknown key '{clean[-1]}'" if clean else "unknown key"
        elif err["type"] == "missing":
            msg = f"missing required key '{clean[-1]}'" if clean else "missing required key"
        problems.append(Problem(doc.rel, doc.line_of(clean), f"{where}: {msg}"))
    return problems


def validate_doc(doc: Located, model: type[BaseModel]) -> tuple[Any, list[Problem]]:
    if not isinstance(doc.data, dict):
        return None, [Problem(doc.rel, 1, "a manifest must be a YAML mapping")]
    try:
        return model.model_validate(doc.data), []
    except ValidationError as exc:
        return None, _validation_problems(doc, exc)


def manifest_paths(root: Path) -> list[Path]:
    reg = root / "registry"
    out = []
    for p in sorted(reg.rglob("*.yaml")):
        parts = p.relative_to(reg).parts
        if parts[0] in (PROFILES_DIR, SCENARIOS_DIR) or FIXTURES_DIR in parts:
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
    problems: list[Problem] = []
    profiles: dict[str, Profile] = {}
    profile_sources: dict[str, Located] = {}
    for p in sorted((root / "registry" / PROFILES_DIR).glob("*.yaml")):
        rel = p.relative_to(root).as_posix()
        doc, errs = parse_yaml(p, rel, cache)
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
        doc, errs = parse_yaml(p, rel, cache)
        problems += errs
        if doc is None:
            continue
        m, errs = validate_doc(doc, Manifest)
        problems += errs
        if m is None:
            continue
        if m.id != p.stem:
            problems.append(Problem(rel, doc.line_of(("id",)), f"id '{m.id}' must match file name '{p.stem}'"))
        manifests.append(LoadedManifest(m, doc))
    manifests.sort(key=lambda lm: lm.id)
    return Registry(root, manifests, profiles, profile_sources), problems
