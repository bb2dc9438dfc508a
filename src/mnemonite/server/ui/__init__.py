"""The memory inspector: server-rendered pages at ``/ui`` over the same API keys as the HTTP API.

Six views (timeline, facts over time, conflicts, graph, search, status) read through the tiers'
own methods under the key's `Principal`, so a page shows exactly what the key may read; approve
and reject of pending facts go through the audited write path and need a key that may write.
Pages are Jinja2 templates with autoescaping (every stored string is escaped); the graphs are
drawn as SVG on the server, and the static files (one stylesheet, one small script) ship inside
the wheel: nothing is fetched from elsewhere.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from mnemonite.server.ui import access, conflicts, facts, graph, search, status, timeline
from mnemonite.server.ui.render import STATIC

__all__ = ["add_inspector"]


def add_inspector(app: FastAPI) -> None:
    """Serve the inspector's pages under ``/ui`` and its static files under ``/ui/static``."""
    for module in (access, timeline, facts, conflicts, graph, search, status):
        app.include_router(module.router, prefix="/ui", include_in_schema=False)
    app.mount("/ui/static", StaticFiles(directory=STATIC), name="ui-static")
