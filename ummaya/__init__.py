"""UMMAYA: Korean public-service outcomes from plain-language requests."""

__version__ = "0.1.0"
# Sent on every upstream request: data.go.kr's firewall refused httpx's default client with HTTP 400
# "Request Blocked", and an agency that sees trouble should know whose client it is. The project has
# no public URL, so the comment names what the client is and claims no domain or contact.
USER_AGENT = f"ummaya/{__version__} (Korean public-service client)"
