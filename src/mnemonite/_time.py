"""Timezone-aware time helpers shared by the models and the stores."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """The current time, timezone-aware, in UTC."""
    return datetime.now(UTC)


def to_text(moment: datetime) -> str:
    """Fixed-width UTC text, so that string order is time order in any database."""
    # isoformat pads the year to four digits (strftime's %Y does not on every platform: year 1 is "1").
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def from_text(text: str) -> datetime:
    """Parse text written by :func:`to_text` back to an aware datetime (ISO 8601, so fromisoformat: fast)."""
    return datetime.fromisoformat(text)
