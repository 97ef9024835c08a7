"""``ummaya serve``: the serving API (FastAPI on uvicorn).

Every worker process builds the same app from the environment (``ServeSettings.from_env``); the
options here only set that environment. At start-up, when the default alias (``production``)
points nowhere yet, the current build (``generated/``) is published as the first release and the
alias is pointed at it; an existing alias is never moved (use ``ummaya release promote``).
"""

from __future__ import annotations

import os

import click

from ._common import DatabaseURL, fail, open_db


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind (loopback by default).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--fd", type=click.IntRange(0), default=None,
              help="Serve on this already-listening socket instead of --host/--port (systemd socket "
                   "activation; a caller that must know the port before the server is up).")
@click.option("--db", default=None, type=DatabaseURL(), help="Store URL (sqlite:///path or postgresql://…); default: UMMAYA_DATABASE_URL or ~/.ummaya.")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True, help="uvicorn worker processes.")
@click.option("--alias", "default_alias", default=None, help="The alias served when a request names none (default: production).")
@click.option("--no-auto-publish", is_flag=True, help="Do not publish the current build when the default alias points nowhere.")
@click.option("--root", type=click.Path(exists=True, file_okay=False), default=None, help="Project folder whose generated/ to publish at start-up.")
@click.option("--log-level", default="info", show_default=True, type=click.Choice(["critical", "error", "warning", "info", "debug"]))
def serve(host: str, port: int, fd: int | None, db: str | None, workers: int, default_alias: str | None,
          no_auto_publish: bool, root: str | None, log_level: str) -> None:
    """Serve POST /v1/retrieve and /v1/answer (JSON or SSE), /v1/releases, /v1/traces/{id}."""
    import uvicorn

    from ummaya.paths import generated_dir

    if db:
        os.environ["UMMAYA_DATABASE_URL"] = db
    open_db(db).close()  # fail fast (exit 2) on a database that cannot be opened, before uvicorn
    try:
        from ummaya.runtime.serve.app import ServeSettings

        ServeSettings.from_env()  # bad UMMAYA_* values (API keys, limits) stop here, not in a worker
    except ValueError as exc:
        fail(f"error [bad_setting]: {exc}", 2)
    if root or "UMMAYA_GENERATED" not in os.environ:
        os.environ["UMMAYA_GENERATED"] = str(generated_dir(root))
    if default_alias:
        os.environ["UMMAYA_DEFAULT_ALIAS"] = default_alias
    if no_auto_publish:
        os.environ["UMMAYA_AUTO_PUBLISH"] = "off"
    from ummaya.runtime.log_filter import uvicorn_log_config

    uvicorn.run("ummaya.runtime.serve.app:app_from_env", factory=True, host=host, port=port, fd=fd,
                workers=workers, log_level=log_level, access_log=False, timeout_graceful_shutdown=10,
                log_config=uvicorn_log_config())
