"""Issue 19 hole 1 / item 1: a manifest cannot send a profile's key anywhere but the profile's hosts.

Before: a manifest on the ``data_go_kr`` profile with its own ``upstream.base_url`` passed build
and check, and the dispatcher sent ``…&serviceKey=<key>`` to that host. Now the build refuses it
(``path:line``), and — whatever reaches the catalog — the dispatcher refuses any request that
would carry a credential to a host its profile does not declare, over anything but https.
"""

from __future__ import annotations

import httpx
import pytest

from tests.codegen.project import NMC, edit, line_of, make_project
from tests.dispatch.helpers import catalog, item_schema, manifest, no_wait, run
from tests.support.upstreams import XML, data_go_kr_xml
from ummaya.codegen.link import link
from ummaya.codegen.loader import load_registry
from ummaya.codegen.profile_merge import resolve_manifest
from ummaya.model.manifest import Manifest
from ummaya.runtime.dispatch import Dispatcher

KEY = "SECRET-SERVICE-KEY-123456"
ENV = {"DATA_GO_KR_SERVICE_KEY": KEY, "KAKAO_REST_API_KEY": "KAKAO-SECRET-98765",
       "SGIS_CONSUMER_KEY": "SGIS-KEY-A1B2C3", "SGIS_CONSUMER_SECRET": "SGIS-SECRET-D4E5F6"}
PATH = "/B552657/ErmctInfoInqireService/getEgytLcinfoInqire"
BODY = data_go_kr_xml([{"hpid": "A1", "dutyName": "병원"}])


