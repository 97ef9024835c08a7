"""Link: the checks that need more than one manifest, or a manifest plus its fixture files.

Loading validates each document alone; linking answers "does the registry hold together?" — ids
unique, profiles exist, fixture files exist and agree with the schemas and with the adapter's own
parser, prerequisites satisfiable, negative examples pointing at real adapters. Every problem is
collected (never only the first) with the line it concerns.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import jsonschema_rs
except ImportError:  # optional speed-up; jsonschema alone gives the same answers, slower
    jsonschema_rs = None  # type: ignore[assignment]

from .extension_check import check_extensions, registries
from .loader import FIXTURES_DIR, LoadedManifest, Problem, Registry, manifest_paths
from .fixture_provenance import check_provenance
from .profile_merge import UnknownProfile, resolve_manifest
from .response_fields import check_response_fields
from .schema_keywords import check_schema_keywords
from ummaya.model.templates import check_templates
from .url_checks import credential_problems, profile_problems, url_problems

# Which slot types are derived (filled only by an earlier call, the session or a code table, never
# read from the request as such) is the slot table's to say: registry/_slots/*.yaml, `derived`.

ParseFixture = Callable[..., Any]


@dataclass
class LinkResult:
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # adapter id -> fixture names that went through the adapter's parser and matched
    parsed: dict[str, list[str]] = field(default_factory=dict)
    parser_available: bool = False
    # adapter id -> the manifest with its profile merged in (resolve.resolve_manifest), so the
    # emitters reuse link's one resolve instead of deep-copying every manifest again
    resolved: dict[str, Any] = field(default_factory=dict)


def load_parser() -> tuple[ParseFixture | None, str | None]:
    """The fixture reader both the build and Mock run (``ummaya.wire.fixture_reader``), with no
    reason to skip it: it sits below codegen, so it is always there."""
    from ummaya.wire.fixture_reader import parse_fixture

    return parse_fixture, None


def check_plain_http(lm: LoadedManifest, resolved) -> list[Problem]:
    """A credential never travels over plain http: an upstream (or a step) whose host is http://
    and whose resolved auth sends a key is refused; such a catalog row is skipped, not called."""
    up = resolved.upstream
    if up is None or not up.callable:
        return []
    out = []
    targets: list[tuple[tuple[Any, ...], str, Any, Any]] = [(("upstream", "base_url"), "upstream", up.base_url, up.auth)]
    targets += [(("upstream", "steps", i), f"upstream.steps.{i} ({st.id})", st.base_url, st.auth) for i, st in enumerate(up.steps)]
    for loc, label, base, auth in targets:
        if base and base.lower().startswith("http://") and auth is not None and auth.style != "none":
            line = lm.source.line_of(loc) or lm.source.line_of(("upstream",))
            out.append(Problem(lm.source.rel, line, f"{label}: {base} is plain http and the {auth.style} auth would send a credential over it; a credential never leaves over http — skip the row or use the service's https host"))
    return out


def check_declared_inputs(lm: LoadedManifest) -> list[Problem]:
    """Every input field an upstream declaration names (filters, window bounds, steps, the
    after-call match/nearest/limit, POST body, the operation choice — with an enum of exactly its
    choices) is a property of input_schema; every coordinate
    system is one pyproj knows."""
    m, src = lm.manifest, lm.source
    up = m.upstream
    if up is None:
        return []
    props = set((m.input_schema.get("properties") or {}))
    picked = {name for st in up.chain() for name in st.pick}
    out: list[Problem] = []

    def need(name, loc, what):
        if name is not None and name not in props and name not in picked:
            out.append(Problem(src.rel, src.line_of(loc) or src.line_of(("upstream",)), f"{what}: input field '{name}' is not in input_schema.properties"))

    for i, f in enumerate(up.filters):
        for name in f.inputs:
            need(name, ("upstream", "filters", i, "input"), f"upstream.filters.{i}.input")
    if up.window is not None:
        need(up.window.start_input, ("upstream", "window", "start_input"), "upstream.window.start_input")
        need(up.window.end_input, ("upstream", "window", "end_input"), "upstream.window.end_input")
    for key, name in up.json_params.items():
        need(name, ("upstream", "json_params", key), f"upstream.json_params.{key}")
    if up.project_params is not None:
        need(up.project_params.latitude, ("upstream", "project_params"), "upstream.project_params.latitude")
        need(up.project_params.longitude, ("upstream", "project_params"), "upstream.project_params.longitude")
    for i, st in enumerate(up.steps):
        base = ("upstream", "steps", i)
        for k, name in st.params.items():
            need(name, (*base, "params", k), f"upstream.steps.{i}.params.{k}")
        for j, f in enumerate(st.filters):
            for name in f.inputs:
                need(name, (*base, "filters", j, "input"), f"upstream.steps.{i}.filters.{j}.input")
        for name in st.when_missing or []:
            need(name, (*base, "when_missing"), f"upstream.steps.{i}.when_missing")
        if st.match is not None:
            need(st.match.input, (*base, "match", "input"), f"upstream.steps.{i}.match.input")
    if up.after is not None:
        for i, rule in enumerate(up.after.match):
            need(rule.input, ("upstream", "after", "match", i, "input"), f"upstream.after.match.{i}.input")
        if up.after.nearest is not None:
            need(up.after.nearest.latitude, ("upstream", "after", "nearest"), "upstream.after.nearest.latitude")
            need(up.after.nearest.longitude, ("upstream", "after", "nearest"), "upstream.after.nearest.longitude")
        if isinstance(up.after.limit, str):
            need(up.after.limit, ("upstream", "after", "limit"), "upstream.after.limit")
    if up.operations is not None:
        loc = ("upstream", "operations", "input")
        name = up.operations.input
        need(name, loc, "upstream.operations.input")
        prop = (m.input_schema.get("properties") or {}).get(name)
        enum = prop.get("enum") if isinstance(prop, dict) else None
        if name in props and sorted(map(str, enum or [])) != sorted(up.operations.choices):
            out.append(Problem(src.rel, src.line_of(loc) or src.line_of(("upstream",)), f"upstream.operations.input: input field '{name}' needs an enum listing exactly the choices {sorted(up.operations.choices)}"))
    for loc, crs in ((("upstream", "coordinates", "crs"), up.coordinates.crs if up.coordinates else None),
                     (("upstream", "project_params", "crs"), up.project_params.crs if up.project_params else None)):
        if crs is not None and not _known_crs(crs):
            out.append(Problem(src.rel, src.line_of(loc) or src.line_of(("upstream",)), f"{'.'.join(map(str, loc))}: pyproj does not know the coordinate system '{crs}'"))
    return out


def _known_crs(code: str) -> bool:
    try:
        from pyproj import CRS
        from pyproj.exceptions import CRSError
    except ImportError:  # pragma: no cover - a dependency
        return True
    try:
        CRS.from_user_input(code)
    except CRSError:
        return False
    return True


def provided_slots(manifests: list[LoadedManifest], table=None, slots: set[str] | None = None) -> set[str]:
    """Every slot some adapter provides (``slots``: ones already collected); a whole (coordinates)
    provides its parts (latitude, longitude) and the parts together provide the whole, as the slot
    table declares them."""
    slots = set(slots or ())
    for lm in manifests:
        slots.update(lm.manifest.provides)
    if table is not None:
        for name, st in table.slots.items():
            if st.parts and name in slots:
                slots |= set(st.parts)
            if st.parts and set(st.parts) <= slots:
                slots.add(name)
    return slots


def _first_difference(expected: Any, actual: Any, path: str = "") -> str | None:
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(set(expected) | set(actual), key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in actual:
                return f"{sub}: missing from parser output"
            if key not in expected:
                return f"{sub}: parser output has {actual[key]!r}, fixture expects nothing"
            diff = _first_difference(expected[key], actual[key], sub)
            if diff:
                return diff
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"{path or '(root)'}: parser output has {len(actual)} items, fixture expects {len(expected)}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
            diff = _first_difference(e, a, f"{path}[{i}]")
            if diff:
                return diff
        return None
    # 1 == 1.0 in JSON; bool is not a number here.
    if expected == actual and isinstance(expected, bool) == isinstance(actual, bool):
        return None
    return f"{path or '(root)'}: parser output has {actual!r}, fixture expects {expected!r}"


def _fast_validator(schema: dict):
    """A compiled Rust validator for the common case (valid input), or None.

    jsonschema (pure Python) costs ~20 ms per fixture on these schemas, which a 1,000-adapter
    registry cannot afford; it still produces every message, but only for what the fast path
    rejected, so the reported problems are jsonschema's own."""
    if jsonschema_rs is None:
        return None
    try:
        return jsonschema_rs.Draft202012Validator(schema)
    except Exception:  # a schema Rust cannot compile (e.g. a regex dialect): use the slow path
        return None


