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
from typing import Any

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
    digests: dict[str, str] = field(default_factory=dict)  # sha256 of each of outputs, when known

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class BuildResult:
    plan: Plan | None
    noop: bool
    seconds: float
    release_id: str


def generator_hash(folder: Path | None = None) -> str:
    """Everything besides the registry that decides the bytes: this package's code and the
    versions of the libraries that render output.

    Memoised by the stat of every source file it reads or imports (codegen/, model/, and wire/ and
    runtime/, whose extension registries the published schema lists) and the library versions, in this
    process and in ``folder`` (the emit cache; git's racy-timestamp rule as in FileHashes): the
    no-op check then neither re-reads the sources nor imports the runtime's extension modules.
    """
    import json

    here = Path(__file__).parent
    # model/ holds the retrieval analyzer emit_index analyses text with, so it decides bytes too.
    sources = sorted(here.glob("*.py")) + sorted((here.parent / "model").glob("*.py"))
    versions = ",".join(f"{d}={_version(d)}" for d in ("datamodel-code-generator", "jinja2", "pydantic", "kiwipiepy"))
    stats = []
    paths: list[str | Path] = [*sources, *_python_sources(here.parent / "wire"), *_python_sources(here.parent / "runtime")]
    for p in paths:
        st = os.stat(p)
        stats.append((str(p), st.st_size, st.st_mtime_ns))
    key = sha256(json.dumps([versions, stats]).encode())
    newest = max((m for *_, m in stats), default=0)
    if _GENERATOR_MEMO.get("key") == key and newest < _GENERATOR_MEMO["at"] - _RACY_NS:
        return _GENERATOR_MEMO["value"]
    memo = Path(folder) / "stat" / "generator.json" if folder is not None else None
    if memo is not None:
        try:
            saved = json.loads(memo.read_bytes())
            if saved["key"] == key and newest < saved["at"] - _RACY_NS:
                _GENERATOR_MEMO.update(key=key, value=saved["value"], at=saved["at"])
                return saved["value"]
        except (OSError, ValueError, KeyError, TypeError):
            pass
    h = sha256(b"".join(p.name.encode() + b"\0" + p.read_bytes() for p in sources))
    value = sha256(f"{h}|{versions}|{_extensions_digest()}".encode())
    at = time.time_ns()
    _GENERATOR_MEMO.update(key=key, value=value, at=at)
    if memo is not None:
        from ummaya.model.containment import write_atomic

        write_atomic(memo, json.dumps({"key": key, "value": value, "at": at}).encode())
    return value


_GENERATOR_MEMO: dict = {}
_RACY_NS = 100_000_000  # emit_cache.FileHashes.RACY_NS


def _python_sources(root: Path) -> list[str]:
    """The Python files under ``root`` (the extension registries are read from them); os.walk, sorted."""
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        out += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".py")]
    return out


def _extensions_digest() -> str:
    """The registered extension names and their docs (wire/extensions.py): the published schema
    lists them, so registering one changes the output — editing a function's body does not."""
    import json

    from .extension_check import registries

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


def is_up_to_date(root: Path, hashes=None, folder: Path | None = None, inputs: dict[str, str] | None = None) -> str | None:
    """The release id when a rebuild would write exactly what is there, else None. The lock and
    the outputs it names come from the checkout (a pull request): only regular files inside
    generated/ and llms/ are read, so a symlink to /dev/zero cannot hang ``check``. (``inputs``:
    hash_inputs of the same files, when the caller has it.)"""
    from ummaya.model.containment import UnsafeFile, read_regular, unreadable
    from .emit_cache import FileHashes

    hashes = hashes or FileHashes(root)
    try:
        lock = read_lock(read_regular(root / LOCK_PATH, 256 * 1024 * 1024))
    except (OSError, ValueError, UnsafeFile):
        return None
    try:
        if lock.get("generator") != generator_hash(folder) or lock.get("inputs") != (inputs if inputs is not None else hash_inputs(root, hashes)):
            return None
        tops = {top: os.path.realpath(os.path.join(root, top)) for top in OUTPUT_DIRS}  # once, not per file
        for path, digest in lock.get("outputs", {}).items():
            full = os.path.join(root, path)
            if not _output_path(path) or unreadable(full, tops[path.split("/")[0]], 1 << 30):
                return None
            if hashes.hash(full) != digest:
                return None
    except OSError:
        return None
    finally:
        hashes.save()
    return lock.get("release_id")


