"""The citizen page: ``GET /`` and its three files under ``/static/`` (no build step, no CDN).

The files ship inside the package (``runtime/serve/static/``, package data in setup.py). The page
talks only to this server (``POST /v1/answer`` with ``"stream": true``), so a strict Content
Security Policy allows nothing else: no inline script or style, no third-party origin.

The page is not a surface of the server's own: it is an SSE client like any other (no mode, no
policy, nothing that tells it apart), so its turns are traced with ``meta.surface = "http_sse"``;
tests/serve/test_every_surface.py sends its request as app.js builds it beside the other surfaces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.responses import FileResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

STATIC = Path(__file__).resolve().parent / "static"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
       "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
           "Referrer-Policy": "no-referrer", "Cache-Control": "no-cache"}


class _Static(StaticFiles):
    async def get_response(self, path: str, scope: Any) -> Any:
        resp = await super().get_response(path, scope)
        resp.headers.update(HEADERS)
        return resp


async def index(request: Any) -> FileResponse:
    return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8", headers=HEADERS)


def mount(app: Any) -> None:
    app.router.routes.append(Route("/", index, methods=["GET", "HEAD"], include_in_schema=False))
    app.router.routes.append(Mount("/static", app=_Static(directory=STATIC), name="static"))
