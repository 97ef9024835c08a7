"""What a host in a manifest or profile URL may be: a public DNS name, never an address.

A URL a pull request writes into ``registry/`` decides where the engine sends a citizen's request
and, through a profile, a service key. So ``check`` refuses (``host_problem``):

* every IP literal, public ones too, in every spelling a resolver accepts — dotted quads, the
  short and numeric forms ``inet_aton`` reads (``127.1``, ``2130706433``, ``0x7f.0.0.1``,
  ``0177.0.0.1``), bracketed IPv6 (``[::1]``, ``[::ffff:127.0.0.1]``, ``[fe80::1%25eth0]``);
* names that are local by definition: one label (``metadata``, ``intranet``), ``localhost`` and
  ``*.localhost``, special-use and private-use suffixes (``.local``, ``.internal``, ``.lan``,
  ``.home.arpa``, ``.arpa``, ``.onion``, ``.test``, ``.invalid``, ``.localdomain`` …) and the
  cloud metadata names;
* names that carry an address inside them for a wildcard DNS service (``127.0.0.1.nip.io``,
  ``10-0-0-5.sslip.io``, ``7f000001.nip.io``) and the public names kept pointing at loopback
  (``localtest.me``, ``lvh.me`` …).

``address_problem`` says why a resolved address is not a public one (loopback, private, link-local
and metadata, shared CGNAT space, multicast, reserved, unspecified; IPv4 inside IPv6 unwrapped):
``ummaya check`` resolves the names it can and refuses one that lands there.

The allowance for test upstreams: ``UMMAYA_CHECK_ALLOW_HOSTS`` (comma-separated host names or
addresses) lets a *test* registry point at a local server. CI never sets it for ``registry/``; the
dispatcher reaches the loopback test upstreams through operator overrides instead
(``base_url_overrides``, ``UMMAYA_BASE_URL_<ID>``), which are not manifest URLs.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from collections.abc import Mapping
from urllib.parse import urlsplit

ALLOW_ENV = "UMMAYA_CHECK_ALLOW_HOSTS"

# Suffixes that never name a public service (RFC 6761, RFC 6762, RFC 8375, RFC 7686, ICANN's
# private-use .internal, and the names home and office networks use).
LOCAL_SUFFIXES = (
    "localhost", "local", "localdomain", "internal", "intranet", "lan", "home", "corp", "private",
    "home.arpa", "arpa", "onion", "test", "invalid", "example", "alt", "domain", "workgroup",
)
# Public names that resolve to loopback or to an address written inside them, and the metadata
# services' names (also reachable by a bare label, refused as one label anyway).
LOOPBACK_NAMES = (
    "localtest.me", "lvh.me", "vcap.me", "lacolhost.com", "fuf.me", "localho.st", "local.gd",
    "nip.io", "sslip.io", "xip.io", "traefik.me", "nip.direct", "backname.io", "ip6.name",
    "1u.ms", "rebind.it", "rbndr.us",
    "metadata.google.internal", "metadata.azure.com", "instance-data.ec2.internal",
)
_HEX_ADDR = re.compile(r"^(0x)?[0-9a-f]{8}$")
_DASHED_QUAD = re.compile(r"(^|[^0-9])\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3}($|[^0-9])")
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_SHARED = ipaddress.ip_network("100.64.0.0/10")  # CGNAT: not is_private in every Python


def allowed_hosts(env: Mapping[str, str] | None = None) -> frozenset[str]:
    env = os.environ if env is None else env
    raw = env.get(ALLOW_ENV) or ""
    return frozenset(normal_host(h) for h in raw.split(",") if h.strip())


def normal_host(host: str) -> str:
    """Lower case, no brackets, no trailing dot, IDNA (punycode) form: one spelling per host."""
    host = host.strip().lower().strip("[]").rstrip(".")
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def as_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a host literal stands for, in any spelling a resolver reads, else None."""
    h = normal_host(host)
    h = h.split("%", 1)[0]  # an IPv6 zone (fe80::1%eth0, %25 in a URL)
    try:
        return ipaddress.ip_address(h)
    except ValueError:
        pass
    if h and all(c in "0123456789abcdefx." for c in h) and any(c.isdigit() for c in h):
        try:  # 127.1, 2130706433, 0x7f.0.0.1, 0177.0.0.1: what inet_aton (and so curl) accepts
            return ipaddress.IPv4Address(socket.inet_aton(h))
        except OSError:
            return None
    return None


