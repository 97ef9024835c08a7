"""The gates run on the same small registry as the codegen tests: the same fixtures, imported."""

from tests.codegen.conftest import _cache, built, pristine, project  # noqa: F401