def _schema_problems(lm: LoadedManifest, key: str) -> list[Problem]:
    schema = getattr(lm.manifest, key)
    if jsonschema_rs is not None:
        try:
            if jsonschema_rs.meta.is_valid(schema):
                return []
        except Exception:
            pass
    from jsonschema import Draft202012Validator  # only when the fast path rejected: an import to spare
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as err:
        loc = (key, *err.path)
        return [Problem(lm.source.rel, lm.source.line_of(loc), f"{key} is not a valid JSON Schema: {err.message}")]
    return []


def _validate(schema: dict, value: Any, lm: LoadedManifest, loc: tuple, what: str, fast=None) -> list[Problem]:
    if fast is not None and fast.is_valid(value):
        return []
    from jsonschema import Draft202012Validator

    out = []
    validator = Draft202012Validator(schema)
    for err in sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.absolute_path))):
        at = ".".join(str(p) for p in err.absolute_path) or "(root)"
        out.append(Problem(lm.source.rel, lm.source.line_of((*loc, *err.absolute_path)), f"{what} at {at}: {err.message}"))
    return out


def check_fixtures(lm: LoadedManifest, resolved, parse: ParseFixture | None) -> tuple[list[Problem], list[str]]:
    """Per-adapter fixture checks: files exist, request/expected match the schemas, parser agrees."""
    m, src = lm.manifest, lm.source
    problems: list[Problem] = []
    parsed: list[str] = []
    schemas_ok = True
    for key in ("input_schema", "output_schema"):
        errs = _schema_problems(lm, key)
        problems += errs
        schemas_ok = schemas_ok and not errs
    seen: set[str] = set()
    fast_in = fast_out = None
    for i, fx in enumerate(m.fixtures):
        loc = ("fixtures", i)
        label = f"fixtures.{i} ({fx.name})"
        if fx.name in seen:
            problems.append(Problem(src.rel, src.line_of((*loc, "name")), f"{label}: duplicate fixture name"))
        seen.add(fx.name)
        body = b""
        body_ok = True
        if fx.response is not None:
            path = lm.fixtures_dir / fx.response
            try:
                body = path.read_bytes()
            except OSError:
                body_ok = False
                problems.append(Problem(src.rel, src.line_of((*loc, "response")), f"{label}: fixture file not found: {_rel_to_registry(lm, fx.response)}"))
        if schemas_ok:
            if fast_in is None and fast_out is None:
                fast_in, fast_out = _fast_validator(m.input_schema), _fast_validator(m.output_schema)
            problems += _validate(m.input_schema, fx.request, lm, (*loc, "request"), f"{label}: request does not match input_schema", fast_in)
            if fx.expected is not None:
                problems += _validate(m.output_schema, fx.expected, lm, (*loc, "expected"), f"{label}: expected does not match output_schema", fast_out)
        if parse is None or not body_ok or resolved is None:
            continue
        try:
            outcome = parse(resolved, fx, body)
        except Exception as exc:  # the parser's bug is still this fixture's problem to report
            problems.append(Problem(src.rel, src.line_of(loc), f"{label}: the adapter's parser raised {type(exc).__name__}: {exc}"))
            continue
        if fx.expected is not None:
            if outcome.error_class:
                problems.append(Problem(src.rel, src.line_of((*loc, "expected")), f"{label}: the adapter's parser failed ({outcome.error_class} {outcome.error_code or ''}: {outcome.error_message or ''}), fixture expects output".replace("  ", " ")))
                continue
            diff = _first_difference(fx.expected, outcome.output)
            if diff:
                problems.append(Problem(src.rel, src.line_of((*loc, "expected")), f"{label}: {diff}"))
                continue
        elif outcome.error_class != fx.expected_error:
            problems.append(Problem(src.rel, src.line_of((*loc, "expected_error")), f"{label}: the adapter's parser gives error class {outcome.error_class!r}, fixture expects {fx.expected_error!r}"))
            continue
        parsed.append(fx.name)
    # Answer templates compile and render against every fixture's expected output, both languages.
    problems += check_templates(lm)
    return problems, parsed


