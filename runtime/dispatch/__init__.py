"""The shared upstream engine (docs/DESIGN.md, "The shared upstream engine").

One engine interprets every manifest; per-adapter code is zero. Modules, in the order a call runs:
``request`` (build from ``Upstream``; ``resolvers`` for derived params), ``engine`` (tiers,
transports, retries, one deadline per call, host guard, token exchange, lookup, cache, rate limit),
``fixtures`` (Mock's fixture choice and transport, ``parse_fixture``), ``envelopes`` (body shape →
records or a classified error; ``xmltree`` via defusedxml; ``taxonomy``: codes and messages →
classes), ``project`` (+ ``transforms``: fields, coercion, post-processors, output_schema check;
``after``: filtering, nearest-first and sorting after the call; ``geo``: pyproj conversions).
``errors`` names the classes and codes; ``recording`` backs ``ummaya record``.
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
    parse_fixture,
    pick_fixture,
    step_fixture_name,
)
from .errors import ADAPTER_ERROR, CHANNEL_UNAVAILABLE, CREDENTIAL_MISSING, UpstreamError
from .outcome import CallOutcome
from .resolvers import kma_forecast_base, kma_grid, kma_nowcast_base


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
    "ADAPTER_ERROR",
    "CHANNEL_UNAVAILABLE",
    "CREDENTIAL_MISSING",
    "CallOutcome",
    "Dispatcher",
    "FixtureTransport",
    "UpstreamError",
    "call_sync",
    "fixture_files",
    "kma_forecast_base",
    "kma_grid",
    "kma_nowcast_base",
    "lookup_fixture_name",
    "page_fixture_name",
    "step_fixture_name",
    "parse_fixture",
    "pick_fixture",
]
