"""UMMAYA: Korean public-service outcomes from plain-language requests."""

__version__ = "0.1.0"
PROJECT_URL = "https://ummaya.dev"
# Sent on every upstream request: data.go.kr's firewall refused httpx's default client with HTTP 400
# "Request Blocked", and an agency that sees trouble should know whose client it is.
USER_AGENT = f"ummaya/{__version__} (+{PROJECT_URL})"
