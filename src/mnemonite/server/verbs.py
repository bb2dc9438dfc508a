"""One declarative table of verbs per tier, and the FastAPI routes generated from it.

A `Verb` names its HTTP method and path, the pydantic models of its body or query string and
of its answer, the capability a key needs, and a handler over `Memory`. `add_routes` turns every
verb into one route with the same prologue (authenticate, check the capability, validate with
the library's models) and epilogue (serialise the answer); a new tier joins by adding verbs.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, Literal, TypeVar

from fastapi import APIRouter, Body, Depends, FastAPI, Path, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field, TypeAdapter
from starlette.responses import JSONResponse, Response

from mnemonite.memory import Memory
from mnemonite.models.base import Model
from mnemonite.models.keys import Capability
from mnemonite.server.auth import OPEN, Principal

UNSEARCHED = "Mnemonite-Unsearched"  # the header of a search: records it could not compare by meaning
__all__ = ["Call", "Page", "Paged", "Verb", "add_routes", "page_of"]

B = TypeVar("B")
T = TypeVar("T")
Method = Literal["GET", "POST", "PATCH", "DELETE"]
MAX_PAGE = 1000

bearer = HTTPBearer(auto_error=False, description="An API key: mnemonite keys create --user ... --can read,write")


@dataclass(frozen=True)
class Call(Generic[B]):
    """What a handler gets: the memory, the caller, the validated body or query, and the path's ids."""

    mem: Memory
    who: Principal
    body: B
    ids: Mapping[str, str]


Handler = Callable[[Call[Any]], Awaitable[Any]]


@dataclass(frozen=True)
class Verb:
    """One operation of one tier, as the HTTP API serves it."""

    tier: str
    name: str
    method: Method
    path: str
    can: Capability
    handler: Handler
    response: Any
    body: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    status: int = 200
    media_type: str = "application/json"  # another type: the handler returns the body's bytes
    adapter: TypeAdapter[Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "adapter", TypeAdapter(self.response))

    @property
    def path_ids(self) -> list[str]:
        """The ``{name}`` parameters of the path, in order."""
        return [part[1:-1] for part in self.path.split("/") if part.startswith("{")]

    @property
    def changes(self) -> bool:
        """Whether the verb changes memory (a read-only server refuses it)."""
        return self.can == "write" or (self.can == "admin" and self.method != "GET")

    @property
    def destroys(self) -> bool:
        """Whether the verb forgets, deletes or purges something (a server that does not destroy refuses it)."""
        return self.method == "DELETE" or self.path.endswith("/purge")

    @property
    def summary(self) -> str:
        return (inspect.getdoc(self.handler) or self.name).split("\n", 1)[0]


class Paged(Model):
    """Paging of a list: at most ``limit`` items after skipping ``offset``."""

    limit: int = Field(default=50, ge=1, le=MAX_PAGE)
    offset: int = Field(default=0, ge=0, le=1_000_000)


class Page(Model, Generic[T]):
    """One page of a list; ``next_offset`` is where the next page starts (None: this was the last)."""

    items: list[T]
    offset: int
    limit: int
    next_offset: int | None


def page_of(items: Sequence[T], paging: Paged, *, skipped: bool = False) -> Page[T]:
    """The page ``paging`` asks for, out of ``items`` read up to ``offset + limit + 1`` (one more says
    whether another page follows); ``skipped``: the read began at the offset already."""
    start = 0 if skipped else paging.offset
    shown = list(items[start : start + paging.limit])
    more = len(items) > start + paging.limit
    return Page[T](items=shown, offset=paging.offset, limit=paging.limit,
                   next_offset=paging.offset + paging.limit if more else None)  # fmt: skip


