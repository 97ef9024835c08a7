from __future__ import annotations

import pytest

from tests.codegen.project import copy_project, make_project, run


@pytest.fixture(autouse=True, scope="session")
def _cache(tmp_path_factory):
    # One emit cache for the session (never ~/.cache): keys are content hashes, so sharing is safe.
    mp = pytest.MonkeyPatch()
    mp.setenv("UMMAYA_CACHE", str(tmp_path_factory.mktemp("emit-cache")))
    yield
    mp.undo()


@pytest.fixture(scope="session")
def pristine(tmp_path_factory, _cache):
    """The small registry, built once per session."""
    root = make_project(tmp_path_factory.mktemp("pristine") / "proj")
    result = run("build", "--root", str(root), "-q")
    assert result.exit_code == 0, result.output
    return root


@pytest.fixture
def project(tmp_path):
    """An unbuilt copy of the small registry."""
    return make_project(tmp_path / "proj")


@pytest.fixture
def built(tmp_path, pristine):
    """A built copy of the small registry."""
    return copy_project(pristine, tmp_path / "proj")
