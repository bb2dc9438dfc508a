from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memstrata import Episode, Memory, SQLiteMemoryStore

T0 = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def ep(eid: str, content: str | None = None, minutes: float = 0, **metadata: Any) -> Episode:
    return Episode(id=eid, content=content or f"episode {eid}", timestamp=at(minutes), metadata=metadata)


@pytest.fixture
async def store() -> AsyncIterator[SQLiteMemoryStore]:
    s = SQLiteMemoryStore(":memory:")
    await s.bootstrap()
    yield s
    await s.close()


@pytest.fixture
async def mem(tmp_path: Path) -> AsyncIterator[Memory]:
    m = await Memory.open(f"sqlite:///{tmp_path / 'memory.db'}")
    yield m
    await m.close()
