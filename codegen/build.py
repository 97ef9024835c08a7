"""The build: load → link → emit, then write atomically — or prove there is nothing to do.

``plan_build`` is pure (registry in, ``{path: bytes}`` out); ``build`` writes that mapping to
``generated/`` and ``llms/`` through a temporary folder swapped into place, so a failed build never
leaves a half-written tree; ``drift`` compares the mapping with what is on disk. When the inputs'
hash, the generator's hash and every emitted file's hash match the lock, a build is a no-op that
reads no YAML at all.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from .emit_lock import LOCK_PATH, hash_inputs, read_lock, release_id, sha256

OUTPUT_DIRS = ("generated", "llms")
# Inside the output folders but not build output: kept across the swap, ignored by drift.
PRESERVED = {"generated": ("index/whoosh",), "llms": ()}
_IGNORED_NAMES = ("__pycache__", ".DS_Store")

Progress = Callable[[str], None]


@dataclass
class Plan:
    outputs: dict[str, bytes] = field(default_factory=dict)
    problems: list = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    release_id: str = ""
    adapters: int = 0
    registry: object = None  # codegen.loader.Registry, for gates that look at the manifests
    parsed: dict[str, list[str]] = field(default_factory=dict)  # id -> fixtures the parser agreed with
    parser_available: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class BuildResult:
    plan: Plan | None
    noop: bool
    seconds: float
    release_id: str


def generator_hash() -> str:
    """Everything besides the registry that decides the bytes: this package's code and the
    versions of the libraries that render output."""
    here = Path(__file__).parent
    # model/ holds the retrieval analyzer emit_index analyses text with, so it decides bytes too.
    sources = sorted(here.glob("*.py")) + sorted((here.parent / "model").glob("*.py"))
    h = sha256(b"".join(p.name.encode() + b"\0" + p.read_bytes() for p in sources))
    versions = ",".join(f"{d}={_version(d)}" for d in ("datamodel-code-generator", "jinja2", "pydantic", "kiwipiepy"))
    return sha256(f"{h}|{versions}|{_extensions_digest()}".encode())


def _extensions_digest() -> str:
    """The registered extension names and their docs (runtime/extensions.py): the published schema
    lists them, so registering one changes the output — editing a function's body does not."""
    import json

    from .extensions import registries

    regs = {kind: {name: reg.meta(name) for name in reg} for kind, reg in registries().items()}
    return sha256(json.dumps(regs, sort_keys=True, default=list).encode())


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


def _output_path(path: str) -> bool:
    """A path the build may write (and a lock may name): a plain relative path under one of
    OUTPUT_DIRS — no '..', '.', empty part, absolute path or backslash."""
    parts = path.split("/")
    return (parts[0] in OUTPUT_DIRS and len(parts) >= 2 and "\\" not in path
            and not any(p in ("", ".", "..") for p in parts))


def is_up_to_date(root: Path, hashes=None) -> str | None:
    """The release id when a rebuild would write exactly what is there, else None. The lock and
    the outputs it names come from the checkout (a pull request): only regular files inside
    generated/ and llms/ are read, so a symlink to /dev/zero cannot hang ``check``."""
    from ummaya.model.containment import UnsafeFile, read_regular, unreadable
    from .emit_cache import FileHashes

    hashes = hashes or FileHashes(root)
    try:
        lock = read_lock(read_regular(root / LOCK_PATH, 256 * 1024 * 1024))
    except (OSError, ValueError, UnsafeFile):
        return None
    try:
        if lock.get("generator") != generator_hash() or lock.get("inputs") != hash_inputs(root, hashes):
            return None
        for path, digest in lock.get("outputs", {}).items():
            full = os.path.join(root, path)
            if not _output_path(path) or unreadable(full, os.path.realpath(os.path.join(root, path.split("/")[0])), 1 << 30):
                return None
            if hashes.hash(full) != digest:
                return None
    except OSError:
        return None
    finally:
        hashes.save()
    return lock.get("release_id")


