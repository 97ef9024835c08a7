"""UMMAYA: Korean public-service outcomes from plain-language requests."""

__version__ = "0.1.0"
