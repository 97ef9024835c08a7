"""Inline manifests and catalogs for the dispatch tests.

Manifests are written as small dicts, validated by the real ``Manifest`` model and profile-resolved
with ``codegen.resolve`` against the real ``registry/_profiles`` files (plus inline profiles), so a
test manifest can never drift from what the registry accepts.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import datetime as dt
from pathlib import Path
from typing import Any

from ummaya.codegen.loader import parse_yaml, validate_doc
from ummaya.model.manifest import Manifest, Profile
from ummaya.codegen.profile_merge import resolve_manifest
from ummaya.runtime.catalog import Catalog

REPO = Path(__file__).resolve().parents[2]

KAKAO = Profile.model_validate(
    {
        "id": "kakao",
        "title": "Kakao Local API",
        "base_url": "https://dapi.kakao.com",
        "auth": {
            "style": "header",
            "param": "Authorization",
            "prefix": "KakaoAK ",
            "credential": "KAKAO_REST_API_KEY",
        },
        "envelope": {"kind": "kakao"},
    }
)
JUSO = Profile.model_validate(
    {
        "id": "juso",
        "title": "도로명주소 API",
        "base_url": "https://business.juso.go.kr",
        "auth": {"style": "query", "param": "confmKey", "credential": "JUSO_CONFM_KEY"},
        "envelope": {"kind": "juso", "credential_codes": ["E0001"], "transient_codes": ["-999"]},
        "format_param": {"resultType": "json"},
    }
)
SGIS = Profile.model_validate(
    {
        "id": "sgis",
        "title": "SGIS OpenAPI3",
        "base_url": "https://sgisapi.kostat.go.kr",
        "auth": {
            "style": "token_exchange",
            "param": "accessToken",
            "token_path": "/OpenAPI3/auth/authentication.json",
            "token_params": {
                "consumer_key": "SGIS_CONSUMER_KEY",
                "consumer_secret": "SGIS_CONSUMER_SECRET",
            },
            "token_field": "result.accessToken",
            "token_ttl_s": 3600,
            "expired_codes": ["-401"],
        },
        "envelope": {"kind": "sgis"},
    }
)


@functools.lru_cache(maxsize=1)
def _registry_profiles() -> dict[str, Profile]:
    out = {}
    for path in sorted((REPO / "registry" / "_profiles").glob("*.yaml")):
        doc, _ = parse_yaml(path, path.name)
        prof, _ = validate_doc(doc, Profile) if doc else (None, [])
        if prof is not None:
            out[prof.id] = prof
    return out


def profiles() -> dict[str, Profile]:
    """The registry's real profiles; the inline ones above only fill in for a missing file."""
    out = dict(_registry_profiles())
    for p in (KAKAO, JUSO, SGIS):
        out.setdefault(p.id, p)
    return out


_BASE: dict[str, Any] = {
    "version": "1.0.0",
    "title": {"ko": "시험 어댑터", "en": "Test adapter"},
    "summary": {"ko": "시험용", "en": "For tests"},
    "agency": {"code": "TEST", "name_ko": "시험", "name_en": "Test"},
    "domain": "administration",
    "primitive": "find",
    "tier": "live",
    "search_hints": {"ko": ["시험"], "en": ["test"]},
    "examples": {"ko": ["시험"], "en": ["test"]},
    "permission": {"gate": "read-only"},
    "citation": {"title": "test", "url": "https://example.org/", "verified": "2026-11-01"},
    "input_schema": {"type": "object", "properties": {}},
}


def item_schema(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["items", "total_count"],
        "properties": {
            "total_count": {"type": "integer"},
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": required or [],
                    "properties": props,
                },
            },
        },
    }


def manifest(adapter_id: str, **fields: Any) -> Manifest:
    data = copy.deepcopy(_BASE)
    data["id"] = adapter_id
    data.update(copy.deepcopy(fields))
    return resolve_manifest(Manifest.model_validate(data), profiles())


def catalog(
    tmp_path: Path, *manifests: Manifest, bodies: dict[str, dict[str, bytes]] | None = None
) -> Catalog:
    """A Catalog over ``tmp_path`` with fixture bodies written to ``fixtures/<id>/<file>``."""
    for adapter_id, files in (bodies or {}).items():
        folder = tmp_path / "fixtures" / adapter_id
        folder.mkdir(parents=True, exist_ok=True)
        for name, body in files.items():
            (folder / name).write_bytes(body)
    return Catalog(root=tmp_path, release_id="test", adapters={m.id: m for m in manifests})


def run(coro: Any) -> Any:
    return asyncio.run(coro)


class FixedClock:
    def __init__(self, when: dt.datetime):
        self.when = when

    def __call__(self) -> dt.datetime:
        return self.when

    def advance(self, seconds: float) -> None:
        self.when += dt.timedelta(seconds=seconds)


async def no_wait(_: float) -> None:
    return None


class SleepLog:
    """An injectable sleep that records the backoff delays without waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def step_answers(request: dict[str, Any], answers: list[tuple[Any, bytes]], content_type: str) -> Any:
    """A loopback route for steps that share one path (origin and destination looked up in one
    list): the step whose params carry the request's values gets its own body."""
    from tests.support.upstreams import Reply

    def pick(seen: Any) -> Any:
        for step, body in answers:
            sent = {k: request.get(v) for k, v in step.params.items() if request.get(v) is not None}
            if sent and all(seen.param(k) == str(val) for k, val in sent.items()):
                return Reply(body=body, content_type=content_type)
        return Reply(body=answers[0][1], content_type=content_type)

    return pick
