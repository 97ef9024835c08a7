"""Retrieval: rank adapters for a request, or abstain (``[]`` → the turn's ``no_adapter``).

    from ummaya.runtime.retrieve import Retriever
    r = Retriever.load(generated_dir)          # once per process
    r.search("동아대 승학캠퍼스 근처 응급실", top_k=5, filters={"primitive": "find"})

See :mod:`.retriever` for the ranking and abstention, :mod:`.analysis` for Korean analysis,
:mod:`.index` for the Whoosh index of record and its compiled view.
"""

from .retriever import FILTER_KEYS, Candidate, RetrievalError, Retriever, UnknownFilter

__all__ = ["Candidate", "Retriever", "RetrievalError", "UnknownFilter", "FILTER_KEYS"]
