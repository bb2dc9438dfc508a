"""`Consolidator` (``mem.consolidator``): runs the light, standard and deep phases on demand or on their cadence.

Work is claimed job by job (see `mnemonite.store.sql_consolidator`), so any number of
consolidators — threads, processes, machines — may run against one memory: each job is done
by one of them, and a job whose worker died is taken over when its lease ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime

from croniter import croniter

from mnemonite._time import utcnow
from mnemonite.consolidator.budget import ConsolidatorConfig
from mnemonite.consolidator.deep import deep_job
from mnemonite.consolidator.extract import ENGLISH_STATEMENTS, StatementPack
from mnemonite.consolidator.llm import BudgetedModel, LLMProvider, OpenAIProvider
from mnemonite.consolidator.phases import Context, Tally, flush_pending, light_job, standard_job
from mnemonite.errors import (
    BudgetExceededError,
    ConsolidatorBusyError,
    InvalidInputError,
    LLMProviderError,
    StoreUnavailableError,
)
from mnemonite.inputs import checked
from mnemonite.models.consolidator import (
    PHASES,
    ClaimedJob,
    ConsolidatorStatus,
    JobCounts,
    Phase,
    PhaseReport,
    TopicEpisode,
    Usage,
)
from mnemonite.scope import Scope, as_scope
from mnemonite.store.base import ConsolidatorStore
from mnemonite.tiers.procedural import ProceduralTier
from mnemonite.tiers.semantic import SemanticTier
from mnemonite.tiers.shared import SharedTier

__all__ = ["Consolidator"]

log = logging.getLogger("mnemonite.consolidator")

Job = Callable[[Context, ClaimedJob, Tally], Awaitable[None]]
_JOBS: dict[Phase, Job] = {"light": light_job, "standard": standard_job, "deep": deep_job}


def _worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@checked
class Consolidator:
    """Distils stored conversations into facts, summaries, topic episodes, patterns and procedures.

    ``Consolidator(store, semantic, config)``; `Memory` builds one from ``MemoryConfig.consolidator``
    as ``mem.consolidator``, writing procedures into ``procedural`` and offering facts to the
    groups of ``shared`` (without them, procedures are facts and nothing is shared). ``provider``
    replaces the OpenAI-compatible client the config names (any `LLMProvider`); it is still held to
    the budget.
    """

    def __init__(
        self,
        store: ConsolidatorStore,
        semantic: SemanticTier,
        config: ConsolidatorConfig | None = None,
        *,
        provider: LLMProvider | None = None,
        statements: StatementPack = ENGLISH_STATEMENTS,
        procedural: ProceduralTier | None = None,
        shared: SharedTier | None = None,
    ) -> None:
        self.config = config or ConsolidatorConfig()
        self._store = store
        self._semantic = semantic
        self._statements = statements
        self._procedural, self._shared = procedural, shared
        self.worker = _worker_id()
        self._providers: list[OpenAIProvider] = []
        self._models = {phase: self._model(phase, provider) for phase in PHASES}

    def _model(self, phase: Phase, provider: LLMProvider | None) -> BudgetedModel | None:
        if phase not in self.config.model_phases:
            return None  # the tier keeps this phase rule-based
        if provider is not None:
            return BudgetedModel(provider, self.config, self._store)
        name = self.config.model_for(phase)
        if name is None or self.config.llm_url is None:
            return None
        made = OpenAIProvider(self.config.llm_url, name, api_key=self.config.llm_api_key,
                              timeout=self.config.llm_timeout, retries=self.config.llm_retries)  # fmt: skip
        self._providers.append(made)
        return BudgetedModel(made, self.config, self._store)

    async def run(
        self, phase: Phase | None = None, *, user: str | None = None, max_jobs: int | None = None
    ) -> list[PhaseReport]:
        """Run one phase now (on demand), or every enabled phase (all three unless ``phases`` says otherwise;
        those the tier gives no model run by rules, at no cost).

        ``user`` limits the work to one user's sessions; ``max_jobs`` to that many jobs per phase.
        A phase whose budget is spent under ``on_exceed="pause"`` stops with ``paused=True``; its
        remaining jobs are done by a later run. A model that fails or answers nonsense raises
        `LLMProviderError` and leaves the job it was working on unapplied.
        """
        if phase is not None and phase not in PHASES:
            raise InvalidInputError(f"unknown consolidator phase {phase!r}: light, standard or deep")
        if max_jobs is not None and max_jobs < 1:
            raise InvalidInputError("max_jobs must be at least 1")
        phases = [phase] if phase is not None else list(self.config.enabled)
        return [await self._phase(name, user, max_jobs) for name in phases]

    async def _phase(self, phase: Phase, user: str | None, max_jobs: int | None) -> PhaseReport:
        ctx = Context(self._store, self._semantic, self.config, self._models, self._statements, self._procedural,
                      self._shared)  # fmt: skip
        tally = Tally(phase)
        try:
            while max_jobs is None or tally.counts.get("jobs", 0) < max_jobs:
                job = await self._store.claim_job(
                    phase, self.worker, lease=self.config.lease_seconds, per_user=phase == "deep", user=user
                )
                if job is None:
                    break
                await self._job(ctx, job, tally)
            if phase == "light":
                await flush_pending(ctx, tally, user)
        except BudgetExceededError as error:
            log.warning("consolidator %s phase paused: %s", phase, error)
            tally.counts["paused"] = True
        await self._store.charge_usage(utcnow().date().isoformat(), phase, Usage(phase=phase), run=True)
        return tally.report()

    async def _job(self, ctx: Context, job: ClaimedJob, tally: Tally) -> None:
        try:
            await _JOBS[job.phase](ctx, job, tally)  # type: ignore[index]
        except BaseException:
            await asyncio.shield(self._store.release_job(job))  # the checkpoint stays where it got to
            raise
        tally.add("jobs")

    async def status(self) -> ConsolidatorStatus:
        """Tier, ceilings, today's usage per phase (persisted) and the jobs waiting per phase."""
        day = utcnow().date().isoformat()
        usage = await self._store.usage(day)
        counts: list[JobCounts] = await self._store.job_counts()
        return ConsolidatorStatus(
            tier=self.config.tier, phases=list(self.config.enabled), model_phases=list(self.config.model_phases),
            max_tokens_per_day=self.config.token_ceiling,
            max_cost_per_day=self.config.cost_ceiling, on_exceed=self.config.exceed,
            llm=self.config.llm_url if self._models["standard"] or self._models["light"] else None,
            day=day, usage=usage, tokens_today=sum(u.tokens for u in usage), cost_today=sum(u.cost for u in usage),
            jobs=counts,
        )  # fmt: skip

    async def summaries(self, scope: Scope | str) -> dict[str, str]:
        """The light phase's summary of each of a user's sessions, by session scope key."""
        return await self._store.session_summaries(as_scope(scope).user)

    async def topic_episodes(self, scope: Scope | str) -> list[TopicEpisode]:
        """The standard phase's topic episodes of a user (one agent when the scope names one)."""
        read = as_scope(scope)
        return await self._store.topic_episodes(read.user, read.agent)

    async def due(self, last_runs: dict[Phase, tuple[datetime, int]], now: datetime | None = None) -> list[Phase]:
        """The enabled phases whose cadence says they are due, given when each last ran and the
        episode count then."""
        moment = now or utcnow()
        count = await self._store.episode_count()
        due: list[Phase] = []
        for phase in self.config.enabled:
            cadence = self.config.cadence.get(phase, {"every": 1})
            ran_at, seen = last_runs.get(phase, (moment, 0))
            if ("every" in cadence and count - seen >= int(cadence["every"])) or (
                "cron" in cadence and croniter(cadence["cron"], ran_at).get_next(datetime) <= moment
            ):
                due.append(phase)
        return due

    async def watch(
        self,
        *,
        stop: asyncio.Event | None = None,
        poll_seconds: float = 5.0,
        on_report: Callable[[PhaseReport], object] | None = None,
    ) -> None:
        """Run the enabled phases on their cadences until ``stop`` is set (or the task is cancelled).

        A failing model or an unreachable database is logged and tried again at the next poll.
        """
        stop = stop or asyncio.Event()
        last: dict[Phase, tuple[datetime, int]] = {phase: (utcnow(), 0) for phase in self.config.enabled}
        while not stop.is_set():
            for phase in await self._due_safely(last):
                count = await self._store.episode_count()
                try:
                    report = await self._phase(phase, None, None)
                except (LLMProviderError, ConsolidatorBusyError, StoreUnavailableError) as error:
                    log.warning("consolidator %s phase failed, retrying at the next poll: %s", phase, error)
                    continue
                last[phase] = (utcnow(), count)
                if on_report is not None:
                    on_report(report)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), poll_seconds)

    async def _due_safely(self, last: dict[Phase, tuple[datetime, int]]) -> list[Phase]:
        try:
            return await self.due(last)
        except StoreUnavailableError as error:
            log.warning("consolidator: the database is unreachable, retrying at the next poll: %s", error)
            return []

    async def _close(self) -> None:
        """Close the model clients this consolidator opened (`Memory.close` does)."""
        for provider in self._providers:
            await provider.aclose()
