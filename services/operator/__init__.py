"""``mcp-memory``: the operator's command (export, import, migrate, reembed)."""