async def principal(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> Principal:
    """The caller of an HTTP request, from its bearer API key (a dependency: it runs before the body is
    validated, so a caller without an active key learns nothing, not even what a body should hold)."""
    mem: Memory = request.app.state.memory
    key = await mem.keys.authenticate(credentials.credentials if credentials is not None else None)
    return Principal.of_key(key, getattr(request.app.state, "door", OPEN))  # routes added to an app of one's own


def caller(verb: Verb) -> Callable[..., Awaitable[Principal]]:
    """A dependency: the caller, who must hold the verb's capability, through a door that runs the verb
    (checked before the body is validated too)."""

    async def allowed(who: Annotated[Principal, Depends(principal)]) -> Principal:
        who.require(verb.can)
        who.door.check(changes=verb.changes, destroys=verb.destroys)
        return who

    return allowed


def _endpoint(verb: Verb) -> Callable[..., Awaitable[Response]]:
    async def endpoint(request: Request, **kwargs: Any) -> Response:
        who: Principal = kwargs.pop("who")
        body = kwargs.pop("body", None)
        result = await verb.handler(Call(request.app.state.memory, who, body, kwargs))
        content = result if isinstance(result, bytes) else verb.adapter.dump_json(result, by_alias=True)
        # A search says how many records it could not compare by meaning (no vector yet): see SearchResults.
        unsearched = getattr(result, "unsearched", None)
        headers = {UNSEARCHED: str(unsearched)} if isinstance(unsearched, int) else None
        return Response(content, status_code=verb.status, media_type=verb.media_type, headers=headers)

    params = [
        inspect.Parameter("request", inspect.Parameter.KEYWORD_ONLY, annotation=Request),
        inspect.Parameter(
            "who", inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[Principal, Depends(caller(verb))]
        ),
    ]
    params += [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[str, Path(min_length=1,
                          max_length=256)]) for name in verb.path_ids
    ]  # fmt: skip
    if verb.body is not None:
        params.append(
            inspect.Parameter("body", inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[verb.body, Body()])
        )
    elif verb.query is not None:
        params.append(
            inspect.Parameter("body", inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[verb.query, Query()])
        )
    endpoint.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]  # FastAPI reads it
    endpoint.__name__ = verb.name.replace(".", "_")
    return endpoint


def add_routes(router: APIRouter | FastAPI, verbs: Iterable[Verb]) -> None:
    """One route per verb, on ``router``."""
    for verb in verbs:
        router.add_api_route(
            verb.path,
            _endpoint(verb),
            methods=[verb.method],
            response_model=verb.response if verb.media_type == "application/json" else None,
            response_class=_response_class(verb.media_type),
            status_code=verb.status,
            summary=verb.summary,
            description=inspect.getdoc(verb.handler) or "",
            operation_id=verb.name,
            tags=[verb.tier],
            responses=_problems(verb) | _raw(verb),
        )


def _response_class(media_type: str) -> type[Response]:
    """The response class FastAPI documents a verb's answer with (its media type)."""
    if media_type == "application/json":
        return JSONResponse
    return type("RawResponse", (Response,), {"media_type": media_type})


def _raw(verb: Verb) -> dict[int | str, dict[str, Any]]:
    """The answer of a verb that is not JSON: its media type, as a string."""
    if verb.media_type == "application/json":
        return {}
    return {
        verb.status: {
            "description": "Successful Response",
            "content": {verb.media_type: {"schema": {"type": "string"}}},
        }
    }


def _problems(verb: Verb) -> dict[int | str, dict[str, Any]]:
    """The error answers a verb may give, each a problem-details body."""
    statuses = {401: "No API key, or an unknown or revoked one", 403: "The key lacks the capability or scope",
                404: "No such record in the key's scope", 413: "The body is larger than the server accepts",
                422: "The request failed validation", 503: "The database or the model cannot be reached"}  # fmt: skip
    if verb.can != "read":
        statuses[409] = "The write conflicts with what memory holds"
    if verb.body is not None:
        statuses[400] = "The body is not valid JSON"
    ref = {"$ref": "#/components/schemas/ProblemDetails"}
    content = {"application/problem+json": {"schema": ref}}
    return {status: {"description": text, "content": content} for status, text in sorted(statuses.items())}
