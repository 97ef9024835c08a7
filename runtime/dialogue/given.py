"""Personal values the citizen typed earlier in this session, kept only as keyed digests.

Argument provenance (runtime/turn/provenance.py) accepts a personal value in a call only if the
citizen gave it. Accepting only the current message asks again for a name given one turn earlier
(before a consent step, or in answer to another question); keeping the raw words would put personal
data in the session store. So the session keeps, for each message, truncated HMAC-SHA256 digests of
the normal forms a personal value can take in it — dates (``1988-03-02``), digit runs
(``01012345678``) and short squashed word spans (``홍길동``) — and nothing else.

The key is derived per session from the ledger key (``UMMAYA_LEDGER_KEY`` or
``$UMMAYA_HOME/ledger.key``, which lives outside the database): someone who reads the session
table cannot test guesses (birth dates, phone numbers are small spaces) without that key, and a
digest from one session says nothing in another. An engine with no store uses a per-process
random key. Digests expire with the dialogue state (the session's TTL); a rotated ledger key makes
earlier digests unmatched, so at worst the citizen is asked once more.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable

from ..understand.personal_forms import compare_of, dates_in, squash
from ..understand.personal_forms import digits as _digits

_PROCESS_KEY = secrets.token_bytes(32)
DIGEST_HEX = 20  # 80 bits: collisions between a session's few thousand forms are negligible
MAX_DIGESTS = 4000  # per session, newest kept
MAX_SPAN = 24  # characters of a squashed word span (a name, a place of birth …)

_DIGIT_RUN = re.compile(r"\d[\d\s\-./]{2,}\d")


def session_key(session_id: str, store: object | None = None) -> bytes:
    """The key of one session's digests: HMAC(ledger key, session id); a process key without a store."""
    base = _PROCESS_KEY
    if store is not None and hasattr(store, "ledger_keys"):
        try:
            base = store.ledger_keys().current
        except Exception:  # noqa: BLE001 - no usable ledger key: digests live as long as the process
            base = _PROCESS_KEY
    return hmac.new(base, b"ummaya given-values v1|" + session_id.encode("utf-8"), hashlib.sha256).digest()


def forms_of_text(text: str) -> set[str]:
    """Every normal form a personal value given in ``text`` could be checked against later."""
    out: set[str] = set()
    for y, m, d in dates_in(text) | dates_in(_digits(text)):
        out.add(f"d:{y:04d}-{m:02d}-{d:02d}")
    for run in _DIGIT_RUN.findall(text):
        digits = _digits(run)
        if len(digits) >= 4:
            out.add("n:" + digits)
    words = [w for w in re.split(r"\s+", text) if w]
    for i in range(len(words)):
        # Spans of up to three words, squashed; their prefixes cover a name before a particle
        # (「홍길동입니다」 holds 「홍길동」) and a name written with spaces (「홍 길동」, "Hong Gil-dong").
        for n in (1, 2, 3):
            if i + n > len(words):
                break
            span = squash("".join(words[i:i + n]))[:MAX_SPAN]
            for k in range(2, len(span) + 1):
                out.add("t:" + span[:k])
    return out


def form_of_value(slot: str, value: object) -> set[str]:
    """The normal form(s) of one argument value, matching :func:`forms_of_text`."""
    raw = str(value)
    compare = compare_of(slot)
    if compare == "date":
        return {f"d:{y:04d}-{m:02d}-{d:02d}" for y, m, d in (dates_in(raw) or dates_in(_digits(raw)))}
    if compare == "digits":
        d = _digits(raw)
        return {"n:" + d} if len(d) >= 4 else set()
    v = squash(raw)
    return {"t:" + v} if 2 <= len(v) <= MAX_SPAN else set()


def digests(key: bytes, forms: Iterable[str]) -> list[str]:
    return [hmac.new(key, f.encode("utf-8"), hashlib.sha256).hexdigest()[:DIGEST_HEX] for f in sorted(forms)]


def given_earlier(slot: str, value: object, key: bytes | None, known: Iterable[str]) -> bool:
    """Whether ``value`` for ``slot`` is one the citizen typed in an earlier turn of this session."""
    if key is None or value is None or value == "":
        return False
    wanted = form_of_value(slot, value)
    if not wanted:
        return False
    have = known if isinstance(known, (set, frozenset)) else set(known)
    return all(d in have for d in digests(key, wanted)) if compare_of(slot) == "date" else bool(set(digests(key, wanted)) & have)


def remember(previous: list[str], key: bytes, text: str) -> list[str]:
    """``previous`` plus this message's digests (deduplicated, newest kept, at most MAX_DIGESTS)."""
    new = digests(key, forms_of_text(text))
    merged = list(dict.fromkeys([*previous, *new]))
    return merged[-MAX_DIGESTS:]


__all__ = ["digests", "form_of_value", "forms_of_text", "given_earlier", "remember", "session_key"]
