"""Red-team YAML variants (each was accepted before): types no manifest is made of, values that are
not finite numbers, null keys. Each is a located ``path:line`` refusal; the rest still loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from ummaya.codegen.loader import parse_document


def _load(text: str):
    return parse_document(text.encode("utf-8"), Path("m.yaml"), "registry/x/m.yaml")


@pytest.mark.parametrize(
    "text, line, message",
    [
        # a URL nobody reads in review: https://evil.example
        ("id: x\nbase_url: !!binary aHR0cHM6Ly9ldmlsLmV4YW1wbGU=\n", 2, "tag '!!binary' is not allowed"),
        ("id: x\nhosts: !!set {a.example, b.example}\n", 2, "tag '!!set' is not allowed"),
        ("id: x\nparams: !!omap [a: 1]\n", 2, "tag '!!omap' is not allowed"),
        ("id: x\nparams: !!pairs [a: 1]\n", 2, "tag '!!pairs' is not allowed"),
        ("id: x\nlimits:\n  min: .nan\n", 3, "'.nan' is not a finite number"),
        ("id: x\nlimits:\n  max: -.Inf\n", 3, "'-.Inf' is not a finite number"),
        ("id: x\n~: 1\n", 2, "a mapping key must not be null"),
        ("id: x\nparams:\n  a: &b !!binary aGk=\n  c: *b\n", 3, "tag '!!binary' is not allowed"),
    ],
)
def test_types_a_manifest_is_not_made_of_are_refused_located(text: str, line: int, message: str) -> None:
    doc, problems = _load(text)
    assert doc is None
    assert len(problems) == 1 and problems[0].line == line and message in problems[0].message, problems


@pytest.mark.parametrize(
    "text, data",
    [
        ("\ufeffid: x\r\nversion: 1\r\n", {"id": "x", "version": 1}),  # BOM and CRLF
        ("a: 1.5\nb: 2026-11-30\nc: !!str 010\n", {"a": 1.5, "b": "2026-11-30", "c": "010"}),
    ],
)
def test_ordinary_yaml_still_loads(text: str, data: dict) -> None:
    doc, problems = _load(text)
    assert not problems and doc is not None and doc.data == data


def test_merge_keys_are_refused_so_no_merge_bomb() -> None:
    """``<<`` has no constructor here: a merge-key bomb stops at its first merge, located."""
    bomb = "a: &a {x: 1, y: 2}\n" + "".join(
        f"b{i}: &b{i}\n  <<: [{', '.join([f'*b{i - 1}' if i > 1 else '*a'] * 9)}]\n  z{i}: 1\n"
        for i in range(1, 12))
    doc, problems = _load(bomb)
    assert doc is None and len(problems) == 1 and problems[0].line in (1, 3), problems
