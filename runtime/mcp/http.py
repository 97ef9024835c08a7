"""MCP over streamable HTTP inside the serving app: ``POST/GET/DELETE /mcp``.

The tools are the active release's (the default alias, resolved per request like ``/v1/answer``),
the store is the server's, and ``UMMAYA_SERVE_MODE=mock`` caps every call at Mock here too. The
SDK's session manager issues the MCP session ids; its DNS-rebinding guard admits loopback host
names plus those in ``UMMAYA_MCP_ALLOWED_HOSTS`` (comma-separated ``host:port`` patterns, e.g.
``ummaya.example.kr:*``) — a browser page on another origin cannot drive tools on a local server.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import mcp_types as types
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.routing import Route

from ..callers import caller
from ..service import TurnService
from .server import McpBackend, build_server

LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"]


def security_settings(env: dict[str, str] | None = None) -> TransportSecuritySettings:
    env = dict(os.environ if env is None else env)
    extra = [h.strip() for h in (env.get("UMMAYA_MCP_ALLOWED_HOSTS") or "").split(",") if h.strip()]
    hosts = LOOPBACK_HOSTS + extra
    origins = [f"http://{h}" for h in hosts] + [f"https://{h}" for h in extra]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=origins)


class ServiceTurns:
    """The serving app's active release as a turn service: its retriever is reranked to the
    release's policy when the release is loaded, so retrieval goes through the same rerank and
    tool budget as ``/v1/answer`` and every other surface."""

    def __init__(self, service_of: Callable[[], Any]):
        self.service_of = service_of

    def __call__(self) -> TurnService:
        service = self.service_of()
        release = service.store.resolve(service.settings.default_alias)
        loaded = service.releases.loaded(release.release_id) if release is not None else None
        if loaded is None:
            raise MCPError(types.INTERNAL_ERROR, f"not_ready: no loaded release behind alias "
                           f"{service.settings.default_alias!r}")
        return service.turns(loaded, service.settings.default_alias)


def mount(app: Any, service_of: Callable[[], Any], *, mode: str = "auto",
          path: str = "/mcp") -> Callable[[], AbstractAsyncContextManager[None]]:
    """Add the MCP endpoint to ``app``; returns the session manager's lifespan, which the app's
    own lifespan must enter (a mounted sub-app's lifespan is never run by Starlette). With API
    keys on, ``ApiKeyAuth`` (runtime/serve/auth.py) guards ``/mcp`` as it guards ``/v1``."""
    backend = McpBackend(ServiceTurns(service_of), mode=mode)  # type: ignore[arg-type]
    manager = StreamableHTTPSessionManager(app=build_server(backend), security_settings=security_settings())
    app.router.routes.append(Route(path, endpoint=OwnedSessions(StreamableHTTPASGIApp(manager)),
                                   methods=["GET", "POST", "DELETE"], include_in_schema=False))
    return manager.run


class OwnedSessions:
    """An ``Mcp-Session-Id`` belongs to the API key that opened it, as a ``/v1`` session does.

    The SDK's session manager already refuses a session to any principal but its creator ("Session
    not found", as if it did not exist) when the scope carries an authenticated user; this hands
    it the caller's key fingerprint (auth.py) as that principal. With keys off there is no caller
    to tell apart, and nothing changes."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken

        fp = caller(scope)
        if fp:
            scope = {**scope, "user": AuthenticatedUser(AccessToken(token=f"fp:{fp}", client_id=fp, scopes=[]))}
        await self.app(scope, receive, send)