def _rel_to_registry(lm: LoadedManifest, name: str) -> str:
    return f"{lm.source.rel.rsplit('/', 1)[0]}/fixtures/{lm.id}/{name}"


def _checker_hash(parse: ParseFixture | None) -> str:
    """What decides a fixture check besides the adapter's own files: this module, the dispatcher
    package (the parser) and the validators' versions."""
    here = Path(__file__).resolve()
    files = [here, Path(check_templates.__code__.co_filename).resolve(),
             *(here.with_name(n) for n in ("response_fields.py", "fixture_provenance.py", "profile_merge.py"))]
    if parse is not None:
        module = sys.modules.get(getattr(parse, "__module__", "") or "")
        origin = getattr(module, "__file__", None)
        if origin:
            files += sorted(Path(origin).resolve().parent.glob("*.py"))
    h = hashlib.sha256(f"parser={parse is not None}|{_versions()}".encode())
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def _versions() -> str:
    from importlib import metadata

    out = []
    for dist in ("jsonschema", "jsonschema-rs", "pydantic"):
        try:
            out.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            out.append(f"{dist}=-")
    return ",".join(out)


def _fixture_key(checker: str, lm: LoadedManifest, resolved) -> str:
    """Everything one adapter's fixture checks depend on: its file's bytes (line numbers), the
    resolved manifest (profile merged) and every fixture body."""
    h = hashlib.sha256(checker.encode())
    h.update(lm.source.rel.encode() + b"\0" + lm.source.path.read_bytes())
    h.update((resolved.model_dump_json() if resolved is not None else "-").encode())
    for fx in lm.manifest.fixtures:
        if fx.response is not None:
            try:
                h.update(fx.response.encode() + b"\0" + hashlib.sha256((lm.fixtures_dir / fx.response).read_bytes()).digest())
            except OSError:
                h.update(fx.response.encode() + b"\0missing")
    return h.hexdigest()


