"""A search over records still waiting for their vectors never misses silently: it embeds the likeliest of them
within its time, and says how many it could not compare by meaning, in Python, the CLI, HTTP and the tools.
``close()`` after a bulk write stays quick and leaves the rest to the next open."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from mnemonite import Episode, Memory, MemoryConfig, Scope, SearchOptions, SyncMemory
from mnemonite.cli import app
from mnemonite.embedding import OnnxEmbedder
from mnemonite.server import create_app

QUERY = "which pet naps on the couch"
TARGET = "The kitten dozes on the sofa every afternoon."  # no word in common with QUERY
STILL = MemoryConfig(index_in_background=False, index_on_close=False)  # nothing changes under the search
CHORES = ["buy milk and eggs", "call the plumber about the tap", "the meeting moved to thursday", "renew the passport",
          "pay the rent", "water the tomatoes", "email the landlord", "review the slides"]  # fmt: skip


def notes(n: int) -> list[Episode]:
    """``n`` short notes, the one that answers written first (the background indexer reaches it last)."""
    return [Episode(content=TARGET)] + [Episode(content=f"Note {i}: {CHORES[i % len(CHORES)]}") for i in range(n - 1)]


async def pending(mem: Memory) -> int:
    return (await mem.health()).pending_embeddings


async def test_a_search_embeds_the_likeliest_first_and_counts_the_rest_exactly(memory_url: str) -> None:
    async with await Memory.open(memory_url, config=STILL) as mem:
        await mem.episodic.put_many(notes(200), user="sam", session="s1", agent="a")
        one_batch = SearchOptions(embed_pending=8, embed_seconds=1e-6)  # more wait than it embeds: one batch of them
        hits = await mem.search(Scope(user="sam"), QUERY, k=5, options=one_batch)
        assert hits[0].text == TARGET  # chosen among 200 from the word-piece table, then ranked by its vector
        assert 0 < hits.unsearched == await pending(mem) < 200  # exactly those left without a vector
        everything = await mem.search(Scope(user="sam"), QUERY, k=5, options=SearchOptions(embed_seconds=60))
        assert everything.unsearched == 0 == await pending(mem) and everything[0].text == TARGET
        assert (await mem.search(Scope(user="sam"), QUERY, k=5)).unsearched == 0  # nothing left: nothing to say


async def test_without_time_to_embed_the_mark_says_so_and_the_text_still_ranks(tmp_path: Path) -> None:
    async with await Memory.open(f"sqlite:///{tmp_path / 'm.db'}", config=STILL) as mem:
        await mem.episodic.put_many(notes(120), user="sam", session="s1", agent="a")
        none = SearchOptions(embed_pending=0, embed_head=0)  # a search that embeds nothing
        hits = await mem.search(Scope(user="sam"), "plumber", k=3, options=none)
        assert hits[0].text.endswith("call the plumber about the tap")  # full text still finds it
        assert hits.unsearched == 120 == await pending(mem)  # all 120 said
        head = await mem.search(Scope(user="sam"), "plumber", k=3, options=SearchOptions(embed_pending=0))
        assert 0 < head.unsearched == await pending(mem) < 120  # the best full-text candidates were embedded
        other = await mem.search(Scope(user="ana"), "plumber", k=3)  # another user's scope holds nothing waiting
        assert list(other) == [] and other.unsearched == 0


async def test_the_triage_puts_a_text_that_answers_in_other_words_first() -> None:
    texts = [f"Note {i}: {CHORES[i % len(CHORES)]}" for i in range(50)] + [TARGET, ""]
    scores = await OnnxEmbedder.default().triage(QUERY, texts)
    assert scores is not None and int(scores.argmax()) == 50 and scores[-1] == 0  # an empty text scores 0
    blank = await OnnxEmbedder.default().triage("", texts)
    assert blank is not None and not blank.any()  # as does every text for no query


def test_every_door_says_what_was_not_searched(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    with SyncMemory.open(db, config=STILL) as mem:
        mem.episodic.put_many(notes(1_500), user="sam", session="s1", agent="assistant")  # more than a search embeds
        secret = mem.keys.create("sam", can="read,write").secret
    slow = MemoryConfig(
        index_in_background=False, index_on_close=False, search=SearchOptions(embed_pending=0, embed_head=0)
    )
    with SyncMemory.open(db, config=slow) as mem:
        recalled = mem.tools.for_scope(Scope(user="sam", agent="assistant")).call("recall_episodes", {"query": "tap"})
        assert "1,500 episodes were not searched by meaning yet" in (recalled.output or {})["hint"]
    said = CliRunner().invoke(app, ["--db", db, "--no-embed", "search", "plumber", "-u", "sam", "--json"],
                              env={"MNEMONITE_INDEX_IN_BACKGROUND": "0"})  # fmt: skip
    assert said.exit_code == 0, said.output
    assert "were not searched by meaning yet" in said.stderr and said.stdout.lstrip().startswith("[")
    with TestClient(create_app(db, config=slow, mcp=False, ui=False)) as http:
        answer = http.post("/v1/search", json={"query": "plumber"}, headers={"Authorization": f"Bearer {secret}"})
        assert answer.status_code == 200 and isinstance(answer.json(), list)
        assert int(answer.headers["mnemonite-unsearched"]) > 0


async def test_close_after_a_bulk_write_stays_quick_and_the_next_open_resumes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    quick = MemoryConfig(index_in_background=False, index_on_close_seconds=0)
    mem = await Memory.open(url, config=quick)
    await mem.episodic.put_many(notes(600), user="sam", session="s1", agent="a")
    with caplog.at_level(logging.WARNING, logger="mnemonite.embedding"):
        await mem.close()  # one batch, then it stops and says how many remain
    [said] = [r.getMessage() for r in caplog.records if "still waiting for a vector" in r.getMessage()]
    left = int(said.split("closing with ")[1].split()[0])
    assert 0 < left < 600 and "the next open resumes them" in said
    async with await Memory.open(url, config=STILL) as again:
        assert await pending(again) == left
        assert await again.index() == left and await pending(again) == 0
