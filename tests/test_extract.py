"""Rule-based statement extraction, and the consolidator with the packaged model on the write path of remember."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mnemonite import Episode, Memory, MemoryConfig, Scope
from mnemonite.consolidator.extract import Extractor, split_statements
from mnemonite.consolidator.segment import summarise


@pytest.mark.parametrize(
    ("text", "speaker", "about_user", "expected"),
    [
        ("Hi, I'm Jo. I live in Berlin and work at Siemens.", "Jo", True,
         ["I am Jo", "I live in Berlin", "I work at Siemens"]),
        ("Hi, I'm Jo. I live in Berlin and work at Siemens.", "Sam", False,
         ["Sam is Jo", "Sam lives in Berlin", "Sam works at Siemens"]),
        ("I like cats and dogs, but I hate snakes.", "Jo", False, ["Jo likes cats and dogs", "Jo hates snakes"]),
        ("My sister Ana is a nurse. She lives in Porto.", "Jo", False,
         ["Jo's sister Ana is a nurse", "Ana lives in Porto"]),
        ("[8 May, 2023] Caroline: I went to a support group yesterday.", "Caroline", False,
         ["Caroline went to a support group yesterday"]),
        ("Yeah, I also teach piano on weekends.", "Mia", False, ["Mia also teaches piano on weekends"]),
        ("How are you? Where do you live?", "Jo", True, []),
        ("Thanks! That sounds great. You should try it.", "Jo", True, []),
        ("I think I will try that. Maybe I could visit.", "Jo", True, []),
        ("She moved to Rome.", "Jo", True, []),  # no one for "she" to be
    ],
)  # fmt: skip
def test_messages_become_atomic_speaker_resolved_statements(
    text: str, speaker: str, about_user: bool, expected: list[str]
) -> None:
    assert split_statements(text, speaker=speaker, about_user=about_user) == expected


def test_he_and_she_refer_to_the_last_person_named_earlier_in_the_conversation() -> None:
    extractor = Extractor()
    assert extractor.extract("Our neighbour Tom fixed the fence.", speaker="Jo", about_user=True)
    [statement] = extractor.extract("He works as a carpenter.", speaker="Jo", about_user=True)
    assert (statement.text, statement.about_user) == ("Tom works as a carpenter", True)


def test_a_summary_keeps_the_sentences_about_what_the_conversation_is_about() -> None:
    texts = ["We booked the flights to Lisbon for June.", "The flights to Lisbon were cheap.", "I had soup today, ok."]
    assert (
        summarise(texts, sentences=2) == "We booked the flights to Lisbon for June. The flights to Lisbon were cheap."
    )
    assert summarise(["ok", "yes"]) == "ok yes"


async def test_consolidated_chat_and_remembered_facts_meet_in_one_pipeline(tmp_path: Path) -> None:
    """Remembered "Jo moved to Munich" and a chat from before it: nothing duplicated, the move wins search."""
    jo = Scope(user="jo", agent="chat")
    t0 = datetime(2025, 1, 10, 9, 0, tzinfo=UTC)
    async with await Memory.open(f"{tmp_path / 'm.db'}", config=MemoryConfig(index_in_background=False)) as mem:
        await mem.episodic.put_many([
            Episode(id="old", content="Hi, I'm Jo. I live in Berlin and work at Siemens.", source_node="jo",
                    timestamp=t0),
            Episode(id="new", content="I moved to Munich last month.", source_node="jo",
                    timestamp=t0 + timedelta(days=60)),
        ], user="jo", session="s1", agent="chat")  # fmt: skip
        await mem.semantic.add_names(jo, "Jo")
        await mem.semantic.remember(jo, "Jo moved to Munich")
        await mem.consolidator.run("standard")
        current = {f.text: f for f in await mem.semantic.facts(jo, limit=50)}
        assert "I live in Berlin" not in current  # history, not a current fact
        assert sum("Munich" in text for text in current) == 1  # the chat's move met the remembered one
        assert "I work at Siemens" in current
        hits = await mem.search(jo, "where does Jo live", k=10, tiers=("semantic",))
        places = [hit.text for hit in hits if "Munich" in hit.text or "Berlin" in hit.text]
        assert places and "Munich" in places[0]
