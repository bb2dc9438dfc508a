"""`MnemoniteStore` against LangGraph's own store tests, then mnemonite's own promises, on SQLite and PostgreSQL.

The first part is LangGraph's store behaviour tests, taken from langchain-ai/langgraph
``libs/checkpoint-sqlite/tests/test_store.py`` (MIT licence, commit f09cfe8ff) with their
assertions unchanged: only the ``store`` fixture differs (a `MnemoniteStore` on a real memory,
with the packaged embedding model). Left out are the tests of SqliteStore's own internals
(its SQL, migrations, TTL sweeps, and index configurations with a fake embedder): mnemonite
embeds with its own model and has no TTL. LangGraph ships no store tests in its package.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from typing import cast

import pytest
from langgraph.store.base import GetOp, Item, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from mnemonite import InvalidInputError, Memory, Scope, SyncMemory
from mnemonite.langgraph import MnemoniteStore


@pytest.fixture
def memory(memory_url: str) -> Iterator[SyncMemory]:
    with SyncMemory.open(memory_url) as opened:
        yield opened


@pytest.fixture
def store(memory: SyncMemory) -> MnemoniteStore:
    return MnemoniteStore(memory, user="alice")


# -- LangGraph's store tests ------------------------------------------------------------------------


def test_batch_order(store: MnemoniteStore) -> None:
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})
    ops = [
        GetOp(namespace=("test", "foo"), key="key1"),
        PutOp(namespace=("test", "bar"), key="key2", value={"data": "value2"}),
        SearchOp(namespace_prefix=("test",), filter={"data": "value1"}, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        GetOp(namespace=("test",), key="key3"),
    ]
    results = store.batch(cast(Iterable[GetOp | PutOp | SearchOp | ListNamespacesOp], ops))
    assert len(results) == 5
    assert isinstance(results[0], Item)
    assert isinstance(results[0].value, dict)
    assert results[0].value == {"data": "value1"}
    assert results[0].key == "key1"
    assert results[0].namespace == ("test", "foo")
    assert results[1] is None
    assert isinstance(results[2], list)
    assert len(results[2]) == 1
    assert results[2][0].key == "key1"
    assert results[2][0].value == {"data": "value1"}
    assert isinstance(results[3], list)
    assert len(results[3]) > 0
    assert ("test", "foo") in results[3]
    assert ("test", "bar") in results[3]
    assert results[4] is None
    ops_reordered = [
        SearchOp(namespace_prefix=("test",), filter=None, limit=5, offset=0),
        GetOp(namespace=("test", "bar"), key="key2"),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=5, offset=0),
        PutOp(namespace=("test",), key="key3", value={"data": "value3"}),
        GetOp(namespace=("test", "foo"), key="key1"),
    ]
    results_reordered = store.batch(cast(Iterable[GetOp | PutOp | SearchOp | ListNamespacesOp], ops_reordered))
    assert len(results_reordered) == 5
    assert isinstance(results_reordered[0], list)
    assert len(results_reordered[0]) >= 2
    assert isinstance(results_reordered[1], Item)
    assert results_reordered[1].value == {"data": "value2"}
    assert results_reordered[1].key == "key2"
    assert results_reordered[1].namespace == ("test", "bar")
    assert isinstance(results_reordered[2], list)
    assert len(results_reordered[2]) > 0
    assert results_reordered[3] is None
    assert isinstance(results_reordered[4], Item)
    assert results_reordered[4].value == {"data": "value1"}
    assert results_reordered[4].key == "key1"
    assert results_reordered[4].namespace == ("test", "foo")
    item3 = store.get(("test",), "key3")
    assert item3 is not None
    assert item3.value == {"data": "value3"}


def test_batch_get_ops(store: MnemoniteStore) -> None:
    store.put(("test",), "key1", {"data": "value1"})
    store.put(("test",), "key2", {"data": "value2"})
    ops = [
        GetOp(namespace=("test",), key="key1"),
        GetOp(namespace=("test",), key="key2"),
        GetOp(namespace=("test",), key="key3"),
    ]
    results = store.batch(ops)
    assert len(results) == 3
    assert results[0] is not None
    assert results[1] is not None
    assert results[2] is None
    assert results[0].key == "key1"  # type: ignore[union-attr]
    assert results[1].key == "key2"  # type: ignore[union-attr]


def test_batch_put_ops(store: MnemoniteStore) -> None:
    ops = [
        PutOp(namespace=("test",), key="key1", value={"data": "value1"}),
        PutOp(namespace=("test",), key="key2", value={"data": "value2"}),
        PutOp(namespace=("test",), key="key3", value=None),
    ]
    results = store.batch(ops)
    assert len(results) == 3
    assert all(result is None for result in results)
    item1 = store.get(("test",), "key1")
    item2 = store.get(("test",), "key2")
    item3 = store.get(("test",), "key3")
    assert item1 and item1.value == {"data": "value1"}
    assert item2 and item2.value == {"data": "value2"}
    assert item3 is None


def test_batch_search_ops(store: MnemoniteStore) -> None:
    test_data = [
        (("test", "foo"), "key1", {"data": "value1", "tag": "a"}),
        (("test", "bar"), "key2", {"data": "value2", "tag": "a"}),
        (("test", "baz"), "key3", {"data": "value3", "tag": "b"}),
    ]
    for namespace, key, value in test_data:
        store.put(namespace, key, value)
    ops = [
        SearchOp(namespace_prefix=("test",), filter={"tag": "a"}, limit=10, offset=0),
        SearchOp(namespace_prefix=("test",), filter=None, limit=2, offset=0),
        SearchOp(namespace_prefix=("test", "foo"), filter=None, limit=10, offset=0),
    ]
    results: list[list[Item]] = store.batch(ops)  # type: ignore[assignment]
    assert len(results) == 3
    assert len(results[0]) == 2
    assert all(item.value["tag"] == "a" for item in results[0])
    assert len(results[1]) == 2
    assert len(results[2]) == 1
    assert results[2][0].namespace == ("test", "foo")


def test_batch_list_namespaces_ops(store: MnemoniteStore) -> None:
    test_data = [
        (("test", "documents", "public"), "doc1", {"content": "public doc"}),
        (("test", "documents", "private"), "doc2", {"content": "private doc"}),
        (("test", "images", "public"), "img1", {"content": "public image"}),
        (("prod", "documents", "public"), "doc3", {"content": "prod doc"}),
    ]
    for namespace, key, value in test_data:
        store.put(namespace, key, value)
    ops = [
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=2, limit=10, offset=0),
        ListNamespacesOp(
            match_conditions=tuple([MatchCondition("suffix", ("public",))]), max_depth=None, limit=10, offset=0
        ),
    ]
    results: list[list[tuple[str, ...]]] = store.batch(  # type: ignore[assignment]
        cast(Iterable[GetOp | PutOp | SearchOp | ListNamespacesOp], ops)
    )
    assert len(results) == 3
    assert len(results[0]) == len(test_data)
    assert all(len(ns) <= 2 for ns in results[1])
    assert all(ns[-1] == "public" for ns in results[2])


def test_basic_store_ops(store: MnemoniteStore) -> None:
    namespace = ("test", "documents")
    item_id = "doc1"
    item_value = {"title": "Test Document", "content": "Hello, World!"}
    store.put(namespace, item_id, item_value)
    item = store.get(namespace, item_id)
    assert item
    assert item.namespace == namespace
    assert item.key == item_id
    assert item.value == item_value
    updated_value = {"title": "Updated Document", "content": "Hello, Updated!"}
    store.put(namespace, item_id, updated_value)
    updated_item = store.get(namespace, item_id)
    assert updated_item is not None
    assert updated_item.value == updated_value
    assert store.get(("test", "other_documents"), item_id) is None
    store.delete(namespace, item_id)
    assert store.get(namespace, item_id) is None


def test_list_namespaces(store: MnemoniteStore) -> None:
    test_namespaces = [
        ("test", "documents", "public"),
        ("test", "documents", "private"),
        ("test", "images", "public"),
        ("test", "images", "private"),
        ("prod", "documents", "public"),
        ("prod", "documents", "private"),
    ]
    for namespace in test_namespaces:
        store.put(namespace, "dummy", {"content": "dummy"})
    all_namespaces = store.list_namespaces()
    assert len(all_namespaces) == len(test_namespaces)
    test_prefix_namespaces = store.list_namespaces(prefix=["test"])  # type: ignore[arg-type]
    assert len(test_prefix_namespaces) == 4
    assert all(ns[0] == "test" for ns in test_prefix_namespaces)
    public_namespaces = store.list_namespaces(suffix=["public"])  # type: ignore[arg-type]
    assert len(public_namespaces) == 3
    assert all(ns[-1] == "public" for ns in public_namespaces)
    depth_2_namespaces = store.list_namespaces(max_depth=2)
    assert all(len(ns) <= 2 for ns in depth_2_namespaces)
    paginated_namespaces = store.list_namespaces(limit=3)
    assert len(paginated_namespaces) == 3
    for namespace in test_namespaces:
        store.delete(namespace, "dummy")


def test_search(store: MnemoniteStore) -> None:
    test_data = [
        (("test", "docs"), "doc1", {"title": "First Doc", "author": "Alice", "tags": ["important"]}),
        (("test", "docs"), "doc2", {"title": "Second Doc", "author": "Bob", "tags": ["draft"]}),
        (("test", "images"), "img1", {"title": "Image 1", "author": "Alice", "tags": ["final"]}),
    ]
    for namespace, key, value in test_data:
        store.put(namespace, key, value)
    all_items = store.search(["test"])  # type: ignore[arg-type]
    assert len(all_items) == 3
    docs_items = store.search(["test", "docs"])  # type: ignore[arg-type]
    assert len(docs_items) == 2
    assert all(item.namespace == ("test", "docs") for item in docs_items)
    alice_items = store.search(["test"], filter={"author": "Alice"})  # type: ignore[arg-type]
    assert len(alice_items) == 2
    assert all(item.value["author"] == "Alice" for item in alice_items)
    paginated_items = store.search(["test"], limit=2)  # type: ignore[arg-type]
    assert len(paginated_items) == 2
    offset_items = store.search(["test"], offset=2)  # type: ignore[arg-type]
    assert len(offset_items) == 1
    for namespace, key, _ in test_data:
        store.delete(namespace, key)


def test_basic_store_operations(store: MnemoniteStore) -> None:
    uid = uuid.uuid4().hex
    namespace = (uid, "test", "documents")
    item_id = "doc1"
    item_value = {"title": "Test Document", "content": "Hello, World!"}
    assert len(store.search((uid,))) == 0
    store.put(namespace, item_id, item_value)
    item = store.get(namespace, item_id)
    assert item is not None
    assert item.namespace == namespace
    assert item.key == item_id
    assert item.value == item_value
    assert item.created_at is not None
    assert item.updated_at is not None
    updated_value = {"title": "Updated Test Document", "content": "Hello, LangGraph!"}
    store.put(namespace, item_id, updated_value)
    updated_item = store.get(namespace, item_id)
    assert updated_item is not None
    assert updated_item.value == updated_value
    assert updated_item.updated_at >= item.updated_at
    assert store.get((uid, "test", "other_documents"), item_id) is None
    new_item_id = "doc2"
    store.put(namespace, new_item_id, {"title": "Another Document", "content": "Greetings!"})
    items = store.search((uid, "test"), limit=10)
    assert len(items) == 2
    assert any(item.key == item_id for item in items)
    assert any(item.key == new_item_id for item in items)
    assert (uid, "test", "documents") in store.list_namespaces(prefix=(uid, "test"))
    store.delete(namespace, item_id)
    store.delete(namespace, new_item_id)
    assert store.get(namespace, item_id) is None
    assert store.get(namespace, new_item_id) is None
    assert len(store.search((uid, "test"), limit=10)) == 0


def test_list_namespaces_operations(store: MnemoniteStore) -> None:
    test_pref = str(uuid.uuid4())
    test_namespaces = [
        (test_pref, "test", "documents", "public", test_pref),
        (test_pref, "test", "documents", "private", test_pref),
        (test_pref, "test", "images", "public", test_pref),
        (test_pref, "test", "images", "private", test_pref),
        (test_pref, "prod", "documents", "public", test_pref),
        (test_pref, "prod", "documents", "some", "nesting", "public", test_pref),
        (test_pref, "prod", "documents", "private", test_pref),
    ]
    for namespace in test_namespaces:
        store.put(namespace, "dummy", {"content": "dummy"})
    prefix_result = store.list_namespaces(prefix=(test_pref, "test"))
    assert len(prefix_result) == 4
    assert all(ns[1] == "test" for ns in prefix_result)
    specific_prefix_result = store.list_namespaces(prefix=(test_pref, "test", "documents"))
    assert len(specific_prefix_result) == 2
    assert all(ns[1:3] == ("test", "documents") for ns in specific_prefix_result)
    suffix_result = store.list_namespaces(suffix=("public", test_pref))
    assert len(suffix_result) == 4
    assert all(ns[-2] == "public" for ns in suffix_result)
    prefix_suffix_result = store.list_namespaces(prefix=(test_pref, "test"), suffix=("public", test_pref))
    assert len(prefix_suffix_result) == 2
    assert all(ns[1] == "test" and ns[-2] == "public" for ns in prefix_suffix_result)
    wildcard_prefix_result = store.list_namespaces(prefix=(test_pref, "*", "documents"))
    assert len(wildcard_prefix_result) == 5
    assert all(ns[2] == "documents" for ns in wildcard_prefix_result)
    wildcard_suffix_result = store.list_namespaces(suffix=("*", "public", test_pref))
    assert len(wildcard_suffix_result) == 4
    assert all(ns[-2] == "public" for ns in wildcard_suffix_result)
    wildcard_single = store.list_namespaces(suffix=("some", "*", "public", test_pref))
    assert len(wildcard_single) == 1
    assert wildcard_single[0] == (test_pref, "prod", "documents", "some", "nesting", "public", test_pref)
    max_depth_result = store.list_namespaces(max_depth=3)
    assert all(len(ns) <= 3 for ns in max_depth_result)
    max_depth_result = store.list_namespaces(max_depth=4, prefix=(test_pref, "*", "documents"))
    assert len(set(max_depth_result)) == len(max_depth_result) == 5
    limit_result = store.list_namespaces(prefix=(test_pref,), limit=3)
    assert len(limit_result) == 3
    offset_result = store.list_namespaces(prefix=(test_pref,), offset=3)
    assert len(offset_result) == len(test_namespaces) - 3
    empty_prefix_result = store.list_namespaces(prefix=(test_pref,))
    assert len(empty_prefix_result) == len(test_namespaces)
    assert set(empty_prefix_result) == set(test_namespaces)
    for namespace in test_namespaces:
        store.delete(namespace, "dummy")


def test_search_items(store: MnemoniteStore) -> None:
    base = "test_search_items"
    test_namespaces = [
        (base, "documents", "user1"),
        (base, "documents", "user2"),
        (base, "reports", "department1"),
        (base, "reports", "department2"),
    ]
    test_items = [
        {"title": "Doc 1", "author": "John Doe", "tags": ["important"]},
        {"title": "Doc 2", "author": "Jane Smith", "tags": ["draft"]},
        {"title": "Report A", "author": "John Doe", "tags": ["final"]},
        {"title": "Report B", "author": "Alice Johnson", "tags": ["draft"]},
    ]
    for ns, item in zip(test_namespaces, test_items, strict=False):
        store.put(ns, f"item_{ns[-1]}", item)
    docs = store.search((base, "documents"))
    assert len(docs) == 2
    assert all(item.namespace[1] == "documents" for item in docs)
    reports = store.search((base, "reports"))
    assert len(reports) == 2
    assert all(item.namespace[1] == "reports" for item in reports)
    first_page = store.search((base,), limit=2, offset=0)
    second_page = store.search((base,), limit=2, offset=2)
    assert len(first_page) == 2
    assert len(second_page) == 2
    assert {item.key for item in first_page}.isdisjoint({item.key for item in second_page})
    assert len(store.search((base,))) == 4
    john_items = store.search((base,), filter={"author": "John Doe"})
    assert len(john_items) == 2
    assert all(item.value["author"] == "John Doe" for item in john_items)
    draft_items = store.search((base,), filter={"tags": ["draft"]})
    assert len(draft_items) == 2
    assert all("draft" in item.value["tags"] for item in draft_items)
    for ns in test_namespaces:
        store.delete(ns, f"item_{ns[-1]}")


def test_search_namespace_segment_boundary(store: MnemoniteStore) -> None:
    for namespace in [("foo",), ("foo", "child"), ("foo", "child", "deep"), ("foobar",), ("foobar", "baz"), ("foo2",)]:
        store.put(namespace, "k", {"v": 1})

    def _namespaces(prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
        return {item.namespace for item in store.search(prefix, limit=100)}

    assert _namespaces(("foo",)) == {("foo",), ("foo", "child"), ("foo", "child", "deep")}
    assert _namespaces(("foobar",)) == {("foobar",), ("foobar", "baz")}
    assert _namespaces(("foo2",)) == {("foo2",)}
    assert _namespaces(("fo",)) == set()


def test_search_namespace_wildcard_chars_are_literal(store: MnemoniteStore) -> None:
    for namespace in [("user_1",), ("user_1", "child"), ("userX1",), ("a%b",), ("axxb",), ("star*",), ("starX",)]:
        store.put(namespace, "k", {"v": 1})

    def _namespaces(prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
        return {item.namespace for item in store.search(prefix, limit=100)}

    assert _namespaces(("user_1",)) == {("user_1",), ("user_1", "child")}
    assert _namespaces(("a%b",)) == {("a%b",)}
    assert _namespaces(("star*",)) == {("star*",)}


def test_search_namespace_is_case_sensitive(store: MnemoniteStore) -> None:
    store.put(("Foo",), "k", {"v": "upper"})
    store.put(("foo",), "k", {"v": "lower"})
    assert {item.namespace for item in store.search(("foo",), limit=100)} == {("foo",)}
    assert {item.namespace for item in store.search(("Foo",), limit=100)} == {("Foo",)}


def test_list_namespaces_segment_boundary(store: MnemoniteStore) -> None:
    for namespace in [("foo",), ("foo", "child"), ("foobar",), ("foobar", "baz"), ("uid", "users", "alice"),
                      ("uid", "users", "malice"), ("uid", "a", "b", "alice")]:  # fmt: skip
        store.put(namespace, "k", {"v": 1})
    assert set(store.list_namespaces(prefix=["foo"], limit=100)) == {("foo",), ("foo", "child")}  # type: ignore[arg-type]
    assert set(store.list_namespaces(suffix=["alice"], limit=100)) == {  # type: ignore[arg-type]
        ("uid", "users", "alice"),
        ("uid", "a", "b", "alice"),
    }
    assert set(store.list_namespaces(prefix=["uid", "*", "alice"], limit=100)) == {("uid", "users", "alice")}  # type: ignore[arg-type]
    assert set(store.list_namespaces(prefix=["uid"], limit=100)) == {  # type: ignore[arg-type]
        ("uid", "users", "alice"),
        ("uid", "users", "malice"),
        ("uid", "a", "b", "alice"),
    }


def test_search_empty_prefix_is_unconstrained(store: MnemoniteStore) -> None:
    for namespace in [("a",), ("b", "c"), ("d", "e", "f")]:
        store.put(namespace, "k", {"v": 1})
    assert {item.namespace for item in store.search((), limit=100)} == {("a",), ("b", "c"), ("d", "e", "f")}


# -- mnemonite's own promises -----------------------------------------------------------------------


def test_semantic_search_ranks_by_meaning_and_scores(store: MnemoniteStore) -> None:
    store.put(("memories",), "m1", {"text": "The user is allergic to peanuts"})
    store.put(("memories",), "m2", {"text": "The user's favourite colour is green"})
    store.put(("memories", "work"), "m3", {"text": "The user works on a billing service in Go"})
    hits = store.search(("memories",), query="food allergy", limit=3)
    assert hits[0].key == "m1" and hits[0].score is not None and hits[0].score > 0
    assert [hit.key for hit in store.search(("memories", "work"), query="programming language")] == ["m3"]
    filtered = store.search(("memories",), query="user", filter={"text": {"$ne": "The user is allergic to peanuts"}})
    assert "m1" not in {hit.key for hit in filtered} and filtered


def test_filters_compare_values(store: MnemoniteStore) -> None:
    for key, score in (("a", 1), ("b", 5), ("c", 9)):
        store.put(("scores",), key, {"score": score, "meta": {"level": score // 4}})
    assert {i.key for i in store.search(("scores",), filter={"score": {"$gt": 1, "$lte": 9}})} == {"b", "c"}
    assert {i.key for i in store.search(("scores",), filter={"meta.level": 2})} == {"c"}
    with pytest.raises(InvalidInputError, match="operators"):
        store.search(("scores",), filter={"score": {"$regex": "x"}})


def test_an_update_keeps_history_and_a_delete_forgets(store: MnemoniteStore, memory: SyncMemory) -> None:
    store.put(("prefs",), "drink", {"text": "likes tea"})
    first = store.get(("prefs",), "drink")
    store.put(("prefs",), "drink", {"text": "likes coffee"})
    second = store.get(("prefs",), "drink")
    assert first is not None and second is not None and second.created_at == first.created_at
    store.delete(("prefs",), "drink")
    scope = Scope(user="alice", agent="prefs")
    assert [f.text for f in memory.semantic.facts(scope, as_of=first.updated_at)] == ["likes tea"]
    assert [f.text for f in memory.semantic.facts(scope, as_of=second.updated_at)] == ["likes coffee"]
    assert memory.semantic.facts(scope) == []


def test_stores_of_two_users_never_meet(memory: SyncMemory) -> None:
    alice, bob = MnemoniteStore(memory, user="alice"), MnemoniteStore(memory, user="bob")
    alice.put(("notes",), "k", {"text": "alice's secret"})
    assert bob.get(("notes",), "k") is None
    assert bob.search((), query="secret") == [] and bob.search(()) == [] and bob.list_namespaces() == []
    bob.delete(("notes",), "k")
    assert alice.get(("notes",), "k") is not None


def test_bad_items_change_nothing(store: MnemoniteStore) -> None:
    with pytest.raises(InvalidInputError):
        store.put(("notes",), "k", "not a dict")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"[Nn]amespace"):
        store.put((), "k", {"v": 1})
    assert store.list_namespaces() == []


async def test_the_async_api_over_memory(memory_url: str) -> None:
    async with await Memory.open(memory_url) as mem:
        store = MnemoniteStore(mem, user="alice")
        await store.aput(("notes",), "k", {"text": "async works"})
        item = await store.aget(("notes",), "k")
        assert item is not None and item.value == {"text": "async works"}
        assert [i.key for i in await store.asearch(("notes",), query="async")] == ["k"]
        assert await store.alist_namespaces() == [("notes",)]
        await store.adelete(("notes",), "k")
        assert await store.aget(("notes",), "k") is None
        with pytest.raises(InvalidInputError, match="async API"):
            store.get(("notes",), "k")