def address_problem(addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why an address is no public service's, or None."""
    if isinstance(addr, ipaddress.IPv6Address):
        inner = addr.ipv4_mapped or addr.sixtofour or (addr.teredo[1] if addr.teredo else None)
        if inner is None and addr.packed[:12] == bytes(12) and int(addr) > 1:
            inner = ipaddress.IPv4Address(addr.packed[12:])  # ::a.b.c.d (IPv4-compatible)
        if inner is not None:
            return address_problem(inner)
    for test, what in (
        ("is_loopback", "loopback"), ("is_link_local", "link-local (the cloud metadata service lives here)"),
        ("is_unspecified", "unspecified"), ("is_multicast", "multicast"),
        ("is_private", "private"), ("is_reserved", "reserved"),
    ):
        if getattr(addr, test):
            return what
    if isinstance(addr, ipaddress.IPv4Address) and addr in _SHARED:
        return "shared address space (CGNAT)"
    if not addr.is_global:
        return "not globally routable"
    return None


def host_problem(host: str | None, *, allow: frozenset[str] = frozenset()) -> str | None:
    """Why ``host`` may not appear in a manifest or profile URL, or None."""
    if not host:
        return "the URL names no host"
    h = normal_host(host)
    if h in allow:
        return None
    addr = as_address(h)
    if addr is not None:
        why = address_problem(addr)
        return f"an IP address ({h}{': ' + why if why else ''}); name the service's public host instead"
    labels = h.split(".")
    if len(labels) < 2:
        return f"'{h}' is a single-label name (resolved on the local network)"
    if not all(_LABEL.match(lb) for lb in labels):
        return f"'{h}' is not a valid DNS host name"
    for suffix in LOCAL_SUFFIXES:
        if h == suffix or h.endswith("." + suffix):
            return f"'{h}' is a local or special-use name (.{suffix})"
    for name in LOOPBACK_NAMES:
        if h == name or h.endswith("." + name):
            return f"'{h}' resolves to loopback, to a metadata service or to an address it embeds ({name})"
    # An address spelt inside the name, for some wildcard DNS service: 10.0.0.5.example.net,
    # 10-0-0-5.example.net, 0a000005.example.net.
    for i in range(len(labels) - 3):
        quad = ".".join(labels[i:i + 4])
        if all(lb.isdigit() for lb in labels[i:i + 4]) and as_address(quad) is not None:
            return f"'{h}' embeds the address {quad}"
    if _DASHED_QUAD.search(h):
        return f"'{h}' embeds an IP address"
    for lb in labels[:-1]:
        if _HEX_ADDR.match(lb):
            inner = ipaddress.IPv4Address(int(lb.removeprefix("0x"), 16))
            if address_problem(inner):
                return f"'{h}' embeds the address {inner} ({address_problem(inner)})"
    return None


def url_problem(url: str, *, https: bool = True, allow: frozenset[str] = frozenset()) -> str | None:
    """Why ``url`` may not be a manifest URL (scheme, credentials in it, its host), or None."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError as exc:
        return f"not a valid URL ({exc})"
    if https and parts.scheme.lower() != "https":
        return f"must be https:// (not {parts.scheme or 'a relative URL'}://)"
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return "must not carry user information (user:password@)"
    why = host_problem(host, allow=allow)
    if why is None and host and normal_host(host) not in allow:
        # A host that only parses the way we read it is a second host to another parser.
        if "\\" in url or any(c.isspace() or ord(c) < 32 for c in url.strip()):
            return "contains backslashes, spaces or control characters"
    return why


def resolved_problem(host: str, timeout_s: float = 2.0) -> str | None:
    """Resolve ``host`` (bounded) and say why one of its addresses is not public; None when every
    address is public or the name does not resolve (offline: the static rules still hold)."""
    import concurrent.futures as cf

    pool = cf.ThreadPoolExecutor(max_workers=1)
    try:
        infos = pool.submit(socket.getaddrinfo, host, 443, 0, socket.SOCK_STREAM).result(timeout_s)
    except Exception:  # noqa: BLE001 - unresolvable or too slow: nothing to add
        return None
    finally:
        pool.shutdown(wait=False)
    for info in infos:
        addr = as_address(str(info[4][0]))
        why = address_problem(addr) if addr is not None else None
        if why:
            return f"'{host}' resolves to {addr} ({why})"
    return None


__all__ = ["ALLOW_ENV", "address_problem", "allowed_hosts", "as_address", "host_problem",
           "normal_host", "resolved_problem", "url_problem"]
