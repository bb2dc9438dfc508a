"""Sensitivity on every episode and fact, and redaction of secret text wherever it leaves memory."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from conftest import ep
from embedding_server import chat_server
from mnemonite import (
    ConfigurationError,
    ConsolidationRule,
    Episode,
    InvalidInputError,
    Memory,
    MemoryConfig,
    OpenAIJudge,
    Scope,
    SensitivityError,
    SyncMemory,
)
from mnemonite.models.conflict import JudgeVerdict
from mnemonite.privacy import MARKER, Reveal, check_reveal, redact, redact_record
from mnemonite.transfer import export_memory, import_memory

ALEX = Scope(user="alex", agent="a")
SECRET = "My diagnosis is hypothyroidism"  # tagged secret: nothing in it is recognised on its own


async def test_every_episode_and_fact_carries_a_sensitivity(mem_on_both: Memory) -> None:
    mem = mem_on_both
    await mem.episodic.put(ep("plain", "I had lunch"), user="alex", session="s", agent="a")
    await mem.episodic.put(Episode(id="pin", content=SECRET, sensitivity="secret"), user="alex", session="s", agent="a")
    assert (await mem.episodic.get("plain")).sensitivity == "internal"
    assert (await mem.episodic.get("pin")).sensitivity == "secret"
    fact = await mem.semantic.remember(ALEX, SECRET, sensitivity="secret")
    assert fact.sensitivity == "secret" and (await mem.semantic.get(fact.id)).sensitivity == "secret"
    public = await mem.semantic.remember(ALEX, "I like hiking", sensitivity="public")
    newer = await mem.semantic.supersede(public.id, "I like climbing")
    assert newer.sensitivity == "public"  # a new version keeps the old one's sensitivity


async def test_unknown_sensitivity_is_a_typed_error_and_writes_nothing(mem_on_both: Memory) -> None:
    mem = mem_on_both
    with pytest.raises(SensitivityError, match="public, internal, secret"):
        Episode(content="x", sensitivity="top-secret")  # type: ignore[arg-type]
    # refused at the boundary, naming the argument (SensitivityError is an InvalidInputError too)
    with pytest.raises(InvalidInputError, match="sensitivity='hidden' must be one of 'public', 'internal', 'secret'"):
        await mem.semantic.remember(ALEX, "I live in Oslo", sensitivity="hidden")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="sensitivity"):
        await mem.semantic.remember(ALEX, "I live in Oslo", sensitivity="SECRET")  # type: ignore[arg-type]
    assert await mem.semantic.facts(ALEX) == [] and await mem.semantic.conflicts(ALEX) == []
    with pytest.raises(ConfigurationError):
        MemoryConfig(episodic_sensitivity="classified")  # type: ignore[arg-type]


async def test_the_default_sensitivity_is_set_per_tier_in_config(tmp_path: Path) -> None:
    config = MemoryConfig(
        url=f"sqlite:///{tmp_path / 'm.db'}", episodic_sensitivity="secret", semantic_sensitivity="public"
    )
    async with await Memory.open(config=config, embedder=None) as mem:
        stored = await mem.episodic.put(ep("e1", "I had lunch"), user="alex", session="s", agent="a")
        chosen = await mem.episodic.put(Episode(id="e2", content="hi", sensitivity="public"), user="alex",
                                        session="s", agent="a")  # fmt: skip
        fact = await mem.semantic.remember(ALEX, "I like tea")
    assert (stored.sensitivity, chosen.sensitivity, fact.sensitivity) == ("secret", "public", "public")


def test_reveal_is_an_explicit_capability_object() -> None:
    assert redact(SECRET, "secret") == MARKER and redact(SECRET, "internal") == SECRET
    assert redact(SECRET, "secret", Reveal("backup")) == SECRET
    for fake in (True, "yes", 1, {"reason": "x"}):
        with pytest.raises(InvalidInputError, match="Reveal capability"):
            check_reveal(fake)
        with pytest.raises(InvalidInputError):
            redact(SECRET, "secret", fake)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="reason"):
        Reveal("  ")
    hidden = redact_record(Episode(content=SECRET, sensitivity="secret", metadata={"object": "hypothyroidism"}))
    assert (hidden.content, hidden.metadata) == (MARKER, {})


async def secret_memory(url: str) -> None:
    async with await Memory.open(config=MemoryConfig(url=url), embedder=None) as mem:
        await mem.episodic.put(Episode(id="pin", content=SECRET, sensitivity="secret"), user="alex", session="s",
                               agent="a")  # fmt: skip
        await mem.episodic.put(ep("lunch", "I had lunch"), user="alex", session="s", agent="a")
        await mem.semantic.remember(ALEX, SECRET, sensitivity="secret")
        await mem.semantic.remember(ALEX, "I like tea")
        tools = mem.tools.for_scope(Scope(user="alex", agent="a", session="s"))
        assert (await tools.call("fact_search", {"query": "diagnosis"})).ok


async def test_exports_redact_secret_text_by_default_and_cannot_restore(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    await secret_memory(url)
    await export_memory(url, tmp_path / "shared.jsonl")
    text = (tmp_path / "shared.jsonl").read_text()
    assert "hypothyroidism" not in text and MARKER in text and "I like tea" in text and "I had lunch" in text
    assert json.loads(text.splitlines()[0])["redacted"] is True
    with pytest.raises(InvalidInputError, match="--reveal"):
        await import_memory(tmp_path / "shared.jsonl", f"sqlite:///{tmp_path / 'other.db'}")
    assert not (tmp_path / "other.db").exists()


async def test_a_backup_with_reveal_round_trips(tmp_path: Path, postgres_url: str) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    await secret_memory(url)
    one = await export_memory(url, tmp_path / "backup.jsonl", reveal=Reveal("nightly backup"))
    assert "hypothyroidism" in (tmp_path / "backup.jsonl").read_text()
    await import_memory(tmp_path / "backup.jsonl", postgres_url)
    two = await export_memory(postgres_url, tmp_path / "again.jsonl", reveal=Reveal("check"))
    assert two.sha256 == one.sha256
    async with await Memory.open(config=MemoryConfig(url=postgres_url), embedder=None) as mem:
        assert (await mem.episodic.get("pin")).content == SECRET


async def test_no_environment_variable_or_config_turns_redaction_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    await secret_memory(url)
    for name in ("MNEMONITE_REVEAL", "MNEMONITE_REDACTION", "MNEMONITE_REDACT", "MNEMONITE_NO_REDACTION"):
        monkeypatch.setenv(name, "0" if "REDACT" in name and "NO" not in name else "1")
    assert all(key in os.environ for key in ("MNEMONITE_REVEAL", "MNEMONITE_REDACTION"))
    for field in ("redaction", "reveal", "redact"):
        with pytest.raises(ConfigurationError):
            MemoryConfig(**{field: False})
    MemoryConfig.from_env()  # the variables are ignored, not read as a switch
    await export_memory(url, tmp_path / "out.jsonl")
    assert "hypothyroidism" not in (tmp_path / "out.jsonl").read_text()


async def test_conflict_spans_carry_no_secret_text(mem: Memory) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    original = trace.get_tracer
    trace.get_tracer = lambda *args, **kwargs: tracer  # type: ignore[assignment]
    try:
        await mem.semantic.remember(ALEX, "I live in Berlin", sensitivity="secret")
        await mem.semantic.remember(ALEX, "I moved to Rome", sensitivity="secret")
    finally:
        trace.get_tracer = original  # type: ignore[assignment]
    spans = exporter.get_finished_spans()
    attributes = [dict(s.attributes or {}) for s in spans]
    assert [a["mnemonite.sensitivity"] for a in attributes] == ["secret", "secret"]
    assert attributes[1]["mnemonite.decision"] == "supersede"
    assert all("Rome" not in str(v) and "Berlin" not in str(v) for a in attributes for v in a.values())


class _Admit:
    async def judge(self, candidate: Any, existing: Any) -> JudgeVerdict:
        return JudgeVerdict(kind="admit", target_id=None, reason="admit")


async def test_the_judge_endpoint_never_sees_secret_text(mem: Memory) -> None:
    mem.semantic.judge = _Admit()  # what parsing cannot settle is left pending for a judge
    await mem.semantic.remember(ALEX, "My team ships the mobile app every Friday", sensitivity="secret")
    pending = await mem.semantic.remember_with_decision(ALEX, "Our app release process is quite slow",
                                                        sensitivity="secret")  # fmt: skip
    assert pending.kind == "pending"
    answer = json.dumps({"kind": "admit", "target_id": None, "reason": "separate"})
    with chat_server(lambda body: answer) as (url, seen):
        judge = OpenAIJudge(url, "judge-model")
        [decision] = await mem.semantic.resolve_pending(ALEX, judge)
        await judge.aclose()
    prompt = seen[0]["messages"][1]["content"]
    assert decision.kind == "admit" and MARKER in prompt
    assert "Friday" not in prompt and "slow" not in prompt


async def test_log_lines_carry_no_secret_text(mem: Memory, caplog: pytest.LogCaptureFixture) -> None:
    """mnemonite's own loggers (a driver's DEBUG log, aiosqlite's, prints statement parameters: keep it off)."""
    caplog.set_level(logging.DEBUG, logger="mnemonite")
    tools = mem.tools.for_scope(Scope(user="alex", agent="a", session="s"))
    await tools.call("fact_remember", {"text": SECRET, "sensitivity": "secret"})
    await tools.call("fact_remember", {"text": "My diagnosis is now Graves disease", "sensitivity": "secret"})
    await tools.call("fact_search", {"query": "diagnosis"})
    await mem.episodic.put(Episode(content=SECRET, sensitivity="secret"), user="alex", session="s", agent="a")
    failing = mem.tools.for_scope(Scope(user="alex", agent="a"))
    await failing.call("conversation_search", {"query": "hypothyroidism"})
    await mem.tools.calls("alex")
    ours = [r.getMessage() for r in caplog.records if r.name.startswith("mnemonite")]
    assert not any("hypothyroidism" in line or "Graves" in line for line in ours)


