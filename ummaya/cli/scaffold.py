"""``ummaya new adapter ID``: scaffold a manifest and its fixtures so a contributor adds an adapter
with one pull request and no Python.

locate/find adapters start as a live data.go.kr adapter with two byte-faithful fixtures (a normal
XML response and the gateway's error envelope); check/send adapters start as a handoff with the
consent notice their protected gate requires. Either way the result loads and builds, and every
line a contributor must change says so.
"""

from __future__ import annotations

import re
from pathlib import Path

import click
import jinja2

from ummaya.ci.scaffold_samples import GATEWAY_ERROR_XML, NORMAL_XML

from ._common import fail, root_option

PRIMITIVES = ("locate", "find", "check", "send")
# The model's closed list (model/manifest.py Domain), spelled out so `ummaya --help` stays import-light.
DOMAINS = ("health", "weather", "transport", "welfare", "administration", "environment", "safety",
           "culture", "education", "housing", "labour", "consumer")

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)

MANIFEST = _ENV.from_string("""\
# {{ id }} — scaffolded by `ummaya new adapter`. Every TODO is yours to replace; the field
# reference is generated/manifest.schema.json and registry/nmc/nmc_emergency_rooms.yaml is a
# complete example. Rebuild with `ummaya build`, then run `ummaya check`.
id: {{ id }}
version: 0.1.0  # semver; removing an output field or adding a required input needs a major bump
title:
  ko: TODO 한국어 제목
  en: TODO English title
summary:
  ko: TODO 무엇을 알려주는지 한 문장으로.
  en: TODO What it tells a citizen, in one sentence.
agency:
  code: {{ agency_code }}
  name_ko: TODO 기관명
  name_en: TODO agency name
domain: {{ domain }}  # one of the twelve: {{ domains }}
primitive: {{ primitive }}
tier: {{ tier }}  # live (real upstream), mock (fixtures only), handoff (official channel material)
# Words and requests the way citizens say them, Korean first.
search_hints:
  ko: [TODO 힌트, TODO 다른 말]
  en: [TODO hint, TODO synonym]
examples:  # at least 3 Korean and 2 English
  ko:
    - TODO 시민이 실제로 묻는 말 하나
    - TODO 시민이 실제로 묻는 말 둘
    - TODO 시민이 실제로 묻는 말 셋
  en:
    - TODO a request as a citizen says it
    - TODO another request
negative_examples: []  # requests that look alike but belong elsewhere: {text, belongs_to: <id>|null}
permission:
{% if tier == "handoff" %}
  gate: send  # read-only, login, action, sign, send, blocked
  consent:  # 개인정보 보호법 제15조·제22조: purpose, items, retention, the right to refuse
    purpose: {ko: TODO 수집 목적, en: TODO purpose}
    data_items: [TODO 항목]
    retention: {ko: TODO 보유 기간, en: TODO retention}
    refusal: {ko: TODO 거부할 권리와 거부 시 불이익, en: TODO the right to refuse and its consequence}
{% else %}
  gate: read-only
{% endif %}
citation:
  title: TODO the data set or API page
  url: https://www.data.go.kr/
  verified: {{ today }}
{% if primitive in ("check", "send") %}
  basis: TODO the law or policy that makes this a citizen's service
{% endif %}
{% if tier == "live" %}
credentials: [DATA_GO_KR_SERVICE_KEY]
upstream:
{% if has_profile %}
  profile: data_go_kr  # base URL, serviceKey, envelope and result codes come from the profile
{% else %}
  base_url: https://apis.data.go.kr
  auth: {style: query, param: serviceKey, credential: DATA_GO_KR_SERVICE_KEY}
  envelope:
    kind: data_go_kr
    code_path: response.header.resultCode
    message_path: response.header.resultMsg
    total_path: response.body.totalCount
    success_codes: ["00"]
    no_data_codes: ["03"]
    credential_codes: ["20", "30", "31", "32"]
    gateway_xml_errors: true
{% endif %}
  path: /TODO/Service/operation
  format: xml
  params:  # upstream parameter -> input field
    keyword: query
    numOfRows: limit
  record_path: response.body.items.item
  fields:  # output item field -> upstream record field (or {source, transform})
    name: name
    address: addr
  response_fields:  # what the operation's guide documents; mapped fields and fixtures must keep to it
    guide: {name: TODO the agency's OpenAPI 활용가이드 title, version: TODO}
    record: [name, addr]
input_schema:
  type: object
  additionalProperties: false
  required: [query]
  properties:
    query: {type: string, minLength: 1, x-slot: keyword, description: TODO what the citizen names}
    limit: {type: integer, minimum: 1, maximum: 50, default: 5, x-slot: count, description: How many results}
output_schema:
  type: object
  additionalProperties: false
  required: [items, total_count]
  properties:
    total_count: {type: integer}
    items:
      type: array
      items:
        type: object
        additionalProperties: false
        required: [name]
        properties:
          name: {type: string}
          address: {type: [string, "null"]}
fixtures:  # response bodies live in fixtures/{{ id }}/, byte for byte as the upstream sends them
  - name: normal_multi
    source: synthetic  # `ummaya record {{ id }} --args '{...}'` replaces it with a recorded body
    description: TODO replace with a real captured response (two or more records).
    request: {query: 예시, limit: 2}
    response: normal_multi.xml
    expected:
      total_count: 2
      items:
        - {name: 예시 하나, address: 부산광역시 사하구 낙동대로550번길 37}
        - {name: 예시 둘, address: null}
  - name: key_not_registered
    source: documented
    guide: {name: 공공데이터포털 OpenAPI 공통 응답·에러 코드 명세, version: "2024"}
    description: The gateway's XML error envelope (returnReasonCode 30), sent even for JSON requests.
    request: {query: 예시}
    response: key_not_registered.xml
    expected_error: credential_missing
{% else %}
input_schema:
  type: object
  additionalProperties: false
  properties:
    region_name: {type: [string, "null"], x-slot: region_name, description: TODO where the citizen is}
output_schema:
  type: object
  properties:
    channel: {type: string}
    url: {type: string}
handoff:
  channel: {ko: TODO 공식 창구, en: TODO official channel}
  url: https://www.gov.kr/
  steps:
    ko: [TODO 1단계, TODO 2단계]
    en: [TODO step 1, TODO step 2]
  documents:
    ko: [TODO 준비물]
    en: [TODO what to bring]
{% endif %}
""")



