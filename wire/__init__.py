"""The wire layer: what the build and the turn both need to read an upstream's answer.

An upstream body becomes the adapter's output here — ``envelopes`` (body shape → records or a
classified error; ``xmltree`` via defusedxml; ``taxonomy``: codes and messages → classes),
``output`` (+ ``transforms``: fields, coercion, post-processors, output_schema check through
``schemas``; ``after``: filtering, nearest-first and sorting; ``geo``: pyproj conversions),
``outcome`` (one call's result), ``calendar`` (a recording's own moment and Mock's move to today),
``fixture_reader`` (a recorded body read with no request: what codegen's link stage checks every
fixture with and Mock answers with). ``errors`` names the classes and codes, and scrubs every
message with ``credentials`` and ``redact``. ``resolvers`` and ``transforms`` hold registries of
``extensions``, found by the build through the package's entry points.

The layer sits below both the runtime and codegen and imports only the model (pyproject.toml,
[tool.importlinter]; docs/DESIGN.md, "Layers"), so the build judges a fixture with the engine's own
code without importing the engine.
"""
