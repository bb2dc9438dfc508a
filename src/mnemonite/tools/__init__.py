"""The nine memory tools an agent runtime registers: ``tools = mem.tools.for_scope(scope)``.

``tools.openai()`` / ``tools.anthropic()`` / ``tools.mcp()`` give their schemas in each ecosystem's
format; ``await tools.call(name, arguments)`` validates, applies the host's `GuardPolicy`, runs the
tier method and returns a `ToolResult`, writing one audit row (``mem.tools.calls(scope)``).
"""

from __future__ import annotations

from mnemonite.tools.catalog import TOOLS, ToolSpec
from mnemonite.tools.dispatch import GuardPolicy, ToolRequest, Tools, ToolSet

__all__ = ["TOOLS", "GuardPolicy", "ToolRequest", "ToolSet", "ToolSpec", "Tools"]
