"""Understanding a request: the shared slot readers and the compiled slot table and vocabularies.

Below the dialogue and the planner: ``table`` (what each x-slot means, from registry/_slots/),
``vocab`` (the registry's vocabularies, loaded when first needed), ``grammar`` (particles, endings,
받침 agreement — the only Korean the Python holds), and one reader per concept (``regions``,
``places``, ``dates``, ``numbers``, ``names``, ``labels``), registered by name in ``readers`` so a
slot type names its reader in YAML. No Kiwi at query time: the build analysed the vocabularies.
"""
