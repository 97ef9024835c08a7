"""Limits that keep hostile YAML from hanging or crashing the build.

A manifest is data from a pull request. YAML lets a few hundred bytes describe a billion nodes
(aliases to aliases), nest ten thousand levels deep (the pure-Python composer overflows the
stack), or write a 100,000-digit integer (``int()`` refuses it with a bare ValueError). Each of
those becomes a ``path:line`` problem here, well within a second, before anything walks the data.

- ``MAX_YAML_BYTES``: a manifest, profile or scenario file (the largest real one is ~16 KB).
- ``MAX_DEPTH``: nesting of mappings and sequences (real manifests stay under 15).
- ``MAX_NODES``: nodes *after* alias expansion — what anything walking the data would visit.
- ``MAX_SCALAR``: characters in one scalar; ``MAX_NUMBER`` in one integer or float.

``check_tree`` walks a composed node graph once (it is also what builds the line index) and
stops at the first limit crossed; ``check_events`` applies the same limits to the event stream,
for the pure-Python composer, which would otherwise recurse before any check could run.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_YAML_BYTES = 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 50_000
MAX_SCALAR = 64 * 1024
MAX_NUMBER = 64

_NUMBER_TAGS = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"})


_RESOLVER = yaml.resolver.Resolver()


class YamlLimit(Exception):
    """A limit crossed at ``line`` (1-based)."""

    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line
        self.message = message


# A manifest is plain text, numbers, booleans, null, lists and mappings. The other types
# SafeLoader can build are refused before construction: ``!!binary`` hides text from a reviewer
# (``base_url: !!binary aHR0cHM6…`` is a URL nobody reads) and becomes bytes; ``!!set``,
# ``!!omap``, ``!!pairs`` build types no schema expects (a set is not JSON: a traceback later).
# Tags with no constructor at all (``!!python/…``, ``!foo``) stay the constructor's located error.
_Y = "tag:yaml.org,2002:"
REFUSED_TAGS = frozenset(_Y + t for t in ("binary", "set", "omap", "pairs", "value", "yaml"))
_NON_FINITE = frozenset({".nan", ".inf", "+.inf", "-.inf"})


def _tag_problem(node: yaml.Node) -> str | None:
    tag = node.tag
    if tag in REFUSED_TAGS:
        return (f"tag '!!{tag.removeprefix(_Y)}' is not allowed (plain text, numbers, booleans, "
                "null, lists and mappings only)")
    if tag == _Y + "float" and isinstance(node, yaml.ScalarNode) and node.value.lower() in _NON_FINITE:
        return f"'{node.value}' is not a finite number"
    return None


def _scalar_problem(value: str, tag: str | None) -> str | None:
    if len(value) > MAX_SCALAR:
        return f"scalar too long: {len(value):,} characters (limit {MAX_SCALAR:,})"
    if tag in _NUMBER_TAGS and len(value) > MAX_NUMBER:
        return f"number too long: {len(value):,} characters (limit {MAX_NUMBER})"
    return None


def check_tree(root: yaml.Node) -> dict[tuple[Any, ...], int]:
    """The line index of a composed document (key path -> 1-based line; a key's own line wins
    over its value's), checking every limit on the way. Iterative, so depth costs no stack;
    aliases are followed (they are what makes a document large) and a node met again on its own
    path is a recursive alias."""
    out: dict[tuple[Any, ...], int] = {}
    count = 0
    aliased = False
    seen_ids: set[int] = set()
    # (node, key path, depth, ids of the ancestors on this path)
    stack: list[tuple[yaml.Node, tuple[Any, ...], int, frozenset[int]]] = [(root, (), 1, frozenset())]
    while stack:
        node, prefix, depth, path_ids = stack.pop()
        line = node.start_mark.line + 1
        count += 1
        if id(node) in seen_ids:
            aliased = True
        seen_ids.add(id(node))
        if count > MAX_NODES:
            what = "nodes once aliases are expanded" if aliased else "nodes"
            raise YamlLimit(line, f"document too large: more than {MAX_NODES:,} {what}")
        if depth > MAX_DEPTH:
            raise YamlLimit(line, f"nesting too deep: more than {MAX_DEPTH} levels")
        out.setdefault(prefix, line)
        problem = _tag_problem(node)
        if problem:
            raise YamlLimit(line, problem)
        if isinstance(node, yaml.ScalarNode):
            problem = _scalar_problem(node.value, node.tag)
            if problem:
                raise YamlLimit(line, problem)
            continue
        if id(node) in path_ids:
            raise YamlLimit(line, "recursive alias: a node contains itself")
        inner = path_ids | {id(node)}
        children: list[tuple[yaml.Node, tuple[Any, ...], int, frozenset[int]]] = []
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key = key_node.value if isinstance(key_node, yaml.ScalarNode) else ("?", key_node.start_mark.line)
                if isinstance(key_node, yaml.ScalarNode):
                    problem = _tag_problem(key_node) or _scalar_problem(key_node.value, key_node.tag)
                    if problem is None and key_node.tag == _Y + "null":
                        problem = "a mapping key must not be null (~ or an empty key)"
                    if problem:
                        raise YamlLimit(key_node.start_mark.line + 1, problem)
                else:
                    children.append((key_node, prefix + (key, "?"), depth + 1, inner))
                children.append((value_node, prefix + (key,), depth + 1, inner))
                # The key's own line (a nested mapping's value starts a line later).
                out[prefix + (key,)] = key_node.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                children.append((item, prefix + (i,), depth + 1, inner))
        stack.extend(reversed(children))
    return out


def node_bound(text: str) -> int:
    """A cheap upper bound on the node count (before aliases): past the first, every node follows
    an indicator or a line break. Composing is the slow part of a huge document (libyaml takes
    ~1.4 s for 400,000 nodes), so only a text that might cross ``MAX_NODES`` is scanned first."""
    return 2 + 2 * text.count(":") + sum(text.count(c) for c in ",-[{?\n")


def check_flow_depth(text: str) -> None:
    """Brackets nested deeper than ``MAX_DEPTH`` (quoted text skipped). Only for a document libyaml
    already refused: the pure-Python scanner looks at every open bracket for every new one
    (quadratic — a second for 20,000 ``[``), so such a text is refused before it gets there."""
    depth, line, quote = 0, 1, ""
    for ch in text:
        if ch == "\n":
            line += 1
        elif quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise YamlLimit(line, f"nesting too deep: more than {MAX_DEPTH} levels")
        elif ch in "]}" and depth:
            depth -= 1


def check_events(text: str, loader_cls: type | None = None) -> None:
    """The same limits on the event stream (parsers are iterative; only composers recurse), at
    most ``MAX_NODES`` events read. A syntax error is left for the composer to report."""
    loader_cls = loader_cls or yaml.SafeLoader
    loader = loader_cls(text)
    depth = count = 0
    open_anchors: list[tuple[str | None, int]] = []  # (anchor, count when it opened)
    sizes: dict[str, int | None] = {}  # anchor -> expanded size; None while still open
    aliased = False
    try:
        while True:
            try:
                event = loader.get_event()
            except yaml.YAMLError:
                return
            if event is None or isinstance(event, yaml.StreamEndEvent):
                return
            line = event.start_mark.line + 1
            if isinstance(event, yaml.AliasEvent):
                size = sizes.get(event.anchor, 0)
                if size is None:
                    raise YamlLimit(line, "recursive alias: a node contains itself")
                count += size
                aliased = True
            elif isinstance(event, yaml.ScalarEvent):
                count += 1
                tag = event.tag
                if tag is None and not event.style and event.implicit[0]:
                    tag = _RESOLVER.resolve(yaml.ScalarNode, event.value, (True, False))
                problem = _scalar_problem(event.value, tag)
                if problem:
                    raise YamlLimit(line, problem)
                if event.anchor:
                    sizes[event.anchor] = 1
            elif isinstance(event, yaml.CollectionStartEvent):
                count += 1
                depth += 1
                if depth > MAX_DEPTH:
                    raise YamlLimit(line, f"nesting too deep: more than {MAX_DEPTH} levels")
                open_anchors.append((event.anchor, count - 1))
                if event.anchor:
                    sizes[event.anchor] = None
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
                anchor, start = open_anchors.pop()
                if anchor:
                    sizes[anchor] = count - start
            if count > MAX_NODES:
                what = "nodes once aliases are expanded" if aliased else "nodes"
                raise YamlLimit(line, f"document too large: more than {MAX_NODES:,} {what}")
    finally:
        dispose = getattr(loader, "dispose", None)
        if dispose:
            dispose()
