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


def _conversation(*turns: tuple[str, str]) -> list[list[str]]:
    """Statements per turn of one conversation; "assistant" turns are heard for their questions only."""
    extractor, said = Extractor(), []
    for speaker, text in turns:
        if speaker == "assistant":
            extractor.hear(text, speaker=speaker)
            continue
        said.append([s.text for s in extractor.extract(text, speaker=speaker, about_user=speaker == "Me")])
    return said


@pytest.mark.parametrize(
    ("turns", "expected"),
    [
        ((("assistant", "What did you study?"), ("Sam", "Environmental engineering.")),
         [["Sam studied Environmental engineering"]]),
        ((("Marcus", "Oh wow. Who's your new manager?"), ("Lena", "Dmitri. He used to run infrastructure at Spotify.")),
         [[], ["Lena's new manager is Dmitri", "Dmitri used to run infrastructure at Spotify"]]),
        ((("Felix", "When do you move in?"), ("Nina", "On the first of May.")),
         [[], ["Nina moves in on the first of May"]]),
        ((("Sam", "How often do you swim?"), ("Jo", "Twice a week, at the lido.")),
         [[], ["Jo swims twice a week, at the lido"]]),
        ((("Ben", "Can you drive stick?"), ("Aiko", "Yes, I learned in Japan.")),
         [[], ["Aiko can drive stick", "Aiko learned in Japan"]]),
        ((("assistant", "Where do you work?"), ("Me", "At a bakery.")), [["I work at a bakery"]]),
        ((("assistant", "Do you like spicy food?"), ("Priya", "Not really.")), [[]]),  # a no states nothing
        ((("Ben", "Did you see the news?"), ("Aiko", "Yes, wild.")), [[], []]),  # news, not about Aiko
        ((("Jo", "Where do you work?"), ("Jo", "At a bakery.")), [[], []]),  # no one asked Jo
    ],
)  # fmt: skip
def test_a_short_answer_is_read_with_the_question_before_it(
    turns: tuple[tuple[str, str], ...], expected: list[list[str]]
) -> None:
    assert _conversation(*turns) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I got a job at Siemens as a data analyst.", ["Jo got a job at Siemens", "Jo is a data analyst"]),
        (
            "I'm a backend developer at a fintech startup.",
            ["Jo is a backend developer", "Jo works at a fintech startup"],
        ),
        ("Just me and my husband Arjun.", ["Jo's husband is Arjun"]),
    ],
)
def test_a_sentence_a_reader_splits_into_two_facts_gives_both(text: str, expected: list[str]) -> None:
    assert split_statements(text, speaker="Jo", about_user=False) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We leave on June 3rd and come back on the 12th.", ["Aiko leaves on June 3rd", "Aiko comes back on the 12th"]),
        ("I usually commute by ferry.", ["Aiko usually commutes by ferry"]),
        ("I like cats and dogs, but I hate snakes.", ["Aiko likes cats and dogs", "Aiko hates snakes"]),
        ("I saw how counseling and support groups improved my life.",
         ["Aiko saw how counseling and support groups improved Aiko's life"]),  # "support" is no verb here
    ],
)  # fmt: skip
def test_any_verb_after_a_subject_pronoun_is_read_and_agreed(text: str, expected: list[str]) -> None:
    assert split_statements(text, speaker="Aiko", about_user=False) == expected


def test_it_and_they_refer_to_the_thing_or_group_named_before() -> None:
    said = _conversation(
        ("Nina", "We signed the lease on a new apartment!"),
        ("Felix", "Where is it?"),
        ("Nina", "In Kreuzberg. It has two bedrooms and a balcony."),
        ("Raj", "I made bowls for my parents. They've been married 40 years."),
    )
    assert said[2] == ["The new apartment has two bedrooms and a balcony"]
    assert said[3][-1] == "Raj's parents have been married 40 years"
    # "it is" describes a situation as often as a thing: no guess
    assert split_statements("My brother hurt his back. It's a problem.", speaker="Nina", about_user=False) == [
        "Nina's brother hurt his back"
    ]


def test_mom_and_dad_are_the_speakers_parents() -> None:
    text = "Mom called. She's having knee surgery on Friday. Dad will drive her to the hospital."
    assert split_statements(text, speaker="Dana", about_user=False) == [
        "Dana's mom called",
        "Dana's mom is having knee surgery on Friday",
        "Dana's dad will drive her to the hospital",
    ]
    assert split_statements("Mom lives in Lyon.", speaker="Jo", about_user=True) == ["My mom lives in Lyon"]


@pytest.mark.parametrize(
    "text",
    ["We just enjoy each other's company.", "I love to.", "We all have our paths.", "I am obsessed with those."],
)
def test_clauses_that_lost_their_object_or_speak_for_a_group_are_not_facts(text: str) -> None:
    assert split_statements(text, speaker="Mel", about_user=False) == []
