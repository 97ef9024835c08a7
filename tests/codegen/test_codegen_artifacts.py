"""Generated artifacts: the llms.txt layout, snapshots, and a generated client doing its one job."""

from __future__ import annotations

import asyncio
import importlib.util
import re
import sys
import types
from pathlib import Path

import pydantic
import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension


class FileSnapshot(SingleFileSnapshotExtension):
    file_extension = "txt"


def test_llms_txt_snapshot(pristine, snapshot):
    assert (pristine / "llms/llms.txt").read_bytes() == snapshot(extension_class=FileSnapshot)


def test_client_snapshot(pristine, snapshot):
    data = (pristine / "generated/clients/nmc_emergency_rooms.py").read_bytes()
    assert data == snapshot(extension_class=FileSnapshot)


def test_llms_txt_follows_llmstxt_layout(pristine):
    text = (pristine / "llms/llms.txt").read_text()
    lines = text.splitlines()
    assert lines[0].startswith("# ") and not lines[0].startswith("## ")
    assert lines[2].startswith("> ")
    headings = [line[3:] for line in lines if line.startswith("## ")]
    assert headings == ["Locate", "Find", "Send", "Optional"]  # no check adapters in this registry
    # Every section is a list of links, and every adapter page linked exists.
    for link in re.findall(r"\]\((adapters/[^)]+)\)", text):
        assert (pristine / "llms" / link).is_file(), link
    full = (pristine / "llms/llms-full.txt").read_text()
    assert full.startswith(text)
    for page in sorted((pristine / "llms/adapters").glob("*.md")):
        assert page.read_text() in full


def test_adapter_page_carries_consent_and_channel(pristine):
    page = (pristine / "llms/adapters/gov24_move_in_report.md").read_text()
    assert "## Consent notice" in page and "Right to refuse" in page
    assert "https://www.gov.kr/mw/AA020InfoCappView.do?CappBizCD=13100000016" in page
    assert "| `new_address` | str | yes | place |" in page


def _load(name: str, path: Path, monkeypatch) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def client(pristine, monkeypatch):
    """The generated client for nmc_emergency_rooms, imported from the temp build, not the repo."""
    gen = pristine / "generated"
    for pkg in ("ummaya.generated.models", "ummaya.generated.clients"):
        monkeypatch.setitem(sys.modules, pkg, types.ModuleType(pkg))
    for name in ("nmc_emergency_rooms_input", "nmc_emergency_rooms_output"):
        _load(f"ummaya.generated.models.{name}", gen / "models" / f"{name}.py", monkeypatch)
    _load("ummaya.generated.clients._base", gen / "clients" / "_base.py", monkeypatch)
    return _load("ummaya.generated.clients.nmc_emergency_rooms", gen / "clients" / "nmc_emergency_rooms.py", monkeypatch)


class FakeDispatcher:
    def __init__(self, outcome):
        self.outcome, self.calls = outcome, []

    async def call(self, adapter_id, args, *, mode="auto", fixture=None):
        self.calls.append((adapter_id, args, mode))
        return self.outcome


def _outcome(**kw):
    base = dict(adapter_id="nmc_emergency_rooms", status="ok", output=None, error_class=None, error_code=None, error_message=None)
    return types.SimpleNamespace(**{**base, **kw})


def test_client_makes_one_dispatcher_call_and_returns_the_typed_model(client):
    output = {"total_count": 1, "items": [{"hospital_id": "A2100002", "name": "동아대학교병원", "distance_km": 4.12}]}
    dispatcher = FakeDispatcher(_outcome(output=output))
    result = asyncio.run(client.nmc_emergency_rooms(dispatcher, latitude=35.1167, longitude=128.968, mode="mock"))
    assert dispatcher.calls == [("nmc_emergency_rooms", {"latitude": 35.1167, "longitude": 128.968, "limit": 5}, "mock")]
    assert type(result).__name__ == "NmcEmergencyRoomsOutput"
    assert result.items[0].name == "동아대학교병원" and result.items[0].distance_km == 4.12


def test_client_validates_before_calling(client):
    dispatcher = FakeDispatcher(_outcome())
    with pytest.raises(pydantic.ValidationError):
        asyncio.run(client.nmc_emergency_rooms(dispatcher, latitude=99.0, longitude=128.968))
    assert dispatcher.calls == []


def test_client_raises_on_error_outcome(client):
    base = sys.modules["ummaya.generated.clients._base"]
    dispatcher = FakeDispatcher(_outcome(status="error", error_class="credential_missing", error_code="30"))
    with pytest.raises(base.AdapterCallError, match="credential_missing 30"):
        asyncio.run(client.nmc_emergency_rooms(dispatcher, latitude=35.1, longitude=129.0))


def test_every_generated_module_compiles(pristine):
    for path in sorted((pristine / "generated").rglob("*.py")):
        compile(path.read_text(), str(path), "exec")
