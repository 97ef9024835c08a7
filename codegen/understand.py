"""What the registry understands: slot types (``registry/_slots/``) and vocabularies
(``registry/_vocab/``), loaded with line numbers, checked, and compiled into ``generated/understand/``.

- ``slots.json`` — the slot table (model/slots.py ``SlotTable``): every slot type by name and the
  compiled vocabularies' files. The runtime reads it for every decision that used to be a Python set
  of slot names (personal, carried, where/when, derived …).
- ``vocab/<name>.json`` — one file per vocabulary, compact, loaded by the runtime only when a reader
  first needs it. The regions vocabulary is compiled from the official 법정동 table (copied unchanged
  into registry/_vocab/) with the declared changes since its date applied.
- ``nouns.json`` — the nouns Kiwi finds in the registry's own text and the vocabularies, analysed
  **here, at build time** (Kiwi takes seconds to load; a cold ``ummaya ask`` must not). A reader
  keeps a word whole when it is a known noun (횡단보도 is not 횡단보 + 도).

Every problem is ``path:line: message``.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ummaya.model.slots import SlotFile, SlotTable, SlotType
from ummaya.model.vocabulary import VocabFile

from ummaya.model.documents import Located, Problem, parse_yaml, validate_doc

SLOTS_DIR = "_slots"
VOCAB_DIR = "_vocab"
OUT_DIR = "generated/understand"
SLOTS_PATH = f"{OUT_DIR}/slots.json"
NOUNS_PATH = f"{OUT_DIR}/nouns.json"
VOCAB_FORMAT = 1


@dataclass
class Understanding:
    """The loaded slot types and vocabularies, with where each was declared."""

    slots: dict[str, SlotType] = field(default_factory=dict)
    slot_lines: dict[str, tuple[str, int]] = field(default_factory=dict)  # name -> (file, line)
    vocabs: dict[str, VocabFile] = field(default_factory=dict)
    vocab_docs: dict[str, Located] = field(default_factory=dict)

    def table(self) -> SlotTable:
        return SlotTable(slots=dict(sorted(self.slots.items())),
                         vocabularies={n: f"vocab/{n}.json" for n in sorted(self.vocabs)})

    def where(self, slot: str) -> str:
        path, line = self.slot_lines.get(slot, ("registry/_slots", 1))
        return f"{path}:{line}"


def load_understanding(root: Path, cache=None) -> tuple[Understanding, list[Problem]]:
    """Parse and validate every slot file and vocabulary (no cross-checks yet: ``check``)."""
    root = Path(root)
    registry = (root / "registry").resolve()
    u = Understanding()
    problems: list[Problem] = []
    for p in sorted((root / "registry" / SLOTS_DIR).glob("*.yaml")):
        rel = p.relative_to(root).as_posix()
        doc, errs = parse_yaml(p, rel, cache, within=registry)
        problems += errs
        if doc is None:
            continue
        sf, errs = validate_doc(doc, SlotFile)
        problems += errs
        if sf is None:
            continue
        for i, slot in enumerate(sf.slots):
            line = doc.line_of(("slots", i, "name"))
            if slot.name in u.slots:
                first = u.where(slot.name)
                problems.append(Problem(rel, line, f"slots.{i}.name: slot type '{slot.name}' is declared twice (first at {first})"))
                continue
            u.slots[slot.name] = slot
            u.slot_lines[slot.name] = (rel, line)
    for p in sorted((root / "registry" / VOCAB_DIR).glob("*.yaml")):
        rel = p.relative_to(root).as_posix()
        doc, errs = parse_yaml(p, rel, cache, within=registry)
        problems += errs
        if doc is None:
            continue
        vf, errs = validate_doc(doc, VocabFile)
        problems += errs
        if vf is None:
            continue
        if vf.vocabulary != p.stem:
            problems.append(Problem(rel, doc.line_of(("vocabulary",)), f"vocabulary '{vf.vocabulary}' must match the file name '{p.stem}'"))
            continue
        u.vocabs[vf.vocabulary] = vf
        u.vocab_docs[vf.vocabulary] = doc
    return u, problems


def check_understanding(u: Understanding, readers: set[str] | frozenset[str]) -> list[Problem]:
    """Names a slot type refers to exist: its reader (registered in the runtime), its vocabulary,
    its parts and what it is asked as; a vocabulary's region table is there and reads."""
    problems: list[Problem] = []
    for name, slot in u.slots.items():
        path, line = u.slot_lines[name]
        if slot.reader is not None and slot.reader not in readers:
            problems.append(Problem(path, line, f"slot type '{name}': unknown reader '{slot.reader}' (registered: {', '.join(sorted(readers))}; a new one is a @reader in runtime/understand/readers.py)"))
        if slot.vocabulary is not None and slot.vocabulary not in u.vocabs:
            known = ", ".join(sorted(u.vocabs)) or "none"
            problems.append(Problem(path, line, f"slot type '{name}': unknown vocabulary '{slot.vocabulary}' (registry/_vocab/ has: {known})"))
        for ref in (*slot.parts, *([slot.asked_as] if slot.asked_as else [])):
            if ref not in u.slots:
                problems.append(Problem(path, line, f"slot type '{name}': refers to undeclared slot type '{ref}'"))
    for name, vf in u.vocabs.items():
        doc = u.vocab_docs[name]
        if vf.regions is not None:
            table = doc.path.parent / vf.regions.table
            if not table.is_file():
                problems.append(Problem(doc.rel, doc.line_of(("regions", "table")), f"regions.table: file not found: {vf.regions.table}"))
        if vf.places is not None:
            problems += _check_places(u, name)
    return problems