def plan_build(root: Path, *, progress: Progress | None = None, cache=None, parse=None) -> Plan:
    """Everything the build would write, or every problem that stops it."""
    from .emit_cache import Cache, FileHashes
    from .loader import ParseCache, load_registry

    say = progress or (lambda _msg: None)
    root = Path(root).resolve()
    plan = Plan()
    cache = cache if cache is not None else Cache()
    hashes = FileHashes(root, cache.folder)
    inputs = hash_inputs(root, hashes)
    hashes.save()
    plan.release_id = release_id(inputs)
    index_job = _IndexJob(plan.release_id, cache, plan, say)
    say(f"load: {len(inputs)} input files")
    try:
        registry, problems = load_registry(root, ParseCache(cache.folder / "parse"))
    except BaseException:
        index_job.cancel()
        raise
    plan.adapters = len(registry.manifests)
    manifests = [lm.manifest for lm in registry.manifests]
    # The slow emitters need only the manifests: start them now, beside link.
    if problems:
        index_job.cancel()
        jobs = []
    else:
        index_job.start(manifests, say, registry.understanding)
        jobs = [index_job, _ModelsJob(manifests, cache, say)]
    try:
        _plan_rest(plan, root, inputs, registry, manifests, problems, jobs, parse, say, cache)
    except BaseException:
        for job in jobs:
            job.cancel()
        raise
    return plan


def _plan_rest(plan, root, inputs, registry, manifests, problems, jobs, parse, say, cache) -> None:
    from .emit_catalog import emit_catalog, emit_fixtures, emit_schema
    from .emit_clients import emit_clients
    from .calendar_rules import check_datetime_fields
    from .emit_guidance import check_hidden_services, check_limits, emit_guidance, load_guidance
    from .emit_llms import emit_llms
    from .emit_lock import emit_lock
    from .link import link
    from .resolve import resolve_manifest
    from .understand import emit_understanding

    say(f"link: {len(registry.manifests)} adapters")
    linked = link(registry, parse=parse, cache=cache)
    guidance, guidance_problems = load_guidance(root)
    guidance_problems += check_limits(registry.manifests, guidance)
    guidance_problems += check_hidden_services(registry.manifests, guidance)
    guidance_problems += check_datetime_fields(registry.manifests)
    plan.problems = sorted(set(problems) | set(linked.problems) | set(guidance_problems))
    plan.notes += linked.notes
    plan.registry = registry
    plan.parsed = linked.parsed
    plan.parser_available = linked.parser_available
    if plan.problems:
        for job in jobs:
            job.cancel()
        return

    sources = [(lm.manifest, lm.source.rel) for lm in registry.manifests]
    resolved = [resolve_manifest(m, registry.profiles) for m in manifests]
    out: dict[str, bytes] = {"generated/__init__.py": b""}
    table = registry.understanding.table()
    say("emit: catalog, fixtures, schema, slot table and vocabularies")
    out.update(emit_schema(table))
    out.update(emit_understanding(registry.understanding))
    out.update(emit_catalog(resolved, plan.release_id))
    out.update(emit_fixtures(registry.manifests, resolved))
    out.update(emit_guidance(manifests, guidance))
    say("emit: clients, llms")
    out.update(emit_clients(sources))
    out.update(emit_llms(manifests, table))
    index_job, models_job = jobs
    out.update(models_job.result())
    out.update(index_job.result())
    out.update(emit_lock(inputs, sources, generator_hash(), out))
    plan.outputs = dict(sorted(out.items()))


def _run_emit_index(manifests, noun_texts=None, domains=None) -> dict[str, bytes]:
    """The retrieval index and the known nouns: the two outputs that need Kiwi, in one worker so
    Kiwi loads once (codegen/understand.py says what the nouns are for)."""
    from .emit_index import emit_index
    from .understand import nouns_file

    out = {f"generated/{path}": data for path, data in emit_index(manifests, domains).items()}
    out.update(nouns_file(noun_texts or []))
    return out


def _warm_index_worker() -> None:
    """Load Kiwi (seconds) in the index worker while the parent is still reading YAML."""
    try:
        from ummaya.model.analysis import kiwi

        kiwi()
    except Exception:  # only a head start; emit_index loads what it needs itself
        pass


def _workers_enabled() -> bool:
    # UMMAYA_BUILD_WORKERS=0 runs everything inline (same bytes, no overlap).
    return bool(sys.executable) and os.environ.get("UMMAYA_BUILD_WORKERS", "1") != "0"