def scaffold(root: Path, adapter_id: str, agency: str | None, primitive: str, domain: str = "administration") -> list[Path]:
    """Write the manifest (and fixtures) and return what was written; raises ValueError to refuse."""
    import datetime as dt

    from ummaya.codegen.loader import manifest_paths
    from ummaya.model.manifest import ADAPTER_ID

    if not re.fullmatch(ADAPTER_ID, adapter_id):
        raise ValueError(f"'{adapter_id}' is not a valid adapter id (snake_case, {ADAPTER_ID})")
    existing = [p for p in manifest_paths(root) if p.stem == adapter_id]
    if existing:
        raise ValueError(f"adapter '{adapter_id}' already exists: {existing[0].relative_to(root)}")
    agency = agency or adapter_id.split("_", 1)[0]
    folder_name = agency.lower()
    if not re.fullmatch(r"[a-z0-9][a-z0-9_]*", folder_name) or folder_name in ("_profiles", "scenarios", "fixtures"):
        raise ValueError(f"'{agency}' cannot be an agency folder name")
    tier = "live" if primitive in ("locate", "find") else "handoff"
    folder = root / "registry" / folder_name
    text = MANIFEST.render(
        id=adapter_id,
        agency_code=agency.upper(),
        primitive=primitive,
        domain=domain,
        domains=", ".join(DOMAINS),
        tier=tier,
        today=dt.date.today().isoformat(),
        has_profile=(root / "registry" / "_profiles" / "data_go_kr.yaml").is_file(),
    )
    written = []
    folder.mkdir(parents=True, exist_ok=True)
    manifest = folder / f"{adapter_id}.yaml"
    manifest.write_text(text, encoding="utf-8")
    written.append(manifest)
    fixtures = folder / "fixtures" / adapter_id
    fixtures.mkdir(parents=True, exist_ok=True)
    if tier == "live":
        for name, body in (("normal_multi.xml", NORMAL_XML), ("key_not_registered.xml", GATEWAY_ERROR_XML)):
            (fixtures / name).write_text(body, encoding="utf-8")
            written.append(fixtures / name)
    else:
        (fixtures / ".gitkeep").write_text("")
        written.append(fixtures / ".gitkeep")
    return written


@click.group()
def new() -> None:
    """Scaffold new registry entries."""


@new.command("adapter")
@click.argument("adapter_id")
@click.option("--agency", default=None, help="Agency code; also the registry/ folder (default: the id's first word).")
@click.option("--primitive", type=click.Choice(PRIMITIVES), default="find", show_default=True)
@click.option("--domain", type=click.Choice(DOMAINS), required=True, help="Which of the twelve domains the service belongs to.")
@root_option
def adapter(adapter_id: str, agency: str | None, primitive: str, domain: str, root: str | None) -> None:
    """Scaffold registry/<agency>/ADAPTER_ID.yaml and its fixtures folder."""
    from ummaya.paths import ProjectNotFound, require_root

    try:
        project = require_root(root)
        written = scaffold(project, adapter_id, agency, primitive, domain)
    except (ProjectNotFound, ValueError) as exc:
        fail(f"ummaya new adapter: {exc}", 2)
    for path in written:
        click.echo(f"created {path.relative_to(project)}")
    click.echo("next: replace the TODOs, put real captured responses in the fixtures folder, then `ummaya build && ummaya check`")
