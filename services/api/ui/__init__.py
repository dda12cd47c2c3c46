"""The memory page: a person's view of what the agents remember, served by the API process at
``/ui`` on its own port (UI_PORT), as server-rendered HTML with no script and nothing loaded from
elsewhere. It browses, searches, corrects and forgets through the memory operations the tools call.

``access`` (sessions, form tokens, the key), ``query`` (the state in the URL), ``views`` (GET),
``actions`` (POST), ``explain`` and ``chart`` (pure), ``pages`` (templates), ``app`` (the gate
and routes), ``site`` (listening beside the API).
"""

from services.api.ui.site import start_ui

__all__ = ["start_ui"]
