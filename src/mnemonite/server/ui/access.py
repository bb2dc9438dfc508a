"""Who is looking: the API key kept in a cookie, the agent a page shows, and the pages' error answers.

A key is entered once on ``/ui/login`` and kept in an HttpOnly, SameSite=Strict cookie scoped to
``/ui`` (a ``Authorization: Bearer`` header works too). Every page authenticates it again, so a key
revoked while a page is open gets the login page and a clear message at its next request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from mnemonite.errors import AuthenticationError, InvalidInputError, MnemoniteError, PermissionDeniedError
from mnemonite.memory import Memory
from mnemonite.scope import Scope
from mnemonite.server.auth import Principal
from mnemonite.server.problems import status_of
from mnemonite.server.ui.render import html

__all__ = ["Viewer", "form", "moment", "number", "page", "router", "text"]

COOKIE = "mnemonite_key"
REVOKED = "This API key is unknown or was revoked: nothing is shown until you enter a valid key."
MAX_FORM = 4096

router = APIRouter()
View = Callable[[Request, "Viewer"], Awaitable[Response]]


@dataclass(frozen=True)
class Viewer:
    """The memory, the key's principal and the agent the page shows (None: every agent of the user)."""

    mem: Memory
    who: Principal
    agent: str | None

    def scope(self, session: str | None = None) -> Scope:
        """The scope the page reads: the key's user, the chosen agent, and ``session`` when given."""
        return self.who.scope(agent=self.agent, session=session)

    @property
    def can_write(self) -> bool:
        return "write" in self.who.capabilities

    def context(self, view: str) -> dict[str, Any]:
        """What every page's frame shows: whose memory, which agent, which view is open."""
        return {"who": self.who, "agent": self.agent, "view": view, "can_write": self.can_write}


def _secret(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.cookies.get(COOKIE)


async def viewer(request: Request) -> Viewer:
    """The viewer of a request; `AuthenticationError` without a valid key."""
    mem: Memory = request.app.state.memory
    who = Principal.of_key(await mem.keys.authenticate(_secret(request)), request.app.state.door)
    agent = text(request, "agent", 256) or who.agent  # none named: every agent the key may read
    who.scope(agent=agent)  # another agent than the key's is refused here, before anything is read
    return Viewer(mem, who, agent)


def page(view: View) -> Callable[[Request], Awaitable[Response]]:
    """A route over ``view``: authenticate first; errors become pages that say what was wrong."""

    async def endpoint(request: Request) -> Response:
        try:
            v = await viewer(request)
        except AuthenticationError:
            return _login(request, 401, REVOKED if _secret(request) else None)
        except MnemoniteError as error:
            return _error(error, {})
        try:
            return await view(request, v)
        except MnemoniteError as error:
            return _error(error, v.context("error"))

    endpoint.__name__ = view.__name__
    endpoint.__doc__ = view.__doc__
    return endpoint


def _error(error: MnemoniteError, frame: dict[str, Any]) -> Response:
    return html("error.html", status_of(error), message=str(error), kind=type(error).__name__, **frame)


def _login(request: Request, status: int, message: str | None) -> Response:
    if message is None and request.method == "GET":
        return RedirectResponse("/ui/login", status_code=303)
    response = html("login.html", status, message=message)
    response.delete_cookie(COOKIE, path="/ui")
    return response


async def form(request: Request) -> dict[str, str]:
    """The fields of a posted form; a post from another origin is refused (with the SameSite cookie,
    this keeps another site from approving or rejecting through a visitor's browser)."""
    origin = request.headers.get("origin")
    if origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}":
        raise PermissionDeniedError("a form posted from another site is refused")
    body = await request.body()
    if len(body) > MAX_FORM:
        raise InvalidInputError(f"the form is larger than {MAX_FORM} bytes")
    return {name: values[0] for name, values in parse_qs(body.decode(errors="replace")).items()}


def text(request: Request, name: str, limit: int = 2000) -> str | None:
    """A query parameter (None when absent or blank); longer than ``limit`` is `InvalidInputError`."""
    value = request.query_params.get(name, "").strip()
    if len(value) > limit:
        raise InvalidInputError(f"{name} is {len(value):,} characters; at most {limit:,} are accepted")
    return value or None


def number(request: Request, name: str, default: int, low: int, high: int) -> int:
    """An integer query parameter in [low, high]."""
    value = text(request, name, 20)
    if value is None:
        return default
    if not value.isdigit() or not low <= int(value) <= high:
        raise InvalidInputError(f"{name} must be a whole number from {low} to {high}, got {value!r}")
    return int(value)


def moment(request: Request, name: str) -> datetime | None:
    """A moment from a query parameter (ISO 8601; without a zone it is UTC, as the pages show)."""
    value = text(request, name, 64)
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInputError(f"{name} is not a date and time (2026-03-02T09:00), got {value!r}") from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


@router.get("/login")
async def login_form(request: Request) -> Response:
    """The form that takes an API key."""
    return html("login.html", message=None)


@router.post("/login")
async def login(request: Request) -> Response:
    """Check the key entered and keep it in a cookie for the next pages."""
    try:
        secret = (await form(request)).get("key", "").strip()
        await request.app.state.memory.keys.authenticate(secret)
    except MnemoniteError as error:
        return html("login.html", status_of(error), message=str(error))
    response = RedirectResponse("/ui/timeline", status_code=303)
    response.set_cookie(COOKIE, secret, path="/ui", httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")  # fmt: skip
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    """Forget the key: the next page asks for one again."""
    response = RedirectResponse("/ui/login", status_code=303)
    response.delete_cookie(COOKIE, path="/ui")
    return response


@router.get("")
@router.get("/")
async def home(request: Request) -> Response:
    return RedirectResponse("/ui/timeline", status_code=303)
