"""The API process: MCP over HTTP and stdio, and the memory page, in front of
``shared.operations``. Grouped by job: start-up here (``main``, the process's ``runtime``, the
deadlines on ``store_deadlines`` and its ``metrics``), ``http`` (the application, its gates and
``POST /mcp``), ``stdio`` (the same tools for a client that starts the server as a child
process), ``tools`` (each tool's arguments and handler, their prose and structured output) and
``ui`` (the memory page)."""
