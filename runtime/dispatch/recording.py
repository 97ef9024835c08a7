"""``ummaya record``: call an adapter Live and keep the upstream's answer as a recorded fixture.

The body is kept byte for byte except for two things that must never be stored:

- **keys** — every credential value the call used (raw, percent- and plus-encoded) is replaced by
  ``REMOVED`` wherever it appears (some gateways echo the request URL in errors); the stored request
  is the adapter's arguments, and the stored upstream URL is the redacted one (no key parameter);
- **personal data** — what ``find_personal`` (wire/redact.py) finds is masked the way the
  agencies mask it: the first characters kept, every further letter or digit ``*``, separators
  kept (``010-1234-5678`` → ``010-****-****``); fields the manifest lists as ``masked`` by the live
  service (``response_fields.masked``, e.g. NMC AED ``manager``) are masked too (``김**``).

The fixture's ``expected`` (or ``expected_error``) is what the adapter's own parser makes of the
stored bytes, so the link stage agrees with it by construction; ``source: recorded`` and
``recorded_on`` date it. The manifest gets one fixture entry appended (JSON flow style, valid YAML).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, quote_plus, urlsplit

from ummaya.model.manifest import Fixture, Manifest
from ummaya.wire.redact import find_personal

from ummaya.wire.envelopes import decode_body
from ummaya.wire.errors import UpstreamError
from ummaya.model.fixture_files import step_fixture_name
from ummaya.wire.fixture_reader import parse_fixture
from .request import BuiltRequest

NAME = re.compile(r"^[a-z0-9_]+$")
REMOVED = "REMOVED"


class RecordError(ValueError):
    """A recording that cannot be written (bad name, nothing captured, body unreadable after
    masking); the message says which."""


@dataclass
class Captured:
    request: BuiltRequest
    status: int
    content_type: str
    body: bytes


class Recorder:
    """``Dispatcher(on_response=...)``: keeps each upstream answer of one call, in order."""

    def __init__(self) -> None:
        self.answers: list[Captured] = []

    def __call__(self, request: BuiltRequest, status: int, content_type: str, body: bytes) -> None:
        self.answers.append(Captured(request, status, content_type, body))


# -- sanitising ------------------------------------------------------------------------------------


def _mask(value: str, keep: int) -> str:
    out, kept = [], 0
    for ch in value:
        if ch.isalnum():
            out.append(ch if kept < keep else "*")
            kept += 1
        else:
            out.append(ch)
    return "".join(out)


def _mask_field(value: str) -> str:
    """A name keeps its first character (김**); a number its first three (010********)."""
    digits = sum(c.isdigit() for c in value)
    return _mask(value, 3 if digits >= max(1, len(value) // 2) else 1)


def _decode(body: bytes) -> tuple[str, str]:
    for codec in ("utf-8", "cp949"):
        try:
            return body.decode(codec), codec
        except UnicodeDecodeError:
            continue
    raise RecordError("the upstream body is neither UTF-8 nor CP949 text; nothing recorded")


def sanitize(body: bytes, secrets: list[str], masked_fields: Sequence[str] = ()) -> bytes:
    text, codec = _decode(body)
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        for form in {secret, quote(secret, safe=""), quote_plus(secret), quote(secret)}:
            text = text.replace(form, REMOVED)
    for name in masked_fields:
        field = re.escape(name)
        text = re.sub(
            rf"(<{field}>)([^<]+)(</{field}>)", lambda m: m[1] + _mask_field(m[2]) + m[3], text
        )
        text = re.sub(
            rf'("{field}"\s*:\s*")((?:[^"\\]|\\.)+)(")', lambda m: m[1] + _mask_field(m[2]) + m[3], text
        )
    # Right to left, so earlier spans keep their offsets.
    for f in sorted(find_personal(text), key=lambda f: f.start, reverse=True):
        text = text[: f.start] + _mask(f.value, 3) + text[f.end :]
    return text.encode(codec)


# -- writing ---------------------------------------------------------------------------------------


def _suffix(body: bytes) -> str:
    try:
        kind, _ = decode_body(body)
    except UpstreamError:
        head = body[:200].lstrip().lower()
        return ".html" if head.startswith((b"<!doctype html", b"<html")) else ".txt"
    return ".xml" if kind == "xml" else ".json"


def _append_entry(manifest_file: Path, entry: list[str]) -> None:
    text = manifest_file.read_text(encoding="utf-8")
    lines = text.split("\n")
    try:
        start = lines.index("fixtures:")
    except ValueError:
        if lines and lines[-1] == "":
            lines.pop()
        lines += ["fixtures:", *entry, ""]
    else:
        end = start + 1
        while end < len(lines) and (lines[end].startswith((" ", "#")) or lines[end] == ""):
            end += 1
        while end > start + 1 and lines[end - 1] == "":
            end -= 1
        lines[end:end] = entry
    manifest_file.write_text("\n".join(lines), encoding="utf-8")


def write_recording(
    *,
    manifest: Manifest,
    manifest_file: Path,
    fixtures_dir: Path,
    name: str,
    args: dict,
    answers: list[Captured],
    secrets: list[str],
    today: dt.date,
) -> tuple[list[Path], Fixture]:
    """Write the body (and a lookup body) and append the fixture; returns the files written."""
    if not NAME.match(name):
        raise RecordError(f"--name '{name}': use lower-case letters, digits and _ only")
    if any(f.name == name for f in manifest.fixtures):
        raise RecordError(f"{manifest.id} already has a fixture named '{name}' (choose --name)")
    up = manifest.upstream
    assert up is not None
    main_paths = tuple(up.operations.paths()) if up.operations is not None else (up.path,)
    main = [a for a in answers if a.request.step is None and a.request.url.endswith(main_paths)]
    if not main:
        raise RecordError("the call sent no request to the operation (nothing to record)")
    masked = list(up.response_fields.masked) if up.response_fields else []
    answer = main[-1]  # after retries, the answer the call ended with
    body = sanitize(answer.body, secrets, masked)
    file_name = name + _suffix(body)
    body_path = fixtures_dir / file_name
    if body_path.exists():
        raise RecordError(f"{body_path} exists already")
    written = []
    fixtures_dir.mkdir(parents=True, exist_ok=True)
    body_path.write_bytes(body)
    written.append(body_path)
    for step in up.chain():  # each step's answer beside the body, as Mock replays it
        side = [a for a in answers if a.request.step == step.id]
        if side:
            side_path = fixtures_dir / step_fixture_name(file_name, step.id)
            side_path.write_bytes(sanitize(side[-1].body, secrets, masked))
            written.append(side_path)

    probe = Fixture(
        name=name,
        request=args,
        response=file_name,
        status=answer.status,
        expected_error="adapter_error",  # placeholder; replaced from the parser below
    )
    outcome = parse_fixture(manifest, probe, body)
    parts = urlsplit(answer.request.redacted_url())  # path and query: the host may be an override
    url = parts.path + (f"?{parts.query}" if parts.query else "")
    for secret in secrets:
        url = url.replace(secret, REMOVED)
    entry = [
        f"  - name: {name}",
        "    source: recorded",
        f"    recorded_on: {today.isoformat()}",
        "    description: " + json.dumps(
            f"Recorded from the live service by `ummaya record` ({answer.request.method} {url}); "
            "keys removed, personal data masked.",
            ensure_ascii=False,
        ),
        f"    request: {json.dumps(args, ensure_ascii=False, sort_keys=True)}",
        f"    response: {file_name}",
    ]
    if answer.status != 200:
        entry.append(f"    status: {answer.status}")
    if answer.content_type:
        entry.append(f"    content_type: {json.dumps(answer.content_type)}")
    if outcome.error_class:
        entry.append(f"    expected_error: {outcome.error_class}")
    else:
        entry.append(f"    expected: {json.dumps(outcome.output, ensure_ascii=False)}")
    _append_entry(manifest_file, entry)
    written.append(manifest_file)
    fixture = Fixture.model_validate(
        {
            "name": name,
            "source": "recorded",
            "recorded_on": today,
            "request": args,
            "response": file_name,
            "status": answer.status,
            **(
                {"expected_error": outcome.error_class}
                if outcome.error_class
                else {"expected": outcome.output}
            ),
        }
    )
    return written, fixture
