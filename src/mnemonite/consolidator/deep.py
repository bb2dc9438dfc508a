"""The deep phase, one claimed job per (user, agent): cross-session patterns, procedures, sharing.

Patterns: a statement (rule-based reading, compared by its content words) said in several
sessions becomes an ``observation`` fact tagged ``pattern``, with its frequency and the
sessions in its payload and every message it came from as provenance (through
`semantic.remember`, so running the phase again duplicates nothing). Procedures: "how do I X?"
answered by ordered steps, steps said with "first ... then ...", or the same sequence of tool
calls in several sessions are defined in the procedural tier (again: one procedure per name);
with a model and budget, the model lists procedures instead. Sharing: a fact the agent holds
that another member of one of its groups holds too is offered to (attached to) that group.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from mnemonite.consolidator import prompts
from mnemonite.consolidator.extract import Extractor
from mnemonite.consolidator.llm import as_sent
from mnemonite.consolidator.phases import Context, Tally, ask, is_machine, is_user, listing
from mnemonite.consolidator.segment import words
from mnemonite.errors import LLMProviderError
from mnemonite.models.consolidator import ClaimedJob, Turn
from mnemonite.reading.chat import ParsedExtractor
from mnemonite.scope import Scope

__all__ = ["deep_job"]

_HOW = re.compile(r"\bhow (?:do|can|should) (?:i|we|you|one) (?P<what>[^?]{3,80})\?|\bhow to (?P<what2>[^?.]{3,80})",
                  re.IGNORECASE)  # fmt: skip
_ORDER = re.compile(r"\b(?:first|then|next|after that|finally|lastly)\b,?\s*", re.IGNORECASE)
_STEP_SPLIT = re.compile(r"(?<=[.!;])\s+|,\s*(?:and\s+)?(?=then\b|next\b|finally\b)|\s+and then\s+|,\s+and\s+")
_MAX_SOURCES = 50


async def deep_job(ctx: Context, job: ClaimedJob, tally: Tally) -> None:
    """Patterns and procedures of one (user, agent) over all its sessions."""
    turns = await ctx.store.job_turns(job)
    scope = Scope(user=job.user, agent=job.agent)
    names = await ctx.semantic.names(scope)
    procedures = await _procedures(ctx, tally, turns)
    for text, sessions, sources in _patterns(ctx, turns, job.user, names):
        payload = {"frequency": len(sources), "sessions": sessions}
        decision = await ctx.semantic.remember_with_decision(
            scope, text, memory_type="observation", tags=["pattern"], payload=payload,
            source_episode_ids=sources[:_MAX_SOURCES], rule_id="consolidator.deep",
        )  # fmt: skip
        tally.add("patterns")
        tally.decided(decision)
    for name, steps, sources in procedures:
        await _procedure(ctx, tally, scope, name, steps, sources)
    await _offer_to_groups(ctx, tally, scope)
    tally.add("turns", len(turns))
    await ctx.store.advance_job(job, job.upto, lease=ctx.config.lease_seconds, release=True)


async def _procedure(ctx: Context, tally: Tally, scope: Scope, name: str, steps: list[str], sources: list[str]) -> None:
    """A procedure into the procedural tier (defining the same name again keeps one procedure),
    or, without one, a fact tagged ``procedure``."""
    tally.add("procedures")
    if ctx.procedural is not None:
        await ctx.procedural.define(scope, name[:200], steps, trigger=f"how to {name}")
        return
    text = f"How to {name}: " + "; ".join(steps)
    decision = await ctx.semantic.remember_with_decision(
        scope, text[:2000], tags=["procedure"], payload={"name": name, "steps": steps},
        source_episode_ids=sources[:_MAX_SOURCES], rule_id="consolidator.deep",
    )  # fmt: skip
    tally.decided(decision)


async def _offer_to_groups(ctx: Context, tally: Tally, scope: Scope) -> None:
    """Share with each of the agent's groups the facts another member holds too (same content words),
    unless the group already has one saying it."""
    if ctx.shared is None:
        return
    mine = await ctx.semantic.facts(scope, status="active", limit=10_000)
    for group in await ctx.shared.groups(scope):
        others = [m for m in group.members if (m.user, m.agent) != (scope.user, scope.agent)]
        held: set[tuple[str, ...]] = set()
        for member in others:
            facts = await ctx.semantic.facts(Scope(user=member.user, agent=member.agent), status="active", limit=10_000)
            held |= {_key(fact.text) for fact in facts}
        shared = {_key(item.fact.text) for item in await ctx.shared.list_for(scope, group=group.name) if item.fact}
        for fact in mine:
            key = _key(fact.text)
            if len(key) >= 2 and key in held and key not in shared:
                await ctx.shared.attach(scope, group.name, fact_id=fact.id)
                shared.add(key)
                tally.add("shared")


def _key(text: str) -> tuple[str, ...]:
    return tuple(sorted(set(words(text))))


def _patterns(
    ctx: Context, turns: Sequence[Turn], user: str, names: Sequence[str]
) -> list[tuple[str, list[str], list[str]]]:
    """(text, sessions, message ids) of statements recurring in at least ``min_sessions`` sessions."""
    by_key: dict[tuple[str, ...], list[tuple[str, str, str]]] = defaultdict(list)
    extractors: dict[str, Extractor | ParsedExtractor] = {}
    for turn in turns:
        if is_machine(turn):
            continue
        if turn.session not in extractors:
            extractors[turn.session] = ctx.extractor()
        extractor = extractors[turn.session]
        about = is_user(turn.speaker, user, names)
        for statement in extractor.extract(turn.content, speaker=turn.speaker, about_user=about):
            key = _key(statement.text)
            if len(key) >= 2:
                by_key[key].append((statement.text, turn.session, turn.id))
    found = []
    for said in by_key.values():
        sessions = sorted({session for _, session, _ in said})
        if len(sessions) >= ctx.config.min_sessions:
            text = Counter(text for text, _, _ in said).most_common(1)[0][0]
            found.append((text, sessions, [turn_id for _, _, turn_id in said]))
    return found


async def _procedures(ctx: Context, tally: Tally, turns: Sequence[Turn]) -> list[tuple[str, list[str], list[str]]]:
    """(name, steps, message ids) of the procedures in these messages: the model's, else the rules'."""
    if ctx.model("deep") is not None and turns:
        shown = prompts.turns_listing(listing(turns[-200:]))
        answer = await ask(ctx, tally, "deep", prompts.PROCEDURE, f"Messages:\n{shown}")
        if answer is not None:
            return _parsed_procedures(answer, as_sent(turn.id for turn in turns))
    return [*_asked_procedures(turns), *_ordered_procedures(turns), *_tool_sequences(ctx, turns)]


def _parsed_procedures(answer: dict[str, Any], offered: dict[str, str]) -> list[tuple[str, list[str], list[str]]]:
    items = answer.get("procedures")
    if not isinstance(items, list):
        raise LLMProviderError(f"the procedure answer has no 'procedures' list: {str(answer)[:200]}")
    found = []
    for item in items:
        steps = item.get("steps") if isinstance(item, dict) else None
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not isinstance(steps, list):
            raise LLMProviderError(f"a procedure of the answer is malformed: {str(item)[:200]}")
        if not isinstance(item.get("source_id"), str) or item["source_id"] not in offered:
            raise LLMProviderError(f"the procedure answer names message {item.get('source_id')!r}, not offered")
        found.append((item["name"].strip(), [str(step) for step in steps], [offered[item["source_id"]]]))
    return [item for item in found if item[0] and len(item[1]) >= 2]


def _steps(text: str) -> list[str]:
    parts = (_ORDER.sub("", part).strip(" .,;") for part in _STEP_SPLIT.split(text))
    return [part[0].upper() + part[1:] for part in parts if len(part.split()) >= 2 and not part.endswith("?")]


def _asked_procedures(turns: Sequence[Turn]) -> list[tuple[str, list[str], list[str]]]:
    """A "how do I X?" answered by the next speaker in two or more steps."""
    found = []
    for asked, answer in pairwise(turns):
        match = _HOW.search(asked.content)
        if match is None or answer.speaker == asked.speaker:
            continue
        steps = _steps(answer.content)
        if len(steps) >= 2:
            found.append(((match.group("what") or match.group("what2")).strip(), steps, [asked.id, answer.id]))
    return found


def _ordered_procedures(turns: Sequence[Turn]) -> list[tuple[str, list[str], list[str]]]:
    """Steps said in order in one message: "first ..., then ..., finally ..."."""
    found = []
    for turn in turns:
        markers = re.findall(r"\b(first|then|next|finally)\b", turn.content, re.IGNORECASE)
        if len({m.lower() for m in markers}) < 2 or not re.search(r"\bfirst\b", turn.content, re.IGNORECASE):
            continue
        steps = _steps(turn.content)
        if len(steps) >= 2:
            found.append((steps[0].split(",")[0].lower()[:60], steps, [turn.id]))
    return found


def _tool_sequences(ctx: Context, turns: Sequence[Turn]) -> list[tuple[str, list[str], list[str]]]:
    """The same run of two to four tool calls (``metadata["tool"]``) in several sessions."""
    calls: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for turn in turns:
        tool = turn.metadata.get("tool")
        if isinstance(tool, str) and tool:
            calls[turn.session].append((tool, turn.id))
    seen: dict[tuple[str, ...], tuple[set[str], list[str]]] = {}
    for session, sequence in calls.items():
        for size in (4, 3, 2):
            for i in range(len(sequence) - size + 1):
                run = tuple(tool for tool, _ in sequence[i : i + size])
                sessions, ids = seen.setdefault(run, (set(), []))
                sessions.add(session)
                ids.extend(turn_id for _, turn_id in sequence[i : i + size])
    recurring = [(run, ids) for run, (sessions, ids) in seen.items() if len(sessions) >= ctx.config.min_sessions]
    longest = [item for item in recurring if not any(_inside(item[0], other[0]) for other in recurring)]
    return [(" then ".join(run), list(run), list(dict.fromkeys(ids))) for run, ids in longest]


def _inside(run: tuple[str, ...], other: tuple[str, ...]) -> bool:
    if len(run) >= len(other):
        return False
    return any(other[i : i + len(run)] == run for i in range(len(other) - len(run) + 1))
