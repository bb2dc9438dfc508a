"""Facts that change over time: superseded, never overwritten, and replayed with `as_of` and `valid_at`.

Run: python examples/facts_over_time.py
"""

from __future__ import annotations

import asyncio
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from mnemonite import Fact, Memory, Scope

SAM = Scope(user="sam", agent="assistant")


def show(title: str, facts: list[Fact]) -> None:
    print(title)
    for fact in facts:
        until = f"{fact.valid_to:%Y-%m-%d}" if fact.valid_to else "now"
        print(f"  {fact.text!r:40} held {fact.valid_from:%Y-%m-%d} → {until}  ({fact.status})")


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        async with await Memory.open(f"sqlite:///{Path(folder) / 'facts.db'}") as mem:
            home = await mem.semantic.remember(SAM, "I live in Lisbon", valid_from=datetime(2024, 1, 10, tzinfo=UTC))
            await mem.semantic.remember(SAM, "I work at Acme", valid_from=datetime(2024, 2, 1, tzinfo=UTC))
            believed_then = datetime.now(UTC)  # a system-time checkpoint: what memory believed at this moment

            # "moved to" is a change signal: the new statement supersedes the one about where Sam lives
            moved = await mem.semantic.remember_with_decision(
                SAM, "I moved to Porto", valid_from=datetime(2025, 6, 1, tzinfo=UTC)
            )
            print(f"'I moved to Porto' → {moved.kind} ({moved.reason})")
            # an explicit correction, read like remember reads it: subject, predicate, object
            gaia = await mem.semantic.supersede(
                moved.fact_id, "I live in Vila Nova de Gaia", valid_from=datetime(2025, 6, 1, tzinfo=UTC)
            )
            print(f"supersede → {gaia.subject} · {gaia.predicate} · {gaia.object}\n")

            show("now:", await mem.semantic.facts(SAM))
            believed = await mem.semantic.facts(SAM, as_of=believed_then)
            show("as_of the checkpoint (what memory believed then):", believed)
            show(
                "valid_at 2024-12-01 (what held in the world then):",
                await mem.semantic.facts(SAM, valid_at=datetime(2024, 12, 1, tzinfo=UTC)),
            )
            show("history of where Sam lives:", await mem.semantic.history(home.id))


if __name__ == "__main__":
    asyncio.run(main())
