"""Recall and false positives of the personal-data detector on the hand-labelled set.

    python evals/redaction.py [--data tests/security/data/personal_data_labelled.yaml] [--failures] [--json]

Figures (issue 11 item 5; targets: recall >= 0.99, zero altered coordinates):

- recall: labelled pieces of personal data that ``redact`` removes — a finding covers the whole
  labelled span (``kind recall``: ... and names the right kind).
- false positives: findings that overlap no labelled piece, and texts without personal data that
  ``redact`` changes.
- altered coordinates: texts marked ``coordinate`` where a decimal number does not come out of
  ``redact`` byte for byte.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "security" / "data" / "personal_data_labelled.yaml"
_DECIMAL = re.compile(r"-?\d+\.\d+")


@dataclass
class Figures:
    texts: int = 0
    labelled: int = 0
    covered: int = 0
    kind_right: int = 0
    findings: int = 0
    false_positives: int = 0
    negative_texts: int = 0
    negatives_altered: int = 0
    coordinate_texts: int = 0
    coordinates_altered: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.covered / self.labelled if self.labelled else 1.0

    @property
    def kind_recall(self) -> float:
        return self.kind_right / self.labelled if self.labelled else 1.0

    @property
    def precision(self) -> float:
        return 1 - self.false_positives / self.findings if self.findings else 1.0


def evaluate(path: Path = DATA, split: str = "all") -> Figures:
    from ummaya.wire.redact import find_personal, redact

    items = yaml.safe_load(path.read_text(encoding="utf-8"))["items"]
    if split != "all":
        items = [i for i in items if i.get("split", "dev") == split]
    fig = Figures(texts=len(items))
    for item in items:
        text, labels = item["text"], item["personal"]
        found = find_personal(text)
        fig.findings += len(found)
        spans = []
        for kind, value in labels:
            start = text.find(value)
            if start < 0:
                raise ValueError(f"{path}: {value!r} is not in {text!r}")
            spans.append((kind, start, start + len(value)))
        fig.labelled += len(spans)
        for kind, s, e in spans:
            cover = [f for f in found if f.start <= s and f.end >= e]
            if cover:
                fig.covered += 1
                fig.kind_right += any(f.kind == kind for f in cover)
                if not any(f.kind == kind for f in cover):
                    fig.failures.append(f"wrong kind for {text[s:e]!r} ({kind}): {[f.kind for f in cover]}")
            else:
                fig.failures.append(f"missed {kind} {text[s:e]!r} in {text!r}")
        for f in found:
            if not any(f.start < e and f.end > s for _, s, e in spans):
                fig.false_positives += 1
                fig.failures.append(f"false positive {f.kind} {f.value!r} in {text!r}")
        out = redact(text)
        if not labels:
            fig.negative_texts += 1
            fig.negatives_altered += out != text
        if item.get("coordinate"):
            fig.coordinate_texts += 1
            if any(d not in out for d in _DECIMAL.findall(text)):
                fig.coordinates_altered += 1
                fig.failures.append(f"coordinate altered: {text!r} -> {out!r}")
    return fig


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--failures", action="store_true", help="list every miss and false positive")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--split", choices=["all", "dev", "holdout"], default="all",
                    help="holdout: the batch written after the dev figures had been used for fixes")
    args = ap.parse_args(argv)
    fig = evaluate(args.data, args.split)
    if args.json:
        print(json.dumps({**asdict(fig), "recall": fig.recall, "kind_recall": fig.kind_recall,
                          "precision": fig.precision}, ensure_ascii=False, indent=2))
    else:
        print(f"labelled set ({args.split}): {fig.texts} texts, {fig.labelled} pieces of personal data, "
              f"{fig.negative_texts} texts without any, {fig.coordinate_texts} with coordinates")
        print(f"recall {fig.recall:.3f} ({fig.covered}/{fig.labelled}), kind recall {fig.kind_recall:.3f}")
        print(f"false positives {fig.false_positives} of {fig.findings} findings (precision {fig.precision:.3f}); "
              f"texts without personal data altered: {fig.negatives_altered}/{fig.negative_texts}")
        print(f"coordinates altered: {fig.coordinates_altered}/{fig.coordinate_texts}")
        if args.failures:
            for line in fig.failures:
                print("  " + line)
    return 0 if fig.recall >= 0.99 and fig.coordinates_altered == 0 else 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
