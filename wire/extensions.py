"""Extension points: named functions the registry refers to, each registered with a decorator in one
module, so a new kind of value to read, a resolver, a transform or a post-processor is one function
and no edit elsewhere. (A new slot type or vocabulary needs none: it is YAML in registry/_slots/ and
registry/_vocab/, read by the registered readers.)

| kind | module | a manifest names it in | signature |
|---|---|---|---|
| slot reader | ``runtime/understand/readers.py`` | a slot type's ``reader`` (registry/_slots/*.yaml) | ``(ReadRequest) -> value or None`` |
| derived-parameter resolver | ``wire/resolvers.py`` | ``upstream.derived_params`` (``name.field``) | ``(field, args, now) -> str`` |
| transform | ``wire/transforms.py`` | ``upstream.fields.<f>.transform`` (``a|b``) | ``(value) -> value`` |
| post-processor | ``wire/transforms.py`` | ``upstream.postprocess`` | ``(records) -> records`` |

The build loads them all (``discover()``, through the package's entry points), checks every name a manifest uses against the
registries (an unknown one is a ``path:line`` error), and lists the registered names in the published
manifest schema. docs/CONTRIBUTING.md has a worked example of each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

# The registries are found through the package's entry points (pyproject.toml,
# [project.entry-points."ummaya.extensions"]), not imported from here: the slot readers live in the
# runtime, above this layer, and the build must still see every registered name. The entry point's
# value names the registry object; its ``kind`` is the key ``discover`` returns it under.
GROUP = "ummaya.extensions"


class Registry(Mapping[str, F], Generic[F]):
    """Name → function, filled by ``@registry.register("name", doc=…, **meta)``; read like a dict."""

    def __init__(self, kind: str):
        self.kind = kind
        self._fns: dict[str, F] = {}
        self._meta: dict[str, dict[str, Any]] = {}

    def register(self, name: str, **meta: Any) -> Callable[[F], F]:
        def add(fn: F) -> F:
            if name in self._fns and self._fns[name] is not fn:
                raise ValueError(f"{self.kind} '{name}' is registered twice ({self._fns[name].__qualname__} and {fn.__qualname__})")
            self._fns[name] = fn
            doc = (fn.__doc__ or "").strip().split("\n\n")[0]
            self._meta[name] = {"doc": " ".join(doc.split()), **meta}
            return fn

        return add

    def meta(self, name: str) -> dict[str, Any]:
        return self._meta[name]

    def __getitem__(self, name: str) -> F:
        return self._fns[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fns)

    def __len__(self) -> int:
        return len(self._fns)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {sorted(self._fns)})"


def discover() -> dict[str, Registry]:
    """Load every registry the installed package declares (entry points of ``GROUP``), by kind."""
    from importlib.metadata import entry_points

    found: dict[str, Registry] = {}
    for point in sorted(entry_points(group=GROUP), key=lambda p: p.name):
        registry = point.load()
        if not isinstance(registry, Registry):
            raise TypeError(f"entry point {GROUP}:{point.name} = {point.value} is not a Registry")
        found[registry.kind] = registry
    if not found:
        raise LookupError(f"no '{GROUP}' entry points: the package's metadata is stale or missing "
                          "(reinstall it: pip install -e .)")
    return found