def _adapter_checks(lm: LoadedManifest, resolved, parse) -> tuple[list[Problem], list[str]]:
    """check_fixtures plus issue 12's provenance and documented-response rules (own modules)."""
    problems, parsed = check_fixtures(lm, resolved, parse)
    return problems + check_provenance(lm) + check_response_fields(lm, resolved), parsed


def _cached_check(lm: LoadedManifest, resolved, parse, cache, checker: str | None) -> tuple[list[Problem], list[str]]:
    if cache is None or checker is None:
        return _adapter_checks(lm, resolved, parse)
    key = _fixture_key(checker, lm, resolved)
    hit = cache.get("link", key)
    if hit is not None:
        data = json.loads(hit["result.json"])
        return [Problem(*p) for p in data["problems"]], data["parsed"]
    problems, parsed = _adapter_checks(lm, resolved, parse)
    payload = {"problems": [[p.path, p.line, p.message] for p in problems], "parsed": parsed}
    cache.put("link", key, {"result.json": json.dumps(payload).encode()})
    return problems, parsed


def _own_checks(lm: LoadedManifest, resolved, regs, table, profiles, allow) -> list[Problem]:
    """The checks that read one adapter alone (its manifest, its resolved profile, the slot table,
    the runtime's registries): cached with its fixture verdicts."""
    out = check_plain_http(lm, resolved) if resolved is not None else []
    out += check_extensions(lm, regs, table)
    out += check_declared_inputs(lm)
    out += check_schema_keywords(lm)
    out += url_problems(lm.source, allow)
    out += credential_problems(lm, profiles)
    return out


def _shared_key(checker: str, inputs: dict[str, str], regs, allow) -> str:
    """What every adapter's link checks read besides the adapter's own files: the checker (parser
    and validators), the generator (this package, model/, the extension registries), every shared
    registry file (profiles, slot types, vocabularies: registry/_*/), the allowed hosts, the
    resolver expressions and the coordinate-system library."""
    from importlib import metadata

    from ummaya.codegen.builder import generator_hash

    from .extension_check import resolver_names

    try:
        pyproj = metadata.version("pyproj")
    except metadata.PackageNotFoundError:
        pyproj = "-"
    h = hashlib.sha256(f"{checker}|{generator_hash()}|{sorted(allow)}|{resolver_names()}|pyproj={pyproj}".encode())
    h.update(json.dumps({kind: sorted(reg) for kind, reg in regs.items()}, sort_keys=True).encode())
    for rel, digest in sorted(inputs.items()):
        parts = rel.split("/")
        if len(parts) > 2 and parts[1].startswith("_"):
            h.update(f"{rel}\0{digest}\n".encode())
    return h.hexdigest()


