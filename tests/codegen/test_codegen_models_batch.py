"""A model module's bytes do not depend on which other schemas shared its generator run.

The generator makes class names unique across one run, so before nested classes were titled by
their path, a fresh cache (one run over everything) and a warm one (a run over the changed
adapters only) wrote different class names (Item3 vs Item4) — drift that only a clean machine saw."""

from __future__ import annotations

from pathlib import Path

from ummaya.codegen import emit_models as em
from ummaya.runtime.catalog import Catalog

ROOT = Path(__file__).resolve().parents[2]


def test_a_module_is_the_same_alone_and_in_a_batch() -> None:
    catalog = Catalog.load(ROOT / "generated")
    # Adapters with nested objects and enums in both schemas (the case that collided).
    ids = [a for a in ("airkorea_pm_alerts", "airkorea_dust_forecast", "hira_hospitals") if a in catalog.ids]
    assert len(ids) >= 2
    batch: dict[str, dict] = {}
    for aid in ids:
        batch.update(em._schemas(catalog.get(aid)))
    together = em._run_codegen(batch)
    for aid in ids:
        alone = em._run_codegen(em._schemas(catalog.get(aid)))
        for name, code in alone.items():
            assert together[name] == code, name
