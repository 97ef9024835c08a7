"""The request's intent cues: which primitives (send, check, locate, find) a request's wording implies.

Retrieval ranks with them (runtime/retrieve/retriever.py, the intent signal) and the planner reads
them (runtime/understand/cues.py ``implied_by``: a protected step the request does not ask for is
not proposed); they sit here, below both, so understanding never imports the retriever. They are
words, and words belong in the registry (registry/_vocab/): until they move there they are counted
in tests/plan/test_korean_vocabulary.py's allowance, as they were in the retriever.
"""

from __future__ import annotations

import re

# Intent cues → implied primitives. Matched on the raw request (substring for Korean, word for
# English); generic across adapters — a new adapter needs nothing here.
INTENT_CUES: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"신고|납부|신청|제출|접수|내야|내려고|낼게|내고\s*싶|\b(pay|report|apply|submit|file|filing)\b", re.I), ("send",)),
    (re.compile(r"확인|인증|자격|\b(verify|verification|eligib\w*|check|authenticat\w*)\b", re.I), ("check",)),
    (re.compile(r"어디|어딨|어딘|근처|위치|가까운|주변|\b(where|near|nearby|nearest|closest|around|location)\b", re.I), ("locate", "find")),
)

__all__ = ["INTENT_CUES"]