def plan_build(root: Path, *, progress: Progress | None = None, cache=None, parse=None,
               inputs: dict[str, str] | None = None) -> Plan:
    """Everything the build would write, or every problem that stops it (``inputs``: hash_inputs
    of the registry, when the caller took it a moment ago)."""
    from .emit_cache import Cache, FileHashes
    from .loader import ParseCache, load_registry

    say = progress or (lambda _msg: None)
    root = Path(root).resolve()
    plan = Plan()
    cache = cache if cache is not None else Cache()
    if inputs is None:
        hashes = FileHashes(root, cache.folder)
        inputs = hash_inputs(root, hashes)
        hashes.save()
    plan.release_id = release_id(inputs)
    index_job = _IndexJob(cache, plan)
    say(f"load: {len(inputs)} input files")
    try:
        states = _adapter_states(root, cache, inputs, parse)
        registry, problems = load_registry(root, ParseCache(cache.folder / "parse"), states, inputs)
    except BaseException:
        index_job.cancel()
        raise
    plan.adapters = len(registry.manifests)
    manifests = registry.manifests
    # The slow emitters need only the manifests: start them now, beside link.
    if problems:
        index_job.cancel()
        jobs: list[Any] = []
    else:
        index_job.start(manifests, say, registry.understanding)
        jobs = [index_job, _ModelsJob(manifests, cache, say)]
    try:
        _plan_rest(plan, root, inputs, registry, manifests, problems, jobs, parse, say, cache)
    except BaseException:
        for job in jobs:
            job.cancel()
        raise
    for lm in manifests:
        if "id" in lm.state:
            states.put(lm.rel, lm.state)
    return plan


def _adapter_states(root: Path, cache, inputs: dict[str, str], parse):
    """codegen/adapter_state.py under the cache's ``adapter/`` folder, keyed by the generator and
    what link's checks share (the checker, the allowed hosts, every registry/_*/ file)."""
    from ummaya.model.hosts import allowed_hosts

    from .adapter_state import AdapterStates
    from .extension_check import registries
    from .link import _checker_hash, _shared_key, load_parser

    checker = _checker_hash(parse if parse is not None else load_parser()[0])
    head = f"{generator_hash(cache.folder)}|{_shared_key(checker, inputs, registries(), allowed_hosts())}"
    return AdapterStates(cache.folder / "adapter", head, root, inputs)


