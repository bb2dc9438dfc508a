"""The HTTP API: `create_app` builds the FastAPI application, `serve` runs it with uvicorn.

Routes come from the verb tables of each tier (`mnemonite.server.verbs`); the MCP endpoint
(streamable HTTP, API-key authenticated) is mounted at ``/mcp``. Bodies larger than
``max_body_bytes`` are refused with 413 before they are read whole.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import ipaddress
import logging
import socket
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, ConfigDict, Field
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mnemonite import __version__
from mnemonite.config import MemoryConfig
from mnemonite.errors import ConfigurationError, InsecureServerError
from mnemonite.memory import Memory
from mnemonite.models.base import Model
from mnemonite.server import admin, episodic, graph, procedural, semantic, session, shared, tools, working
from mnemonite.server.admission import Admission, Capacity
from mnemonite.server.auth import OPEN, Door
from mnemonite.server.mcp import authenticated, build_mcp
from mnemonite.server.problems import DOCS, HANDLERS, problem
from mnemonite.server.ui import add_inspector
from mnemonite.server.verbs import Verb, add_routes

__all__ = ["VERBS", "Capacity", "check_exposure", "create_app", "openapi", "openapi_document", "run", "serve"]

log = logging.getLogger("mnemonite.server")

VERBS: tuple[Verb, ...] = (*episodic.VERBS, *semantic.VERBS, *graph.VERBS, *admin.VERBS)
# the agent tiers and the nine memory tools
VERBS += (*working.VERBS, *session.VERBS, *procedural.VERBS, *shared.VERBS, *tools.VERBS)
MAX_BODY_BYTES = 1 << 20  # 1 MiB: a fact is at most 20,000 characters, a batch of episodes fits easily


class ProblemDetails(BaseModel):
    """An error answer (RFC 9457); a validation failure adds ``errors``, one per problem."""

    model_config = ConfigDict(extra="allow")

    type: str
    title: str
    status: int
    detail: str
    instance: str
    error: str = Field(description="the exception's class, as a Python caller would catch it")
    errors: list[dict[str, str]] | None = None


class Liveness(Model):
    """The server answers."""

    status: str
    version: str


class Doors(Model):
    """What ``GET /`` answers: where each way into the memory is, and what this server lets through."""

    name: str
    version: str
    api: str
    openapi: str
    mcp: str | None
    ui: str | None
    health: str
    errors: str
    policy: str


def create_app(
    memory_url: str | None = None,
    *,
    config: MemoryConfig | None = None,
    memory: Memory | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    verbs: Iterable[Verb] = VERBS,
    mcp: bool = True,
    host: str = "127.0.0.1",
    ui: bool = True,
    door: Door = OPEN,
    capacity: Capacity | None = None,
) -> FastAPI:
    """The HTTP API over the memory at ``memory_url`` (opened when the app starts, closed when it stops),
    or over an open ``memory`` (left open). ``mcp=False`` leaves the MCP endpoint out; ``host`` is where
    the server listens (on loopback, the MCP endpoint also refuses other Host headers: DNS rebinding);
    ``ui=False`` leaves the inspector's pages (``/ui``) out; ``door`` is what every caller may do, whatever
    its key allows (`Door`: read-only, or no destroying); ``capacity`` bounds the requests running and
    waiting at once, past which a request is answered 429 (`Capacity`; by default sized from the cores)."""
    holder: dict[str, Memory] = {}
    mcp_server = build_mcp(lambda: holder["memory"], door=door) if mcp else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            opened = memory or await Memory.open(memory_url, config=config)
            if memory is None:
                stack.push_async_callback(opened.close)
            holder["memory"] = app.state.memory = opened
            if mcp_server is not None:
                await stack.enter_async_context(mcp_server.session_manager.run())
            yield

    # No /docs or /redoc: FastAPI's pages fetch their scripts from a CDN, blank offline; /openapi.json stays.
    app = FastAPI(title="mnemonite", version=__version__, lifespan=lifespan, exception_handlers=HANDLERS,
                  description="Layered long-term memory for AI agents, over HTTP.", docs_url=None,
                  redoc_url=None)  # fmt: skip
    app.state.door = door
    add_routes(app, verbs)
    app.add_api_route("/health", _liveness, methods=["GET"], response_model=Liveness, tags=["health"],
                      summary="Whether the server answers (no API key needed).")  # fmt: skip
    doors = Doors(name="mnemonite", version=__version__, api="/v1/", openapi="/openapi.json",
                  mcp="/mcp/" if mcp else None, ui="/ui/" if ui else None, health="/health", errors=DOCS,
                  policy=door.policy)  # fmt: skip
    app.add_api_route("/", lambda: doors, methods=["GET"], response_model=Doors, tags=["health"],
                      summary="Where each way in is (no API key needed).")  # fmt: skip
    if ui:
        add_inspector(app)
    if mcp_server is not None:
        endpoint = mcp_server.streamable_http_app(
            streamable_http_path="/", stateless_http=True, json_response=True, host=host
        )
        app.mount("/mcp", authenticated(endpoint, lambda: holder["memory"], door))
    app.openapi = lambda: openapi(app)  # type: ignore[method-assign]
    app.add_middleware(BodyLimit, limit=max_body_bytes)
    app.add_middleware(Admission, capacity=capacity or Capacity.for_machine())  # outermost: refused before read
    return app


async def _liveness() -> Liveness:
    return Liveness(status="ok", version=__version__)


def openapi(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document of the app, with the problem-details schema its errors refer to."""
    if app.openapi_schema is None:
        schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        schema.setdefault("components", {}).setdefault("schemas", {})["ProblemDetails"] = (
            ProblemDetails.model_json_schema()
        )
        app.openapi_schema = schema
    return app.openapi_schema


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document of the default app (what ``docs/openapi.json`` holds: ``make openapi``)."""
    return openapi(create_app("sqlite:///:memory:"))


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes with 413: by Content-Length at once, else while reading."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            status, detail = (413, f"the body is larger than {self.limit:,} bytes") if declared.isdigit() else (
                400, "the Content-Length header is not a number")  # fmt: skip
            await problem(status, detail, scope["path"], "RequestError")(scope, receive, send)
            return
        seen, refused = 0, False

        async def counted() -> Message:
            nonlocal seen, refused
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit and not refused:
                # Answer now and tell the app the client left: whatever it answers after is dropped.
                refused = True
                await problem(413, f"the body is larger than {self.limit:,} bytes", scope["path"], "RequestError")(
                    scope, receive, send
                )
                return {"type": "http.disconnect"}
            return message

        async def sent(message: Message) -> None:
            if not refused:
                await send(message)

        await self.app(scope, counted, sent)


def is_loopback(host: str) -> bool:
    """Whether ``host`` only listens on this machine (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def check_exposure(mem: Memory, host: str) -> None:
    """`InsecureServerError` when ``host`` reaches beyond loopback and no active API key exists."""
    if not is_loopback(host) and await mem.keys.active() == 0:
        raise InsecureServerError(
            f"refusing to listen on {host}: there is no API key, so anyone on the network could read and write"
            " every memory; create one (mnemonite keys create --user ... --can read,write) or listen on 127.0.0.1"
        )


async def serve(
    memory_url: str | None,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    config: MemoryConfig | None = None,
    log_level: str = "info",
    announce: Callable[[], object] | None = None,
    create: bool = True,
    door: Door = OPEN,
    capacity: Capacity | None = None,
) -> None:
    """Serve the HTTP API (and MCP at ``/mcp``) until interrupted; see `check_exposure`.

    ``announce`` is called once the exposure check passed and the port is bound, before the server starts
    listening. ``create=False`` serves only an existing memory (`DatabaseNotFoundError`). A port another
    process holds is `ConfigurationError`. ``door`` and ``capacity``: see `create_app`.
    """
    import uvicorn

    mem = await Memory.open(memory_url, config=config, create=create)
    try:
        await check_exposure(mem, host)
        with _bound(host, port) as sock:
            if announce is not None:
                announce()
            app = create_app(memory=mem, host=host, door=door, capacity=capacity)
            server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="on"))
            await server.serve(sockets=[sock])
    finally:
        await mem.close()


