"""SyncMemory and MemoryConfig."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ep
from mnemonite import ConfigurationError, ConsolidationRule, Memory, MemoryConfig, Scope, StoreError, SyncMemory


def test_sync_memory_end_to_end(tmp_path: Path) -> None:
    with SyncMemory.open(f"sqlite:///{tmp_path / 'm.db'}") as mem:
        mem.episodic.put(ep("e1", "Paris", subject="a", predicate="p"), user="u", session="s", agent="g")
        assert [e.id for e in mem.episodic.recent("u")] == ["e1"]
        deltas = mem.episodic.consolidate(ConsolidationRule(id="r"))
        mem.semantic.apply_deltas(deltas)
        assert [f.text for f in mem.semantic.facts(Scope(user="u", agent="g"))] == ["Paris"]
        assert mem.health().fact_count == 1


def test_open_without_url_uses_the_default_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with SyncMemory.open() as mem:
        assert mem.config.url == "sqlite:///mnemonite.db"
    assert (tmp_path / "mnemonite.db").exists()


def test_config_from_env() -> None:
    env = {"MNEMONITE_URL": "sqlite:///x.db", "MNEMONITE_TRACK_ACCESS": "off", "MNEMONITE_CONSOLIDATE_ON_PUT": "yes"}
    config = MemoryConfig.from_env(env)
    assert (config.url, config.track_access, config.consolidate_on_put) == ("sqlite:///x.db", False, True)
    assert MemoryConfig.from_env({}, url="sqlite:///y.db").url == "sqlite:///y.db"
    assert MemoryConfig.from_env({}).url == "sqlite:///mnemonite.db"
    with pytest.raises(ConfigurationError, match="MNEMONITE_TRACK_ACCESS"):
        MemoryConfig.from_env({"MNEMONITE_TRACK_ACCESS": "maybe"})
    env = {
        "MNEMONITE_INDEX_IN_BACKGROUND": "0",
        "MNEMONITE_INDEX_ON_CLOSE": "false",
        "MNEMONITE_EMBEDDER": "none",
        "MNEMONITE_EMBEDDER_STRATEGY": "auto-migrate",
    }
    config = MemoryConfig.from_env(env)
    assert (config.index_in_background, config.embedder, config.embedder_strategy) == (False, "none", "auto-migrate")
    assert config.index_on_close is False and MemoryConfig().index_on_close is True
    with pytest.raises(ConfigurationError, match="embedder"):
        MemoryConfig.from_env({"MNEMONITE_EMBEDDER": "bert"})
    with pytest.raises(ConfigurationError):
        MemoryConfig(max_episodes_per_run=0)


def test_model_cache_directory_from_env() -> None:
    from mnemonite.config import default_cache_dir

    assert default_cache_dir({"MNEMONITE_CACHE_DIR": "/srv/cache", "XDG_CACHE_HOME": "/x"}) == Path("/srv/cache")
    assert default_cache_dir({"XDG_CACHE_HOME": "/x"}) == Path("/x/mnemonite")
    assert default_cache_dir({}) == Path.home() / ".cache" / "mnemonite"


def test_track_access_can_be_switched_off(tmp_path: Path) -> None:
    config = MemoryConfig(url=f"sqlite:///{tmp_path / 'm.db'}", track_access=False)
    with SyncMemory.open(config=config) as mem:
        mem.episodic.put(ep("e1"), user="u", session="s", agent="g")
        mem.episodic.recent("u")
        assert mem.episodic.get("e1").access_count == 0


def test_a_closed_memory_closes_again_quietly_and_refuses_the_rest(tmp_path: Path) -> None:
    with SyncMemory.open(f"sqlite:///{tmp_path / 'm.db'}") as mem:
        mem.episodic.put(ep("e1"), user="u", session="s", agent="a")
        mem.close()
    mem.close()
    with pytest.raises(StoreError, match="closed"):
        mem.episodic.recent("u")


async def test_an_async_memory_closed_twice_is_closed_once(tmp_path: Path) -> None:
    async with await Memory.open(f"sqlite:///{tmp_path / 'm.db'}") as mem:
        await mem.close()
    with pytest.raises(StoreError, match="closed"):
        await mem.episodic.recent("u")


EXITS_OPEN = """
import sys
from mnemonite import MemoryConfig, Scope, SyncMemory

mem = SyncMemory.open(config=MemoryConfig(url=sys.argv[1], index_on_close=False))
tools = mem.tools.for_scope(Scope(user="alice", agent="a"))
for i in range(40):  # the background indexer is embedding these when the script ends
    tools.call("fact_remember", {"text": f"alice keeps note {i} about the garden"})
print("done")
"""


def test_a_memory_left_open_is_closed_at_exit_with_its_audit_rows(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    ran = subprocess.run([sys.executable, "-c", EXITS_OPEN, url], capture_output=True, text=True, timeout=120)
    assert (ran.returncode, ran.stdout.strip()) == (0, "done"), ran.stderr
    assert "Task was destroyed" not in ran.stderr and "terminate" not in ran.stderr, ran.stderr
    with SyncMemory.open(url, embedder=None) as mem:
        calls = mem.tools.calls(Scope(user="alice", agent="a"), limit=100)
        assert [(c.tool, c.outcome) for c in calls] == [("fact_remember", "ok")] * 40