def _plan_rest(plan, root, inputs, registry, manifests, problems, jobs, parse, say, cache) -> None:
    from .emit_catalog import emit_fixtures, emit_schema
    from .emit_clients import emit_clients
    from .calendar_rules import check_datetime_fields
    from .emit_guidance import check_hidden_services, check_limits, emit_guidance, load_guidance, service_words
    from .emit_llms import emit_llms
    from .emit_lock import emit_lock
    from .link import link
    from .profile_merge import resolve_manifest

    from ummaya.model.templates import code_cache

    from .emit_cache import TEMPLATES_CACHE

    say(f"link: {len(registry.manifests)} adapters")
    # The templates link compiles are kept for the scenario gate's workers (ci/scenario_gate.py).
    with code_cache(cache.folder / TEMPLATES_CACHE):
        linked = link(registry, parse=parse, cache=cache, inputs=inputs)
    guidance, guidance_problems = load_guidance(root)
    guidance_problems += check_limits(registry.manifests, guidance)
    services = service_words(manifests, guidance)  # once, for the check and the emitter
    guidance_problems += check_hidden_services(registry.manifests, guidance, services)
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

    def resolved(lm):
        # link resolved each manifest it checked (one copy each, not two); one whose verdicts came
        # from its state is resolved only if an emitter needs more than its state holds.
        if lm.id in linked.resolved:
            return linked.resolved[lm.id]
        return linked.resolved.setdefault(lm.id, resolve_manifest(lm.manifest, registry.profiles))

    out: dict[str, bytes] = {"generated/__init__.py": b""}
    table = registry.understanding.table()
    say("emit: catalog, fixtures, schema, slot table and vocabularies")
    out.update(_cached_shared("schema", inputs, cache, lambda: emit_schema(table), _resolvers_digest()))
    out.update(_cached_understanding(registry.understanding, inputs, cache))
    out.update(_catalog(registry, resolved, inputs, plan.release_id, cache))
    out.update(emit_fixtures(registry.manifests, resolved))
    out.update(emit_guidance(manifests, guidance, services))
    say("emit: clients, llms")
    out.update(emit_clients(registry.manifests))
    out.update(emit_llms(manifests, table, _cached_pages(registry, inputs, cache)))
    index_job, models_job = jobs
    out.update(models_job.result())
    out.update(index_job.result())
    plan.digests = {path: sha256(data) for path, data in out.items()}  # once, for the lock and the write
    out.update(emit_lock(inputs, registry.manifests, generator_hash(cache.folder), out, plan.digests))
    plan.digests[LOCK_PATH] = sha256(out[LOCK_PATH])
    plan.outputs = dict(sorted(out.items()))


def _catalog(registry, resolved: Callable, inputs: dict[str, str], release: str, cache) -> dict[str, bytes]:
    """generated/catalog.json from per-adapter parts, each cached under its manifest file's hash,
    the profiles' hashes and the generator (all a resolved manifest is made of): an edit encodes one
    adapter, not the catalog."""
    from .emit_catalog import assemble_catalog, catalog_part

    profiles = sha256("".join(f"{p}\0{h}\n" for p, h in sorted(inputs.items())
                              if p.startswith(f"registry/{_PROFILES}/")).encode())
    head = f"{generator_hash(cache.folder)}|catalog|{profiles}|"

    def part_of(lm) -> bytes:
        own = inputs.get(lm.rel)
        key = sha256(f"{head}{lm.rel}|{own}".encode()) if own else None
        hit = cache.get("catalogpart", key) if key else None
        if hit is not None and "part" in hit:
            return hit["part"]
        part = catalog_part(resolved(lm))
        if key:
            cache.put("catalogpart", key, {"part": part})
        return part

    return assemble_catalog([(lm.id, lm.derived("catalog_part", part_of, lm)) for lm in registry.manifests], release)


def _shared_inputs_hash(inputs: dict[str, str]) -> str:
    """Every shared registry file (registry/_*/: profiles, slot types, vocabularies, channels …)."""
    return sha256("".join(f"{p}\0{h}\n" for p, h in sorted(inputs.items())
                          if p.startswith("registry/_")).encode())


def _cached_understanding(understanding, inputs: dict[str, str], cache) -> dict[str, bytes]:
    """emit_understanding (the slot table and the compiled vocabularies: the regions table alone is
    a tenth of a second), cached under the generator and the shared registry files it reads."""
    from .understand import emit_understanding

    return _cached_shared("understanding", inputs, cache, lambda: emit_understanding(understanding))


def _cached_shared(kind: str, inputs: dict[str, str], cache, emit: Callable[[], dict[str, bytes]], extra: str = "") -> dict[str, bytes]:
    """``emit()``, an emitter that reads only the generator, the shared registry files (the
    published manifest schema lists the slot types) and ``extra``, cached under them."""
    key = sha256(f"{generator_hash(cache.folder)}|{kind}|{_shared_inputs_hash(inputs)}|{extra}".encode())
    hit = cache.get(kind, key)
    if hit is not None:
        return hit
    out = emit()
    cache.put(kind, key, out)
    return out