def _adapter_key(shared: str, lm: LoadedManifest, inputs: dict[str, str], resolved) -> str | None:
    """One adapter's link-check key from the input hashes the build already has: its manifest file
    (bytes: line numbers too), whether it resolved, and each fixture body's hash. None when the
    manifest is not among the inputs (then the checks run uncached)."""
    own = inputs.get(lm.source.rel)
    if own is None or own == "unreadable":
        return None
    h = hashlib.sha256(f"{shared}|{lm.source.rel}|{own}|{resolved is not None}".encode())
    base = f"{lm.source.rel.rsplit('/', 1)[0]}/{FIXTURES_DIR}/{lm.id}/"
    for fx in lm.manifest.fixtures:
        if fx.response is not None:
            digest = inputs.get(base + fx.response)
            if digest is None or digest == "unreadable":
                if (lm.fixtures_dir / fx.response).exists():
                    return None  # a name the input walk did not list (a path with '..' …): uncached
                digest = "missing"
            h.update(f"{fx.response}\0{digest}\n".encode())
    return h.hexdigest()


def _cached_adapter(lm, resolved, parse, cache, key, own) -> tuple[list[Problem], list[str]]:
    """Own checks + fixture checks under ``key`` (``own``: computes the own checks)."""
    if cache is not None and key is not None:
        hit = cache.get("linkadapter", key)
        if hit is not None:
            data = json.loads(hit["result.json"])
            return [Problem(*p) for p in data["problems"]], data["parsed"]
    problems, parsed = _adapter_checks(lm, resolved, parse)
    problems = own() + problems
    if cache is not None and key is not None:
        payload = {"problems": [[p.path, p.line, p.message] for p in problems], "parsed": parsed}
        cache.put("linkadapter", key, {"result.json": json.dumps(payload).encode()})
    return problems, parsed


def _provides_of(lm: LoadedManifest) -> list[str]:
    return list(lm.manifest.provides)


def _link_one(lm: LoadedManifest, registry: Registry, parse, cache, shared, checker, inputs, regs, table, allow,
              result: LinkResult) -> dict[str, Any]:
    """One adapter's part of :func:`link` as plain data: its problems (profile, own and fixture
    checks), the fixtures its parser agreed with, and where its ``requires`` and negative examples
    sit (checked against the other adapters by the caller). Its resolved manifest goes to
    ``result.resolved``."""
    m, src = lm.manifest, lm.source
    problems: list[Problem] = []
    resolved = None
    if m.upstream is not None and m.upstream.profile is not None and m.upstream.profile not in registry.profiles:
        known = ", ".join(sorted(registry.profiles)) or "none"
        problems.append(Problem(src.rel, src.line_of(("upstream", "profile")), f"upstream.profile: unknown profile '{m.upstream.profile}' (known: {known})"))
    else:
        try:
            resolved = resolve_manifest(m, registry.profiles)
        except UnknownProfile as exc:  # a step's profile (the main one is guarded above)
            i = next((i for i, st in enumerate(m.upstream.steps) if st.profile == exc.args[0]), 0) if m.upstream else 0
            known = ", ".join(sorted(registry.profiles)) or "none"
            problems.append(Problem(src.rel, src.line_of(("upstream", "steps", i, "profile")), f"upstream.steps.{i}.profile: unknown profile '{exc.args[0]}' (known: {known})"))
            resolved = None
    if resolved is not None:
        result.resolved[lm.id] = resolved

    # Names of registered extension functions (x-slot, derived_params, transform, postprocess),
    # declared inputs, schema keywords, URLs and credentials: one adapter's own checks.
    def own():
        return _own_checks(lm, resolved, regs, table, registry.profiles, allow)

    if shared is not None and inputs is not None:
        found, parsed = _cached_adapter(lm, resolved, parse, cache, _adapter_key(shared, lm, inputs, resolved), own)
    else:
        found, parsed = _cached_check(lm, resolved, parse, cache, checker)
        found = own() + found
    problems += found
    return {
        "rel": src.rel,
        "problems": [(p.path, p.line, p.message) for p in problems],
        "parsed": list(parsed),
        "resolves": resolved is not None,
        "requires": [(slot, src.line_of(("requires", i))) for i, slot in enumerate(m.requires)],
        "negatives": [(i, neg.belongs_to, src.line_of(("negative_examples", i, "belongs_to")))
                      for i, neg in enumerate(m.negative_examples)],
    }


