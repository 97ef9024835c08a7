"""The registry as an MCP server: one tool per adapter plus ``ask`` (a whole turn).

``tool_specs.py`` turns manifests into MCP tool definitions and renders results as text;
``elicitation.py`` asks for consent through MCP elicitation; ``server.py`` wires both to the turn
engine's own validate → gate → dispatch → project path and serves it over stdio
(``ummaya mcp``) or streamable HTTP (mounted at ``/mcp`` by ``ummaya serve``).
"""

from .server import McpBackend, build_server, run_stdio

__all__ = ["McpBackend", "build_server", "run_stdio"]