def _check_places(u: Understanding, name: str) -> list[Problem]:
    regions = _regions_vocab(u)
    if regions is None:
        return []
    vf, doc = u.vocabs[name], u.vocab_docs[name]
    sidos = _sido_names(regions)
    out = []
    for i, lm in enumerate(vf.places or []):
        if lm.sido not in sidos:
            out.append(Problem(doc.rel, doc.line_of(("places", i, "sido")), f"places.{i}.sido: '{lm.sido}' is not a 시·도 of the regions vocabulary"))
    return out


def _regions_vocab(u: Understanding) -> VocabFile | None:
    return next((v for v in u.vocabs.values() if v.regions is not None), None)


def _sido_names(vf: VocabFile) -> dict[str, str]:
    out = {}
    for s in vf.regions.sido:
        for n in (s.name, s.short, s.en, *s.en_aliases, *s.old):
            out[n] = s.code
    return out


# ---------------------------------------------------------------------------------------- compile


def _compact(obj: Any) -> bytes:
    """Compact, deterministic JSON: these files are loaded at query time, so no indentation."""
    return (json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")


def emit_understanding(u: Understanding, nouns: list[str] | None = None) -> dict[str, bytes]:
    from .emit_lock import canonical_json

    out: dict[str, bytes] = {SLOTS_PATH: canonical_json(u.table().model_dump(mode="json", by_alias=True))}
    regions = None
    rv = _regions_vocab(u)
    if rv is not None:
        regions = compile_regions(rv, u.vocab_docs[rv.vocabulary].path.parent)
    for name, vf in sorted(u.vocabs.items()):
        out[f"{OUT_DIR}/vocab/{name}.json"] = _compact(compile_vocab(vf, regions))
    if nouns is not None:
        out[NOUNS_PATH] = _compact({"format": VOCAB_FORMAT, "nouns": sorted(set(nouns))})
    return out


def nouns_file(texts: list[str], analyse: bool = True) -> dict[str, bytes]:
    """``generated/understand/nouns.json`` (run in the build's Kiwi worker, beside the index)."""
    return nouns_bytes(known_nouns(texts) if analyse and texts else [])


def nouns_bytes(nouns: list[str]) -> dict[str, bytes]:
    """``generated/understand/nouns.json`` of nouns already found (sorted, each once)."""
    return {NOUNS_PATH: _compact({"format": VOCAB_FORMAT, "nouns": nouns})}


def compile_vocab(vf: VocabFile, regions: dict[str, Any] | None) -> dict[str, Any]:
    data: dict[str, Any] = {"format": VOCAB_FORMAT, "vocabulary": vf.vocabulary,
                            "source": vf.source.model_dump(mode="json", exclude_none=True)}
    if vf.terms is not None:
        data["terms"] = [t.model_dump(mode="json", exclude_none=True, exclude_defaults=True) | {"label": t.label} for t in vf.terms]
    if vf.words is not None:
        data["words"] = {k: sorted(dict.fromkeys(vf.words[k])) for k in sorted(vf.words)}
    if vf.places is not None:
        data["places"] = [_compile_place(p.model_dump(mode="json", exclude_none=True), regions) for p in vf.places]
    if vf.regions is not None and regions is not None:
        data["regions"] = regions
    if vf.calendar is not None:
        data["calendar"] = vf.calendar.model_dump(mode="json", exclude_defaults=True)
    return data


def _compile_place(p: dict[str, Any], regions: dict[str, Any] | None) -> dict[str, Any]:
    """A landmark with its 시·도 code (and 시·군·구 code when its name is unique within that 시·도)."""
    if regions is None:
        return p
    sido = next((code for code, s in regions["sido"].items() if p["sido"] in (s["name"], s["short"], s["en"], *s["old"])), None)
    out = {"name": p["name"], "sido": sido}
    for key in ("aliases", "en"):
        if p.get(key):
            out[key] = p[key]
    if p.get("sigungu") and sido:
        codes = [c for c, (name, *_rest) in regions["sigungu"].items() if c.startswith(sido) and
                 (name == p["sigungu"] or name.endswith(" " + p["sigungu"]) or name.split(" ")[0] == p["sigungu"])]
        if codes:
            out["sigungu"] = sorted(codes)[0]
    return out


def compile_regions(vf: VocabFile, folder: Path) -> dict[str, Any]:
    """The official table with the declared changes applied, as three look-ups:
    ``sido`` code → names and centre; ``sigungu`` 5-digit code → [name within its 시·도, current,
    English name (Revised Romanization, derived here)];
    ``dong`` 읍·면·동 (and 리, when compiled) name → 10-digit codes."""
    spec = vf.regions
    assert spec is not None
    rows = _read_table(folder / spec.table)
    names: dict[str, str] = {}  # code -> full name (시·도 first)
    for code, name, status in rows:
        if status == "존재":
            names[code] = name
    sido_meta = {s.code: s for s in spec.sido}
    retired: set[str] = set()
    for ch in sorted(spec.changes, key=lambda c: c.date):
        if ch.kind == "recode_sido":
            old_full = next((n for c, n in names.items() if c == ch.code + "00000000"), None)
            moved = {}
            for code, name in names.items():
                if code.startswith(ch.code):
                    new = ch.to + code[2:]
                    moved[new] = ch.name + name[len(old_full):] if old_full and name.startswith(old_full) else name
            names = {c: n for c, n in names.items() if not c.startswith(ch.code)} | moved
        elif ch.kind == "move":
            old_prefix = next((n for c, n in names.items() if c == ch.code + "00000"), None)
            moved = {}
            for code, name in names.items():
                if code.startswith(ch.code):
                    moved[ch.to + code[5:]] = ch.name + name[len(old_prefix):] if old_prefix and name.startswith(old_prefix) else name
            names = {c: n for c, n in names.items() if not c.startswith(ch.code)} | moved
        elif ch.kind == "add":
            names[ch.code + "00000"] = ch.name
        elif ch.kind == "retire":
            retired.add(ch.code)
    sido: dict[str, Any] = {}
    sigungu: dict[str, list[Any]] = {}
    dong: dict[str, list[str]] = {}
    levels = set(spec.levels)
    for code, full in sorted(names.items()):
        parts = full.split(" ")
        if code[2:] == "0" * 8:
            meta = sido_meta.get(code[:2])
            if meta is None:
                continue
            sido[code[:2]] = _sido_entry(meta)
        elif code[5:] == "0" * 5:
            current = not any(code.startswith(r) for r in retired)
            own = " ".join(parts[1:])
            sigungu[code[:5]] = [own, 1 if current else 0, english_region_name(own)]
        else:
            level = "eupmyeondong" if code[8:] == "00" else "ri"
            if level in levels:  # a retired 구's 동 still names its 시·도
                dong.setdefault(parts[-1], []).append(code)
    for code, meta in sido_meta.items():
        if code not in sido:  # a 시·도 the table does not list (it never happens today; kept whole)
            sido[code] = _sido_entry(meta)
    return {"sido": sido, "sigungu": sigungu, "dong": {k: sorted(v) for k, v in sorted(dong.items())}}


def _sido_entry(meta: Any) -> dict[str, Any]:
    return {"name": meta.name, "short": meta.short, "en": meta.en, "en_aliases": list(meta.en_aliases),
            "old": list(meta.old), "centre": list(meta.centre)}


def _read_table(path: Path) -> list[tuple[str, str, str]]:
    text = path.read_text(encoding="utf-8-sig")
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    out = []
    for row in reader:
        if len(row) >= 3 and row[0].isdigit() and len(row[0]) == 10:
            out.append((row[0], row[1].strip(), row[2].strip()))
    if header is None:
        raise ValueError(f"{path}: empty table")
    return out


# ------------------------------------------------------------------------------------ known nouns


def noun_texts(manifests: list[Any], u: Understanding) -> list[str]:
    """The text Kiwi analyses for known nouns: every adapter's words (titles, summaries, hints,
    examples, field descriptions, fixture outputs) and every vocabulary word."""
    texts: list[str] = []
    for m in manifests:
        texts += adapter_noun_texts(m)
    return keep_noun_texts(texts + vocab_noun_texts(u))


def adapter_noun_texts(m: Any) -> list[str]:
    """One adapter's share of :func:`noun_texts` (the build caches its nouns per adapter: Kiwi
    reads each text on its own, so the union of the parts' nouns is the whole's)."""
    texts = [m.title.ko, m.summary.ko, *m.search_hints.ko, *m.examples.ko, *(n.text for n in m.negative_examples)]
    for schema in (m.input_schema, m.output_schema):
        texts += _descriptions(schema)
    for fx in m.fixtures:
        texts += _strings(fx.expected)
    return texts


def vocab_noun_texts(u: Understanding) -> list[str]:
    """The vocabularies' share of :func:`noun_texts`."""
    texts: list[str] = []
    for vf in u.vocabs.values():
        for t in vf.terms or []:
            texts += [t.label, *t.ko]
        for p in vf.places or []:
            texts += [p.name, *p.aliases]
    return texts


def keep_noun_texts(texts: list[str]) -> list[str]:
    """The texts worth analysing: each once, and only those with Hangul in them."""
    return [t for t in dict.fromkeys(texts) if t and any("가" <= ch <= "힣" for ch in t)]


def _descriptions(schema: Any) -> list[str]:
    out: list[str] = []
    if isinstance(schema, dict):
        for k, v in schema.items():
            if k == "description" and isinstance(v, str):
                out.append(v)
            else:
                out += _descriptions(v)
    elif isinstance(schema, list):
        for v in schema:
            out += _descriptions(v)
    return out


def _strings(value: Any, limit: int = 80) -> list[str]:
    if isinstance(value, str):
        return [value] if len(value) <= limit else []
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v, limit)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v, limit)]
    return []


