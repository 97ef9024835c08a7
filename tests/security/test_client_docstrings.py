"""Issue 19 hole 10 (last sentence) / item 11: every promise a generated client's docstring makes
is what it does. Before, each said "Returns None when the upstream has no data" — false: a no-data
answer is an output with empty ``items`` (DESIGN: never None)."""

from __future__ import annotations

import asyncio
import importlib

import pytest

from ummaya.runtime.catalog import Catalog
from ummaya.runtime.dispatch import Dispatcher


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.load()


def client(name: str):
    return getattr(importlib.import_module(f"ummaya.generated.clients.{name}"), name)


def test_no_data_is_an_empty_output_never_none(catalog) -> None:
    out = asyncio.run(client("kma_weather_warnings")(Dispatcher(catalog, env={}), station="184", mode="mock"))
    assert out is not None and out.items == [] and out.total_count == 0


def test_an_error_raises_adapter_call_error(catalog) -> None:
    from ummaya.generated.clients._base import AdapterCallError

    with pytest.raises(AdapterCallError, match="credential_missing"):
        asyncio.run(client("nmc_emergency_rooms")(Dispatcher(catalog, env={}), latitude=35.1, longitude=128.96,
                                                   mode="live"))


def test_a_handoff_raises_handoff_required(catalog) -> None:
    from ummaya.generated.clients._base import HandoffRequired

    with pytest.raises(HandoffRequired) as caught:
        asyncio.run(client("hometax_income_tax_filing")(Dispatcher(catalog, env={})))
    assert caught.value.outcome.output["url"].startswith("https://")


def test_no_docstring_promises_none(catalog) -> None:
    for adapter_id in catalog.ids:
        fn = client(adapter_id)
        assert "Returns None" not in (fn.__doc__ or "") and "never None" in fn.__doc__, adapter_id
        assert "None" not in str(fn.__annotations__.get("return")), adapter_id
