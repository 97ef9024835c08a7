"""The labelled set (tests/security/data/personal_data_labelled.yaml) as a test: recall of at least
0.99, no coordinate altered, and the one known false positive (a 법인등록번호 has the 주민등록번호
shape, and is redacted on purpose: the detector errs towards removing)."""

from __future__ import annotations

from evals.redaction import evaluate


def test_labelled_set_figures():
    fig = evaluate()
    assert fig.texts >= 200 and fig.labelled >= 150 and fig.coordinate_texts >= 30
    assert fig.recall >= 0.99, fig.failures
    assert fig.coordinates_altered == 0, fig.failures
    assert fig.false_positives <= 1 and fig.negatives_altered <= 1, fig.failures


def test_holdout_split_alone():
    fig = evaluate(split="holdout")
    assert fig.texts >= 40 and fig.recall >= 0.99 and fig.coordinates_altered == 0, fig.failures
