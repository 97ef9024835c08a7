"""Evaluation suites run against a release, and the gate that promotes a release only when they hold.

    from ummaya.runtime.suites import evaluate_release, gate, load_gates
    evaluate_release(store, release_id, project)        # at publish: figures stored with the release
    report = gate(store, "production", release_id, load_gates(project / "evals/promotion.yaml"))

See suite.py for the interface a suite implements, promotion.py for the gate.
"""

from .promotion import GATE_FILE, GateFile, GateReport, evaluate_release, format_report, gate, load_gates
from .suite import EXPECTED, SUITES, ReleaseUnderTest, Suite, SuiteMissing, SuiteOutcome, SuiteResult, run_suites

__all__ = ["EXPECTED", "GATE_FILE", "GateFile", "GateReport", "ReleaseUnderTest", "SUITES", "Suite",
           "SuiteMissing", "SuiteOutcome", "SuiteResult", "evaluate_release", "format_report", "gate",
           "load_gates", "run_suites"]
