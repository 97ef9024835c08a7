"""Issue 19 holes 1 and 9 / items 1 and 9: every URL in a manifest or profile names a public host,
and links a citizen follows (citation, handoff) are https only.

Before: ``check`` accepted ``169.254.169.254``, ``10.0.0.5``, ``127.0.0.2`` and ``[::1]`` in a
manifest, and ``http://`` citation and handoff links. Each is now a ``path:line`` problem that
fails ``ummaya build`` and ``ummaya check``. The rule is the address's nature, not a list of the
four probes: every IP literal in every spelling, and every local or address-carrying name.
"""

from __future__ import annotations

import socket

import pytest

from tests.codegen.project import GOV24, NMC, edit, line_of, make_project, run
from ummaya.codegen.link import link
from ummaya.codegen.loader import load_registry
from ummaya.codegen.url_checks import resolution_problems
from ummaya.model.hosts import address_problem, as_address, host_problem

BAD_HOSTS = [
    "169.254.169.254", "10.0.0.5", "127.0.0.2", "[::1]",                 # the four probes
    "172.16.3.4", "192.168.0.10", "100.64.0.1", "0.0.0.0", "8.8.8.8",    # other ranges; public IPs too
    "2130706433", "0x7f000001", "0x7f.0.0.1", "0177.0.0.1", "127.1",     # numeric spellings
    "[::ffff:127.0.0.1]", "[::ffff:a9fe:a9fe]", "[fd00::5]", "[fe80::1]", "[0:0:0:0:0:0:0:1]",
    "[64:ff9b::a9fe:a9fe]", "[2001:4860:4860::8888]",
    "localhost", "LOCALHOST.", "api.localhost", "metadata", "metadata.google.internal",
    "printer.local", "router.lan", "svc.home.arpa", "kube.svc.cluster.local",
    "localtest.me", "app.lvh.me", "127.0.0.1.nip.io", "10-0-0-5.sslip.io", "7f000001.rebind.example.com",
    "10.0.0.5.evil.example.com",
]


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.delenv("UMMAYA_CHECK_ALLOW_HOSTS", raising=False)
    return make_project(tmp_path / "proj")


def problems(root) -> list[str]:
    registry, load = load_registry(root)
    return [str(p) for p in load] + [str(p) for p in link(registry, use_parser=False).problems]


@pytest.mark.parametrize("host", BAD_HOSTS)
def test_the_classifier_refuses_every_non_public_host(host) -> None:
    assert host_problem(host), host


@pytest.mark.parametrize("host", ["apis.data.go.kr", "www.gov.kr", "dapi.kakao.com", "한국.kr",
                                  "sgisapi.mods.go.kr", "deadbeef.cdn.example.com"])
def test_public_names_pass(host) -> None:
    assert host_problem(host) is None


@pytest.mark.parametrize("host", ["169.254.169.254", "10.0.0.5", "127.0.0.2", "[::1]", "2130706433",
                                  "[::ffff:10.0.0.5]", "metadata.google.internal", "localtest.me"])
def test_build_refuses_them_in_a_profile_base_url(project, host) -> None:
    path = project / "registry/_profiles/data_go_kr.yaml"
    edit(path, "base_url: https://apis.data.go.kr", f"base_url: https://{host}/gw")
    found = problems(project)
    line = line_of(path, "base_url:")
    assert any(p.startswith(f"registry/_profiles/data_go_kr.yaml:{line}: profile base_url:") for p in found), found


@pytest.mark.parametrize("host", ["169.254.169.254", "10.0.0.5", "127.0.0.2", "[::1]", "0x7f.1",
                                  "[fe80::1%25eth0]", "intranet", "a.10-0-0-5.sslip.io"])