def run(memory_url: str | None, *, workers: int = 1, **options: Any) -> None:
    """`serve` until interrupted, blocking: on uvloop's event loop when it is installed (the ``server`` extra
    installs it where it runs: not on Windows), else on asyncio's. What ``mnemonite serve`` runs.

    ``workers`` > 1 serves from that many processes sharing the port (`_supervise`): each opens the memory, and
    this process embeds what they write (one indexer, not one per worker) and starts a worker again if it dies.
    """
    if workers < 1:
        raise ConfigurationError(f"workers must be at least 1, got {workers}")
    if workers > 1:
        _supervise(memory_url, workers, **options)
        return
    _run_loop(serve(memory_url, **options))


def _run_loop(main: Coroutine[Any, Any, None]) -> None:
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
        return
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(main)


def _supervise(
    memory_url: str | None,
    workers: int,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    config: MemoryConfig | None = None,
    log_level: str = "info",
    announce: Callable[[], object] | None = None,
    create: bool = True,
    door: Door = OPEN,
    capacity: Capacity | None = None,
) -> None:
    """Serve from ``workers`` processes (uvicorn's supervisor: a worker that dies is started again).

    Over SQLite the workers share one file (one writer at a time, as any processes do); over PostgreSQL, the
    server. The workers do not embed in the background: this process does, for all of them, so that no record is
    embedded twice; a search meanwhile embeds what it needs itself, as always.
    """
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    config = config or MemoryConfig.from_env(None, url=memory_url)
    if memory_url is not None:
        config = config.model_copy(update={"url": memory_url})

    async def check() -> None:
        mem = await Memory.open(config=config, create=create, embedder=None)
        try:
            await check_exposure(mem, host)
        finally:
            await mem.close()

    asyncio.run(check())
    quiet = config.model_copy(update={"index_in_background": False, "index_on_close": False})
    app = functools.partial(worker_app, quiet, host, door, capacity or Capacity.for_machine())  # pickled to each
    stop = threading.Event()
    indexer = threading.Thread(target=_index_for_workers, args=(config, stop), name="mnemonite-indexer", daemon=True)
    with _bound(host, port) as sock:
        if announce is not None:
            announce()
        indexer.start()
        # a worker answers the supervisor's health check from a thread of its own; on a busy machine (the model on
        # every core) its answer can take seconds, and a worker killed as hung drops the requests it was serving
        served = uvicorn.Config(
            app, factory=True, host=host, port=port, workers=workers, log_level=log_level, lifespan="on",
            timeout_worker_healthcheck=30,
        )  # fmt: skip
        try:
            Multiprocess(served, sockets=[sock]).run()
        finally:
            stop.set()
            indexer.join(timeout=30)


