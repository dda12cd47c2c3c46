"""``mcp-memory-api --stdio``: the serving loop (``transport``), stdin screened line by line
(``wire``), and the tools listed before the runtime is open (``deferred``)."""
