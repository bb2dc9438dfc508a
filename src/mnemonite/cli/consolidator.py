"""``mnemonite consolidate --phase / --status / --watch``: the background consolidator from the shell."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from enum import StrEnum
from typing import TYPE_CHECKING

from mnemonite.cli._common import console, e, emit_one, emit_rows, err, opened, say, table

if TYPE_CHECKING:  # `mnemonite --help` does not load the models
    from mnemonite.models.consolidator import ConsolidatorStatus, PhaseReport


class PhaseName(StrEnum):
    light = "light"
    standard = "standard"
    deep = "deep"


def run_phase(db: str | None, phase: PhaseName, user: str | None, as_json: bool) -> None:
    """Run one phase now and print what it did."""
    with opened(db, create=False) as mem:
        reports = mem.consolidator.run(phase.value, user=user)
    if not emit_rows(reports, as_json=as_json):
        _reports(reports)


def show_status(db: str | None, as_json: bool) -> None:
    """Print the tier, today's usage against the ceilings and the jobs waiting."""
    with opened(db, create=False) as mem:
        status = mem.consolidator.status()
    if not emit_one(status, as_json=as_json):
        _status(status)


def watch(db: str | None, poll: float, as_json: bool) -> None:
    """Run the enabled phases on their cadences until Ctrl-C; one line per phase run."""
    tell = err.print if as_json else say  # with --json, stdout holds only the reports
    with opened(db, create=False) as mem:
        status = mem.consolidator.status()
        tell(f"watching: tier {e(status.tier)}, phases {e(', '.join(status.phases))}; Ctrl-C stops")
        mem.consolidator.watch(poll_seconds=poll, on_report=lambda r: _line(r, as_json))
    tell("stopped")


def _line(report: PhaseReport, as_json: bool) -> None:
    if not emit_one(report, as_json=as_json):
        _reports([report])
    sys.stdout.flush()  # a worker's log is read as it happens


def _reports(reports: Sequence[PhaseReport]) -> None:
    rows = [
        (r.phase, r.jobs, r.turns, r.statements, r.admitted, r.deduplicated, r.superseded, r.pending,
         r.summaries + r.topic_episodes + r.patterns + r.procedures, f"{r.tokens} / ${r.cost:.4f}",
         "paused" if r.paused else "done")
        for r in reports
    ]  # fmt: skip
    headers = ("phase", "jobs", "messages", "statements", "admitted", "dedup", "superseded", "pending",
               "summaries etc.", "tokens / cost", "state")  # fmt: skip
    table(headers, rows)


def _status(status: ConsolidatorStatus) -> None:
    console.print(
        f"tier {status.tier}: phases {', '.join(status.phases) or '(none)'}"
        f" (a model may serve: {', '.join(status.model_phases) if status.llm else 'none'}); ceilings"
        f" {status.max_tokens_per_day:,} tokens and ${status.max_cost_per_day:.2f} a day, on exceed"
        f" {status.on_exceed}; model: {status.llm or 'none (rule-based)'}",
        markup=False,
    )
    console.print(
        f"{status.day}: {status.tokens_today:,} tokens, ${status.cost_today:.4f}", markup=False, highlight=False
    )
    usage = [(u.phase, u.runs, u.calls, u.prompt_tokens, u.completion_tokens, f"${u.cost:.4f}") for u in status.usage]
    if usage:
        table(("phase", "runs", "calls", "prompt tokens", "completion tokens", "cost"), usage)
    jobs = [(j.phase, j.waiting, j.claimed, j.done) for j in status.jobs]
    if jobs:
        table(("phase", "waiting", "claimed now", "done"), jobs)
