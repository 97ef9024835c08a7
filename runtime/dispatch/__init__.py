"""The shared upstream engine (docs/DESIGN.md, "The shared upstream engine").

One engine interprets every manifest; per-adapter code is zero. Here is the call side, in the order
a call runs: ``request`` (build from ``Upstream``; the wire's ``resolvers`` for derived params),
``dispatcher`` (tiers, transports, retries, one deadline per call, host guard, token exchange,
lookup, cache, rate limit), ``fixtures`` (Mock's fixture choice and transport), ``binding``
(credentials bound to their hosts); ``recording`` backs ``ummaya record``. Reading what comes back
— envelopes, error classes, taxonomy, projection and transforms, the fixture reader the build
shares — is the layer below, ``ummaya.wire`` (wire/__init__.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

from .dispatcher import Dispatcher
from .fixtures import (
    FixtureTransport,
    fixture_files,
    lookup_fixture_name,
    page_fixture_name,
    pick_fixture,
    step_fixture_name,
)
from ummaya.wire.outcome import CallOutcome


def call_sync(
    adapter_id: str,
    args: dict[str, Any],
    *,
    mode: str = "auto",
    fixture: str | None = None,
    dispatcher: Dispatcher | None = None,
    **dispatcher_kwargs: Any,
) -> CallOutcome:
    """Blocking ``Dispatcher.call`` for scripts and the REPL.

    Without ``dispatcher`` one is made over ``Catalog.load()`` (``generated/`` of the project
    around the working directory, or ``UMMAYA_GENERATED``) with ``dispatcher_kwargs``. Not for use
    inside a running event loop — await ``Dispatcher.call`` there.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "call_sync() inside a running event loop; await Dispatcher.call() instead"
        )
    if dispatcher is None:
        from ummaya.runtime.catalog import Catalog

        catalog = dispatcher_kwargs.pop("catalog", None) or Catalog.load()
        dispatcher = Dispatcher(catalog, **dispatcher_kwargs)
    return asyncio.run(dispatcher.call(adapter_id, args, mode=mode, fixture=fixture))  # type: ignore[arg-type]


__all__ = [
    "Dispatcher",
    "FixtureTransport",
    "call_sync",
    "fixture_files",
    "lookup_fixture_name",
    "page_fixture_name",
    "step_fixture_name",
    "pick_fixture",
]
