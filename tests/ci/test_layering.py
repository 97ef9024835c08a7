"""Issue 20 item 2: the model is the bottom layer, the wire layer (reading an upstream's answer,
the extension registries) above it; the build (codegen) and the turn (runtime) are independent
above both; the CLI is on top. Item 3: inside the runtime the request flows down (surfaces, service,
turn, dialogue, planners, retrieval, the call side, understanding, the ground), and nowhere do two
siblings import each other in a loop. The contracts live in pyproject.toml; ci/layering.py checks them."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from ummaya.ci.layering import ROOT, lint, lint_staged, stage


def test_the_layering_contracts_are_kept() -> None:
    done = lint()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 kept, 0 broken" in done.stdout, done.stdout


def test_the_contracts_name_every_layer_and_no_package_wide_exception() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["id"] == "layers")
    assert layers["layers"] == ["ummaya.cli", "ummaya.runtime | ummaya.codegen", "ummaya.wire", "ummaya.model"]
    # What both sides need moves down a layer; an exception is never the way round a contract.
    assert "ignore_imports" not in layers, layers["ignore_imports"]


def _broken_by(tmp_path: Path, module: str, line: str) -> str:
    staged = stage(ROOT, tmp_path)
    target = staged / "ummaya" / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    done = lint_staged(staged, ROOT / "pyproject.toml")
    assert done.returncode != 0, done.stdout
    return done.stdout


# Each layer that may not look up, with the import that would: model → runtime, runtime → build,
# wire → runtime, build → runtime; and inside the runtime the imports that once ran back up (issue
# 20 item 3): the understanding into the retriever, the guard into the turn's values, the dialogue
# into the turn, the service into the harness that builds an engine through it, MCP into the HTTP
# app that mounts it. An import inside a function counts as much as one at the top.
@pytest.mark.parametrize(("module", "importer", "imported"), [
    ("model/slots.py", "ummaya.model.slots", "ummaya.runtime.catalog"),
    ("runtime/compose.py", "ummaya.runtime.compose", "ummaya.codegen.loader"),
    ("wire/envelopes.py", "ummaya.wire.envelopes", "ummaya.runtime.dispatch.dispatcher"),
    ("codegen/link.py", "ummaya.codegen.link", "ummaya.runtime.dispatch.fixtures"),
    ("runtime/understand/cues.py", "ummaya.runtime.understand.cues", "ummaya.runtime.retrieve.retriever"),
    ("runtime/guard/personal.py", "ummaya.runtime.guard.personal", "ummaya.runtime.turn.values"),
    ("runtime/dialogue/given.py", "ummaya.runtime.dialogue.given", "ummaya.runtime.turn.provenance"),
    ("runtime/service.py", "ummaya.runtime.service", "ummaya.runtime.assemble"),
    ("runtime/mcp/http.py", "ummaya.runtime.mcp.http", "ummaya.runtime.serve.auth"),
])
def test_an_import_against_the_layers_breaks_the_contract(tmp_path: Path, module: str, importer: str,
                                                           imported: str) -> None:
    out = _broken_by(tmp_path, module, f"def _late() -> None:\n    import {imported}  # noqa")
    assert f"{importer} -> {imported}" in out, out


def test_the_runtime_layers_leave_no_module_out_and_take_no_exception() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    inner = next(c for c in config["contracts"] if c["id"] == "runtime-layers")
    assert inner["containers"] == ["ummaya.runtime"] and inner["exhaustive"] is True
    assert "ignore_imports" not in inner, inner["ignore_imports"]
    named = {n.strip() for layer in inner["layers"] for n in layer.split("|")}
    on_disk = {p.stem for p in (ROOT / "runtime").glob("*.py") if p.name != "__init__.py"}
    on_disk |= {p.parent.name for p in (ROOT / "runtime").glob("*/__init__.py")}
    assert named == on_disk, (named ^ on_disk)
    circles = next(c for c in config["contracts"] if c["id"] == "no-circles")
    assert circles["ancestors"] == ["ummaya"]
    assert circles.get("ignore_imports", []) == ["ummaya.codegen.link -> ummaya.codegen.builder"]


def test_two_files_of_one_folder_importing_each_other_break_the_contract(tmp_path: Path) -> None:
    """A circle inside one package, which no layer names: dispatch/binding.py and request.py."""
    out = _broken_by(tmp_path, "runtime/dispatch/binding.py",
                     "def _late() -> None:\n    from ummaya.runtime.dispatch import request  # noqa")
    assert "no two siblings import each other in a loop BROKEN" in out, out
