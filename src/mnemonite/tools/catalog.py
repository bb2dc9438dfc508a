"""The nine memory tools: what each tells the model, how much it may change memory, and the tier method it runs.

Each runner takes the bound scope and validated arguments and calls one tier method, so a tool
does exactly what the Python API does. Text of secret records leaves as a marker unless the call
holds a `Reveal`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mnemonite.errors import InvalidInputError
from mnemonite.models.fact import Fact
from mnemonite.models.messages import Message
from mnemonite.models.search import SearchHit
from mnemonite.models.tools import GuardTier, SideEffect
from mnemonite.privacy import Reveal, redact, redact_record
from mnemonite.scope import Scope
from mnemonite.tiers.episodic import RecalledEpisode
from mnemonite.tools import schemas as s
from mnemonite.tools.reach import ToolMemory

__all__ = ["TOOLS", "ToolSpec"]

Runner = Callable[[ToolMemory, Scope, Any, Reveal | None], Awaitable[s.ToolOutput]]
# A read that found nothing: where else (which other agents of the user) matching records lie, as a hint.
Elsewhere = Callable[[ToolMemory, Scope, Any, s.ToolOutput], Awaitable[str | None]]


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name and description for the model, its schemas, guard tier, side-effect class and runner."""

    name: str
    tier: str
    description: str
    input: type[s.ToolInput]
    output: type[s.ToolOutput]
    guard: GuardTier
    side_effect: SideEffect
    run: Runner
    elsewhere: Elsewhere | None = None


class NoSessionError(InvalidInputError):
    """conversation_search was called on a toolset bound without a session."""


def _agent_scope(scope: Scope) -> Scope:
    """Facts and episodes are read across the agent's sessions."""
    return Scope(user=scope.user, agent=scope.agent)


def _block(block: Any, reveal: Reveal | None) -> s.BlockOutput:
    return s.BlockOutput(label=block.label, value=redact(block.value, block.sensitivity, reveal),
                         chars=len(block.value), limit=block.limit, sensitivity=block.sensitivity)  # fmt: skip


async def _block_append(mem: ToolMemory, scope: Scope, args: s.BlockAppendInput, reveal: Reveal | None) -> s.ToolOutput:
    return _block(await mem.working.append(scope, args.label, args.text), reveal)


async def _block_replace(
    mem: ToolMemory, scope: Scope, args: s.BlockReplaceInput, reveal: Reveal | None
) -> s.ToolOutput:
    return _block(await mem.working.patch(scope, args.label, args.old, args.new), reveal)


async def _block_rethink(
    mem: ToolMemory, scope: Scope, args: s.BlockRethinkInput, reveal: Reveal | None
) -> s.ToolOutput:
    return _block(await mem.working.write(scope, args.label, args.value), reveal)


async def _fact_remember(
    mem: ToolMemory, scope: Scope, args: s.FactRememberInput, reveal: Reveal | None
) -> s.ToolOutput:
    decision = await mem.semantic.remember_with_decision(
        _agent_scope(scope), args.text, memory_type=args.memory_type, sensitivity=args.sensitivity
    )
    secret = (args.sensitivity or mem.semantic.sensitivity) == "secret"
    return s.FactRememberOutput(decision=decision.kind, fact_id=decision.fact_id, replaced_ids=decision.matched_ids,
                                reason=redact(decision.reason, "secret" if secret else "internal", reveal))  # fmt: skip


async def _fact_search(mem: ToolMemory, scope: Scope, args: s.FactSearchInput, reveal: Reveal | None) -> s.ToolOutput:
    hits = await mem.semantic.search(_agent_scope(scope), args.query, args.k)
    return s.FactSearchOutput(
        facts=[_fact_hit(hit, reveal) for hit in hits if isinstance(hit.record, Fact)],
        hint=_unsearched("facts", getattr(hits, "unsearched", 0)),
    )


def _unsearched(kind: str, count: int) -> str | None:
    """The hint of a search that could not compare every record by meaning (a bulk write still being indexed)."""
    if not count:
        return None
    return (f"{count:,} {kind} were not searched by meaning yet (still being indexed): one that says it in other"
            " words may be missing; search again in a few seconds")  # fmt: skip


async def _facts_elsewhere(mem: ToolMemory, scope: Scope, args: s.FactSearchInput, found: s.ToolOutput) -> str | None:
    if not isinstance(found, s.FactSearchOutput) or found.facts:
        return None
    hits = await mem.semantic.search(Scope(user=scope.user), args.query, args.k)
    return _elsewhere("facts", scope, [hit.record.agent for hit in hits if isinstance(hit.record, Fact)])


def _elsewhere(kind: str, scope: Scope, agents: list[str | None]) -> str | None:
    """The hint of a read that found nothing under its agent while other agents of the user hold matches."""
    held = Counter(agent for agent in agents if agent and agent != scope.agent)
    if not held:
        return None
    where = ", ".join(f"{agent!r} ({count})" for agent, count in held.most_common(5))
    return (f"no {kind} of this user under agent {scope.agent!r}, the agent these tools act as; matching {kind} are"
            f" kept under other agents: {where}. The host chooses the agent (e.g. `mnemonite mcp --agent NAME`, or"
            " an API key bound to that agent).")  # fmt: skip


def _fact_hit(hit: SearchHit, reveal: Reveal | None) -> s.FactHit:
    fact = hit.record
    assert isinstance(fact, Fact)
    text = redact_record(fact, reveal).text  # a recognised secret reads as "[secret: PIN]", a tagged one as a marker
    return s.FactHit(
        id=fact.id, text=text, memory_type=fact.memory_type, score=round(hit.score, 6),
        recorded_at=fact.recorded_at.isoformat(), status="pending" if hit.pending else "active",
        possibly_replaced_by=hit.possibly_replaced_by,
    )  # fmt: skip