def _resolvers_digest() -> str:
    """The registered resolver expressions and their docs (wire/resolvers.py), which the published
    schema describes; the generator hash covers the other registries (_extensions_digest)."""
    import json

    from ummaya.wire.resolvers import RESOLVERS

    return sha256(json.dumps({n: RESOLVERS.meta(n) for n in RESOLVERS}, sort_keys=True, default=list).encode())


def _cached_pages(registry, inputs: dict[str, str], cache):
    """emit_llms.render_page cached per adapter: a page is rendered from its manifest alone, so its
    key is the generator and the manifest file's hash (an edit renders one page, not 1,000)."""
    from .emit_llms import render_page

    head = f"{generator_hash(cache.folder)}|llms page|"

    def render(lm) -> bytes:
        key = sha256(f"{head}{lm.rel}|{inputs[lm.rel]}".encode()) if inputs.get(lm.rel) not in (None, "unreadable") else None
        hit = cache.get("llmspage", key) if key else None
        if hit is not None and "page.md" in hit:
            return hit["page.md"]
        data = render_page(lm.manifest)
        if key:
            cache.put("llmspage", key, {"page.md": data})
        return data

    def page(lm) -> bytes:
        return lm.derived("llms_page", render, lm)

    return page


_PROFILES = "_profiles"  # codegen.loader.PROFILES_DIR (not imported: the no-op path skips loader)


