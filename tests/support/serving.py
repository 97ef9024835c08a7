"""A server subprocess that is ready when one request says so: no polling, no sleeps.

The test binds and listens on a loopback socket *before* the server starts and hands it over
(``uvicorn --fd N``, ``ummaya serve --fd N``). A request sent at once then waits in the socket's
backlog until the server has finished its start-up (publishing a release, loading the catalog) and
accepts it: a single blocking ``GET /readyz`` is the readiness signal. The test closes its own copy
of the socket after the spawn, so a server that dies during start-up closes the last one, and the
waiting request fails at once instead of running into its timeout.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Callable, Sequence
from typing import Any

import httpx


def listening_socket() -> socket.socket:
    """A loopback TCP socket already listening, inheritable by a child process."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def spawn_on(sock: socket.socket, cmd: Sequence[str], **popen: Any) -> subprocess.Popen[Any]:
    """Start ``cmd`` (which names ``sock.fileno()`` as its ``--fd``) and give it the only copy."""
    try:
        return subprocess.Popen(list(cmd), pass_fds=(sock.fileno(),), **popen)
    finally:
        sock.close()


def wait_ready(url: str, proc: subprocess.Popen[Any], log: Callable[[], str],
               timeout: float = 180.0) -> httpx.Response:
    """One ``GET /readyz``, answered once start-up is over. ``timeout`` is a deadline for a server
    that hangs, not a bound on how fast it starts (start-up publishes a release)."""
    try:
        r = httpx.get(url + "/readyz", timeout=timeout)
    except httpx.HTTPError as exc:
        state = f"exited with {proc.poll()}" if proc.poll() is not None else "did not answer"
        raise RuntimeError(f"server {state} ({exc!r}):\n{log()}") from exc
    if r.status_code != 200:
        raise RuntimeError(f"server not ready ({r.status_code} {r.text}):\n{log()}")
    return r
