"""Link checks on where a manifest may send things: its URLs and its credentials.

A pull request's manifest must not be able to steer a request, or a key, anywhere but the
public service it describes (issue 19). Each rule is a ``path:line`` problem, so ``ummaya build``
and ``ummaya check`` both fail:

* **Every URL in a manifest or profile** — citation, handoff, base URL, token path, docs, any URL
  in its text — names a public DNS host: no IP literal in any spelling, no private, loopback,
  link-local or metadata name, no user information (``model/hosts.py``). Citation, handoff and
  base URLs are ``https://`` only. Fixture bodies and expected outputs are upstream data and are
  not manifest URLs. ``UMMAYA_CHECK_ALLOW_HOSTS`` is the documented allowance for a test
  registry pointing at local upstreams.
* **A credential belongs to a profile.** A manifest that sets its own ``upstream.base_url`` cannot
  use its profile's credential; a manifest's own ``auth`` may rename the key parameter but names
  only credentials its profile declares; a token path is a path on the profile's host; and
  ``upstream.credential_hosts`` is the build's to write, never a manifest's.
"""

from __future__ import annotations

import re
from typing import Any

from ummaya.model.hosts import allowed_hosts, host_problem, url_problem
from ummaya.model.manifest import Profile

from .loader import LoadedManifest, Located, Problem

_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s\"'<>)\]]+")
# Where a manifest's own data ends and upstream data (or JSON Schema) begins.
_NOT_URLS = ("fixtures", "input_schema", "output_schema")
# Links a citizen follows, and the upstream itself: https only.
HTTPS_ONLY = (("citation", "url"), ("handoff", "url"), ("upstream", "base_url"), ("base_url",),
              ("docs_url",))


def _strings(value: Any, loc: tuple) -> list[tuple[tuple, str]]:
    if isinstance(value, str):
        return [(loc, value)]
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _strings(v, (*loc, k))]
    if isinstance(value, list):
        return [x for i, v in enumerate(value) for x in _strings(v, (*loc, i))]
    return []


def url_problems(src: Located, allow: frozenset[str], what: str = "") -> list[Problem]:
    """Every URL in a document's own values (not its fixtures or schemas)."""
    data = src.data if isinstance(src.data, dict) else {}
    out: list[Problem] = []
    for key, value in data.items():
        if key in _NOT_URLS:
            continue
        for loc, text in _strings(value, (key,)):
            field = ".".join(map(str, loc))
            if tuple(loc) in HTTPS_ONLY:
                why = url_problem(text, https=True, allow=allow)
                if why:
                    out.append(Problem(src.rel, src.line_of(loc), f"{what}{field}: {why}"))
                continue
            for match in _URL.finditer(text):
                why = url_problem(match.group(0).rstrip(".,;"), https=False, allow=allow)
                if why:
                    out.append(Problem(src.rel, src.line_of(loc), f"{what}{field}: {match.group(0)}: {why}"))
    return out


def _auth_credentials(auth: Any) -> list[str]:
    if auth is None:
        return []
    names = [auth.credential] if auth.credential else []
    return names + [v for v in auth.token_params.values() if v not in names]


def credential_problems(lm: LoadedManifest, profiles: dict[str, Profile]) -> list[Problem]:
    m, src = lm.manifest, lm.source
    up = m.upstream
    if up is None:
        return []
    out: list[Problem] = []
    if up.credential_hosts:
        out.append(Problem(src.rel, src.line_of(("upstream", "credential_hosts")),
                           "upstream.credential_hosts is written by the build from the profile's "
                           "`hosts`; a manifest cannot declare where a key may go"))
    prof = profiles.get(up.profile) if up.profile else None
    own = _auth_credentials(up.auth)
    if up.profile is None:
        if own:
            out.append(Problem(src.rel, src.line_of(("upstream", "auth")),
                               f"upstream.auth: credential {', '.join(own)} without a profile: a "
                               "credential is sent only through the profile that declares it and "
                               "its hosts (registry/_profiles/<name>.yaml with `hosts:`)"))
        return out
    if prof is None:
        return out  # link reports the unknown profile
    theirs = prof.credentials()
    for name in own:
        if name not in theirs:
            out.append(Problem(src.rel, src.line_of(("upstream", "auth")),
                               f"upstream.auth: credential {name} is not one of profile "
                               f"'{prof.id}''s ({', '.join(theirs) or 'none'}); a manifest may rename "
                               "the key parameter, never send another key"))
    effective = up.auth or prof.auth
    if up.base_url is not None and _auth_credentials(effective):
        out.append(Problem(src.rel, src.line_of(("upstream", "base_url")),
                           f"upstream.base_url: a manifest using profile '{prof.id}''s credential "
                           f"({', '.join(_auth_credentials(effective))}) cannot set its own base URL; "
                           f"the key goes only to {', '.join(prof.bound_hosts()) or 'the profile hosts'} "
                           "(drop base_url, or declare a profile for the other host)"))
    token_path = effective.token_path if effective is not None else None
    if token_path and not token_path.startswith("/"):
        out.append(Problem(src.rel, src.line_of(("upstream", "auth", "token_path")),
                           "upstream.auth.token_path: must be a path on the profile's host (/…), "
                           "not a URL: the key pair travels with it"))
    return out


