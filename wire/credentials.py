"""Credentials in text: what the log filter and stored traces remove.

A key must never be written anywhere but the request that needs it. ``strip_credentials`` finds
them by name (``serviceKey=``, ``ServiceKey``, ``confmKey``, ``consumer_key``, ``consumer_secret``,
``accessToken``/``access_token``, ``Authorization``, ``KakaoAK …``, ``Bearer …``, user
information in URLs) and — whatever the format — by value: every credential the process holds in its
environment (variables named ``…KEY``, ``…KEYS``, ``…SECRET``, ``…TOKEN``, ``…PASSWORD``), plain
and URL-encoded.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import quote, quote_plus

MASK = "***"

_SECRET_NAMES = (
    r"service_?key|confm_?key|consumer_?key|consumer_?secret|access_?token|refresh_?token|id_?token"
    r"|api_?key|x-api-key|client_?secret|secret|token|password|passwd|key"
)
# name=value in a query string, a form body or a log message (the name ends a word: not "monkey").
_PARAM = re.compile(r"(?i)(?<![A-Za-z0-9_])(" + _SECRET_NAMES + r")(=)([^&\s\"'<>;,]+)")
# "name": "value", 'name': 'value', name: value (JSON, dict reprs, headers).
_KEYED = re.compile(
    r"(?i)([\"']?(?<![A-Za-z0-9_])(?:" + _SECRET_NAMES + r")[\"']?\s*:\s*[\"']?)([^\"'\s,}&]+)"
)
_AUTH = re.compile(
    r"(?i)([\"']?authorization[\"']?\s*[:=]\s*[\"']?)(?:(bearer|basic|kakaoak|token|digest)\s+)?([^\"'\s,}]+)"
)
_SCHEME_TOKEN = re.compile(r"(?i)\b(KakaoAK|Bearer)\s+(?!\*\*\*)[A-Za-z0-9._~+/=-]{4,}")
# scheme://user:password@host, scheme://token@host, scheme://:password@host — user information
# in any URL (a database URL, UMMAYA_LLM_BASE_URL with a password) goes whole: the user name can
# be the secret (a token as user), and a masked password next to a real user says too much.
_URL_USERINFO = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://)([^/?#@\s\\\"'<>]+)@")
_MAYBE = re.compile(r"(?i)[=@]|authorization|bearer|kakaoak")
_ENV_SECRET = re.compile(r"(?:KEY|KEYS|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|CREDENTIALS)$|_KEY_|_TOKEN_")


def env_secrets(env: os._Environ[str] | dict[str, str] | None = None) -> list[str]:
    """The credential values this process holds (longest first), with their URL-encoded forms."""
    env = os.environ if env is None else env
    values: set[str] = set()
    for name, value in env.items():
        if not value or not _ENV_SECRET.search(name.upper()):
            continue
        parts = value.split(",") if name.upper() == "UMMAYA_API_KEYS" else [value]
        for part in parts:
            part = part.strip()
            if len(part) >= 6:
                values.update({part, quote(part, safe=""), quote_plus(part), quote(part)})
    return sorted(values, key=len, reverse=True)


def strip_credentials(text: str, secrets: list[str] | None = None) -> str:
    """``text`` with every credential replaced by ``***``: the literal values the process holds
    (``secrets``, default: from the environment, in every URL encoding), credential parameters
    (``serviceKey=…``), ``Authorization`` values, ``KakaoAK``/``Bearer`` tokens, URL user information."""
    if not text:
        return text
    for value in env_secrets() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, MASK)
    # The fast path: every pattern below needs an "=" (a parameter), an "@" (user information),
    # or a scheme name ("Authorization", "Bearer", "KakaoAK") — one scan says whether any is here.
    if _MAYBE.search(text) is None:
        return text
    text = _AUTH.sub(lambda m: m.group(1) + (m.group(2) + " " if m.group(2) else "") + MASK, text)
    text = _SCHEME_TOKEN.sub(lambda m: f"{m.group(1)} {MASK}", text)
    text = _PARAM.sub(lambda m: m.group(1) + "=" + MASK, text)
    return strip_userinfo(text)


def strip_userinfo(text: str) -> str:
    """Every URL's user information (``user:password@``, ``token@``) replaced by ``***@``."""
    return _URL_USERINFO.sub(lambda m: m.group(1) + MASK + "@", text) if "@" in text else text


def strip_credentials_value(value: Any, secrets: list[str] | None = None) -> Any:
    """``strip_credentials`` on every string inside a JSON-like value (keys left alone)."""
    secrets = env_secrets() if secrets is None else secrets
    if isinstance(value, str):
        return strip_credentials(value, secrets)
    if isinstance(value, dict):
        return {k: strip_credentials_value(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strip_credentials_value(v, secrets) for v in value]
    return value


__all__ = ["MASK", "env_secrets", "strip_credentials", "strip_credentials_value", "strip_userinfo"]
