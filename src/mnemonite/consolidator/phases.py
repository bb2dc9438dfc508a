"""The light and standard phases, one claimed job (a session) at a time.

Light: a summary of the session (extractive, or the model's) and, across the memory, pending
facts flushed to a judge when a model and the budget allow (otherwise they stay pending and
visible). Standard: the session's topic episodes, then every new message split into atomic
statements (rule-based, or the model's), each sent through `semantic.remember` — the write path
of every fact — in message order, so a later statement supersedes an earlier one and nothing
duplicates a fact already held. The checkpoint moves after each message: a worker killed
mid-job resumes at the next message, and a message done twice is an exact duplicate (a no-op).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from mnemonite._time import utcnow
from mnemonite.consolidator import prompts
from mnemonite.consolidator.budget import ConsolidatorConfig
from mnemonite.consolidator.extract import ENGLISH_STATEMENTS, Extractor, StatementPack
from mnemonite.consolidator.llm import BudgetedModel, as_sent
from mnemonite.consolidator.segment import segment, summarise
from mnemonite.errors import BudgetExceededError, InvalidInputError, LLMProviderError
from mnemonite.judge import ConflictJudge
from mnemonite.models.conflict import ConflictDecision, JudgeVerdict
from mnemonite.models.consolidator import ClaimedJob, Phase, PhaseReport, TopicEpisode, Turn, Usage
from mnemonite.models.fact import Fact
from mnemonite.reading import ParserUnavailableError
from mnemonite.reading.chat import ParsedExtractor
from mnemonite.reading.graph import may_relate
from mnemonite.reading.graph import said as said_already
from mnemonite.reading.graph import statements as relation_statements
from mnemonite.scope import Scope
from mnemonite.tiers.procedural import ProceduralTier
from mnemonite.tiers.semantic import SemanticTier
from mnemonite.tiers.shared import SharedTier

__all__ = ["Context", "Tally", "flush_pending", "is_machine", "is_user", "light_job", "listing", "standard_job"]

log = logging.getLogger("mnemonite.consolidator")

MACHINE_SPEAKERS = frozenset({"assistant", "system", "tool", "bot", "ai", "function"})
_CHUNK = 40  # messages per model call: long enough for context, short enough for one answer


class JobStore(Protocol):
    async def job_turns(self, job: ClaimedJob, *, limit: int = 10_000) -> list[Turn]: ...
    async def advance_job(
        self, job: ClaimedJob, checkpoint: int, *, lease: float, summary: str | None = None, release: bool = False
    ) -> None: ...
    async def save_topic_episodes(self, episodes: list[TopicEpisode]) -> None: ...
    async def topics_end(self, scope_key: str) -> int: ...
    async def pending_scopes(self) -> list[tuple[str, str]]: ...


@dataclass
class Context:
    """What a phase works with: the store, the semantic tier, the settings and the model (if any)."""

    store: JobStore
    semantic: SemanticTier
    config: ConsolidatorConfig
    models: dict[Phase, BudgetedModel | None]
    statements: StatementPack = field(default=ENGLISH_STATEMENTS)
    procedural: ProceduralTier | None = None
    shared: SharedTier | None = None
    llm_off: set[Phase] = field(default_factory=set)  # phases that fell back for the rest of the run

    def model(self, phase: Phase) -> BudgetedModel | None:
        return None if phase in self.llm_off else self.models.get(phase)

    def extractor(self) -> Extractor | ParsedExtractor:
        """A fresh reader of one conversation: the statement parser's where ``config.extraction`` asks for it and
        the semantic tier reads with it (the statement pack English), the statement pack's rules otherwise."""
        reader = self.semantic.reader
        if reader is not None and self.statements.name == "en" and self.config.extraction == "parser":
            return ParsedExtractor(reader, self.statements)
        return Extractor(self.statements)

    def relations(
        self, texts: Sequence[str], names: Sequence[str], speakers: Sequence[str | None], extracted: Sequence[list[str]]
    ) -> list[list[str]]:
        """For each message, the relations it states between people, pets, places and organisations that its
        ``extracted`` statements do not say, each as a statement of its own ("Anjali is my mum"), where the semantic
        tier learns its graph (`mnemonite.reading.graph`); ``speakers``: the name of a speaker who is not the user.
        Everything is parsed in one batch, the statements to remember included (they are read again from the
        parser's cache)."""
        reader, pack = self.semantic.reader, self.semantic.locale
        if reader is None or not self.semantic.learn_graph or not pack.relation_phrases or not texts:
            return [[] for _ in texts]
        nouns, cues = frozenset(pack.relation_nouns), frozenset(pack.relation_cues)
        chosen = [i for i, text in enumerate(texts) if may_relate(text, nouns, cues)]  # the rest: no parse
        found: list[list[str]] = [[] for _ in texts]
        try:
            read = reader.graphs([*(texts[i] for i in chosen), *(t for i in chosen for t in extracted[i])], names)
            at = len(chosen)
            for i, reading in zip(chosen, read, strict=False):
                known = said_already(read[at : at + len(extracted[i])])
                at += len(extracted[i])
                found[i] = relation_statements(reading, pack.relation_nouns, pack.relation_phrases, speakers[i], known)
            reader.graphs([text for more in found for text in more], names)
        except ParserUnavailableError:
            return [[] for _ in texts]  # the tier warns once and reads by rules from then on
        return found