def test_the_cli_exports_redacted_unless_given_a_reason(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mnemonite.cli import app

    db = tmp_path / "m.db"
    with SyncMemory.open(f"sqlite:///{db}", config=MemoryConfig(embedder="none")) as mem:
        mem.episodic.put(Episode(id="pin", content=SECRET, sensitivity="secret"), user="alex", session="s", agent="a")
    runner = CliRunner()
    shared = runner.invoke(app, ["--db", str(db), "export", str(tmp_path / "shared.jsonl")])
    assert shared.exit_code == 0 and "hypothyroidism" not in (tmp_path / "shared.jsonl").read_text()
    refused = runner.invoke(app, ["--db", str(tmp_path / "b.db"), "import", str(tmp_path / "shared.jsonl")])
    assert refused.exit_code == 1 and "--reveal" in refused.stderr
    backup = runner.invoke(app, ["--db", str(db), "export", str(tmp_path / "backup.jsonl"), "--reveal", "backup"])
    assert backup.exit_code == 0 and "hypothyroidism" in (tmp_path / "backup.jsonl").read_text()
    restored = runner.invoke(
        app, ["--db", str(tmp_path / "c.db"), "--no-embed", "import", str(tmp_path / "backup.jsonl")]
    )
    assert restored.exit_code == 0, restored.output


async def test_a_fact_promoted_from_a_secret_episode_is_secret(mem_on_both: Memory) -> None:
    mem = mem_on_both
    meta = {"subject": "alex", "predicate": "diagnosis", "object": "hypothyroidism"}
    await mem.episodic.put(Episode(id="pin", content=SECRET, sensitivity="secret", metadata=meta), user="alex",
                           session="s", agent="a")  # fmt: skip
    await mem.episodic.put(Episode(id="tea", content="I like tea", metadata={"subject": "alex", "predicate": "likes",
                           "object": "tea"}), user="alex", session="s", agent="a")  # fmt: skip
    await mem.consolidate(ConsolidationRule(id="nightly", cadence={"every": 1}))
    levels = {f.text: f.sensitivity for f in await mem.semantic.facts(ALEX)}
    assert levels == {SECRET: "secret", "I like tea": "internal"}


@given(level=st.text(max_size=12).filter(lambda text: text not in ("public", "internal", "secret")))
def test_any_other_sensitivity_is_refused(level: str) -> None:
    with pytest.raises(InvalidInputError):  # SensitivityError, or the NUL check that runs first
        Episode(content="x", sensitivity=level)  # type: ignore[arg-type]


@given(text=st.text(min_size=1, max_size=200).filter(lambda t: "\x00" not in t))  # NUL is refused on write
def test_secret_text_never_leaves_without_a_reveal(text: str) -> None:
    assert redact(text, "secret") == MARKER and redact(text, "internal") == text == redact(text, "public")
    assert redact(text, "secret", Reveal("shown to its owner")) == text
    hidden = redact_record(Episode(content=text if text.strip() else "x", sensitivity="secret"))
    assert hidden.content == MARKER
