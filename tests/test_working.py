"""The working tier on both stores: blocks, their limits, patches, attachments, compile; no cross-scope reads."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemonite import InvalidInputError, Memory, MemoryConfig, MemoryScopeError, NotFoundError, Scope, SyncMemory
from mnemonite.errors import (
    BlockConflictError,
    BlockLimitError,
    BlockPatchError,
    ReadOnlyBlockError,
)
from mnemonite.tokens import default_counter

PLANNER = Scope(user="alice", agent="planner")
WRITER = Scope(user="alice", agent="writer")
ADVERSARIAL = ["alice", "alice2", "Alice", "a%", "a_b", "x/y", "%", "_", "\\", "a\\%", "/user/alice/"]


async def test_define_read_write_append_and_patch(mem_on_both: Memory) -> None:
    w = mem_on_both.working
    block = await w.define(PLANNER, "persona", "I plan trips.", limit=100, description="who I am")
    assert (block.user, block.agent, block.agents, block.sensitivity) == ("alice", "planner", ("planner",), "internal")
    await w.append(PLANNER, "persona", "I like trains.")
    await w.patch(PLANNER, "persona", "trains", "night trains")
    assert (await w.read(PLANNER, "persona")).value == "I plan trips.\nI like night trains."
    rewritten = await w.write(PLANNER, "persona", "I plan everything.")
    assert rewritten.id == block.id and rewritten.created_at == block.created_at
    assert [b.value for b in await w.list(PLANNER)] == ["I plan everything."]


async def test_a_write_over_the_limit_says_how_much_to_cut_and_changes_nothing(mem_on_both: Memory) -> None:
    w = mem_on_both.working
    await w.define(PLANNER, "task", "short", limit=10)
    with pytest.raises(BlockLimitError, match="cut at least 6 characters"):
        await w.write(PLANNER, "task", "sixteen chars!!!")
    await w.append(PLANNER, "task", "more")  # "short\nmore" is 10 characters: exactly the limit
    with pytest.raises(BlockLimitError, match=r"13 characters.*cut at least 3 characters"):
        await w.append(PLANNER, "task", "xy")
    with pytest.raises(BlockLimitError, match="over its limit of 5"):
        await w.define(PLANNER, "other", "too long", limit=5)
    assert (await w.read(PLANNER, "task")).value == "short\nmore"
    assert [b.label for b in await w.list(PLANNER)] == ["task"]


async def test_token_limits_count_with_the_packaged_tokenizer(mem_on_both: Memory) -> None:
    w = mem_on_both.working
    await w.define(PLANNER, "notes", "one two", token_limit=3)
    text = "one two three four five"
    over = default_counter().count(text) - 3
    with pytest.raises(BlockLimitError, match=f"cut at least {over} tokens"):
        await w.write(PLANNER, "notes", text)
    assert (await w.read(PLANNER, "notes")).value == "one two"


async def test_patch_needs_exactly_one_match(mem_on_both: Memory) -> None:
    w = mem_on_both.working
    await w.define(PLANNER, "todo", "buy milk; buy bread; call mum")
    with pytest.raises(BlockPatchError, match=r"occurs 2 times.*surrounding"):
        await w.patch(PLANNER, "todo", "buy", "get")
    with pytest.raises(BlockPatchError, match=r"does not occur.*exact text"):
        await w.patch(PLANNER, "todo", "buy eggs", "get eggs")
    with pytest.raises(BlockPatchError):
        await w.patch(PLANNER, "todo", "", "x")
    await w.define(PLANNER, "aaa", "aaa")
    with pytest.raises(BlockPatchError, match="2 times"):  # overlapping matches are ambiguous too
        await w.patch(PLANNER, "aaa", "aa", "b")
    assert (await w.read(PLANNER, "todo")).value == "buy milk; buy bread; call mum"
    await w.patch(PLANNER, "todo", "buy bread", "get bread")
    assert (await w.read(PLANNER, "todo")).value == "buy milk; get bread; call mum"


async def test_read_only_blocks_refuse_edits_but_not_a_redefinition(mem_on_both: Memory) -> None:
    w = mem_on_both.working
    first = await w.define(PLANNER, "rules", "Never book red-eye flights.", read_only=True)
    for edit in (
        w.write(PLANNER, "rules", "anything"),
        w.append(PLANNER, "rules", "more"),
        w.patch(PLANNER, "rules", "Never", "Always"),
    ):
        with pytest.raises(ReadOnlyBlockError):
            await edit
    assert (await w.read(PLANNER, "rules")).value == "Never book red-eye flights."
    with pytest.raises(BlockConflictError, match="replace=True"):
        await w.define(PLANNER, "rules", "again")
    redefined = await w.define(PLANNER, "rules", "Prefer trains.", read_only=True, replace=True)
    assert redefined.id == first.id and redefined.value == "Prefer trains."


async def test_attach_shows_a_block_to_another_agent_of_the_same_user(mem_on_both: Memory) -> None:
    w = mem_on_both.working
    await w.define(PLANNER, "plan", "Day 1: Lisbon")
    assert await w.list(WRITER) == []
    attached = await w.attach(PLANNER, "plan", "writer")
    assert attached.agents == ("planner", "writer")
    await w.append(WRITER, "plan", "Day 2: Porto")  # the writer edits the one shared block
    assert (await w.read(PLANNER, "plan")).value == "Day 1: Lisbon\nDay 2: Porto"
    await w.define(WRITER, "draft", "")
    await w.define(Scope(user="alice", agent="critic"), "plan", "my own plan")
    with pytest.raises(BlockConflictError, match="already sees"):
        await w.attach(Scope(user="alice", agent="critic"), "plan", "writer")
    await w.detach(PLANNER, "plan", "writer")
    assert [b.label for b in await w.list(WRITER)] == ["draft"]
    with pytest.raises(NotFoundError):
        await w.detach(PLANNER, "plan", "writer")
    assert {b.label for b in await w.list("alice")} == {"plan", "draft"}
    with pytest.raises(NotFoundError):
        await w.attach(WRITER, "plan", "critic")  # only the owner attaches its block


async def test_compile_renders_the_agents_blocks_within_the_budget(mem_on_both: Memory) -> None:
    w = mem_on_both.working
    await w.define(PLANNER, "persona", "I am a careful travel planner.", description="who I am")
    await w.define(PLANNER, "task", "Plan a week in Portugal by train. " * 20, limit=5_000)
    await w.define(WRITER, "hidden", "not the planner's")
    whole = await w.compile(PLANNER, max_tokens=5_000)
    assert whole.startswith("<persona>\n<description>who I am</description>\n<value>\nI am a careful")
    assert "<task>" in whole and "hidden" not in whole
    counter = default_counter()
    for budget in (60, 120, 200):
        text = await w.compile(PLANNER, max_tokens=budget)
        assert counter.count(text) <= budget
        assert text.startswith("<persona>") and "[... truncated" in text
    with pytest.raises(InvalidInputError):
        await w.compile(PLANNER, max_tokens=0)


async def test_bad_input_is_refused_with_typed_errors(mem_on_both: Memory) -> None:
    w = mem_on_both.working
    with pytest.raises(MemoryScopeError):
        await w.define(Scope(user="alice"), "persona", "no agent")
    for bad_label in ("", "has space", "x" * 101, "-dash-first"):
        with pytest.raises(InvalidInputError):
            await w.define(PLANNER, bad_label, "value")
    with pytest.raises(InvalidInputError, match="sensitivity"):
        await w.define(PLANNER, "persona", "x", sensitivity="top-secret")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        await w.define(PLANNER, "persona", "x", limit=0)
    with pytest.raises(InvalidInputError):
        await w.write(PLANNER, "persona", 42)  # type: ignore[arg-type]
    with pytest.raises(NotFoundError):
        await w.write(PLANNER, "missing", "x")
    with pytest.raises(MemoryScopeError):
        await w.attach(PLANNER, "missing", " ")
    with pytest.raises(MemoryScopeError):
        await w.read("alice", "persona")  # type: ignore[arg-type]
    assert await w.list(PLANNER) == []


async def test_sensitivity_is_stored_with_a_default_from_the_config(memory_url: str) -> None:
    config = MemoryConfig(embedder="none", working_sensitivity="secret")
    async with await Memory.open(memory_url, config=config) as mem:
        await mem.working.define(PLANNER, "a", "x")
        await mem.working.define(PLANNER, "b", "y", sensitivity="public")
        assert [b.sensitivity for b in await mem.working.list(PLANNER)] == ["secret", "public"]


def test_sync_memory_delegates(tmp_path: object) -> None:
    with SyncMemory.open(f"sqlite:///{tmp_path}/m.db", config=MemoryConfig(embedder="none")) as mem:
        mem.working.define(PLANNER, "persona", "hello")
        mem.working.patch(PLANNER, "persona", "hello", "hi")
        assert mem.working.read(PLANNER, "persona").value == "hi"
        assert "<persona>" in mem.working.compile(PLANNER)


_IDS = st.sampled_from(ADVERSARIAL)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(owner=st.tuples(_IDS, _IDS), reader=st.tuples(_IDS, _IDS))
def test_no_block_is_read_or_changed_across_scopes(memory_url: str, owner: tuple[str, str],
                                                   reader: tuple[str, str]) -> None:  # fmt: skip
    if owner == reader:
        return
    asyncio.run(_cross_scope(memory_url, Scope(user=owner[0], agent=owner[1]), Scope(user=reader[0], agent=reader[1])))


async def _cross_scope(url: str, owner: Scope, reader: Scope) -> None:
    """Examples share the database: labels and text are unique to this example."""
    label, text = f"plan-{uuid.uuid4().hex[:8]}", f"owner's text {uuid.uuid4().hex}"
    async with await Memory.open(url, config=MemoryConfig(embedder="none")) as mem:
        w = mem.working
        await w.define(owner, label, text)
        seen = await w.list(reader)
        assert all(b.user == reader.user and reader.agent in b.agents for b in seen)
        assert all(b.user == reader.user for b in await w.list(reader.user))
        assert text not in await w.compile(reader)
        for attempt in (
            w.read(reader, label),
            w.write(reader, label, "stolen"),
            w.patch(reader, label, "owner", "thief"),
            w.attach(reader, label, owner.agent or "x"),
            w.detach(reader, label, owner.agent),
        ):
            with pytest.raises(NotFoundError):
                await attempt
        assert (await w.read(owner, label)).value == text


async def test_compile_shows_a_secret_block_only_when_revealed(mem_on_both: Memory) -> None:
    from mnemonite.privacy import MARKER, Reveal

    w = mem_on_both.working
    await w.define(PLANNER, "persona", "I plan trips.")
    await w.define(PLANNER, "vault", "the safe code is walnut-otter", sensitivity="secret")
    prompt = await w.compile(PLANNER)
    assert "I plan trips." in prompt and "walnut-otter" not in prompt and MARKER in prompt
    assert "walnut-otter" in await w.compile(PLANNER, reveal=Reveal("the agent needs it"))
    assert (await w.read(PLANNER, "vault")).value == "the safe code is walnut-otter"  # stored whole