class _Background:
    """Run one task in a worker interpreter (``codegen/worker.py``; inline when workers are off):
    the index (Kiwi) and the models (datamodel-code-generator) are the two slow emitters and need
    only the manifests, so on two cores they overlap loading, link and the cheap emitters instead of
    adding to them. Never a fork of this process: it may already run Kiwi's threads."""

    def __init__(self, warm=None):
        self._proc: subprocess.Popen | None = None
        self._inline = None
        self._dir: str | None = None
        if _workers_enabled():
            cmd = [sys.executable, "-m", "ummaya.codegen.worker"]
            if warm is not None:
                cmd += ["--warm", f"{warm.__module__}:{warm.__qualname__}"]
            self._dir = tempfile.mkdtemp(prefix="ummaya-build-job-")
            self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, close_fds=True)

    def submit(self, fn, *args) -> _Background:
        if self._proc is None:
            self._inline = (fn, args)
            return self
        job = os.path.join(self._dir, "job.pickle")
        with open(job, "wb") as fh:
            pickle.dump((fn, args), fh, protocol=pickle.HIGHEST_PROTOCOL)
        self._proc.stdin.write(job.encode() + b"\n")
        self._proc.stdin.close()
        return self

    def result(self):
        if self._proc is None:
            fn, args = self._inline
            return fn(*args)
        try:
            self._proc.wait()
            try:
                with open(os.path.join(self._dir, "job.pickle.out"), "rb") as fh:
                    status, value = pickle.load(fh)
            except OSError:
                raise RuntimeError(f"build worker exited with status {self._proc.returncode} and no result") from None
            if status != "ok":
                raise RuntimeError(f"build worker failed:\n{value}")
            return value
        finally:
            self._cleanup()

    def cancel(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            self._cleanup()

    def _cleanup(self) -> None:
        if self._proc is not None and self._proc.stdin and not self._proc.stdin.closed:
            with contextlib.suppress(OSError):
                self._proc.stdin.close()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


class _IndexJob:
    """emit_index over the whole set (it is not per adapter), cached by the release (every input)
    and the generator. Known before the YAML is even read, so a cache miss starts the worker —
    and Kiwi's seconds of loading — right away."""

    def __init__(self, release: str, cache, plan: Plan, say: Progress):
        self._job: _Background | None = None
        self._value: dict[str, bytes] | None = None
        self._cache = cache
        if _emit_index() is None:
            from .understand import nouns_file

            plan.notes.append("retrieval index not emitted: ummaya.codegen.emit_index is not available")
            self._value = nouns_file([], analyse=False)
            return
        self._key = sha256(f"{generator_hash()}|{release}".encode())
        self._value = cache.get("index", self._key)
        if self._value is None:
            self._job = _Background(warm=_warm_index_worker)

    def start(self, manifests, say: Progress, understanding=None) -> None:
        if self._job is not None:
            from .emit_index import domain_glosses
            from .understand import noun_texts

            say("index: emit_index and known nouns (Kiwi), in the background")
            texts = noun_texts(manifests, understanding) if understanding is not None else []
            self._job.submit(_run_emit_index, manifests, texts, domain_glosses(understanding))

    def result(self) -> dict[str, bytes]:
        if self._value is None:
            self._value = self._job.result()
            self._cache.put("index", self._key, self._value)
        return self._value

    def cancel(self) -> None:
        if self._job is not None:
            self._job.cancel()


class _ModelsJob:
    def __init__(self, manifests, cache, say: Progress):
        from .emit_models import generate, split_cached

        self._modules, todo, keys = split_cached(manifests, cache)
        self._job = None
        if todo:
            say(f"models: datamodel-code-generator over {len(todo)} schemas ({len(manifests) - len(todo) // 2} adapters cached), in the background")
            self._job = _Background().submit(generate, todo, keys, cache)

    def result(self) -> dict[str, bytes]:
        from .emit_models import assemble

        if self._job is not None:
            self._modules.update(self._job.result())
            self._job = None
        return assemble(self._modules)

    def cancel(self) -> None:
        if self._job is not None:
            self._job.cancel()


def _emit_index():
    try:
        from .emit_index import emit_index
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.endswith("emit_index"):
            return None
        raise
    return emit_index


def _owned(rel: str, top: str) -> bool:
    parts = rel.split("/")
    if any(p in _IGNORED_NAMES for p in parts):
        return False
    return not any(rel == keep or rel.startswith(keep + "/") for keep in PRESERVED[top])


def on_disk(root: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for top in OUTPUT_DIRS:
        base = root / top
        if not base.is_dir():
            continue
        for p in base.rglob("*"):
            # A symlink is never an output (the build writes plain files): never read through one
            # (generated/catalog.json -> /dev/zero would hang the drift check); it shows as drift.
            if p.is_file() and not p.is_symlink():
                rel = p.relative_to(base).as_posix()
                if _owned(rel, top):
                    found[f"{top}/{rel}"] = p
    return found


@dataclass
class Drift:
    added: list[str]  # the build would create these (missing on disk)
    removed: list[str]  # on disk, but the build no longer emits them
    changed: list[str]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def summary(self, limit: int = 20) -> str:
        lines = []
        for label, paths in (("missing (build would add)", self.added), ("stale (build would remove)", self.removed), ("changed", self.changed)):
            if paths:
                lines.append(f"{label}: {len(paths)}")
                lines += [f"  {p}" for p in paths[:limit]]
                if len(paths) > limit:
                    lines.append(f"  … and {len(paths) - limit} more")
        return "\n".join(lines)


def drift(root: Path, outputs: dict[str, bytes]) -> Drift:
    disk = on_disk(root)
    added = sorted(set(outputs) - set(disk))
    removed = sorted(set(disk) - set(outputs))
    changed = sorted(p for p in set(outputs) & set(disk) if disk[p].read_bytes() != outputs[p])
    return Drift(added, removed, changed)


def write_outputs(root: Path, outputs: dict[str, bytes], hashes=None) -> None:
    """Write each output folder into a temp folder beside it, then swap it into place."""
    for path in outputs:
        # The build writes only under generated/ and llms/ (the loader already refuses a fixture
        # name that would climb out; this is the last line, before anything touches the disk).
        if not _output_path(path):
            raise ValueError(f"refusing to write {path!r}: outside generated/ and llms/")
    for top in OUTPUT_DIRS:
        prefix = top + "/"
        target = root / top
        tmp = Path(tempfile.mkdtemp(prefix=f".{top}.new-", dir=root))
        try:
            for path, data in outputs.items():
                if path.startswith(prefix):
                    dest = tmp / path[len(prefix):]
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.write_bytes(data)
            for keep in PRESERVED[top]:
                if (target / keep).exists():
                    (tmp / keep).parent.mkdir(parents=True, exist_ok=True)
                    os.replace(target / keep, tmp / keep)
            old = None
            if target.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{top}.old-", dir=root))
                os.replace(target, old / top)
            os.replace(tmp, target)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
            if hashes is not None:  # so the next no-op check does not re-read what was just written
                for path, data in outputs.items():
                    if path.startswith(prefix):
                        hashes.record(os.path.join(root, path), sha256(data))
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def _exclusive(root: Path):
    """One writer per project at a time: several people (and their tests) share one checkout, and
    two swaps of generated/ racing each other could each find the other's folder mid-rename."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock, same as before
        yield
        return
    # In the temp dir, not the cache: builds with different UMMAYA_CACHE must still exclude each other.
    folder = Path(tempfile.gettempdir()) / "ummaya-build-locks"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{sha256(str(root).encode())}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def build(root: Path, *, progress: Progress | None = None, cache=None, force: bool = False, parse=None) -> BuildResult:
    from .emit_cache import Cache, FileHashes

    started = time.perf_counter()
    root = Path(root).resolve()
    cache = cache if cache is not None else Cache()
    if not force:
        rid = is_up_to_date(root, FileHashes(root, cache.folder))
        if rid:
            return BuildResult(None, True, time.perf_counter() - started, rid)
    plan = plan_build(root, progress=progress, cache=cache, parse=parse)
    if plan.ok:
        if progress:
            progress(f"write: {len(plan.outputs)} files")
        with _exclusive(root):
            hashes = FileHashes(root, cache.folder)
            write_outputs(root, plan.outputs, hashes)
            hashes.save()
    return BuildResult(plan, False, time.perf_counter() - started, plan.release_id)
