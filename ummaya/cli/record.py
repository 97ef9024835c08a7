"""``ummaya record ADAPTER --args JSON [--name NAME]``: turn a Live answer into a recorded fixture.

With the adapter's keys set in the environment, the adapter is called on the Live tier (the
manifest's upstream, or ``UMMAYA_BASE_URL_<ADAPTER_ID>``), and the upstream's body is written under
``registry/<folder>/fixtures/<adapter_id>/`` with a fixture entry appended to the manifest:
``source: recorded``, ``recorded_on`` today, the request, the body — keys removed, personal data
masked (runtime/dispatch/recording.py). Then run ``ummaya build``. See docs/CONTRIBUTING.md.
"""

from __future__ import annotations

import asyncio
import json
import os

import click

from ._common import fail, root_option


@click.command()
@click.argument("adapter_id")
@click.option("--args", "args_json", required=True, metavar="JSON", help="The adapter's arguments as a JSON object.")
@click.option("--name", default=None, metavar="NAME", help="Fixture name (default: recorded_<date>).")
@root_option
def record(adapter_id: str, args_json: str, name: str | None, root: str | None) -> None:
    """Call ADAPTER Live and keep the answer as a recorded fixture (keys removed, personal data masked)."""
    from ummaya.codegen.loader import load_registry
    from ummaya.codegen.profile_merge import resolve_manifest
    from ummaya.paths import ProjectNotFound, require_root
    from ummaya.runtime.catalog import Catalog
    from ummaya.runtime.dispatch import Dispatcher
    from ummaya.runtime.dispatch.recording import Recorder, RecordError, write_recording
    from ummaya.wire.resolvers import kst, utc_now

    try:
        args = json.loads(args_json)
    except json.JSONDecodeError as exc:
        fail(f"--args: not JSON ({exc.msg} at column {exc.colno})", 2)
    if not isinstance(args, dict):
        fail("--args: must be a JSON object of the adapter's arguments", 2)
    try:
        project = require_root(root)
    except ProjectNotFound as exc:
        fail(str(exc), 2)
    registry, _ = load_registry(project)
    lm = registry.by_id().get(adapter_id)
    if lm is None:
        fail(f"no adapter '{adapter_id}' under {project / 'registry'}", 2)
    if lm.manifest.upstream is not None and lm.manifest.upstream.profile not in (None, *registry.profiles):
        fail(f"{adapter_id}: unknown profile '{lm.manifest.upstream.profile}'", 2)
    manifest = resolve_manifest(lm.manifest, registry.profiles)
    if manifest.tier != "live" or manifest.upstream is None or not manifest.upstream.callable:
        fail(f"{adapter_id} is a {manifest.tier} adapter: there is no live service to record", 2)
    missing = [v for v in manifest.credentials if not (os.environ.get(v) or "").strip()]
    if missing:
        fail(f"{adapter_id} needs {', '.join(missing)} set to record a live answer", 2)

    today = kst(utc_now()).date()
    name = name or f"recorded_{today.strftime('%Y%m%d')}"
    recorder = Recorder()
    dispatcher = Dispatcher(
        Catalog(root=project / "generated", release_id="record", adapters={adapter_id: manifest}),
        on_response=recorder,
    )
    outcome = asyncio.run(dispatcher.call(adapter_id, args, mode="live"))
    if outcome.error_code in ("INVALID_ARGUMENTS", "CREDENTIAL_MISSING", "HOST_GUARD", "NO_BASE_URL"):
        fail(f"{adapter_id}: {outcome.error_message}", 2)
    secrets = [os.environ[v].strip() for v in _secret_vars(manifest) if os.environ.get(v)]
    try:
        written, fixture = write_recording(
            manifest=manifest,
            manifest_file=lm.source.path,
            fixtures_dir=lm.fixtures_dir,
            name=name,
            args=args,
            answers=recorder.answers,
            secrets=secrets,
            today=today,
        )
    except RecordError as exc:
        fail(f"record: {exc}", 2)
    for path in written:
        click.echo(f"wrote {path.relative_to(project)}")
    _warn_undocumented(project, adapter_id, name)
    verdict = fixture.expected_error or f"{len((fixture.expected or {}).get('items') or [])} item(s)"
    click.echo(f"fixture '{name}' (source: recorded, {today}): {verdict}. Run `ummaya build` next.")


def _secret_vars(manifest) -> list[str]:
    auth = manifest.upstream.auth if manifest.upstream else None
    names = list(manifest.credentials)
    if auth is not None:
        names += [auth.credential] if auth.credential else []
        names += list(auth.token_params.values())
    return [n for n in dict.fromkeys(names) if n]


def _warn_undocumented(project, adapter_id: str, name: str) -> None:
    """A recording with fields the documented response lacks is news (a guide or manifest out of
    date): say so now, with the line `ummaya build` will report."""
    from ummaya.codegen.loader import load_registry
    from ummaya.codegen.profile_merge import resolve_manifest
    from ummaya.codegen.response_fields import check_response_fields

    registry, _ = load_registry(project)
    lm = registry.by_id().get(adapter_id)
    if lm is None:
        return
    for problem in check_response_fields(lm, resolve_manifest(lm.manifest, registry.profiles)):
        if f"({name})" in problem.message:
            click.echo(f"warning: {problem}", err=True)
