"""``mnemonite consolidate --phase / --status / --watch`` over a real SQLite file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mnemonite import CustomTierMisconfiguredError, Episode, MemoryConfig, Scope, SyncMemory
from mnemonite.cli import app

runner = CliRunner()
JO = Scope(user="jo", agent="chat")


@pytest.fixture
def url(tmp_path: Path) -> str:
    path = str(tmp_path / "cli.db")
    with SyncMemory.open(path, config=MemoryConfig(embedder="none")) as mem:
        mem.episodic.put_many(
            [Episode(content=f"I visited town number {i}.", source_node="jo") for i in range(20)],
            user="jo", session="s1", agent="chat",
        )  # fmt: skip
    return path


def invoke(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, list(args), env={"MNEMONITE_EMBEDDER": "none"})
    assert result.exit_code == code, result.output
    return result.output


def test_phase_runs_one_phase_now(url: str) -> None:
    out = invoke("--db", url, "consolidate", "--phase", "standard")
    assert "standard" in out and "admitted" in out
    [report] = json.loads(invoke("--db", url, "consolidate", "--phase", "standard", "--json"))
    assert (report["phase"], report["jobs"]) == ("standard", 0)  # already done
    with SyncMemory.open(url, config=MemoryConfig(embedder="none")) as mem:
        assert len(mem.semantic.facts(JO, limit=100)) == 20


def test_status_shows_tier_usage_and_jobs(url: str) -> None:
    invoke("--db", url, "consolidate", "--phase", "light", "--user", "jo")
    out = invoke("--db", url, "consolidate", "--status")
    assert "tier free" in out and "none (rule-based)" in out
    status = json.loads(invoke("--db", url, "consolidate", "--status", "--json"))
    assert (status["tier"], status["phases"], status["jobs"][0]["done"]) == ("free", ["light", "standard", "deep"], 1)
    assert status["model_phases"] == ["light"]
    assert status["usage"][0]["runs"] == 1


def test_options_are_one_at_a_time_and_phases_are_named(url: str) -> None:
    assert "one of" in invoke("--db", url, "consolidate", "--status", "--watch", code=2)
    assert "nap" in invoke("--db", url, "consolidate", "--phase", "nap", code=2)


def test_the_environment_sets_the_tier(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    status = json.loads(invoke("--db", url, "consolidate", "--status", "--json"))
    assert status["tier"] == "free"
    result = runner.invoke(app, ["--db", url, "consolidate", "--status", "--json"],
                           env={"MNEMONITE_EMBEDDER": "none", "MNEMONITE_CONSOLIDATOR_TIER": "cheap"})  # fmt: skip
    assert json.loads(result.output)["max_tokens_per_day"] == 50_000
    result = runner.invoke(app, ["--db", url, "consolidate", "--status"],
                           env={"MNEMONITE_EMBEDDER": "none", "MNEMONITE_CONSOLIDATOR_TIER": "custom"})  # fmt: skip
    assert result.exit_code == 1 and "custom consolidator tier must set" in result.output
    assert isinstance(result.exception, SystemExit)
    assert CustomTierMisconfiguredError.__name__ not in result.output  # one line, no traceback


def test_watch_runs_on_the_cadence_and_stops_cleanly_on_ctrl_c(url: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "MNEMONITE_EMBEDDER": "none"}
    script = "from mnemonite.cli import main; main()"
    command = [sys.executable, "-c", script, "--db", url, "consolidate", "--watch", "--poll", "0.2", "--json"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        report = json.loads(proc.stdout.readline())  # light: 20 new messages, the free tier's cadence
        assert (report["phase"], report["summaries"]) == ("light", 1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "watching: tier free" in err and err.rstrip().endswith("stopped")
