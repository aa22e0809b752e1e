"""MCP (Model Context Protocol) for agents such as Claude Desktop, Claude Code and Cursor.

``server`` builds the MCP server over the daemon's services (tools and the profile resource);
``stdio`` runs it in-process for ``python -m memory_cortex mcp``; ``http`` serves it from the daemon at
``/mcp`` (streamable HTTP). The SDK is the official ``mcp`` package; this package shares its name
only inside ``memory_cortex`` (as ``memory_cortex.http`` does with the standard library's ``http``).
"""
