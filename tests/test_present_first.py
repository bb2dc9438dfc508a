"""The present first: a fact stated later on the same subject as one ranked above it takes its place, within the
first few hits; a later record on another subject stays where it scored; turns only when asked ('all')."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from mnemonite import Episode, Memory, Scope, SearchOptions

AS_SCORED = SearchOptions(newer_first="off")
TURNS_TOO = SearchOptions(newer_first="all")
SAM = Scope(user="sam", agent="a")


def said(text: str, month: int) -> Episode:
    return Episode(content=text, timestamp=datetime(2024, month, 1, tzinfo=UTC))


def when(month: int) -> datetime:
    return datetime(2024, month, 1, tzinfo=UTC)


async def test_a_later_fact_on_the_same_subject_comes_first(memory_url: str) -> None:
    async with await Memory.open(memory_url) as mem:
        await mem.semantic.remember(SAM, "I work as a line cook at a tapas bar", valid_from=when(1))
        await mem.semantic.remember(SAM, "I play the cello on Sundays", valid_from=when(9))
        await mem.semantic.remember(SAM, "These days I teach cooking at the culinary school", valid_from=when(6))
        query = "where does sam work"
        scored = [h.text for h in await mem.search(Scope(user="sam"), query, k=3, options=AS_SCORED)]
        assert scored[0] == "I work as a line cook at a tapas bar"  # the older statement matches the words best
        present = [h.text for h in await mem.search(Scope(user="sam"), query, k=3)]
        assert present[:2] == [
            "These days I teach cooking at the culinary school",
            "I work as a line cook at a tapas bar",
        ]
        assert present[2] == "I play the cello on Sundays"  # the newest of all, but of another subject


async def test_turns_move_only_when_asked_and_by_time_not_by_writing(memory_url: str) -> None:
    async with await Memory.open(memory_url) as mem:
        turns = [said("I live in Lyon, near the old town", 1), said("I play the cello on Sundays", 9),
                 said("We moved to Porto in June; our new home is by the river", 6)]  # fmt: skip
        await mem.episodic.put_many(list(reversed(turns)), user="sam", session="s1", agent="a")  # newest first
        query = "where does sam live"
        scored = [h.text for h in await mem.search(Scope(user="sam"), query, k=3, options=AS_SCORED)]
        assert scored[0] == "I live in Lyon, near the old town"
        assert [h.text for h in await mem.search(Scope(user="sam"), query, k=3)] == scored  # the default: facts only
        present = [h.text for h in await mem.search(Scope(user="sam"), query, k=3, options=TURNS_TOO)]
        assert present == ["We moved to Porto in June; our new home is by the river", *scored[:1], scored[2]]


async def test_the_order_is_that_of_time(tmp_path: Path) -> None:
    async with await Memory.open(f"sqlite:///{tmp_path / 'm.db'}") as mem:
        turns = [said("We gave Miso to my sister; now we have a puppy called Rolo", 9),
                 said("My cat Miso sleeps all day", 3)]  # the newest written first  # fmt: skip
        await mem.episodic.put_many(turns, user="sam", session="s1", agent="a")
        present = [
            h.text for h in await mem.search(Scope(user="sam"), "what pet does sam have", k=2, options=TURNS_TOO)
        ]
        assert present[0].startswith("We gave Miso to my sister")