def test_build_refuses_them_in_citation_and_handoff_urls(project, host) -> None:
    nmc, gov = project / NMC, project / GOV24
    edit(nmc, "url: https://www.data.go.kr/data/15000563/openapi.do", f"url: https://{host}/data")
    edit(gov, "url: https://www.gov.kr/mw/", f"url: https://{host}/mw/")
    found = problems(project)
    assert any(p.startswith(f"{NMC}:{line_of(nmc, 'url: https://' + host)}: citation.url:") for p in found), found
    assert any(p.startswith(f"{GOV24}:{line_of(gov, 'url: https://' + host)}: handoff.url:") for p in found), found


def test_build_refuses_an_address_written_in_free_text(project) -> None:
    nmc = project / NMC
    edit(nmc, "  en: Lists emergency medical institutions", "  en: See http://169.254.169.254/latest/meta-data. Lists emergency medical institutions")
    found = problems(project)
    assert any("169.254.169.254" in p and "link-local" in p for p in found), found


@pytest.mark.parametrize("field", ["citation", "handoff"])
def test_http_citation_and_handoff_links_are_refused(project, field) -> None:
    # Hole 9: http:// passed check and rendered as a link.
    if field == "citation":
        path, old = project / NMC, "url: https://www.data.go.kr/data/15000563/openapi.do"
    else:
        path, old = project / GOV24, "url: https://www.gov.kr/mw/"
    edit(path, old, old.replace("https://", "http://"))
    found = problems(project)
    line = line_of(path, old.replace("https://", "http://"))
    assert any(f":{line}: {field}.url: must be https://" in p for p in found), found


def test_user_information_in_a_url_is_refused(project) -> None:
    edit(project / NMC, "url: https://www.data.go.kr/data/15000563/openapi.do",
         "url: https://www.data.go.kr@evil.example.net/data")
    assert any("user information" in p for p in problems(project))


def test_the_documented_allowance_admits_a_test_registry_s_local_upstream(project, monkeypatch) -> None:
    edit(project / NMC, "url: https://www.data.go.kr/data/15000563/openapi.do",
         "url: https://127.0.0.1/data")
    assert any("127.0.0.1" in p for p in problems(project))
    monkeypatch.setenv("UMMAYA_CHECK_ALLOW_HOSTS", "127.0.0.1")
    assert not any("127.0.0.1" in p for p in problems(project))


def test_check_refuses_a_public_name_that_resolves_to_loopback(project, monkeypatch) -> None:
    real = socket.getaddrinfo

    def fake(host, *a, **kw):
        if host == "innocent-looking.example.com":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", 443))]
        if host == "also-innocent.example.com":
            return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("::ffff:169.254.169.254", 443, 0, 0))]
        raise socket.gaierror("offline")

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    edit(project / NMC, "url: https://www.data.go.kr/data/15000563/openapi.do",
         "url: https://innocent-looking.example.com/data")
    edit(project / GOV24, "url: https://www.gov.kr/mw/", "url: https://also-innocent.example.com/mw/")
    registry, _ = load_registry(project)
    found = [str(p) for p in resolution_problems(registry)]
    assert any(p.startswith(f"{NMC}:") and "resolves to 127.0.0.1 (loopback)" in p for p in found), found
    assert any(p.startswith(f"{GOV24}:") and "link-local" in p for p in found), found
    monkeypatch.setattr(socket, "getaddrinfo", real)


def test_build_and_check_fail_end_to_end(project, monkeypatch) -> None:
    monkeypatch.setenv("UMMAYA_CACHE", str(project.parent / "cache"))
    edit(project / NMC, "url: https://www.data.go.kr/data/15000563/openapi.do", "url: http://[::1]/data")
    for cmd in ("build", "check"):
        result = run(cmd, "--root", str(project))
        assert result.exit_code == 1 and "citation.url" in result.output, result.output


def test_address_problem_unwraps_ipv4_inside_ipv6() -> None:
    assert address_problem(as_address("::ffff:192.168.1.1")) == "private"
    assert address_problem(as_address("2002:a9fe:a9fe::1")).startswith("link-local")  # 6to4
