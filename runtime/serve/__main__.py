"""``python -m ummaya.runtime.serve openapi``: print the OpenAPI document (committed as openapi.json).

    python -m ummaya.runtime.serve openapi > openapi.json
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    if argv[:1] != ["openapi"]:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    from .app import ServeSettings, create_app, openapi_bytes

    sys.stdout.buffer.write(openapi_bytes(create_app(ServeSettings(auto_publish=False))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
