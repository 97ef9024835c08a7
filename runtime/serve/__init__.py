"""The serving API: releases and aliases, ``/v1/retrieve`` and ``/v1/answer`` over JSON and SSE.

    from ummaya.runtime.serve import create_app, ServeSettings
    app = create_app(ServeSettings(database_url="sqlite:///…", generated=Path("generated")))

See runtime/serve/README.md for the contract (events, error codes, releases, retention, rerank budget).
"""

from .app import ServeSettings, app_from_env, create_app, openapi_bytes
from .api_errors import CODES, ApiError
from .releases import DEFAULT_ALIAS, RetrievalPolicy, publish

__all__ = ["create_app", "app_from_env", "ServeSettings", "openapi_bytes", "ApiError", "CODES",
           "DEFAULT_ALIAS", "RetrievalPolicy", "publish"]