def profile_problems(prof: Profile, src: Located, allow: frozenset[str]) -> list[Problem]:
    out = url_problems(src, allow, "profile ")
    hosts = prof.bound_hosts()
    for i, host in enumerate(prof.hosts):
        why = host_problem(host, allow=allow)
        if why or "/" in host or ":" in host:
            out.append(Problem(src.rel, src.line_of(("hosts", i)),
                               f"profile hosts.{i}: {why or 'a host name only (no scheme, port or path)'}"))
    if prof.base_url and prof.hosts:
        from urllib.parse import urlsplit

        base = (urlsplit(prof.base_url).hostname or "").lower()
        if base not in hosts:
            out.append(Problem(src.rel, src.line_of(("base_url",)),
                               f"profile base_url: its host {base} is not among the profile's hosts "
                               f"({', '.join(hosts)})"))
    if prof.credentials() and not hosts:
        out.append(Problem(src.rel, src.line_of(("auth",)),
                           "profile auth: credentials need a base_url or `hosts` to be bound to"))
    return out


def registry_url_problems(registry: Any) -> list[Problem]:
    """Every URL and credential problem of a loaded registry (manifests and profiles)."""
    allow = allowed_hosts()
    out: list[Problem] = []
    for pid, prof in registry.profiles.items():
        src = registry.profile_sources.get(pid)
        if src is not None:
            out += profile_problems(prof, src, allow)
    for lm in registry.manifests:
        out += url_problems(lm.source, allow)
        out += credential_problems(lm, registry.profiles)
    return out




def resolution_problems(registry: Any, timeout_s: float = 3.0) -> list[Problem]:
    """``ummaya check`` only (the build stays offline): resolve every host a manifest or profile
    URL names, concurrently within ``timeout_s``, and refuse one whose address is not public (a
    DNS name kept pointing at loopback or a private network). A name that does not resolve here
    adds nothing: the static rules above already hold."""
    import concurrent.futures as cf
    from urllib.parse import urlsplit

    from ummaya.model.hosts import normal_host, resolved_problem

    allow = allowed_hosts()
    where: dict[str, tuple[Located, tuple]] = {}
    sources = [lm.source for lm in registry.manifests] + list(registry.profile_sources.values())
    for src in sources:
        data = src.data if isinstance(src.data, dict) else {}
        for key, value in data.items():
            if key in _NOT_URLS:
                continue
            for loc, text in _strings(value, (key,)):
                found = [text] if tuple(loc) == ("hosts", loc[-1]) else [m.group(0) for m in _URL.finditer(text)]
                for url in found:
                    try:
                        host = urlsplit(url).hostname if "://" in url else url
                    except ValueError:
                        continue
                    if host and normal_host(host) not in allow:
                        where.setdefault(normal_host(host), (src, loc))
    if not where:
        return []
    pool = cf.ThreadPoolExecutor(max_workers=min(16, len(where)))
    futures = {pool.submit(resolved_problem, h, timeout_s): h for h in where}
    out: list[Problem] = []
    try:
        for fut in cf.as_completed(futures, timeout=timeout_s + 1):
            why = fut.result()
            if why:
                src, loc = where[futures[fut]]
                out.append(Problem(src.rel, src.line_of(loc), f"{'.'.join(map(str, loc))}: {why}"))
    except cf.TimeoutError:
        pass  # slow resolvers: what answered in time is checked
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return sorted(out)


__all__ = ["credential_problems", "profile_problems", "registry_url_problems", "resolution_problems",
           "url_problems"]
