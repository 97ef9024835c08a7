"""Scenario gate: every scenario file is valid, every adapter is exercised by a scenario, and every
scenario passes.

The schema is ``runtime.scenarios`` (the one the tests run): unknown keys, a stop reason outside
the closed list, an adapter id the registry does not hold, a scenario with neither ``request`` +
``expect`` nor ``turns`` — each is a ``path:line`` problem. Then every adapter id must appear in
some turn's ``expect.calls``. Then every scenario runs exactly as tests/turn/test_scenarios.py runs
it — ``runtime.scenarios.scenario_engine`` and ``run_scenario``, whose ``check`` is the strict
comparison — so the gate and the tests cannot disagree about a scenario. Until scenario files
exist this gate has nothing to say.

Speed (bench/check.py; issue 18's ``ummaya check`` ≤ 5 s): the scenarios run with traces off — a
trace never changes a turn's result (runtime/turn/turn_trace.py), and storing one was ~40 % of each
turn — and, on a machine with more than one core, in worker processes that each build an engine
and run every n-th scenario. The workers are spawned, never forked: by the time the gate starts,
numpy's BLAS pool has a thread of its own, and nothing here forks after threads exist (each worker
loads the catalog and retriever itself, ~0.7 s CPU, in parallel). ``ummaya check`` starts them
(``start_scenario_gate``) before its other gates and collects the verdict last;
``UMMAYA_CHECK_JOBS=1`` runs them in this process.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ummaya.codegen.loader import SCENARIOS_DIR, Problem, load_registry


def scenario_gate(root: Path, registry: Any = None, generated: Path | None = None,
                  jobs: int | None = None) -> list[Problem]:
    """``ummaya check``'s scenario step: invalid files, adapters no scenario calls, then every
    scenario that fails when run on ``generated`` (default: the project's generated/)."""
    return start_scenario_gate(root, registry, generated, jobs)()


def start_scenario_gate(root: Path, registry: Any = None, generated: Path | None = None,
                        jobs: int | None = None) -> Callable[[], list[Problem]]:
    """Validate now and start running the scenarios (in worker processes when ``jobs`` > 1);
    the returned callable waits for them and gives ``scenario_gate``'s problems."""
    root = Path(root).resolve()
    scenarios, invalid, uncovered = _read(root, registry)
    if invalid:
        return lambda: invalid  # nothing in an invalid file can be run and trusted
    failures = start_failures(root, scenarios, generated, jobs)
    return lambda: sorted(uncovered + failures())


def scenario_coverage(root: Path, registry: Any = None) -> list[Problem]:
    """Problems in the scenario files, and adapters no scenario expects a call to."""
    _, invalid, uncovered = _read(Path(root).resolve(), registry)
    return invalid or uncovered


def _read(root: Path, registry: Any) -> tuple[list[tuple[Path, Any]], list[Problem], list[Problem]]:
    """(valid scenarios, problems in the files, adapters no scenario expects a call to)."""
    from ummaya.runtime.scenarios import validate_scenarios

    if not any((root / "registry" / SCENARIOS_DIR).glob("*.yaml")):
        return [], [], []
    if registry is None:
        registry, _ = load_registry(root)
    known = registry.by_id()
    scenarios, problems = validate_scenarios(root, set(known))
    if problems:
        # An invalid file covers nothing we can trust; listing every adapter as uncovered too
        # would bury the real error.
        return scenarios, sorted(problems), []
    covered = {a for _, sc in scenarios for a in sc.calls}
    uncovered = [Problem(lm.source.rel, lm.source.line_of(("id",)),
                         f"{adapter_id}: no scenario in registry/{SCENARIOS_DIR}/ expects a call to this adapter")
                 for adapter_id, lm in sorted(known.items()) if adapter_id not in covered]
    return scenarios, [], sorted(uncovered)


def scenario_failures(root: Path, scenarios: list[tuple[Path, Any]], generated: Path | None = None,
                      jobs: int | None = None) -> list[Problem]:
    """Every scenario that fails when run, at the line of its id: each problem is one of
    ``runtime.scenarios.check``'s, word for word what the failing test prints."""
    return start_failures(root, scenarios, generated, jobs)()


# Below this many scenarios per worker, starting a process (imports, the engine) costs more than
# it saves.
MIN_PER_WORKER = 40
MAX_JOBS = 4


def default_jobs(count: int) -> int:
    """Workers for ``count`` scenarios: ``UMMAYA_CHECK_JOBS`` when set, else one per idle core (at
    most ``MAX_JOBS``), never more than ``count // MIN_PER_WORKER``; 1 = this process. Cores busy
    with other work (the load average) are not counted: there a second worker only adds its start
    (measured at a load of 8 on 2 cores: 22.5 s wall with 2 workers, 19.7 s with 1)."""
    given = os.environ.get("UMMAYA_CHECK_JOBS", "").strip()
    if given:
        try:
            return max(1, int(given))
        except ValueError:
            raise ValueError(f"UMMAYA_CHECK_JOBS={given!r} is not a number of workers") from None
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    try:
        idle = cores - int(os.getloadavg()[0] + 0.5)
    except OSError:  # no load average here
        idle = cores
    return max(1, min(idle, MAX_JOBS, count // MIN_PER_WORKER))


def start_failures(root: Path, scenarios: list[tuple[Path, Any]], generated: Path | None = None,
                   jobs: int | None = None) -> Callable[[], list[Problem]]:
    """Start running ``scenarios``; the callable returns ``scenario_failures``'s problems. With
    ``jobs`` > 1 worker processes (spawned: nothing of this process is shared by accident) each
    run every ``jobs``-th scenario on an engine of their own; otherwise they run here, on call."""
    if not scenarios:
        return lambda: []
    generated = Path(generated) if generated is not None else root / "generated"
    jobs = default_jobs(len(scenarios)) if jobs is None else max(1, jobs)
    if jobs == 1:
        return lambda: _problems(root, scenarios, run_shard(str(generated), [sc for _, sc in scenarios]))
    import concurrent.futures as cf
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    pool = cf.ProcessPoolExecutor(max_workers=jobs, mp_context=context)
    shards = [pool.submit(run_shard, str(generated), [sc for _, sc in scenarios[i::jobs]]) for i in range(jobs)]

    def collect() -> list[Problem]:
        try:
            parts = [f.result() for f in shards]
        finally:
            pool.shutdown(cancel_futures=True)
        found: list[list[str]] = [[] for _ in scenarios]
        for i, part in enumerate(parts):
            if isinstance(part, str):  # the build could not be loaded: that is the one problem
                return _problems(root, scenarios, part)
            for n, problems in enumerate(part):
                found[i + n * jobs] = problems
        return _problems(root, scenarios, found)

    return collect


def run_shard(generated: str, shard: list[Any]) -> list[list[str]] | str:
    """Run ``shard`` (scenarios) in order on one scenario engine: each one's problems (a worker
    process's whole job; a store of its own, traces off), or why the build cannot be loaded."""
    from ummaya.codegen.emit_cache import TEMPLATES_CACHE, default_cache_dir
    from ummaya.model.templates import code_cache
    from ummaya.runtime.catalog import CatalogError
    from ummaya.runtime.scenarios import run_scenario, scenario_engine
    from ummaya.runtime.store import open_store
    from ummaya.runtime.store.records import RetentionPolicy

    # The answer templates as the build compiled them (every worker would compile the same ~200).
    with tempfile.TemporaryDirectory(prefix="ummaya-check-") as tmp, code_cache(default_cache_dir() / TEMPLATES_CACHE):
        store = open_store(f"sqlite:///{Path(tmp) / 'scenarios.sqlite3'}")
        try:
            try:
                engine = scenario_engine(Path(generated), store=store,
                                         retention=RetentionPolicy(traces_enabled=False))
            except CatalogError as exc:
                return f"cannot run the scenarios: {exc}"

            async def run_all() -> list[Any]:
                return [await run_scenario(engine, sc, session_prefix="check") for sc in shard]

            return [outcome.problems for outcome in asyncio.run(run_all())]
        finally:
            store.close()


def _problems(root: Path, scenarios: list[tuple[Path, Any]], found: list[list[str]] | str) -> list[Problem]:
    if isinstance(found, str):  # the build could not be loaded
        return [Problem("generated/catalog.json", 1, found)]
    problems: list[Problem] = []
    for (path, sc), got in zip(scenarios, found, strict=True):
        rel = path.relative_to(root).as_posix()
        problems += [Problem(rel, _line_of_id(path, sc.id), f"{sc.id}: {p}") for p in got]
    return problems


def _line_of_id(path: Path, scenario_id: str) -> int:
    """The line of ``id: <scenario_id>`` (ids are unique across the files: validate_scenarios)."""
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        key, _, value = text.strip().removeprefix("- ").partition(":")
        if key.strip() == "id" and value.strip().strip("'\"") == scenario_id:
            return number
    return 1
