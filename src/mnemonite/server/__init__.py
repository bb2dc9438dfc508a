"""mnemonite as a service: the HTTP API (FastAPI), the MCP server and API-key authentication.

Needs the ``server`` and ``mcp`` extras: ``pip install "mnemonite[server,mcp]"``.
"""

from __future__ import annotations

from mnemonite.server.admission import Capacity
from mnemonite.server.auth import Door
from mnemonite.server.http import VERBS, check_exposure, create_app, openapi_document, run, serve

__all__ = ["VERBS", "Capacity", "Door", "check_exposure", "create_app", "openapi_document", "run", "serve"]