def link(registry: Registry, *, parse: ParseFixture | None = None, use_parser: bool = True, cache=None,
         inputs: dict[str, str] | None = None) -> LinkResult:
    """Every cross-manifest and fixture problem. With ``cache`` (codegen.emit_cache.Cache), an
    adapter whose files, profile and checker code are unchanged reuses its fixture verdicts; with
    ``inputs`` too (the build's ``{path: sha256}`` of registry/), its own checks as well, keyed by
    those hashes (:func:`_adapter_key`)."""
    result = LinkResult()
    if use_parser and parse is None:
        parse, why = load_parser()
        if why:
            result.notes.append(f"fixtures not parsed through the adapters' parsers: {why} (check skipped)")
    checker = _checker_hash(parse) if cache is not None else None
    regs = registries()
    from ummaya.model.hosts import allowed_hosts

    allow = allowed_hosts()
    shared = _shared_key(checker, inputs, regs, allow) if checker is not None and inputs is not None else None
    understanding = registry.understanding
    table = understanding.table() if understanding is not None else None
    if understanding is not None:
        from .understand import check_understanding

        result.problems += check_understanding(understanding, frozenset(regs["slot reader"]))
    result.parser_available = parse is not None
    manifests = registry.manifests

    by_id: dict[str, list[LoadedManifest]] = {}
    for lm in manifests:
        by_id.setdefault(lm.id, []).append(lm)
    for adapter_id, group in by_id.items():
        if len(group) > 1:
            files = ", ".join(g.source.rel for g in group)
            for lm in group:
                result.problems.append(Problem(lm.source.rel, lm.source.line_of(("id",)), f"duplicate adapter id '{adapter_id}' (declared in {files})"))

    # A manifest that failed to load still declares its id (file name = id): pointing at it is not
    # a second problem, the load error already is one.
    declared = set(by_id) | {p.stem for p in (registry.paths if registry.paths is not None else manifest_paths(registry.root))}
    provided = set()
    for lm in manifests:
        provided.update(lm.derived("provides", _provides_of, lm))
    provided = provided_slots([], table, provided)
    # Same for `requires`: the provider may be the manifest that did not load.
    unloaded = declared - set(by_id)
    if unloaded:
        result.notes.append(f"requires not checked: {len(unloaded)} manifest(s) did not load")
    for lm in manifests:
        # What one adapter alone decides (its profile, its link checks, the lines its cross-manifest
        # references sit on): kept in its state, so an unchanged adapter is neither resolved nor read.
        own_link = lm.derived("link", _link_one, lm, registry, parse, cache, shared, checker, inputs, regs, table, allow, result)
        problems, parsed = own_link["problems"], own_link["parsed"]
        result.problems += [Problem(*p) for p in problems]
        if parse is not None:
            result.parsed[lm.id] = list(parsed)
        rel = own_link["rel"]
        for slot, line in own_link["requires"]:
            declared_slot = table.get(slot) if table is not None else None
            if not unloaded and slot not in provided and declared_slot is not None and declared_slot.derived:
                result.problems.append(Problem(rel, line, f"requires: no adapter provides slot '{slot}' and the planner cannot take it from the request text"))
        for i, target, line in own_link["negatives"]:
            if target is not None and target not in declared:
                result.problems.append(Problem(rel, line, f"negative_examples.{i}.belongs_to: no adapter with id '{target}'"))
    # Where requests and keys may go: public https hosts, credentials bound to profiles (issue 19);
    # each manifest's part is among its own checks above.
    for pid, prof in registry.profiles.items():
        src = registry.profile_sources.get(pid)
        if src is not None:
            result.problems += profile_problems(prof, src, allow)
    result.problems.sort()
    return result