def _analyse(morph_texts: list[str], noun_texts: list[str]) -> tuple[list, list]:
    """The Kiwi part of the index and the known nouns, for the texts no cached part covers: the
    morphemes of each of ``morph_texts`` and the nouns of each of ``noun_texts`` (picklable, so it
    can run in the index worker; codegen/understand.py says what the nouns are for).

    One Kiwi batch over both lists: most noun texts are also index texts (hints, examples), and
    Kiwi's tokens for a text do not depend on its batch, so each text is analysed once and both
    readings are taken from the same tokens (model.analysis.morphs_many's and nouns_per_text's)."""
    from ummaya.model import analysis
    from .understand import nouns_of

    texts = sorted({t for t in (*morph_texts, *noun_texts) if t.strip()})
    tokens = dict(zip(texts, analysis.kiwi().tokenize(texts), strict=True)) if texts else {}
    morphs = [list(analysis._morph_terms(tokens[t])) if t in tokens else [] for t in morph_texts]
    return morphs, [nouns_of(tokens[t]) if t in tokens else [] for t in noun_texts]


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
        proc, job_dir = self._proc, self._dir
        if proc is None or job_dir is None or proc.stdin is None:
            self._inline = (fn, args)
            return self
        job = os.path.join(job_dir, "job.pickle")
        with open(job, "wb") as fh:
            pickle.dump((fn, args), fh, protocol=pickle.HIGHEST_PROTOCOL)
        proc.stdin.write(job.encode() + b"\n")
        proc.stdin.close()
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
    """``index/documents.json`` and the known nouns, assembled from per-adapter parts. A part is
    one adapter's document with its morphemes (encoded as it sits in the file) and the nouns of its
    texts, cached under the hash of that document and those texts (emit_index.doc_key): Kiwi reads
    each text on its own, so a part depends on its adapter alone and an edit re-analyses one
    adapter, not the catalog. The texts no part covers go through Kiwi once — in a worker
    interpreter when there are many (a cold build: Kiwi's load overlaps link and the other
    emitters), inline when there are few (an edit: no interpreter to start, less CPU)."""

    INLINE_MAX = 50  # adapters to analyse; above this, the worker
    KNOWN_TEXTS_MAX = 500_000

    def __init__(self, cache, plan: Plan):
        self._job: _Background | None = None
        self._value: dict[str, bytes] | None = None
        self._pending: tuple[list[str], list[str]] | None = None
        self._cache = cache
        if _emit_index() is None:
            from .understand import nouns_file

            plan.notes.append("retrieval index not emitted: ummaya.codegen.emit_index is not available")
            self._value = {**nouns_file([], analyse=False)}

    def start(self, manifests, say: Progress, understanding=None) -> None:
        if self._value is not None:
            return
        import json

        from .emit_index import doc_key, doc_texts, document, domain_glosses
        from .understand import adapter_noun_texts, keep_noun_texts, vocab_noun_texts

        gen = generator_hash(self._cache.folder)
        glosses = domain_glosses(understanding)
        self._parts: list[tuple[str, bytes, list[str]]] = []
        self._missing: list[tuple[str, str, dict, list[str]]] = []
        self._states: dict[str, dict] = {}
        for lm in manifests:
            # An adapter's state keeps its part and nouns (they read the manifest, the domain
            # glosses and the generator: all in the state's key), so an unchanged adapter's
            # document is neither rebuilt nor looked up.
            state = lm.state
            if "index_part" in state and "index_nouns" in state:
                self._parts.append((lm.id, state["index_part"], state["index_nouns"]))
                continue
            m = lm.manifest
            doc = document(m, glosses)
            texts = keep_noun_texts(adapter_noun_texts(m)) if understanding is not None else []
            key = doc_key(gen, {"document": doc, "noun_texts": texts})
            hit = self._cache.get("indexpart", key)
            if hit is not None and "part" in hit and "nouns" in hit:
                state["index_part"], state["index_nouns"] = hit["part"], json.loads(hit["nouns"])
                self._parts.append((m.id, state["index_part"], state["index_nouns"]))
            else:
                self._states[m.id] = state
                self._missing.append((m.id, key, doc, texts))
        vocab_texts = keep_noun_texts(vocab_noun_texts(understanding)) if understanding is not None else []
        self._vocab_key = doc_key(gen, {"vocabulary_noun_texts": vocab_texts})
        hit = self._cache.get("indexpart", self._vocab_key)
        self._vocab_nouns: list[str] | None = json.loads(hit["nouns"]) if hit is not None and "nouns" in hit else None
        morph_texts = [t for *_, doc, _ in self._missing for t in doc_texts(doc)]
        noun_texts = [t for *_, texts in self._missing for t in texts]
        if self._vocab_nouns is None:
            noun_texts += vocab_texts
        # Each text once, in a stable order (Kiwi's answer for a text does not depend on its batch).
        morph_texts, noun_texts = list(dict.fromkeys(morph_texts)), list(dict.fromkeys(noun_texts))
        self._vocab_texts = vocab_texts
        self._known = self._texts_key = None
        if morph_texts or noun_texts:
            # Texts Kiwi read before (the adapter's other hints, when one changed): one file per
            # generator, read only when some part is missing. Only new texts need Kiwi at all.
            self._texts_key = sha256(f"{gen}|kiwi texts".encode())
            hit = self._cache.get("kiwitexts", self._texts_key)
            try:
                self._known = json.loads(hit["texts.json"]) if hit is not None else None
            except (KeyError, ValueError):
                self._known = None
            if not isinstance(self._known, dict) or set(self._known) != {"m", "n"}:
                self._known = {"m": {}, "n": {}}
            morph_texts = [t for t in morph_texts if t not in self._known["m"]]
            noun_texts = [t for t in noun_texts if t not in self._known["n"]]
        self._pending = (morph_texts, noun_texts)
        if not morph_texts and not noun_texts:
            return
        say(f"index: Kiwi over {len(morph_texts) + len(noun_texts)} new texts of {len(self._missing)} adapters ({len(self._parts)} cached)")
        if len(morph_texts) + len(noun_texts) > 20 * self.INLINE_MAX and _workers_enabled():
            self._job = _Background(warm=_warm_index_worker).submit(_analyse, morph_texts, noun_texts)

    def result(self) -> dict[str, bytes]:
        if self._value is not None:
            return self._value
        import json

        from .emit_index import DOCUMENTS_PATH, assemble_documents, doc_part
        from .understand import nouns_bytes

        if self._pending is None:
            raise RuntimeError("index job: result() before start()")
        morph_texts, noun_texts = self._pending
        morphs, nouns = [], []
        if self._job is not None:
            morphs, nouns = self._job.result()
            self._job = None
        elif morph_texts or noun_texts:
            morphs, nouns = _analyse(morph_texts, noun_texts)
        analysed = dict(zip(morph_texts, morphs, strict=True))
        found = dict(zip(noun_texts, nouns, strict=True))
        if self._known is not None:
            if morph_texts or noun_texts:
                known = self._known
                if len(known["m"]) + len(known["n"]) > self.KNOWN_TEXTS_MAX:
                    known = {"m": {}, "n": {}}  # bounded: start again rather than grow forever
                known["m"].update(analysed)
                known["n"].update(found)
                self._cache.put("kiwitexts", self._texts_key, {"texts.json": json.dumps(known, ensure_ascii=False).encode()})
            analysed = {**self._known["m"], **analysed}
            found = {**self._known["n"], **found}
        parts = list(self._parts)
        for adapter_id, key, doc, texts in self._missing:
            part = doc_part(doc, analysed)
            adapter_nouns = sorted({n for t in texts for n in found[t]})
            self._cache.put("indexpart", key, {"part": part, "nouns": json.dumps(adapter_nouns).encode()})
            self._states[adapter_id]["index_part"], self._states[adapter_id]["index_nouns"] = part, adapter_nouns
            parts.append((adapter_id, part, adapter_nouns))
        if self._vocab_nouns is None:
            self._vocab_nouns = sorted({n for t in self._vocab_texts for n in found[t]})
            self._cache.put("indexpart", self._vocab_key, {"nouns": json.dumps(self._vocab_nouns).encode()})
        all_nouns = sorted({n for *_, ns in parts for n in ns} | set(self._vocab_nouns))
        self._value = {f"generated/{DOCUMENTS_PATH}": assemble_documents([(i, p) for i, p, _ in parts]),
                       **nouns_bytes(all_nouns)}
        return self._value

    def cancel(self) -> None:
        if self._job is not None:
            self._job.cancel()