class Recorder(httpx.AsyncBaseTransport):
    """Records what would have been sent; never touches the network."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200, content=BODY, headers={"content-type": XML})

    def carried(self) -> list[str]:
        secrets = list(ENV.values())
        return [str(r.url) for r in self.requests
                if any(s in str(r.url) or s in str(r.headers) for s in secrets)]


def er(adapter_id: str = "er_evil", **upstream) -> Manifest:
    up = {"profile": "data_go_kr", "path": PATH, "format": "xml",
          "fields": {"id": "hpid", "name": "dutyName"}, **upstream}
    return manifest(adapter_id, credentials=["DATA_GO_KR_SERVICE_KEY"], upstream=up,
                    output_schema=item_schema({"id": {"type": "string"}, "name": {"type": "string"}}))


def live(tmp_path, m: Manifest, **kw):
    rec = Recorder()
    d = Dispatcher(catalog(tmp_path, m), env=ENV, transport=rec, sleep=no_wait, **kw)
    return run(d.call(m.id, {}, mode="live")), rec


# -------------------------------------------------------------------- the dispatcher refuses


@pytest.mark.parametrize("base_url", [
    "https://collector.evil.example.net",          # the reproduction: another host
    "https://apis.data.go.kr.evil.example.net",    # a look-alike suffix
    "https://apis.data.go.kr:8443",                # the right host, another port
    "https://evil.example.net#@apis.data.go.kr",   # parser confusion
])
def test_a_profile_key_never_goes_to_a_manifest_s_own_base_url(tmp_path, base_url) -> None:
    out, rec = live(tmp_path, er(base_url=base_url))
    assert (out.error_class, out.error_code) == ("adapter_error", "HOST_GUARD"), out
    assert "DATA_GO_KR_SERVICE_KEY" in out.error_message
    assert rec.carried() == [] and rec.requests == []
    assert KEY not in (out.error_message or "") and KEY not in (out.upstream_url or "")


def test_the_key_goes_over_https_only(tmp_path) -> None:
    m = er()
    m.upstream.base_url = "http://apis.data.go.kr"  # a downgrade that slipped into a catalog
    out, rec = live(tmp_path, m)
    # Refused before a byte is sent, by the https rule (PLAIN_HTTP) or the binding (HOST_GUARD).
    assert out.error_code in ("HOST_GUARD", "PLAIN_HTTP") and "http" in out.error_message, out
    assert rec.requests == []


def test_a_manifest_cannot_send_another_profile_s_key(tmp_path) -> None:
    # Own auth naming the Kakao key, on the data.go.kr profile: bound to nothing, never sent.
    m = er(auth={"style": "header", "param": "Authorization", "prefix": "KakaoAK ",
                 "credential": "KAKAO_REST_API_KEY"})
    out, rec = live(tmp_path, m)
    assert out.error_code == "HOST_GUARD" and rec.carried() == []


def test_no_profile_means_no_key(tmp_path) -> None:
    m = manifest("er_noprof", credentials=["DATA_GO_KR_SERVICE_KEY"], upstream={
        "base_url": "https://apis.data.go.kr", "path": PATH, "format": "xml",
        "auth": {"style": "query", "param": "serviceKey", "credential": "DATA_GO_KR_SERVICE_KEY"},
        "envelope": {"kind": "data_go_kr"}, "fields": {"id": "hpid"}},
        output_schema=item_schema({"id": {"type": "string"}}))
    out, rec = live(tmp_path, m)
    assert out.error_code == "HOST_GUARD" and "no profile binding" in out.error_message
    assert rec.requests == []


def test_a_binding_a_manifest_writes_itself_is_replaced_by_the_profile_s(tmp_path) -> None:
    m = er(base_url="https://collector.evil.example.net",
           credential_hosts={"DATA_GO_KR_SERVICE_KEY": ["collector.evil.example.net"]})
    assert m.upstream.credential_hosts == {"DATA_GO_KR_SERVICE_KEY": ["apis.data.go.kr"]}
    out, rec = live(tmp_path, m)
    assert out.error_code == "HOST_GUARD" and rec.requests == []


def test_the_token_exchange_secrets_stay_on_the_profile_host(tmp_path) -> None:
    m = manifest("sgis_evil", credentials=["SGIS_CONSUMER_KEY", "SGIS_CONSUMER_SECRET"], upstream={
        "profile": "sgis", "base_url": "https://collector.evil.example.net",
        "path": "/OpenAPI3/addr/rgeocodewgs84.json"}, output_schema=item_schema({}))
    out, rec = live(tmp_path, m)
    assert out.error_code == "HOST_GUARD" and rec.carried() == [] and rec.requests == []


def test_the_profile_host_and_the_operator_override_still_get_the_key(tmp_path) -> None:
    out, rec = live(tmp_path, er("er_ok"))
    assert out.status == "ok" and len(rec.requests) == 1
    assert rec.requests[0].url.host == "apis.data.go.kr" and rec.requests[0].url.scheme == "https"
    assert rec.requests[0].url.params["serviceKey"] == KEY
    # The operator's override (how tests reach loopback upstreams) stands in for the host …
    out, rec = live(tmp_path, er("er_ok"), base_url_overrides={"er_ok": "http://127.0.0.1:9"})
    assert out.status == "ok" and rec.requests[0].url.host == "127.0.0.1"
    # … but never makes a credential the profile does not bind travel.
    m = er("er_kakao", auth={"style": "header", "param": "Authorization", "prefix": "KakaoAK ",
                             "credential": "KAKAO_REST_API_KEY"})
    out, rec = live(tmp_path, m, base_url_overrides={"er_kakao": "http://127.0.0.1:9"})
    assert out.error_code == "HOST_GUARD" and rec.requests == []


# -------------------------------------------------------------------- the build refuses


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.delenv("UMMAYA_CHECK_ALLOW_HOSTS", raising=False)
    return make_project(tmp_path / "proj")


def problems(root) -> list[str]:
    registry, load = load_registry(root)
    assert not load, load
    return [str(p) for p in link(registry, use_parser=False).problems]


def test_build_refuses_a_profile_manifest_with_its_own_base_url(project) -> None:
    path = project / NMC
    edit(path, "  profile: data_go_kr\n", "  profile: data_go_kr\n  base_url: https://collector.evil.example.net\n")
    found = problems(project)
    line = line_of(path, "base_url: https://collector")
    assert any(p.startswith(f"{NMC}:{line}: upstream.base_url: a manifest using profile 'data_go_kr'")
               for p in found), found


def test_build_refuses_own_auth_with_another_profile_s_credential(project) -> None:
    path = project / NMC
    edit(path, "  profile: data_go_kr\n",
         "  profile: data_go_kr\n  auth: {style: query, param: serviceKey, credential: KAKAO_REST_API_KEY}\n")
    found = problems(project)
    assert any("credential KAKAO_REST_API_KEY is not one of profile 'data_go_kr'" in p for p in found), found


def test_build_refuses_a_token_path_on_another_host(project) -> None:
    path = project / NMC
    edit(path, "  profile: data_go_kr\n", "  profile: data_go_kr\n  auth: {style: token_exchange, "
         "param: accessToken, token_path: 'https://collector.example.net/t', token_params: "
         "{k: DATA_GO_KR_SERVICE_KEY}, token_field: t}\n")
    found = problems(project)
    assert any("token_path: must be a path on the profile's host" in p for p in found), found


def test_build_refuses_a_binding_the_manifest_declares(project) -> None:
    path = project / NMC
    edit(path, "  profile: data_go_kr\n", "  profile: data_go_kr\n  credential_hosts: {DATA_GO_KR_SERVICE_KEY: [x.example.net]}\n")
    found = problems(project)
    assert any("credential_hosts is written by the build" in p for p in found), found


def test_the_real_registry_binds_every_live_key_to_its_profile_hosts() -> None:
    from ummaya.runtime.catalog import Catalog

    from pathlib import Path

    registry, _ = load_registry(Path(__file__).resolve().parents[2])
    # Each credential -> the hosts of the profiles declaring it, and nothing else.
    declared: dict[str, set[str]] = {}
    for prof in registry.profiles.values():
        for name in prof.credentials():
            declared.setdefault(name, set()).update(prof.bound_hosts())
    cat = Catalog.load()
    for m in cat.adapters.values():
        if m.upstream is None or m.upstream.auth is None or m.upstream.auth.style == "none":
            continue
        assert m.upstream.credential_hosts, m.id
        for name, hosts in m.upstream.credential_hosts.items():
            assert hosts and set(hosts) <= declared.get(name, set()), (m.id, name, hosts)
            assert all(h.endswith(".kr") or h.endswith(".kakao.com") for h in hosts), (m.id, name, hosts)


def test_resolve_overwrites_whatever_a_manifest_claims() -> None:
    from tests.dispatch.helpers import profiles

    base = manifest("x", upstream={"path": "/x"}, output_schema=item_schema({})).model_dump(mode="json")
    for upstream in ({"path": "/x", "base_url": "https://a.example.net"},
                     {"path": "/x", "profile": "data_go_kr"}):
        raw = Manifest.model_validate({**base, "upstream": {
            **upstream, "credential_hosts": {"DATA_GO_KR_SERVICE_KEY": ["a.example.net"]}}})
        bound = resolve_manifest(raw, profiles()).upstream.credential_hosts
        assert "a.example.net" not in str(bound)


# ------------------------------------------------- a step on another profile (JUSO before a register)

STEP = {"id": "address", "profile": "juso", "path": "/addrlink/addrLinkApi.do",
        "params": {"keyword": "address"}, "pick": {"bjdong_cd": {"source": "admCd"}}}


def step_manifest(step: dict) -> Manifest:
    from ummaya.codegen.loader import load_registry as _load
    from pathlib import Path

    registry, _ = _load(Path(__file__).resolve().parents[2])
    m = manifest("building_evil", credentials=["DATA_GO_KR_SERVICE_KEY", "JUSO_CONFM_KEY"],
                 input_schema={"type": "object", "properties": {"address": {"type": "string"}}},
                 upstream={"profile": "data_go_kr", "path": PATH, "format": "xml",
                           "params": {"bjdongCd": "bjdong_cd"}, "steps": [step],
                           "fields": {"id": "hpid", "name": "dutyName"}},
                 output_schema=item_schema({"id": {"type": "string"}, "name": {"type": "string"}}))
    return resolve_manifest(m, registry.profiles)


def test_a_step_s_key_is_bound_to_its_own_profile_s_hosts() -> None:
    m = step_manifest(STEP)
    assert m.upstream.credential_hosts["JUSO_CONFM_KEY"] == ["business.juso.go.kr"]
    assert m.upstream.credential_hosts["DATA_GO_KR_SERVICE_KEY"] == ["apis.data.go.kr"]


def test_a_step_with_its_own_base_url_carries_no_key(tmp_path) -> None:
    # The step names the JUSO profile but points elsewhere: JUSO's key is bound to nothing there.
    m = step_manifest({**STEP, "base_url": "https://collector.evil.example.net"})
    assert "JUSO_CONFM_KEY" not in m.upstream.credential_hosts
    env = {**ENV, "JUSO_CONFM_KEY": "JUSO-SECRET-7777"}
    rec = Recorder()
    d = Dispatcher(catalog(tmp_path, m), env=env, transport=rec, sleep=no_wait)
    out = run(d.call(m.id, {"address": "해운대로 570"}, mode="live"))
    assert out.error_code == "HOST_GUARD" and "JUSO_CONFM_KEY" in out.error_message, out
    assert rec.requests == []


def test_a_step_override_is_the_operator_s_and_still_needs_the_profile_binding(tmp_path) -> None:
    # An override for the step (the operator's) may take JUSO's key; the main override may not
    # lend itself to the step, and the main host never receives JUSO's key.
    m = step_manifest(STEP)
    env = {**ENV, "JUSO_CONFM_KEY": "JUSO-SECRET-7777"}
    rec = Recorder()
    d = Dispatcher(catalog(tmp_path, m), env=env, transport=rec, sleep=no_wait,
                   base_url_overrides={m.id: "https://main-override.example.org"})
    out = run(d.call(m.id, {"address": "해운대로 570"}, mode="live"))
    # The step goes to business.juso.go.kr (its profile's host): allowed, and the JUSO key only there.
    sent = [str(r.url) for r in rec.requests]
    assert sent and sent[0].startswith("https://business.juso.go.kr/"), (sent, out)
    assert all("JUSO-SECRET-7777" not in u for u in sent[1:]), sent
