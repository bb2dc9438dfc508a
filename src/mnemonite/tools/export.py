"""The tools' schemas in each ecosystem's format (schemas only: nothing here talks to a network).

- OpenAI Chat Completions: ``{"type": "function", "function": {"name", "description", "parameters"}}``
- Anthropic Messages: ``{"name", "description", "input_schema"}``
- MCP ``tools/list``: ``{"name", "description", "inputSchema", "outputSchema", "annotations"}``
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mnemonite.tools.catalog import ToolSpec

__all__ = ["anthropic_tools", "json_schema", "mcp_tools", "openai_tools"]


def json_schema(model: Any) -> dict[str, Any]:
    """A model's JSON schema (draft 2020-12, as pydantic writes it), without pydantic's top-level title."""
    schema = dict(model.model_json_schema())
    schema.pop("title", None)
    return schema


def openai_tools(specs: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    """``tools=`` for ``client.chat.completions.create``."""
    return [{"type": "function", "function": {"name": spec.name, "description": spec.description,
                                              "parameters": json_schema(spec.input)}} for spec in specs]  # fmt: skip


def anthropic_tools(specs: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    """``tools=`` for ``client.messages.create``."""
    return [{"name": spec.name, "description": spec.description, "input_schema": json_schema(spec.input)}
            for spec in specs]  # fmt: skip


def mcp_tools(specs: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    """Entries of an MCP server's ``tools/list`` answer."""
    return [
        {
            "name": spec.name,
            "description": spec.description,
            "inputSchema": json_schema(spec.input),
            "outputSchema": json_schema(spec.output),
            "annotations": {
                "title": spec.name.replace("_", " "),
                "readOnlyHint": spec.side_effect == "read_only",
                "destructiveHint": spec.side_effect == "destructive",
                "idempotentHint": spec.side_effect in ("read_only", "idempotent_write"),
                "openWorldHint": False,
            },
        }
        for spec in specs
    ]
