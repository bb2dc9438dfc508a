"""The shared tier on both stores: groups, members, sharing facts and blocks, and who may read them."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemonite import InvalidInputError, Memory, MemoryConfig, MemoryScopeError, NotFoundError, Scope, SyncMemory
from mnemonite.errors import GroupAccessError

ALICE = Scope(user="alice", agent="assistant")
BOB = Scope(user="bob", agent="assistant")
ALICE_COOK = Scope(user="alice", agent="cook")
MALLORY = Scope(user="mallory", agent="assistant")
ADVERSARIAL = ["alice", "alice2", "Alice", "a%", "a_b", "x/y", "%", "_", "\\", "a\\%"]


async def test_members_read_what_their_groups_share(mem_on_both: Memory) -> None:
    sh = mem_on_both.shared
    home = await sh.create(ALICE, "home", kind="household")
    assert [(m.user, m.agent, m.role) for m in home.members] == [("alice", "assistant", "owner")]
    await sh.add_member(ALICE, "home", BOB)
    await sh.add_member(ALICE, home.id, ALICE_COOK)
    fact = await mem_on_both.semantic.remember(ALICE, "The wifi password is on the fridge.")
    await mem_on_both.working.define(ALICE, "groceries", "milk, eggs")
    shared_fact = await sh.attach(ALICE, "home", fact_id=fact.id)
    await sh.attach(ALICE, "home", block="groceries", sensitivity="public")
    for member in (BOB, ALICE_COOK, ALICE):
        items = await sh.list_for(member)
        assert [(i.kind, i.group, i.shared_by.user) for i in items] == [
            ("fact", "home", "alice"),
            ("block", "home", "alice"),
        ]
        assert items[0].fact is not None and items[0].fact.text == fact.text
        assert items[1].block is not None and items[1].block.value == "milk, eggs" and items[1].sensitivity == "public"
    assert [g.name for g in await sh.groups(BOB)] == ["home"]
    assert await sh.list_for(MALLORY) == [] and await sh.groups(MALLORY) == []
    with pytest.raises(GroupAccessError):
        await sh.list_for(MALLORY, group=home.id)
    with pytest.raises(InvalidInputError, match="already"):
        await sh.attach(ALICE, "home", fact_id=fact.id)
    with pytest.raises(GroupAccessError, match="who shared it or an owner"):
        await sh.detach(BOB, "home", shared_fact.item_id)
    await sh.detach(ALICE, "home", fact.id)
    assert [i.kind for i in await sh.list_for(BOB)] == ["block"]
    await sh.remove_member(ALICE, "home", BOB)
    assert await sh.list_for(BOB) == []


async def test_only_members_and_owners_act_on_a_group(mem_on_both: Memory) -> None:
    sh = mem_on_both.shared
    team = await sh.create(ALICE, "team")
    await sh.add_member(ALICE, "team", BOB)
    bobs_fact = await mem_on_both.semantic.remember(BOB, "Bob's secret recipe uses saffron.")
    alices_fact = await mem_on_both.semantic.remember(ALICE, "Alice likes tea.")
    with pytest.raises(GroupAccessError, match="not an owner"):
        await sh.add_member(BOB, "team", MALLORY)
    with pytest.raises(GroupAccessError, match="not a member"):
        await sh.attach(MALLORY, team.id, fact_id=bobs_fact.id)
    with pytest.raises(NotFoundError):
        await sh.attach(ALICE, "team", fact_id=bobs_fact.id)  # another user's fact
    await sh.add_member(ALICE, "team", ALICE_COOK)
    with pytest.raises(NotFoundError):
        await sh.attach(ALICE_COOK, "team", fact_id=alices_fact.id)  # a member, but not the cook's fact
    with pytest.raises(GroupAccessError):
        await sh.add_member(MALLORY, "team", MALLORY)
    with pytest.raises(InvalidInputError, match="already"):
        await sh.create(ALICE, "team")
    with pytest.raises(InvalidInputError, match="needs an owner"):
        await sh.remove_member(ALICE, "team", ALICE)
    with pytest.raises(InvalidInputError, match="member of 'team' already"):
        await sh.add_member(ALICE, "team", BOB)
    with pytest.raises(NotFoundError):
        await sh.remove_member(ALICE, "team", MALLORY)
    with pytest.raises(MemoryScopeError):
        await sh.add_member(ALICE, "team", Scope(user="bob"))
    assert [i.kind for i in await sh.list_for(BOB)] == []


async def test_bad_input_is_refused_and_changes_nothing(mem_on_both: Memory) -> None:
    sh = mem_on_both.shared
    with pytest.raises(MemoryScopeError):
        await sh.create(Scope(user="alice"), "x")
    with pytest.raises(InvalidInputError):
        await sh.create(ALICE, "x", kind="club")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        await sh.create(ALICE, "")
    await sh.create(ALICE, "home")
    with pytest.raises(InvalidInputError, match="one thing"):
        await sh.attach(ALICE, "home")
    await mem_on_both.working.define(ALICE, "b", "v")
    with pytest.raises(InvalidInputError, match="sensitivity"):
        await sh.attach(ALICE, "home", block="b", sensitivity="loud")  # type: ignore[arg-type]
    with pytest.raises(NotFoundError):
        await sh.attach(ALICE, "home", block="missing")
    with pytest.raises(NotFoundError):
        await sh.detach(ALICE, "home", "nothing")
    assert await sh.list_for(ALICE) == []


def test_sync_memory_delegates(tmp_path: object) -> None:
    with SyncMemory.open(f"sqlite:///{tmp_path}/m.db", config=MemoryConfig(embedder="none")) as mem:
        mem.shared.create(ALICE, "home")
        mem.shared.add_member(ALICE, "home", BOB)
        mem.working.define(ALICE, "notes", "shared notes")
        mem.shared.attach(ALICE, "home", block="notes")
        assert [i.block.value for i in mem.shared.list_for(BOB) if i.block] == ["shared notes"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(owner=st.tuples(*[st.sampled_from(ADVERSARIAL)] * 2), reader=st.tuples(*[st.sampled_from(ADVERSARIAL)] * 2))
def test_nothing_is_read_from_a_group_one_is_not_in(memory_url: str, owner: tuple[str, str],
                                                    reader: tuple[str, str]) -> None:  # fmt: skip
    if owner != reader:
        asyncio.run(
            _cross_scope(memory_url, Scope(user=owner[0], agent=owner[1]), Scope(user=reader[0], agent=reader[1]))
        )


async def _cross_scope(url: str, owner: Scope, reader: Scope) -> None:
    name, text = f"g{uuid.uuid4().hex[:8]}", f"shared {uuid.uuid4().hex}"
    async with await Memory.open(url, config=MemoryConfig(embedder="none")) as mem:
        group = await mem.shared.create(owner, name)
        await mem.working.define(owner, name, text)
        item = await mem.shared.attach(owner, name, block=name)
        seen = await mem.shared.list_for(reader)
        assert all(i.group_id != group.id and (i.block is None or i.block.value != text) for i in seen)
        assert all(g.id != group.id for g in await mem.shared.groups(reader))
        for attempt in (
            mem.shared.list_for(reader, group=group.id),
            mem.shared.detach(reader, group.id, item.id),
            mem.shared.add_member(reader, group.id, reader),
            mem.shared.attach(reader, group.id, block=name),
        ):
            with pytest.raises(GroupAccessError):
                await attempt
        assert [i.id for i in await mem.shared.list_for(owner, group=group.id)] == [item.id]