def known_nouns(texts: list[str]) -> list[str]:
    """Nouns (NNG/NNP, two syllables or more) Kiwi finds in ``texts`` — run at build time only."""
    return sorted({n for found in nouns_per_text(texts) for n in found})


def nouns_per_text(texts: list[str]) -> list[list[str]]:
    """:func:`known_nouns` of each text on its own (one Kiwi batch): the build keeps them per
    adapter, and their union is ``known_nouns`` of all the texts."""
    from ummaya.model.analysis import kiwi

    if not texts:
        return []
    return [nouns_of(toks) for toks in kiwi().tokenize(texts)]


def nouns_of(tokens) -> list[str]:
    """The known nouns of one text's Kiwi tokens (common and proper nouns of two Hangul syllables
    or more), sorted: what :func:`nouns_per_text` keeps of each text."""
    return sorted({t.form for t in tokens
                   if t.tag in ("NNG", "NNP") and len(t.form) >= 2 and all("가" <= ch <= "힣" for ch in t.form)})


__all__ = ["Understanding", "check_understanding", "compile_regions", "emit_understanding", "known_nouns",
           "load_understanding", "noun_texts", "SLOTS_PATH"]


# ------------------------------------------------------------------------------ English names
# The Revised Romanization of Korean (문화체육관광부 고시 제2000-8호), as far as place names need it:
# initials, vowels and finals, a final carried over before ㅇ, and the sound changes a name's
# official spelling shows (종로 Jongno, 신라 Silla, 왕십리 Wangsimni). Build time only: the English
# name of every 시·군·구 is derived data, documented in the regions vocabulary.

