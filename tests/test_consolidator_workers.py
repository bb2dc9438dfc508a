"""Several consolidator processes on one memory split the work: no job runs twice, nothing is promoted twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mnemonite import Episode, MemoryConfig, Scope, SyncMemory

# Each worker opens the memory, then waits for the others (a file per ready worker), so they run at once.
WORKER = """
import json, os, sys, time
from pathlib import Path
from mnemonite import MemoryConfig, SyncMemory
url, gate, count = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
with SyncMemory.open(url, config=MemoryConfig(embedder="none", index_on_close=False)) as mem:
    (gate / str(os.getpid())).touch()
    while len(list(gate.iterdir())) < count:
        time.sleep(0.01)
    reports = mem.consolidator.run("standard")
print(json.dumps([r.model_dump() for r in reports]))
"""
SESSIONS = 24
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def _fill(url: str) -> None:
    with SyncMemory.open(url, config=MemoryConfig(embedder="none")) as mem:
        for s in range(SESSIONS):
            mem.episodic.put_many([
                Episode(id=f"s{s}-{i}", content=f"I visited city{s}x{i} on day {i}.", source_node="jo",
                        timestamp=T0 + timedelta(hours=s, minutes=i), user="jo", session=f"s{s}", agent="chat")
                for i in range(3)
            ])  # fmt: skip


def _run_workers(url: str, count: int, gate: Path) -> list[dict[str, int]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    gate.mkdir()
    command = [sys.executable, "-c", WORKER, url, str(gate), str(count)]
    procs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
             for _ in range(count)]  # fmt: skip
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        reports.extend(json.loads(out))
    return reports


def _check(url: str, reports: list[dict[str, int]]) -> None:
    assert sum(r["jobs"] for r in reports) == SESSIONS
    assert sum(r["turns"] for r in reports) == SESSIONS * 3
    assert sum(r["deduplicated"] for r in reports) == 0  # no statement was sent twice
    _check_memory(url)


def _check_memory(url: str) -> None:
    """Every message promoted once, every job done."""
    with SyncMemory.open(url, config=MemoryConfig(embedder="none")) as mem:
        facts = mem.semantic.facts(Scope(user="jo", agent="chat"), limit=1000)
        assert len(facts) == SESSIONS * 3 == len({f.text for f in facts})
        assert all(len(f.source_episode_ids) == 1 for f in facts)
        assert [(j.phase, j.waiting, j.done) for j in mem.consolidator.status().jobs] == [("standard", 0, SESSIONS)]


def test_several_processes_split_the_work_on_postgresql(postgres_url: str, tmp_path: Path) -> None:
    _fill(postgres_url)
    reports = _run_workers(postgres_url, 3, tmp_path / "gate")
    assert sum(1 for r in reports if r["jobs"]) >= 2  # the work was shared, not done by one
    _check(postgres_url, reports)


def test_two_consolidators_on_one_sqlite_file_never_promote_twice(tmp_path: Path) -> None:
    url = str(tmp_path / "m.db")
    _fill(url)
    _check(url, _run_workers(url, 2, tmp_path / "gate"))


# The worker process dies (no cleanup, no release) right after its fourth fact is written,
# before its checkpoint moves past that message.
DYING = """
import os, sys
from mnemonite import ConsolidatorConfig, MemoryConfig, SyncMemory
config = MemoryConfig(embedder="none", consolidator=ConsolidatorConfig(lease_seconds=0.5))
mem = SyncMemory.open(sys.argv[1], config=config)
tier = mem._memory.semantic
original, calls = tier.remember_with_decision, []
async def dying(*args, **kwargs):
    decision = await original(*args, **kwargs)
    calls.append(decision)
    if len(calls) == 4:
        os._exit(9)
    return decision
tier.remember_with_decision = dying
mem.consolidator.run("standard")
"""


def test_a_worker_process_killed_mid_phase_is_resumed_and_nothing_is_promoted_twice(tmp_path: Path) -> None:
    url = str(tmp_path / "m.db")
    _fill(url)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    died = subprocess.run([sys.executable, "-c", DYING, url], env=env, capture_output=True, timeout=120, check=False)
    assert died.returncode == 9, died.stderr
    with SyncMemory.open(url, config=MemoryConfig(embedder="none")) as mem:
        assert len(mem.semantic.facts(Scope(user="jo", agent="chat"), limit=1000)) == 4
    time.sleep(0.6)  # the dead worker's lease ends
    with SyncMemory.open(url, config=MemoryConfig(embedder="none")) as mem:
        [report] = mem.consolidator.run("standard")
        assert report.deduplicated == 1  # the message it died on is sent again: an exact duplicate, a no-op
        assert report.admitted == SESSIONS * 3 - 4
    _check_memory(url)
