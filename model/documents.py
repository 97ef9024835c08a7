"""Registry documents read from YAML with a line for every key path, and the problems found in
them as ``path:line: message``.

The bottom layer: the build (``codegen/loader.py`` and every check) and the runtime (scenario files)
read registry YAML the same way, through this module, so neither imports the other.
"""

from __future__ import annotations

import hashlib
import marshal
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from .containment import UnsafeFile, inside, read_regular, write_atomic
from .safe_yaml import MAX_NODES, MAX_YAML_BYTES, YamlLimit, check_events, check_flow_depth, check_tree, node_bound


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

class _LocatedConstruction:
    """PyYAML's constructors fail on some explicitly tagged values with bare Python errors
    (``!!timestamp x`` AttributeError, ``!!int ''`` IndexError): each becomes a located error."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)  # type: ignore[misc]
        except yaml.YAMLError:
            raise
        except (ValueError, TypeError, AttributeError, IndexError, KeyError, OverflowError) as exc:
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read this {node.tag.rsplit(':', 1)[-1]} value ({type(exc).__name__})", node.start_mark
            ) from None


class _UniqueKeyLoader(_LocatedConstruction, yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys instead of silently keeping the last one."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, f"a mapping key must be a plain value, not {type(key).__name__}", key_node.start_mark
            ) from None
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
def _c_loader() -> type | None:
    if not getattr(yaml, "__with_libyaml__", False):
        return None

    class _CUniqueKeyLoader(_LocatedConstruction, yaml.CSafeLoader):
        pass

    _CUniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    _CUniqueKeyLoader.yaml_implicit_resolvers = _UniqueKeyLoader.yaml_implicit_resolvers
    return _CUniqueKeyLoader


_CUniqueKeyLoader: type | None = _c_loader()


# A document larger than this that libyaml refuses is reported with libyaml's own message: the
# pure-Python re-parse (for the documented wording) would take seconds on a hostile megabyte.
_REPARSE_LIMIT = 64 * 1024


def _parse_text(text: str) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """Data and line index of one document, every limit in ``safe_yaml`` checked before the data
    is built. The fast path composes with libyaml (which itself stops at 1,000 levels) and walks
    the node graph once for limits and lines; a document libyaml refuses is re-parsed by the
    pure-Python loader (messages and line marks stay the documented ones), which composes only
    after the event stream passed the same limits."""
    if _CUniqueKeyLoader is not None:
        if node_bound(text) > MAX_NODES:
            check_events(text, yaml.CSafeLoader)
        loader = _CUniqueKeyLoader(text)
        try:
            node = loader.get_single_node()
            lines = check_tree(node) if node is not None else {}
            return (loader.construct_document(node) if node is not None else None), lines
        except yaml.YAMLError:
            if len(text) > _REPARSE_LIMIT:
                raise
            check_flow_depth(text)
        finally:
            loader.dispose()
    check_events(text)
    node = yaml.compose(text, Loader=_UniqueKeyLoader)
    lines = check_tree(node) if node is not None else {}
    return yaml.load(text, Loader=_UniqueKeyLoader), lines


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


def _registry_of(path: Path) -> Path | None:
    """The resolved ``registry/`` folder a path is written under (scenarios, tests, ci name files
    that way), so every caller gets containment without passing it."""
    for parent in Path(os.path.abspath(path)).parents:
        if parent.name == "registry":
            return Path(os.path.realpath(parent))
    return None


def parse_yaml(
    path: Path, rel: str, cache: ParseCache | None = None, *, within: Path | None = None
) -> tuple[Located | None, list[Problem]]:
    """One YAML file as a located document, or the problems that stop it — always ``rel:line``,
    never an exception: the file must be a regular file of at most ``MAX_YAML_BYTES`` resolving
    inside ``within`` (default: the ``registry/`` folder it is under, if any), and the document
    within every ``safe_yaml`` limit."""
    within = within if within is not None else _registry_of(path)
    if within is not None and not inside(path, within):
        return None, [Problem(rel, 1, f"resolves outside registry/ ({os.path.realpath(path)})")]
    try:
        raw = read_regular(path, MAX_YAML_BYTES)
    except UnsafeFile as exc:
        return None, [Problem(rel, 1, str(exc))]
    return parse_document(raw, path, rel, cache)


def parse_document(
    raw: bytes, path: Path, rel: str, cache: ParseCache | None = None
) -> tuple[Located | None, list[Problem]]:
    """``parse_yaml`` after the file is read: the bytes of one document, every limit checked."""
    if len(raw) > MAX_YAML_BYTES:
        return None, [Problem(rel, 1, f"file too large: {len(raw):,} bytes (limit {MAX_YAML_BYTES:,})")]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [Problem(rel, raw[: exc.start].count(b"\n") + 1, f"not UTF-8: {exc.reason} at byte {exc.start}")]
    key = cache.key(raw) if cache is not None else ""
    if cache is not None and (hit := cache.get(key)) is not None:
        return Located(path, rel, hit[0], hit[1]), []
    try:
        data, lines = _parse_text(text)
    except YamlLimit as exc:
        return None, [Problem(rel, exc.line, f"YAML refused: {exc.message}")]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        msg = " ".join(s for s in (exc.context, exc.problem) if s)
        return None, [Problem(rel, line, f"YAML syntax error: {msg}")]
    except yaml.reader.ReaderError as exc:
        return None, [Problem(rel, text[: exc.position].count("\n") + 1, f"YAML error: {exc.reason}")]
    except yaml.YAMLError as exc:
        return None, [Problem(rel, 1, f"YAML error: {exc}")]
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        # A constructor failing on a value the limits let through: still this file's problem.
        return None, [Problem(rel, 1, f"YAML error: {type(exc).__name__}: {exc}")]
    if cache is not None:
        cache.put(key, data, lines)
    return Located(path, rel, data, lines), []


def validation_problems(doc: Located, exc: ValidationError) -> list[Problem]:
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
        return None, validation_problems(doc, exc)

