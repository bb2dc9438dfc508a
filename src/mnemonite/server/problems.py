"""Errors as HTTP answers: each `MnemoniteError` maps to a status, with an RFC 9457 problem-details body.

The body is ``{"type", "title", "status", "detail", "instance", "error"}`` (``error``: the
exception's class name, the same type a Python caller would catch) as ``application/problem+json``.
An unexpected exception is a 500 whose body says nothing about the server's insides.
"""

from __future__ import annotations

import logging
import re
from http import HTTPStatus
from typing import Any

import orjson
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response

from mnemonite import errors

__all__ = ["HANDLERS", "problem", "status_of"]

log = logging.getLogger("mnemonite.server")

MEDIA_TYPE = "application/problem+json"
_MODEL_PREFIX = re.compile(r"^invalid [A-Z][A-Za-z]*: ")
RPC_REFUSED = -32001  # JSON-RPC: a server-defined error, here a request the HTTP layer refused
DOCS = "https://mnemonite.github.io/mnemonite/errors/"

# Most specific first: the first class an error is an instance of decides.
_STATUS: tuple[tuple[type[errors.MnemoniteError], int], ...] = (
    (errors.AuthenticationError, 401),
    (errors.PermissionDeniedError, 403),
    (errors.NotFoundError, 404),
    # the agent tiers: a group the agent is not in (or does not own) is refused, with the same answer whether it
    # exists or not; a read-only block or a taken label is a conflict with what memory holds
    (errors.GroupAccessError, 403),
    (errors.ReadOnlyBlockError, 409),
    (errors.BlockConflictError, 409),
    (errors.FactConflictError, 409),
    (errors.EpisodeConflictError, 409),
    (errors.EntityConflictError, 409),
    (errors.InvalidInputError, 422),
    (errors.MemoryScopeError, 422),
    (errors.ConsolidationRuleError, 422),
    (errors.ServerBusyError, 429),
    (errors.StoreUnavailableError, 503),
    (errors.EmbeddingError, 503),
)


def status_of(error: BaseException) -> int:
    """The HTTP status of an error mnemonite raised on purpose (500 for anything else)."""
    for kind, status in _STATUS:
        if isinstance(error, kind):
            return status
    return 500


RETRY_AFTER_SECONDS = 1  # what a 429 or a 503 (the database restarting, the model loading) asks a client to wait


def problem(status: int, detail: str, instance: str, error: str, **extra: Any) -> Response:
    """A problem-details response; a 429 or 503 says when to retry (``Retry-After``)."""
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if status in (429, 503):
        headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
    return Response(orjson.dumps(_details(status, detail, instance, error, **extra)), status_code=status,
                    media_type=MEDIA_TYPE, headers=headers)  # fmt: skip


def rpc_problem(status: int, detail: str, instance: str, error: str) -> Response:
    """The same problem for an MCP client: a JSON-RPC error (what the SDK's client raises with its message)
    whose ``data`` holds the problem details, at the same status."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": RPC_REFUSED, "message": f"{error}: {detail}",
                                                    "data": _details(status, detail, instance, error)}}  # fmt: skip
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


def _details(status: int, detail: str, instance: str, error: str, **extra: Any) -> dict[str, Any]:
    return {"type": f"{DOCS}#{error.lower()}", "title": HTTPStatus(status).phrase, "status": status,
            "detail": detail, "instance": instance, "error": error, **extra}  # fmt: skip


def _not_json(request: Request) -> Response | None:
    """415 for a body that could not be read because it was not sent as JSON (curl's ``-d`` without a header sends
    a form), with what to send; None for any other request. Asked only once the key was accepted."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    sent = request.headers.get("content-length", "0") != "0" or "transfer-encoding" in request.headers
    if (
        request.method not in ("POST", "PUT", "PATCH")
        or not sent
        or kind == "application/json"
        or kind.endswith("+json")
    ):
        return None
    detail = f"send the body as JSON, with the header content-type: application/json (got {kind or 'no content-type'})"
    return problem(415, detail, request.url.path, "RequestError")


async def on_library_error(request: Request, error: Exception) -> Response:
    """A `MnemoniteError` raised by a call: its mapped status and message."""
    status = status_of(error)
    if status == 422 and (refused := _not_json(request)) is not None:
        return refused
    if status == 500:
        log.error("request %s failed: %s", request.url.path, error, exc_info=error)
    detail = _fields(str(error)) if status != 500 else "the server could not complete the request; see its log"
    return problem(status, detail, request.url.path, type(error).__name__)


def _fields(detail: str) -> str:
    """An error as the HTTP client reads it: the body's fields, not the library's model ("invalid Episode: content:
    ..." is "content: ...")."""
    return _MODEL_PREFIX.sub("", detail, count=1)


async def on_http_error(request: Request, error: Exception) -> Response:
    """Starlette's own failures (no such route, method not allowed) in the same shape."""
    assert isinstance(error, HTTPException)
    return problem(error.status_code, str(error.detail), request.url.path, "RequestError")


async def on_validation_error(request: Request, error: Exception) -> Response:
    """A request FastAPI could not parse: malformed JSON is 400, a body of the wrong shape 422."""
    assert isinstance(error, RequestValidationError)
    problems = [{"where": ".".join(str(p) for p in item.get("loc", ())), "message": str(item.get("msg", ""))}
                for item in error.errors()]  # fmt: skip
    if (refused := _not_json(request)) is not None:
        return refused
    malformed = any(item.get("type") == "json_invalid" for item in error.errors())
    detail = "; ".join(f"{p['where']}: {p['message']}" for p in problems)
    if malformed:
        return problem(400, f"the body is not valid JSON: {detail}", request.url.path, "MalformedJSON")
    return problem(422, detail, request.url.path, "InvalidInputError", errors=problems)


async def on_unexpected(request: Request, error: Exception) -> Response:
    log.error("request %s failed", request.url.path, exc_info=error)
    return problem(500, "the server could not complete the request; see its log", request.url.path, "InternalError")


HANDLERS: dict[Any, Any] = {
    errors.MnemoniteError: on_library_error,
    HTTPException: on_http_error,
    RequestValidationError: on_validation_error,
    Exception: on_unexpected,
}
