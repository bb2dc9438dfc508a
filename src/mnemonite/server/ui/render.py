"""Rendering: one Jinja2 environment with autoescaping, and the filters the templates share."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.responses import HTMLResponse

from mnemonite import __version__
from mnemonite.privacy import SECRETS_KEY, redact

__all__ = ["STATIC", "clip", "html", "link", "when"]

STATIC = Path(__file__).parent / "static"
CLIP = 600  # characters of a record shown in a list; its own page shows it whole

# The response headers of every page: no script but the inspector's own, no framing, no referrer elsewhere.
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self';"
    " form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # "no-referrer" makes Chromium post forms with Origin: null
    "Cache-Control": "no-store",
}


def when(moment: datetime | None, empty: str = "now") -> str:
    """A moment as ``2026-03-02 09:00:05 UTC``, with milliseconds when it has a fraction (writes made
    in one run are milliseconds apart); ``empty`` for an open end."""
    if moment is None:
        return empty
    utc = moment.astimezone(UTC)
    if utc.microsecond:
        return utc.strftime("%Y-%m-%d %H:%M:%S.") + f"{utc.microsecond // 1000:03d} UTC"
    return utc.strftime("%Y-%m-%d %H:%M:%S UTC")


def clip(text: str | None, limit: int = CLIP) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if text is None:
        return ""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def short(text: str, limit: int = 24) -> str:
    """A label cut to ``limit`` characters (a picture has no room to say how much was left out)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown(text: str | None, sensitivity: str | None, held: Mapping[str, Any] | None = None) -> str:
    """What a page may show of a record's text: one tagged secret is a marker; one secret only because of
    what was recognised in it (``held``: its metadata or payload says so) reads as stored, ``[secret: PIN]``
    in place of each value."""
    note = held.get(SECRETS_KEY) if isinstance(held, Mapping) else None
    if isinstance(note, Mapping) and note.get("raised") is True:
        return text or ""
    return redact(text or "", sensitivity or "internal")


def link(path: str, **params: object) -> str:
    """``/ui/<path>?...`` with the parameters that are set (the template escapes it)."""
    query = urlencode({k: v for k, v in params.items() if v not in (None, "")})
    return f"/ui/{quote(path)}" + (f"?{query}" if query else "")


def score(value: float | int | None) -> str:
    if value is None:
        return "-"
    return str(value) if isinstance(value, int) else f"{value:.3f}"


_env = Environment(
    loader=PackageLoader("mnemonite.server.ui", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.filters.update(when=when, clip=clip, score=score, short=short)
_env.globals.update(link=link, shown=shown, version=__version__)


def html(template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A page rendered from ``template`` with ``context``."""
    body = _env.get_template(template).render(**context)
    return HTMLResponse(body, status_code=status, headers=HEADERS)