_INITIALS = ["g", "kk", "n", "d", "tt", "r", "m", "b", "pp", "s", "ss", "", "j", "jj", "ch", "k", "t", "p", "h"]
_VOWELS = ["a", "ae", "ya", "yae", "eo", "e", "yeo", "ye", "o", "wa", "wae", "oe", "yo", "u", "wo", "we", "wi", "yu",
           "eu", "ui", "i"]
_FINALS = ["", "k", "k", "k", "n", "n", "n", "t", "l", "k", "m", "l", "l", "l", "p", "l", "m", "p", "p", "t", "t",
           "ng", "t", "t", "k", "t", "p", "t"]
# A final carried over as the next syllable's initial (before ㅇ): its initial spelling.
_CARRY = {1: "g", 2: "kk", 4: "n", 7: "d", 8: "r", 16: "m", 17: "b", 19: "s", 20: "ss", 22: "j", 23: "ch", 24: "k",
          25: "t", 26: "p"}


def romanize(hangul: str) -> str:
    """「부평」 → Bupyeong, 「종로」 → Jongno, 「김해」 → Gimhae (Revised Romanization, names only)."""
    syllables: list[list[int] | str] = []
    for ch in hangul:
        code = ord(ch) - 0xAC00
        if 0 <= code <= 11171:
            syllables.append([code // 588, (code % 588) // 28, code % 28])
        else:
            syllables.append(ch)
    out = []
    for i, syl in enumerate(syllables):
        if isinstance(syl, str):
            out.append(syl)
            continue
        ini, vow, fin = syl
        nxt = syllables[i + 1] if i + 1 < len(syllables) and not isinstance(syllables[i + 1], str) else None
        prev = syllables[i - 1] if i > 0 and not isinstance(syllables[i - 1], str) else None
        initial = _INITIALS[ini]
        if prev is not None:
            pfin = prev[2]
            if ini == 11 and pfin in _CARRY:  # liaison: the final went on as this initial
                initial = _CARRY[pfin]
            elif ini == 5:  # ㄹ: ll after ㄴ/ㄹ, n after other finals (종로 Jongno, 신라 Silla)
                initial = "l" if pfin in (4, 8) else ("n" if pfin else "r")
            elif ini == 2 and pfin == 8:  # ㄴ after ㄹ: ll (칼날 kallal)
                initial = "l"
        final = _FINALS[fin]
        if nxt is not None:
            nini = nxt[0]
            if nini == 11 and fin in _CARRY:
                final = ""  # carried over
            elif nini in (2, 6):  # before ㄴ/ㅁ: nasal (왕십리: 십 + ㄹ→n, then ㅂ→m)
                final = {"k": "ng", "p": "m", "t": "n"}.get(final, final)
            elif nini == 5:
                final = {"k": "ng", "p": "m", "t": "n"}.get(final, final)
                if fin == 4:
                    final = "l"  # ㄴ before ㄹ: ll (신라 Silla)
        out.append(initial + _VOWELS[vow] + final)
    text = "".join(out)
    return text[:1].upper() + text[1:]


_ADMIN_EN = {"시": "si", "군": "gun", "구": "gu", "도": "do", "읍": "eup", "면": "myeon", "동": "dong"}


def english_region_name(name: str) -> str:
    """「부평구」 → Bupyeong-gu, 「수원시 장안구」 → Suwon-si Jangan-gu."""
    parts = []
    for word in name.split(" "):
        suffix = _ADMIN_EN.get(word[-1]) if len(word) >= 2 else None
        if suffix:
            parts.append(f"{romanize(word[:-1])}-{suffix}")
        else:
            parts.append(romanize(word))
    return " ".join(parts)