class _ModelsJob:
    def __init__(self, manifests, cache, say: Progress):
        from .emit_models import generate, split_cached

        self._pending: list[tuple[dict, list[str]]] = []
        self._modules, todo, keys = split_cached(manifests, cache, self._pending)
        self._job = None
        if todo:
            say(f"models: datamodel-code-generator over {len(todo)} schemas ({len(manifests) - len(todo) // 2} adapters cached), in the background")
            self._job = _Background().submit(generate, todo, keys, cache)

    def result(self) -> dict[str, bytes]:
        from .emit_models import assemble

        if self._job is not None:
            self._modules.update(self._job.result())
            self._job = None
            for state, names in self._pending:  # each adapter's modules, for its state
                state["models"] = {n: self._modules[n] for n in names}
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


def on_disk(root: Path) -> dict[str, str]:
    """Every build output file on disk: ``{"generated/…": absolute path}``."""
    found: dict[str, str] = {}
    for top in OUTPUT_DIRS:
        base = os.path.join(root, top)
        if not os.path.isdir(base):
            continue
        # os.scandir, not rglob: this runs on every build (thousands of files at 1,000 adapters),
        # and a directory entry knows its type without a stat. Folder symlinks are not followed; a
        # file symlink is never an output (the build writes plain files): never read through one
        # (generated/catalog.json -> /dev/zero would hang the drift check); it shows as drift.
        stack = [(base, "")]
        while stack:
            folder, rel_dir = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                rel = f"{rel_dir}{entry.name}"
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, rel + "/"))
                elif entry.is_file(follow_symlinks=False) and _owned(rel, top):
                    found[f"{top}/{rel}"] = entry.path
    return dict(sorted(found.items()))


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
    changed = sorted(p for p in set(outputs) & set(disk) if Path(disk[p]).read_bytes() != outputs[p])
    return Drift(added, removed, changed)


