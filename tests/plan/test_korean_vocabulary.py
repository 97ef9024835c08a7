"""Issue 17, item 2: runtime Python keeps grammar, not vocabulary.

Counts collections of Korean words in ``runtime/`` (and ``wire/`` and ``model/``, whose code the runtime runs) — list, tuple, set and dict literals with three
or more Korean strings of a word's length, ``"…".split()`` of Korean words, and string constants
with three or more Korean alternatives (regular expressions) — and fails when any module holds more
than the documented allowance below. Vocabulary belongs in ``registry/_vocab/`` (read through
``runtime/understand/vocab.py``); grammar (particles, endings, 받침 agreement, numerals and the
units dates and times take) lives in ``runtime/understand/grammar.py``, the one module exempt.

The allowance is what other parts of the engine still hold, each with its owner and why it is not
moved by this issue. A module not listed may hold none; a listed one may not grow. Moving words
out lowers the number here (update it in the same commit).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
# The model layer (model/) holds code the runtime runs too (retrieval's analyzer moved there so the
# build and the runtime share it without importing each other): counted as well, keys "model/…".
MODEL = RUNTIME.parent / "model"
# The wire layer (wire/: reading an upstream's answer, the redactor) is the runtime's code moved
# below it so the build shares it: counted too, keys "wire/…".
WIRE = RUNTIME.parent / "wire"
BELOW = {"model/": MODEL, "wire/": WIRE}
GRAMMAR = "understand/grammar.py"
HANGUL = re.compile(r"[가-힣]")

# module (relative to runtime/) -> (Korean entries allowed, why)
ALLOWANCE: dict[str, tuple[int, str]] = {
    "turn/claims.py": (448, "the claim check's own phrase grammar (completion, consent, tier statements; issue 19 added "
                            "the receipt-with-completion and solicitation phrases) and its facility "
                            "suffix and generic-word lists: owned by the claim check; follow-up: the facility words are "
                            "place_words' suffixes and could be read from the registry"),
    "model/analysis.py": (65, "retrieval's analyzer: stop-grams of the index, the build-time Kiwi user dictionary, kept "
                                 "adverbs; owned by retrieval (changing them changes every index)"),
    "retrieve/retriever.py": (29, "the 서·가 a named-place cue excludes after 어디 and a 시·도 short-name table for local agencies "
                                  "(the deixis and location-cue words moved to registry/_vocab/retrieval_words.yaml); "
                                  "owned by retrieval; follow-up: read the 시·도 names from the regions vocabulary"),
    "model/intent_cues.py": (19, "retrieval's intent cues (신청, 확인, 어디 … → send, check, locate), moved below the retriever "
                                 "and the planner's cue reader that both read them; owned by retrieval; follow-up: "
                                 "registry vocabulary"),
    "model/service_words.py": (26, "predicate endings and particles a hint word may carry (grammar of endings, "
                                   "not vocabulary), used by the runtime's guidance index: counted since the model "
                                   "layer is; follow-up: read them from runtime/understand/grammar.py's data"),
    "wire/taxonomy.py": (24, "upstream error messages (the gateways' wording, not citizens'): wire vocabulary"),
    "wire/redact.py": (33, "the redactor's Sino-Korean digits (grammar of numerals; issue 19 added spelled-out forms) "
                            "and personal-data labels"),
    "turn/answer.py": (20, "the engine's own question for personal data, recognised in a model's text"),
}


def _is_word(s: str) -> bool:
    return bool(HANGUL.search(s)) and len(s) <= 15


def korean_entries(source: str) -> list[tuple[int, int]]:
    """(line, entries) of every Korean word collection in one module's source."""
    tree = ast.parse(source)
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    out: list[tuple[int, int]] = []
    for node in ast.walk(tree):
        entries = 0
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            entries = sum(1 for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str) and _is_word(e.value))
        elif isinstance(node, ast.Dict):
            entries = sum(1 for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str) and _is_word(k.value))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "split"
              and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str)):
            entries = sum(1 for w in node.func.value.value.split() if HANGUL.search(w))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "|" in node.value and id(node) not in docstrings:
            entries = sum(1 for alt in re.split(r"[|()?:]", node.value) if HANGUL.search(alt))
        if entries >= 3:
            out.append((node.lineno, entries))
    return out


def census() -> dict[str, int]:
    out = {}
    paths = [(p, p.relative_to(RUNTIME).as_posix()) for p in sorted(RUNTIME.rglob("*.py"))]
    for prefix, folder in BELOW.items():
        paths += [(p, prefix + p.relative_to(folder).as_posix()) for p in sorted(folder.rglob("*.py"))]
    for path, rel in paths:
        if rel == GRAMMAR:
            continue
        found = korean_entries(path.read_text(encoding="utf-8"))
        if found:
            out[rel] = sum(n for _line, n in found)
    return out


def test_runtime_python_holds_no_korean_vocabulary_beyond_the_allowance():
    over = {}
    for rel, n in census().items():
        allowed = ALLOWANCE.get(rel, (0, ""))[0]
        if n > allowed:
            over[rel] = (n, allowed)
    assert not over, (
        "Korean word collections in runtime/ Python (module: found, allowed) — move the words to "
        f"registry/_vocab/ or the grammar to runtime/understand/grammar.py: {over}")


def test_the_understanding_layer_and_its_callers_hold_none():
    """The readers, the dialogue, the planner and the guard read every word from the registry."""
    found = {rel: n for rel, n in census().items()
             if rel.split("/")[0] in ("understand", "dialogue", "plan", "guard") or rel in ("request_context.py", "evidence.py")}
    assert found == {}


def test_the_counter_sees_a_word_list_and_a_regex_of_words():
    assert korean_entries('X = ("근처", "주변", "인근")\n') == [(1, 3)]
    assert korean_entries('Y = re.compile(r"오늘|내일|모레")\n') == [(1, 3)]
    assert korean_entries('Z = "알려줘 찾아줘 보여줘".split()\n') == [(1, 3)]
    assert korean_entries('"""근처|주변|인근: a docstring"""\n') == []
    assert korean_entries('W = ("근처", "near")\n') == []


def test_the_allowance_lists_only_modules_that_exist():
    for rel in ALLOWANCE:
        assert (RUNTIME.parent / rel if rel.startswith(tuple(BELOW)) else RUNTIME / rel).is_file(), rel