async def _fact_supersede(
    mem: ToolMemory, scope: Scope, args: s.FactSupersedeInput, reveal: Reveal | None
) -> s.ToolOutput:
    new = await mem.semantic.supersede(args.fact_id, args.text, scope=_agent_scope(scope))
    return s.FactSupersedeOutput(old_id=args.fact_id, fact_id=new.id, text=redact_record(new, reveal).text)


async def _fact_forget(mem: ToolMemory, scope: Scope, args: s.FactForgetInput, reveal: Reveal | None) -> s.ToolOutput:
    fact = await mem.semantic.forget(args.fact_id, scope=_agent_scope(scope))
    return s.FactForgetOutput(fact_id=fact.id, status=fact.status)


async def _recall_episodes(
    mem: ToolMemory, scope: Scope, args: s.RecallEpisodesInput, reveal: Reveal | None
) -> s.ToolOutput:
    recalled = await mem.episodic.recall(_agent_scope(scope), args.query, args.k)
    return s.RecallEpisodesOutput(episodes=[_episode_hit(item, reveal) for item in recalled],
                                  hint=_unsearched("episodes", getattr(recalled, "unsearched", 0)))  # fmt: skip


async def _episodes_elsewhere(
    mem: ToolMemory, scope: Scope, args: s.RecallEpisodesInput, found: s.ToolOutput
) -> str | None:
    if not isinstance(found, s.RecallEpisodesOutput) or found.episodes:
        return None
    recalled = await mem.episodic.recall(Scope(user=scope.user), args.query, args.k)
    return _elsewhere("episodes", scope, [item.episode.agent for item in recalled])


def _episode_hit(item: RecalledEpisode, reveal: Reveal | None) -> s.EpisodeHit:
    episode = item.episode
    return s.EpisodeHit.model_construct(
        id=episode.id, content=redact_record(episode, reveal).content,
        timestamp=episode.timestamp.isoformat(), relevance=round(item.relevance, 6), recency=round(item.recency, 6),
        salience=round(item.salience, 6), score=round(item.score, 6), superseded=item.superseded,
    )  # fmt: skip


async def _conversation_search(
    mem: ToolMemory, scope: Scope, args: s.ConversationSearchInput, reveal: Reveal | None
) -> s.ToolOutput:
    if scope.session is None:
        raise NoSessionError("no conversation is active: the host binds the tools with a session to search one")
    hits = await mem.session.search(Scope(user=scope.user, session=scope.session), args.query, args.k)
    return s.ConversationSearchOutput(messages=[_message(hit.message, reveal) for hit in hits])


def _message(message: Message, reveal: Reveal | None) -> s.MessageHit:
    return s.MessageHit.model_construct(id=message.id, role=message.role, agent=message.agent or "",
                        content=redact_record(message, reveal).content,
                        timestamp=message.timestamp.isoformat())  # fmt: skip


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec("block_append", "working", "Append text to the end of one of your memory blocks (the labelled"
                 " sections of your prompt). Use it to note something new about the user or the task.",
                 s.BlockAppendInput, s.BlockOutput, "add", "write", _block_append),
        ToolSpec("block_replace", "working", "Replace one exact piece of text inside a memory block. 'old' must"
                 " occur exactly once in the block: copy it from your prompt, with enough context to be unique.",
                 s.BlockReplaceInput, s.BlockOutput, "rewrite", "write", _block_replace),
        ToolSpec("block_rethink", "working", "Rewrite a memory block entirely with new content. Use it to"
                 " reorganise a block; prefer block_append or block_replace for small changes.",
                 s.BlockRethinkInput, s.BlockOutput, "rewrite", "idempotent_write", _block_rethink),
        ToolSpec("fact_remember", "semantic", "Store a lasting fact about the user or the world in long-term"
                 " memory. Duplicates are detected and changes (a move, a new job) replace the older fact; the"
                 " decision is returned.", s.FactRememberInput, s.FactRememberOutput, "add", "idempotent_write",
                 _fact_remember),
        ToolSpec("fact_search", "semantic", "Search long-term facts by meaning and keywords. Returns the best"
                 " matching current facts with their ids.", s.FactSearchInput, s.FactSearchOutput, "read",
                 "read_only", _fact_search, _facts_elsewhere),
        ToolSpec("fact_supersede", "semantic", "Replace a fact that is no longer true by what is true now. The"
                 " old fact is kept in history. Get the id from fact_search.", s.FactSupersedeInput,
                 s.FactSupersedeOutput, "rewrite", "write", _fact_supersede),
        ToolSpec("fact_forget", "semantic", "Stop believing a fact (it stays in history for audit). Use only"
                 " when the user retracts it or asks you to forget it.", s.FactForgetInput, s.FactForgetOutput,
                 "destroy", "destructive", _fact_forget),
        ToolSpec("recall_episodes", "episodic", "Recall past events and conversations, ranked by relevance to"
                 " the query, recency and importance.", s.RecallEpisodesInput, s.RecallEpisodesOutput, "read",
                 "read_only", _recall_episodes, _episodes_elsewhere),
        ToolSpec("conversation_search", "session", "Search the messages of the current conversation (every"
                 " participant's) by keywords, e.g. to find what was said earlier.", s.ConversationSearchInput,
                 s.ConversationSearchOutput, "read", "read_only", _conversation_search),
    )
}  # fmt: skip