@dataclass
class Tally:
    """Counts accumulated into a `PhaseReport`."""

    phase: Phase
    counts: dict[str, Any] = field(default_factory=dict)

    def add(self, name: str, amount: int | float = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + amount

    def charge(self, usage: Usage) -> None:
        self.add("calls", usage.calls)
        self.add("tokens", usage.tokens)
        self.add("cost", usage.cost)
        self.counts["llm"] = True

    def decided(self, decision: ConflictDecision) -> None:
        name = {"admit": "admitted", "dedup": "deduplicated", "supersede": "superseded", "pending": "pending"}
        self.add(name[decision.kind])

    def report(self) -> PhaseReport:
        return PhaseReport(phase=self.phase, **self.counts)


def is_machine(turn: Turn) -> bool:
    return turn.speaker.strip().lower() in MACHINE_SPEAKERS


def is_user(speaker: str, user: str, names: Sequence[str]) -> bool:
    """Whether a message's speaker is the scope's user (the id, "user", or a name the user goes by)."""
    lowered = speaker.strip().lower()
    return lowered in {"user", "me", user.lower(), *names}


async def ask(ctx: Context, tally: Tally, phase: Phase, system: str, user: str) -> dict[str, Any] | None:
    """The phase's model answer, or None to go rule-based: no model, or the budget said no under ``log``.

    Under ``pause`` a spent budget raises `BudgetExceededError` for the caller to stop the phase.
    """
    model = ctx.model(phase)
    if model is None:
        return None
    try:
        content, usage = await model.ask(phase, system, user)
    except BudgetExceededError as error:
        if ctx.config.exceed == "pause":
            raise
        log.warning("%s; on_exceed=log: the rest of this run is rule-based", error)
        ctx.llm_off.add(phase)
        tally.add("fallbacks")
        return None
    tally.charge(usage)
    return content


# -- light ----------------------------------------------------------------------------------


async def light_job(ctx: Context, job: ClaimedJob, tally: Tally) -> None:
    """Summarise the whole session (extractive unless a model and the budget allow)."""
    turns = await ctx.store.job_turns(dataclasses.replace(job, checkpoint=0))
    texts = [turn.content for turn in turns]
    summary = None
    answer = await ask(ctx, tally, "light", prompts.SUMMARY, prompts.turns_listing(listing(turns)))
    if answer is not None:
        summary = answer.get("summary")
        if not isinstance(summary, str) or not summary.strip():
            raise LLMProviderError(f"the summary answer has no 'summary' text: {str(answer)[:200]}")
    summary = summary or summarise(texts)
    await ctx.store.advance_job(job, job.upto, lease=ctx.config.lease_seconds, summary=summary, release=True)
    tally.add("summaries")
    tally.add("turns", len(turns))


class BudgetedJudge:
    """A `ConflictJudge` asking the light phase's model, under the budget."""

    def __init__(self, ctx: Context, tally: Tally) -> None:
        self._ctx, self._tally = ctx, tally

    async def judge(self, candidate: Fact, existing: Sequence[Fact]) -> JudgeVerdict:
        listing = "\n".join(f'- id "{fact.id}": {fact.text}' for fact in existing) or "(none)"
        user = f"Existing facts:\n{listing}\n\nNew statement: {candidate.text}"
        answer = await ask(self._ctx, self._tally, "light", prompts.JUDGE, user)
        if answer is None:
            raise InvalidInputError("no judge within the budget: the fact stays pending")
        verdict = _verdict(answer, as_sent(fact.id for fact in existing))
        self._tally.add("judged")
        return verdict


def _verdict(answer: dict[str, Any], offered: dict[str, str]) -> JudgeVerdict:
    """The judge's answer, its target read back as the fact offered (the prompt's redaction may have changed the
    id the model quotes: see `as_sent`)."""
    verdict = JudgeVerdict.model_validate(answer)
    if verdict.kind == "admit":
        return verdict
    if not isinstance(verdict.target_id, str) or verdict.target_id not in offered:
        raise InvalidInputError(f"the judge named {verdict.target_id!r}, which was not offered")
    return verdict.model_copy(update={"target_id": offered[verdict.target_id]})


async def flush_pending(ctx: Context, tally: Tally, only_user: str | None = None) -> None:
    """Judge every pending fact (of ``only_user``) when a model is there; each verdict is applied on its own."""
    if ctx.model("light") is None:
        return
    judge: ConflictJudge = BudgetedJudge(ctx, tally)
    for user, agent in await ctx.store.pending_scopes():
        if only_user is not None and user != only_user:
            continue
        await ctx.semantic.resolve_pending(Scope(user=user, agent=agent), judge)


# -- standard -------------------------------------------------------------------------------


async def standard_job(ctx: Context, job: ClaimedJob, tally: Tally) -> None:
    """Topic episodes, then the statements of each new message through the conflict pipeline."""
    turns = await ctx.store.job_turns(job)
    scope = Scope(user=job.user, agent=job.agent)
    names = await ctx.semantic.names(scope)
    planned = await _statements(ctx, tally, job, turns, names)  # every model call happens before any write
    # A job resumed after its worker died holds turns the dead worker's topic episodes hold already.
    done = await ctx.store.topics_end(job.scope_key)
    topics = _topic_episodes(job, [turn for turn in turns if turn.seq > done])
    await ctx.store.save_topic_episodes(topics)
    tally.add("topic_episodes", len(topics))
    for turn in turns:
        for text in planned.get(turn.id, []):
            tally.add("statements")
            if await _stale(ctx, scope, text, turn.timestamp, names):
                tally.add("deduplicated")
                continue
            decision = await ctx.semantic.remember_with_decision(
                scope, text, source_episode_ids=[turn.id], rule_id="consolidator.standard", valid_from=turn.timestamp
            )
            tally.decided(decision)
        await ctx.store.advance_job(job, turn.seq, lease=ctx.config.lease_seconds)
        tally.add("turns")
    await ctx.store.advance_job(job, job.upto, lease=ctx.config.lease_seconds, release=True)


async def _statements(
    ctx: Context, tally: Tally, job: ClaimedJob, turns: Sequence[Turn], names: Sequence[str]
) -> dict[str, list[str]]:
    """Statements per message id: the model's when it answers, else the rule-based extractor's."""
    people = [turn for turn in turns if not is_machine(turn)]
    if ctx.model("standard") is not None and people:
        planned: dict[str, list[str]] = {}
        for start in range(0, len(people), _CHUNK):
            chunk = people[start : start + _CHUNK]
            answer = await ask(ctx, tally, "standard", prompts.EXTRACT, _extract_prompt(chunk, job, names))
            if answer is None:
                return await asyncio.to_thread(_rule_statements, ctx, turns, job.user, names)
            for turn_id, text in _parsed_statements(answer, as_sent(turn.id for turn in chunk)):
                planned.setdefault(turn_id, []).append(text)
        return planned
    return await asyncio.to_thread(_rule_statements, ctx, turns, job.user, names)  # parsing: off the event loop


def _rule_statements(ctx: Context, turns: Sequence[Turn], user: str, names: Sequence[str]) -> dict[str, list[str]]:
    """Statements per message id, read in order; an assistant's messages are read for their questions only. The
    relations a message states that its statements do not say are added (`Context.relations`)."""
    extractor = ctx.extractor()
    planned: dict[str, list[str]] = {}
    speakers: dict[str, str | None] = {}
    for turn in turns:
        if is_machine(turn):
            extractor.hear(turn.content, speaker=turn.speaker)
            continue
        about_user = is_user(turn.speaker, user, names)
        found = extractor.extract(turn.content, speaker=turn.speaker, about_user=about_user)
        planned[turn.id] = [statement.text for statement in found]
        speakers[turn.id] = None if about_user else turn.speaker
    people = [turn for turn in turns if turn.id in speakers]
    related = ctx.relations([t.content for t in people], names, [speakers[t.id] for t in people],
                            [planned[t.id] for t in people])  # fmt: skip
    for turn, more in zip(people, related, strict=True):
        said = {text.casefold() for text in planned[turn.id]}
        planned[turn.id] += [text for text in more if text.casefold() not in said]
    return {turn_id: found for turn_id, found in planned.items() if found}


def _extract_prompt(turns: Sequence[Turn], job: ClaimedJob, names: Sequence[str]) -> str:
    who = ", ".join(sorted({job.user, *names}))
    return f"The user goes by: {who}.\n\nMessages:\n{prompts.turns_listing(listing(turns))}"


def _parsed_statements(answer: dict[str, Any], offered: dict[str, str]) -> list[tuple[str, str]]:
    """(message id, text) pairs of an extraction answer; anything malformed raises `LLMProviderError`."""
    items = answer.get("statements")
    if not isinstance(items, list):
        raise LLMProviderError(f"the extraction answer has no 'statements' list: {str(answer)[:200]}")
    found = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"].strip():
            raise LLMProviderError(f"a statement of the extraction answer is malformed: {str(item)[:200]}")
        if not isinstance(item.get("source_id"), str) or item["source_id"] not in offered:
            raise LLMProviderError(f"the extraction answer names message {item.get('source_id')!r}, not offered")
        found.append((offered[item["source_id"]], item["text"].strip()))
    return found


SECRET = "[a secret message, withheld]"


def listing(turns: Sequence[Turn]) -> list[tuple[str, str, str]]:
    """(id, speaker, text) of messages for a prompt; a row marked secret never leaves the process."""
    return [(turn.id, turn.speaker or "someone", SECRET if turn.metadata.get("sensitivity") == "secret"
             else turn.content) for turn in turns]  # fmt: skip


def _topic_episodes(job: ClaimedJob, turns: Sequence[Turn]) -> list[TopicEpisode]:
    now = utcnow()
    found = []
    for part in segment(turns):
        digest = hashlib.sha1(f"{job.scope_key}:{part[0].seq}:{part[-1].seq}".encode(), usedforsecurity=False)
        found.append(TopicEpisode(
            id=digest.hexdigest()[:32], scope_key=job.scope_key, user=job.user, agent=job.agent, session=job.session,
            first_seq=part[0].seq, last_seq=part[-1].seq, turn_ids=[turn.id for turn in part],
            summary=summarise([turn.content for turn in part], sentences=2), created_at=now,
        ))  # fmt: skip
    return found


async def _stale(ctx: Context, scope: Scope, text: str, said_at: datetime, names: Sequence[str]) -> bool:
    """Whether memory already holds a newer value of this statement's single-valued (subject, predicate).

    An old message ("I live in Berlin", last year) must not supersede what was remembered since
    ("Jo moved to Munich"): it is history, not news.
    """
    triple = ctx.semantic.locale.split(text, names)
    if triple is None or not triple.single_valued or not triple.resolved:
        return False
    held = await ctx.semantic.facts(scope, subject=triple.subject, predicate=triple.predicate, limit=20)
    return any(fact.status == "active" and fact.valid_from > said_at for fact in held)
