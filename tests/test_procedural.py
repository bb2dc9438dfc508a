"""The procedural tier on both stores: define, remove, list, and activate with the packaged model and full text."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemonite import InvalidInputError, Memory, MemoryConfig, MemoryScopeError, NotFoundError, Scope, SyncMemory

AGENT = Scope(user="alice", agent="planner")
ADVERSARIAL = ["alice", "alice2", "Alice", "a%", "a_b", "x/y", "%", "_", "\\", "a\\%"]
RECIPES = {
    "book-train": (["Search trains", "Compare prices", "Book the cheapest"], "the user wants to travel by rail"),
    "file-expenses": (["Collect receipts", "Fill in the expense form", "Send it to finance"], "reimbursement"),
    "water-plants": (["Check soil moisture", "Water the dry pots"], "garden care at home"),
}


async def _define_all(mem: Memory) -> None:
    for name, (steps, trigger) in RECIPES.items():
        await mem.procedural.define(AGENT, name, steps, trigger=trigger)


async def test_define_list_redefine_and_remove(mem_on_both: Memory) -> None:
    p = mem_on_both.procedural
    await _define_all(mem_on_both)
    first = (await p.list(AGENT))[0]
    assert [x.name for x in await p.list(AGENT)] == ["book-train", "file-expenses", "water-plants"]
    assert first.steps == ("Search trains", "Compare prices", "Book the cheapest") and first.sensitivity == "internal"
    again = await p.define(AGENT, "book-train", ["Ask for dates", "Book"], trigger="rail trips", sensitivity="public")
    assert again.id == first.id and again.created_at == first.created_at and again.steps == ("Ask for dates", "Book")
    removed = await p.remove(AGENT, "water-plants")
    assert removed.name == "water-plants" and len(await p.list("alice")) == 2
    with pytest.raises(NotFoundError):
        await p.remove(AGENT, "water-plants")


async def test_activate_by_full_text_without_an_embedder(mem_on_both: Memory) -> None:
    await _define_all(mem_on_both)
    found = await mem_on_both.procedural.activate(AGENT, "please book a train to Porto", k=2)
    assert found[0].procedure.name == "book-train"
    assert await mem_on_both.procedural.activate(AGENT, "zzz qqq") == []


async def test_activate_by_meaning_with_the_packaged_model(memory_url: str) -> None:
    async with await Memory.open(memory_url) as mem:
        await _define_all(mem)
        found = await mem.procedural.activate(AGENT, "I need my money back for the hotel bill", k=3)
        assert found[0].procedure.name == "file-expenses"  # no word in common: matched by meaning
        found = await mem.procedural.activate(AGENT, "my ferns look thirsty", k=1)
        assert [m.procedure.name for m in found] == ["water-plants"]
        assert await mem.procedural.activate(AGENT, "what is the capital of France") == []  # nothing close


async def test_bad_input_is_refused_and_changes_nothing(mem_on_both: Memory) -> None:
    p = mem_on_both.procedural
    with pytest.raises(MemoryScopeError):
        await p.define(Scope(user="alice"), "x", ["step"])
    for steps in ([], ["  "], "one string", [1, 2]):
        with pytest.raises(InvalidInputError):
            await p.define(AGENT, "x", steps)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        await p.define(AGENT, " ", ["step"])
    with pytest.raises(InvalidInputError, match="sensitivity"):
        await p.define(AGENT, "x", ["step"], sensitivity="hush")  # type: ignore[arg-type]
    for task, k in (("", 3), ("task", 0)):
        with pytest.raises(InvalidInputError):
            await p.activate(AGENT, task, k)
    assert await p.list("alice") == []


def test_sync_memory_delegates(tmp_path: object) -> None:
    with SyncMemory.open(f"sqlite:///{tmp_path}/m.db", config=MemoryConfig(embedder="none")) as mem:
        mem.procedural.define(AGENT, "book-train", ["Search", "Book"], trigger="train travel")
        assert mem.procedural.activate(AGENT, "train to Porto")[0].procedure.name == "book-train"


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(owner=st.tuples(*[st.sampled_from(ADVERSARIAL)] * 2), reader=st.tuples(*[st.sampled_from(ADVERSARIAL)] * 2))
def test_no_procedure_is_read_or_removed_across_scopes(memory_url: str, owner: tuple[str, str],
                                                      reader: tuple[str, str]) -> None:  # fmt: skip
    if owner != reader:
        asyncio.run(
            _cross_scope(memory_url, Scope(user=owner[0], agent=owner[1]), Scope(user=reader[0], agent=reader[1]))
        )


async def _cross_scope(url: str, owner: Scope, reader: Scope) -> None:
    word = f"w{uuid.uuid4().hex}"
    async with await Memory.open(url, config=MemoryConfig(embedder="none")) as mem:
        await mem.procedural.define(owner, word, [f"step {word}"], trigger=word)
        assert await mem.procedural.activate(reader, word) == []
        assert all(p.name != word for p in await mem.procedural.list(reader))
        if reader.user != owner.user:
            assert all(p.name != word for p in await mem.procedural.list(reader.user))
        with pytest.raises(NotFoundError):
            await mem.procedural.remove(reader, word)
        assert [m.procedure.name for m in await mem.procedural.activate(owner, word)] == [word]
