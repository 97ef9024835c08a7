"""Hint-stuffing gate: one manifest cannot buy the citizens' requests that belong to another.

Retrieval ranks adapters by their hints and examples (runtime/retrieve/), so a pull request that
stuffs ``search_hints`` — copies another adapter's words, or piles up every phrasing of a popular
request — wins requests it does not serve (issue 19 hole 4: a stuffed manifest ranked first for
「근처 응급실 알려줘」 above ``nmc_emergency_rooms``, and check passed; with a foreign base URL it
would have received every ER request's coordinates). ``ummaya check`` now fails on:

* **a hint budget**: per language at most ``MAX_HINTS`` hints of ``MAX_HINT_CHARS`` characters,
  ``MAX_HINT_TOTAL`` characters in all, and ``MAX_EXAMPLES`` examples of ``MAX_EXAMPLE_CHARS``
  (the registry's largest today: 21 hints, 174 characters, 7 examples, a 45-character hint);
* **overlap**: an adapter whose hint terms (words, and character bigrams of Korean words — what
  the retriever matches on) cover ``OVERLAP`` or more of another adapter's is a copy, reported
  at its ``search_hints`` line (the closest legitimate pair today, two reverse geocoders,
  covers 0.64);
* **rank-1 takeover on the evaluation set** (``evals/retrieval.yaml``), reported for review: for
  each *new* adapter — not in the ``--against`` reference, or, without one, expected by no
  evaluation request yet — every request it now ranks first that an existing adapter ranked first
  without it, unless the request's ``expected`` accepts it. Accepting a takeover is an edit of the
  evaluation set, which a reviewer sees. Against a reference (``check --against``: the pull
  request's base) a takeover fails the check; without one, "new" can only mean "expected by no
  evaluation request yet", which also covers adapters merged before the evaluation set caught up,
  so the takeovers are printed for review and the check does not fail on them.
"""

from __future__ import annotations

import functools
import os
import re
import unicodedata
from pathlib import Path
from collections.abc import Set
from typing import Any

from ummaya.codegen.loader import LoadedManifest, Problem

MAX_HINTS = 32
MAX_HINT_CHARS = 48  # the registry's longest hint today is 45 characters
MAX_HINT_TOTAL = 320
MAX_EXAMPLES = 12
MAX_EXAMPLE_CHARS = 120
OVERLAP = 0.75
EVAL_SET = "evals/retrieval.yaml"


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def hint_terms(lm: LoadedManifest) -> set[str]:
    """What the retriever matches a hint on: ASCII words whole, Korean words as bigrams."""
    out: set[str] = set()
    hints = lm.manifest.search_hints
    for text in (*hints.ko, *hints.en):
        for word in re.findall(r"\w+", _norm(text)):
            if word.isascii() or len(word) < 2:
                out.add(word)
            else:
                out.update(word[i:i + 2] for i in range(len(word) - 1))
    return out


def budget_problems(lm: LoadedManifest) -> list[Problem]:
    m, src = lm.manifest, lm.source
    out: list[Problem] = []
    for lang in ("ko", "en"):
        hints = getattr(m.search_hints, lang)
        where = src.line_of(("search_hints", lang))
        if len(hints) > MAX_HINTS:
            out.append(Problem(src.rel, where, f"search_hints.{lang}: {len(hints)} hints; the budget is "
                                               f"{MAX_HINTS} (hints say what the service is, not every way to ask)"))
        total = sum(len(h) for h in hints)
        if total > MAX_HINT_TOTAL:
            out.append(Problem(src.rel, where, f"search_hints.{lang}: {total} characters; the budget is {MAX_HINT_TOTAL}"))
        for i, h in enumerate(hints):
            if len(h) > MAX_HINT_CHARS:
                out.append(Problem(src.rel, src.line_of(("search_hints", lang, i)),
                                   f"search_hints.{lang}.{i}: {len(h)} characters; a hint is a term of at most "
                                   f"{MAX_HINT_CHARS} (requests go in examples)"))
        examples = getattr(m.examples, lang)
        if len(examples) > MAX_EXAMPLES:
            out.append(Problem(src.rel, src.line_of(("examples", lang)),
                               f"examples.{lang}: {len(examples)} examples; the budget is {MAX_EXAMPLES}"))
        for i, e in enumerate(examples):
            if len(e) > MAX_EXAMPLE_CHARS:
                out.append(Problem(src.rel, src.line_of(("examples", lang, i)),
                                   f"examples.{lang}.{i}: {len(e)} characters; the budget is {MAX_EXAMPLE_CHARS}"))
    return out