def worker_app(config: MemoryConfig, host: str, door: Door, capacity: Capacity) -> FastAPI:
    """The app of one worker process of `_supervise` (uvicorn's factory, its arguments bound there)."""
    return create_app(config=config, host=host, door=door, capacity=capacity)


def _index_for_workers(config: MemoryConfig, stop: threading.Event) -> None:
    """Embed what the workers write until ``stop``: a look every half second, everything waiting at each."""

    async def loop() -> None:
        mem = await Memory.open(config=config.model_copy(update={"index_in_background": False}))
        try:
            while not stop.is_set():
                try:
                    embedded = await mem.index()
                except Exception:  # the database restarting, a full disk: said, and tried again
                    log.exception("serve: embedding the workers' records failed; trying again in 5 s")
                    embedded = 0
                    await asyncio.sleep(4.5)
                if not embedded:
                    await asyncio.sleep(0.5)
        finally:
            await mem.close()

    asyncio.run(loop())


@contextmanager
def _bound(host: str, port: int) -> Iterator[socket.socket]:
    """A socket bound to (host, port) for the server, or ConfigurationError saying why not (the port is taken).
    IPv6 for an address with a colon, else IPv4, as uvicorn chooses ("localhost" is 127.0.0.1)."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # not a port in use: one just closed
        sock.bind((host.strip("[]"), port))
    except OSError as error:
        sock.close()
        taken = " (another process is listening there: stop it or pick another --port)"
        why = f"{error.strerror or error}{taken if error.errno == errno.EADDRINUSE else ''}"
        raise ConfigurationError(f"cannot listen on {host}:{port}: {why}") from None
    with sock:
        yield sock