def _plain_tree(root: Path) -> bool:
    """generated/ and llms/ are real folders (or absent) with no symlink to a folder inside and
    no non-file in the way: then the build can replace files in place. A checkout where that is not
    so (a pull request may make generated/x a symlink) gets a fresh tree swapped in instead."""
    for top in OUTPUT_DIRS:
        target = root / top
        if target.is_symlink() or (os.path.lexists(target) and not target.is_dir()):
            return False
        for folder, dirs, _files in os.walk(target):
            for name in dirs:
                if os.path.islink(os.path.join(folder, name)):
                    return False
    return True


def write_changed(root: Path, outputs: dict[str, bytes], hashes, digests: dict[str, str] | None = None) -> int:
    """Write only the outputs whose bytes differ from the file on disk, each through a temp file
    renamed over it (a reader sees the old file or the new one, never half of one), and delete the
    files the build no longer emits; the lock goes last, so an interrupted build never leaves a
    lock vouching for files it did not write. Returns how many files it wrote or removed.

    ``hashes`` (emit_cache.FileHashes) knows what is on disk without reading it. Falls back to
    :func:`write_outputs` (a fresh tree swapped in) when the tree is not plain (:func:`_plain_tree`).
    """
    for path in outputs:
        if not _output_path(path):
            raise ValueError(f"refusing to write {path!r}: outside generated/ and llms/")
    if not _plain_tree(root):
        write_outputs(root, outputs, hashes)
        return len(outputs)
    disk = on_disk(root)
    touched = 0
    ordered = [p for p in outputs if p != LOCK_PATH] + ([LOCK_PATH] if LOCK_PATH in outputs else [])
    for path in ordered:
        data = outputs[path]
        full = os.path.join(root, path)
        digest = digests[path] if digests and path in digests else sha256(data)
        if path in disk and hashes.hash(full) == digest:
            continue
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full)  # a folder where a file goes (never build output)
        _write_file(full, data)
        hashes.record(full, digest)
        touched += 1
    for path in sorted(set(disk) - set(outputs)):
        os.unlink(disk[path])
        hashes.entries.pop(os.path.join(root, path), None)
        _prune_empty(Path(disk[path]).parent, root)
        touched += 1
    return touched


def _write_file(full: str, data: bytes) -> None:
    """A temp file beside ``full`` renamed over it, with the mode a plain write would give."""
    parent = os.path.dirname(full)
    if os.path.lexists(parent) and not os.path.isdir(parent):
        os.unlink(parent)  # a file where a folder goes (never build output)
    os.makedirs(parent, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), 0o666 & ~_umask())
            fh.write(data)
        os.replace(tmp, full)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _prune_empty(folder: Path, root: Path) -> None:
    """Remove folders the deletions left empty, up to (not including) generated/ and llms/."""
    tops = {(root / top) for top in OUTPUT_DIRS}
    while folder not in tops and folder != root:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


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
    # One view of the file hashes for the whole build (inputs, the no-op check, the write): the
    # stat memo is read once, not once per step.
    hashes = FileHashes(root, cache.folder)
    inputs = hash_inputs(root, hashes)
    if not force:
        rid = is_up_to_date(root, hashes, cache.folder, inputs)
        if rid:
            return BuildResult(None, True, time.perf_counter() - started, rid)
    plan = plan_build(root, progress=progress, cache=cache, parse=parse, inputs=inputs)
    if plan.ok:
        with _exclusive(root):
            written = write_changed(root, plan.outputs, hashes, plan.digests)
            hashes.save()
        if progress:
            progress(f"write: {written} of {len(plan.outputs)} files changed")
        from .emit_cache import max_age_s, maybe_prune

        pruned = maybe_prune(cache.folder)  # at most once a day: a no-op build never gets here
        if progress and pruned:
            progress(f"cache: {pruned} entries unused for {max_age_s() / 86_400:g} days removed")
    return BuildResult(plan, False, time.perf_counter() - started, plan.release_id)
