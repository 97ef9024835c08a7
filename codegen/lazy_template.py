"""A jinja template compiled on first render, for the build's own emitters (clients, llms pages)."""

from __future__ import annotations

from typing import Any

import jinja2


class LazyTemplate:
    """A template compiled on first render: an incremental build renders a page or a client only
    for the adapters that changed, and compiling it is a tenth of the emitter module's import."""

    def __init__(self, env: jinja2.Environment, source: str):
        self._env = env
        self._source = source
        self._template: jinja2.Template | None = None

    def render(self, **kw: Any) -> str:
        if self._template is None:
            self._template = self._env.from_string(self._source)
        return self._template.render(**kw)
