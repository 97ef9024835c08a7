"""Issue 20 item 2: the model is the bottom layer, the wire layer (reading an upstream's answer,
the extension registries) above it; the build (codegen) and the turn (runtime) are independent
above both; the CLI is on top. The contracts live in pyproject.toml; ci/layering.py checks them."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from ummaya.ci.layering import ROOT, lint, lint_staged, stage


def test_the_layering_contracts_are_kept() -> None:
    done = lint()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 kept, 0 broken" in done.stdout, done.stdout


def test_the_contracts_name_every_layer_and_no_package_wide_exception() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (layers,) = [c for c in config["contracts"] if c["type"] == "layers"]
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
# wire → runtime, build → runtime.
@pytest.mark.parametrize(("module", "importer", "imported"), [
    ("model/slots.py", "ummaya.model.slots", "ummaya.runtime.catalog"),
    ("runtime/compose.py", "ummaya.runtime.compose", "ummaya.codegen.loader"),
    ("wire/envelopes.py", "ummaya.wire.envelopes", "ummaya.runtime.dispatch.dispatcher"),
    ("codegen/link.py", "ummaya.codegen.link", "ummaya.runtime.dispatch.fixtures"),
])
def test_an_import_against_the_layers_breaks_the_contract(tmp_path: Path, module: str, importer: str,
                                                           imported: str) -> None:
    out = _broken_by(tmp_path, module, f"import {imported}")
    assert f"{importer} -> {imported}" in out
