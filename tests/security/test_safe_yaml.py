"""Issue 11 item 2: hostile YAML (alias bombs, deep nesting, huge numbers and scalars, oversized
files, /dev/zero, FIFOs) is a located ``path:line`` problem, never a hang or a traceback."""

from __future__ import annotations

import os
import random
import string
import threading
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ummaya.model import documents as loader  # the YAML parser moved to the model layer
from ummaya.codegen.loader import parse_yaml


def parse(tmp_path: Path, text: str | bytes, name: str = "m.yaml"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return parse_yaml(path, name)


def bounded(fn, seconds: float = 20.0):
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("v", fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still running after {seconds} s"
    return box["v"]


def _bomb(levels: int = 9) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "text, line, message",
    [
        (_bomb(), 1, "document too large: more than 50,000 nodes once aliases are expanded"),
        ("x: " + "[" * 500 + "]" * 500 + "\n", 1, "nesting too deep: more than 64 levels"),
        ("x: " + "[" * 20000 + "]" * 20000 + "\n", 1, "nesting too deep: more than 64 levels"),
        ("".join(" " * i + "k:\n" for i in range(200)) + " " * 200 + "v: 1\n", 65, "nesting too deep: more than 64 levels"),
        ("- " * 3000 + "x\n", 1, "nesting too deep: more than 64 levels"),
        ("id: x\nversion: " + "9" * 100_000 + "\n", 2, "scalar too long: 100,000 characters (limit 65,536)"),
        ("id: x\nn: " + "9" * 5000 + "\n", 2, "number too long: 5,000 characters (limit 64)"),
        ("id: x\nn: 0x" + "f" * 500 + "\n", 2, "number too long: 502 characters (limit 64)"),
        ("a: 1\nb: " + "1:" * 3000 + "1\n", 2, "number too long: 6,001 characters (limit 64)"),
        ("a: 1\nb: &r [*r]\n", 2, "recursive alias: a node contains itself"),
        ("a: &m {b: *m}\n", 1, "recursive alias: a node contains itself"),
        ("[" + ",".join(["1"] * 200_000) + "]\n", 1, "document too large: more than 50,000 nodes"),
    ],
)
def test_limits_are_located_problems(tmp_path, text, line, message):
    doc, problems = bounded(lambda: parse(tmp_path, text))
    assert doc is None
    assert [str(p) for p in problems] == [f"m.yaml:{line}: YAML refused: {message}"]


@pytest.mark.parametrize(
    "text, line, start",
    [
        ("? [a, b]\n: c\n", 1, "YAML syntax error: a mapping key must be a plain value"),
        ("a: 1\nb: \x00\n", 2, "YAML error: special characters are not allowed"),
        ("a: 1\nb: !!python/object/apply:os.system ['id']\n", 2, "YAML syntax error: could not determine a constructor"),
        ("a: *nowhere\n", 1, "YAML syntax error: found undefined alias"),
        ("a: 1\n---\nb: 2\n", 2, "YAML syntax error: expected a single document"),
    ],
)
def test_other_hostile_documents_are_located(tmp_path, text, line, start):
    _, problems = parse(tmp_path, text)
    assert len(problems) == 1 and problems[0].line == line and problems[0].message.startswith(start), problems


def test_invalid_utf8_is_located(tmp_path):
    _, problems = parse(tmp_path, b"a: 1\nb: 2\nc: \xff\xfe\n")
    assert [str(p) for p in problems] == ["m.yaml:3: not UTF-8: invalid start byte at byte 13"]


def test_file_size_limit(tmp_path):
    _, problems = parse(tmp_path, "a: 1\n" * 250_000)
    assert [str(p) for p in problems] == ["m.yaml:1: file too large: 1,250,000 bytes (limit 1,048,576)"]
    doc, problems = parse(tmp_path, "a: '" + "x" * 60_000 + "'\n")  # large but within every limit
    assert problems == [] and len(doc.data["a"]) == 60_000


@pytest.mark.parametrize("special", ["dev_zero", "fifo", "directory", "proc"])
def test_only_regular_files_are_read(tmp_path, special):
    path = tmp_path / "m.yaml"
    if special == "dev_zero":
        path.symlink_to("/dev/zero")
        want = "not a regular file (a device)"
    elif special == "fifo":
        os.mkfifo(path)  # no writer: reading it would wait forever
        want = "not a regular file (a FIFO)"
    elif special == "directory":
        path.mkdir()
        want = "not a regular file (a directory)"
    else:
        if not Path("/proc/self/environ").exists():
            pytest.skip("no /proc")
        path.symlink_to("/proc/self/status")  # reports size 0, has content: still not over the limit
        doc, problems = bounded(lambda: parse_yaml(path, "m.yaml"))
        assert problems == [] or all(p.line >= 1 for p in problems)
        return
    doc, problems = bounded(lambda: parse_yaml(path, "m.yaml"))
    assert doc is None and [str(p) for p in problems] == [f"m.yaml:1: {want}"]


def test_every_real_registry_file_reads_exactly_as_before():
    """The limits refuse nothing real and change no value (same data as the plain loader)."""
    root = Path(__file__).resolve().parents[2]
    paths = sorted(p for p in (root / "registry").rglob("*.yaml") if "fixtures" not in p.parts)
    assert len(paths) > 20
    for path in paths:
        doc, problems = parse_yaml(path, path.name)
        assert problems == [], problems
        assert doc.data == yaml.load(path.read_text(encoding="utf-8"), Loader=loader._UniqueKeyLoader)


# --- fuzz -----------------------------------------------------------------------------------------

_TOKENS = [
    "a", "b", "key", "x: 1", "- ", ": ", ", ", "[", "]", "{", "}", "? ", "&a ", "&b ", "*a", "*b", "<<: *a",
    "!!int ", "!!str ", "!!binary ", "!!python/object ", "!!set ", "!!omap ", "!!timestamp ", "!x ",
    "'", '"', "#", "|", "|-", ">", "---", "...", "%YAML 1.1", "%TAG ! tag:x,2000:", "\n", "\n  ", "\n    ",
    "\t", "  ", "0x", "0o", "1e309", "-.inf", ".nan", "9" * 80, "1:2:3", "2026-11-30", "~", "null", "yes",
    "é", "주민", "\x00", "\x07", "\ufeff", "\\", "\\u", "%", "@", "`", "=",
]

def _value(rnd: random.Random, depth: int = 0):
    roll = rnd.random()
    if depth < 4 and roll < 0.25:
        return [_value(rnd, depth + 1) for _ in range(rnd.randint(0, 4))]
    if depth < 4 and roll < 0.5:
        return {rnd.choice(["id", "a", "키", "x y", "1", "true"]) + str(i): _value(rnd, depth + 1) for i in range(rnd.randint(0, 4))}
    return rnd.choice([rnd.randint(-10**20, 10**20), rnd.random() * 1e6, True, None, "", "문자열",
                       "".join(rnd.choice(string.printable) for _ in range(rnd.randint(0, 12)))])


@st.composite
def _documents(draw) -> str:
    """Hypothesis picks the kind and a seed; the document is built from the seed (drawing each
    token through hypothesis would cost more than the parse being tested)."""
    kind = draw(st.integers(0, 3))
    if kind == 3:  # raw text, any code points
        return draw(st.text(max_size=40))
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    if kind == 0:  # token soup: mostly invalid, exercising every error path
        return "".join(rnd.choice(_TOKENS) for _ in range(rnd.randint(0, 40)))
    text = yaml.safe_dump(_value(rnd), allow_unicode=True, default_flow_style=rnd.random() < 0.5)
    if kind == 2 and text:  # a valid document, then cut, spliced or hit by tokens
        for _ in range(rnd.randint(1, 3)):
            at = rnd.randint(0, len(text))
            text = text[:at] + rnd.choice(_TOKENS) + text[at + rnd.randint(0, 3):]
    return text


def test_fuzz_never_crashes_and_every_error_is_located(tmp_path):
    """At least 2,000 generated documents through the real loader: no exception escapes, a refused
    document names its problem, every problem is ``path:line`` with a line inside the document."""
    path = tmp_path / "fuzz.yaml"  # named, never written: file reading is tested above
    seen = []

    @settings(max_examples=2200, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(text=_documents())
    def one(text: str) -> None:
        seen.append(text)
        doc, problems = loader.parse_document(text.encode("utf-8", "surrogatepass"), path, "registry/x/fuzz.yaml")
        if doc is None:
            assert problems, "a refused document names its problem"
        for p in problems:
            assert p.path == "registry/x/fuzz.yaml" and isinstance(p.line, int)
            assert 1 <= p.line <= text.count("\n") + 2, (p, text)
            assert p.message and "Traceback" not in p.message

    one()
    assert len(seen) >= 2000
