"""Where a request's URL meets a credential: the one place a key is read to be sent.

A credential (``DATA_GO_KR_SERVICE_KEY``, ``KAKAO_REST_API_KEY``, SGIS's key pair …) belongs to a
profile (``registry/_profiles/``), and goes only to that profile's declared hosts, over https:
the build stamps ``upstream.credential_hosts`` (credential → hosts) from the profile
(codegen/profile_merge.py), and every key, token-exchange secret and exchanged token is taken through
``CredentialGuard.secret`` / ``check`` with the URL it is about to travel to. Anything else —
another host, http, a port other than 443, user information in the URL, a host that is an
address or a local name, a credential the profile does not declare, a manifest with no profile —
is refused (adapter_error ``HOST_GUARD``) before a byte is sent.

The one way around the declared hosts is the operator's: a base URL override
(``Dispatcher(base_url_overrides=…)``, ``UMMAYA_BASE_URL_<ADAPTER_OR_PROFILE>``), which is how tests
reach their loopback upstreams. It stands in for the profile's host — the credential must still be
one the profile binds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from ummaya.model.hosts import host_problem, normal_host

from ummaya.wire.errors import ADAPTER_ERROR, CREDENTIAL_MISSING, UpstreamError


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    default = {"https": 443, "http": 80}.get(parts.scheme.lower())
    return f"{parts.scheme.lower()}://{normal_host(parts.hostname or '')}:{parts.port or default}"


def credential(env: Mapping[str, str], name: str | None) -> str:
    # Keys are pasted from portals; a trailing newline would otherwise reach the upstream.
    value = (env.get(name) or "").strip() if name else ""
    if not value:
        raise UpstreamError(
            CREDENTIAL_MISSING, "CREDENTIAL_MISSING", f"environment variable {name} is not set"
        )
    return value


@dataclass(frozen=True)
class CredentialGuard:
    """The binding of one call: credential → hosts (from the catalog) and the operator's
    override origin, if the call's base URL is one."""

    bound: Mapping[str, list[str]]
    override: str | None = None
    adapter_id: str = ""

    def check(self, url: str, names: Iterable[str]) -> None:
        """Raise HOST_GUARD unless every credential in ``names`` may travel to ``url``."""
        for name in names:
            why = self._why_not(url, name)
            if why:
                raise UpstreamError(ADAPTER_ERROR, "HOST_GUARD",
                                    f"refusing to send {name} to {_where(url)}: {why}")

    def secret(self, env: Mapping[str, str], name: str | None, url: str) -> str:
        """The value of credential ``name``, once it is known that it may go to ``url``."""
        self.check(url, [name or ""])
        return credential(env, name)

    def _why_not(self, url: str, name: str) -> str | None:
        hosts = self.bound.get(name)
        if not hosts:
            return (f"{self.adapter_id or 'this adapter'} has no profile binding {name or 'it'} "
                    "(a credential is sent only to its profile's declared hosts)")
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            return "the URL does not parse"
        if parts.username is not None or parts.password is not None or "@" in parts.netloc:
            return "the URL carries user information"
        if self.override is not None and origin_of(url) == self.override:
            return None  # the operator's override stands in for the profile's host
        if parts.scheme.lower() != "https":
            return "credentials travel over https only"
        if port not in (None, 443):
            return f"port {port} is not the profile's (443)"
        host = normal_host(parts.hostname or "")
        if host not in {normal_host(h) for h in hosts}:
            return f"it is bound to {', '.join(hosts)}"
        problem = host_problem(host)
        if problem:
            return problem
        return None


def _where(url: str) -> str:
    try:
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.hostname or ''}{':' + str(parts.port) if parts.port else ''}"
    except ValueError:
        return "an unparsable URL"


__all__ = ["CredentialGuard", "origin_of"]