def overlap_problems(manifests: list[LoadedManifest], established: Set[str] = frozenset()) -> list[Problem]:
    """Pairs whose hint terms overlap past ``OVERLAP`` (either way round). The problem is the
    newcomer's when one of the two is established (expected by the evaluation set) and the other
    is not; otherwise both manifests carry it."""
    terms = {lm.id: hint_terms(lm) for lm in manifests}
    out: list[Problem] = []
    for i, a in enumerate(manifests):
        for b in manifests[i + 1:]:
            ta, tb = terms[a.id], terms[b.id]
            if not ta or not tb:
                continue
            share = len(ta & tb) / min(len(ta), len(tb))
            if share < OVERLAP:
                continue
            blamed = [a, b]
            if (a.id in established) != (b.id in established):
                blamed = [b] if a.id in established else [a]
            for lm in blamed:
                other = b if lm is a else a
                out.append(Problem(lm.source.rel, lm.source.line_of(("search_hints",)),
                                   f"search_hints: {share:.0%} of the hint terms are {other.id}'s too (limit "
                                   f"{OVERLAP:.0%}); hints describe this service, not another's"))
    return out


def eval_requests(root: Path) -> list[dict[str, Any]]:
    """The evaluation set's requests (empty without one), read once per file version."""
    path = root / EVAL_SET
    if not path.is_file():
        return []
    st = path.stat()
    return _read_requests(str(path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=4)
def _read_requests(path: str, _mtime: int, _size: int) -> list[dict[str, Any]]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, encoding="utf-8") as f:
        data = yaml.load(f, Loader=loader) or {}  # noqa: S506 - a safe loader
    return list(data.get("requests") or [])


def established_ids(root: Path) -> set[str]:
    """Adapters the evaluation set expects somewhere (the registry's established ones)."""
    return {a for r in eval_requests(root) for a in r.get("expected") or []}


def hint_problems(registry: Any) -> list[Problem]:
    out: list[Problem] = []
    for lm in registry.manifests:
        out += budget_problems(lm)
    established = established_ids(Path(registry.root))
    return sorted(out + overlap_problems(registry.manifests, established))


def takeovers(root: Path, registry: Any, documents: bytes | None, reference: dict[str, Any] | None,
              lock: bytes | None = None) -> list[str]:
    """Evaluation requests a new adapter takes rank 1 of from an existing one (for review).

    Ranking the whole evaluation set is ~1.2 s of every ``ummaya check``. With ``lock`` (the
    build's ``generated/registry.lock``: the hash of every registry input and generated output)
    the verdict is kept in the emit cache under that lock, the text of every Python source of
    runtime/, model/ and wire/ (the retriever and what it reads), the evaluation set's bytes, the
    new ids and the Python and numpy versions: a check of the same tree reuses it, and any change
    to what decides a ranking is another key."""
    requests = eval_requests(root)
    if documents is None or not requests:
        return []
    ids = {lm.id for lm in registry.manifests}
    if reference is not None:
        new = ids - set(reference.get("adapters", {}))
    else:
        new = ids - established_ids(root)
    if not new:
        return []
    if lock is None:
        return _takeovers(requests, documents, new)
    import hashlib
    import json
    import sys

    from importlib import metadata

    from ummaya.codegen.emit_cache import Cache

    evals = (root / EVAL_SET).read_bytes()
    key = hashlib.sha256(b"\0".join([
        b"takeovers 1", sys.version.encode(), metadata.version("numpy").encode(), _code_digest().encode(),
        lock, documents, evals, " ".join(sorted(new)).encode()])).hexdigest()
    cache = Cache()
    hit = cache.get("takeovers", key)
    if hit is not None and "takeovers.json" in hit:
        try:
            return list(json.loads(hit["takeovers.json"]))
        except ValueError:
            pass
    out = _takeovers(requests, documents, new)
    cache.put("takeovers", key, {"takeovers.json": json.dumps(out, ensure_ascii=False).encode()})
    return out


def _code_digest() -> str:
    """sha256 over the path and text of every Python source of runtime/, model/ and wire/."""
    import hashlib

    from ummaya.codegen.builder import _python_sources

    base = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for top in ("runtime", "model", "wire"):
        for path in _python_sources(base / top):
            h.update(os.path.relpath(path, base).encode() + b"\0")
            with open(path, "rb") as fh:
                h.update(fh.read() + b"\0")
    return h.hexdigest()


def _takeovers(requests: list[dict[str, Any]], documents: bytes, new: set[str]) -> list[str]:
    from ummaya.runtime.retrieve import Retriever

    retriever = Retriever(documents)
    out = []
    for r in requests:
        ranked = [c.adapter_id for c in retriever.search(str(r.get("query", "")), top_k=5)]
        if not ranked or ranked[0] not in new or ranked[0] in (r.get("expected") or []):
            continue
        before = next((a for a in ranked if a not in new), None)
        if before is not None:  # an existing adapter had it; without the newcomer it would again
            out.append(f"{EVAL_SET}: 「{r['query']}」: {ranked[0]} (new) takes rank 1 from {before}"
                       f" — review it; to accept, add {ranked[0]} to that request's expected")
    return out


__all__ = ["hint_problems", "hint_terms", "takeovers", "MAX_HINTS", "OVERLAP"]
