"""Error taxonomy: an upstream result code and message → ok, no data, or a classified error.

The taxonomy is data: each profile's ``envelope`` lists code sets (``success_codes``,
``no_data_codes``, ``credential_codes``, ``quota_codes``, ``transient_codes``) and ``errors`` rules
(codes and/or a case-insensitive message pattern → ``credential_missing``, ``quota``,
``channel_unavailable``, ``adapter_error`` or ``no_data``). Order of decision:

1. a success code → ok;
2. the envelope's ``errors`` rules in order (message rules are how data.go.kr's ``resultCode 99``
   key errors — 「SERVICE KEY IS NOT REGISTERED ERROR.」, 「등록되지 않은 서비스키입니다.」 — are told
   from real unknown errors);
3. the code lists;
4. the data.go.kr standard taxonomy (``STANDARD``) when the body came in one of the data.go.kr
   shapes and the envelope's own lists do not know the code — a JUSO or Kakao profile does not
   list gateway codes, yet a body in that form means what it means everywhere;
5. anything else → adapter_error carrying the upstream code.

``quota`` and ``channel_unavailable`` become the engine class ``channel_unavailable`` and are
retried (a rule's ``retry`` says otherwise); the others are never retried.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from ummaya.model.manifest import Envelope, ErrorRule

from .errors import ADAPTER_ERROR, CHANNEL_UNAVAILABLE, CREDENTIAL_MISSING, UpstreamError

# The data.go.kr gateway's published codes plus the key messages seen in live captures. The
# data_go_kr profile carries the same lists and rules (registry/_profiles/data_go_kr.yaml; a test
# keeps the two equal); this copy is the fallback for a data.go.kr-shaped body under a profile
# that is not data.go.kr's (JUSO, Kakao, SGIS).
KEY_MESSAGES = (
    r"SERVICE[ _]?KEY[ _]?IS[ _]?NOT[ _]?REGISTERED|SERVICE[ _]?ACCESS[ _]?DENIED"
    r"|TEMPORARILY[ _]?DISABLE[ _]?THE[ _]?SERVICE[ _]?KEY|DEADLINE[ _]?HAS[ _]?EXPIRED"
    r"|UNREGISTERED[ _]?IP|UNSIGNED[ _]?CALL|INVALID[ _]?(SERVICE[ _]?|API[ _]?)?KEY"
    r"|(SERVICE|API|AUTH)[ _]?KEY[ _]?(IS[ _]?)?(INVALID|EXPIRED|NOT[ _]?(VALID|FOUND|APPROVED))"
)
KEY_MESSAGES_KO = (
    r"등록되지\s*않은\s*(서비스|인증)\s*키|(서비스|인증)\s*키[^.]{0,20}(유효하지|등록되지|만료|승인되지)"
    r"|유효하지\s*않은\s*(서비스|인증)?\s*키|승인되지\s*않은\s*(KEY|키)"
)
QUOTA_MESSAGES = (
    r"LIMITED[ _]?NUMBER[ _]?OF[ _]?SERVICE[ _]?REQUESTS|트래픽[^.]{0,10}초과"
    r"|(호출|요청)[^.]{0,10}(한도|건수|횟수)[^.]{0,10}초과"
)
UNAVAILABLE_MESSAGES = r"SERVICE[ _]?TIME[ _]?OUT|HTTP[ _]?ROUTING[ _]?ERROR"
STANDARD = Envelope(
    kind="data_go_kr",
    success_codes=["00", "0", "000", "INFO-000"],
    no_data_codes=["03", "INFO-200"],
    transient_codes=["01", "04", "05"],
    quota_codes=["22"],
    credential_codes=["20", "21", "30", "31", "32", "33"],
    errors=[
        ErrorRule(message=KEY_MESSAGES, means="credential_missing"),
        ErrorRule(message=KEY_MESSAGES_KO, means="credential_missing"),
        ErrorRule(message=QUOTA_MESSAGES, means="quota"),
        ErrorRule(message=UNAVAILABLE_MESSAGES, means="channel_unavailable"),
        ErrorRule(codes=["03"], message="NO[ _]?DATA|NODATA", means="no_data"),
    ],
)


@functools.lru_cache(maxsize=512)
def _pattern(expr: str) -> re.Pattern[str]:
    return re.compile(expr, re.IGNORECASE)


def _rule_matches(rule: ErrorRule, code: str | None, message: str) -> bool:
    if rule.codes and code not in rule.codes:
        return False
    if rule.message and not _pattern(rule.message).search(message):
        return False
    return True


def _raise(means: str, code: str, text: str, retry: bool | None) -> str:
    if means == "no_data":
        return "no_data"
    if means == CREDENTIAL_MISSING:
        raise UpstreamError(CREDENTIAL_MISSING, code, text, retryable=bool(retry))
    if means in ("quota", CHANNEL_UNAVAILABLE):
        label = "quota exceeded — " if means == "quota" else ""
        raise UpstreamError(
            CHANNEL_UNAVAILABLE, code, label + text, retryable=True if retry is None else retry
        )
    raise UpstreamError(ADAPTER_ERROR, code, text, retryable=bool(retry))


def _by_lists(env: Envelope, code: str) -> str | None:
    if code in env.no_data_codes:
        return "no_data"
    if code in env.credential_codes:
        return CREDENTIAL_MISSING
    if code in env.quota_codes:
        return "quota"
    if code in env.transient_codes:
        return CHANNEL_UNAVAILABLE
    return None


def classify(
    code: str | None,
    message: str | None,
    envelopes: Iterable[Envelope],
    *,
    success: Iterable[str] = (),
) -> str:
    """"ok" | "no_data", or raise the classified ``UpstreamError``.

    ``envelopes`` are consulted in order (the adapter's own, then fallbacks such as ``STANDARD``);
    ``success`` adds success codes of the envelope kind when the profile names none."""
    envs = list(envelopes)
    msg = message or ""
    text = f"upstream result code {code}" + (f": {msg}" if msg else "") if code else msg
    shown = code or "UPSTREAM"
    ok = set(success)
    for env in envs[:1]:
        ok |= set(env.success_codes)
    if code is not None and code in ok:
        return "ok"
    for env in envs:
        for rule in env.errors:
            if _rule_matches(rule, code, msg):
                return _raise(rule.means, shown, text, rule.retry)
        if code is not None:
            means = _by_lists(env, code)
            if means is not None:
                return _raise(means, shown, text, None)
        if code is not None and code in env.success_codes:
            return "ok"
    raise UpstreamError(ADAPTER_ERROR, shown, text or "unrecognised upstream answer")


def classify_text(text: str, envelopes: Iterable[Envelope]) -> None:
    """A body that is neither JSON nor XML but says what went wrong in words (some gateways answer
    a bare 「SERVICE KEY IS NOT REGISTERED ERROR.」): raise its class when a message rule knows it,
    else return and let the caller report PARSE."""
    for env in envelopes:
        for rule in env.errors:
            if rule.message and not rule.codes and _pattern(rule.message).search(text):
                _raise(rule.means, "UPSTREAM", text.strip()[:300], rule.retry)
