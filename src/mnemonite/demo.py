"""`mnemonite demo`: a three-session conversation recorded, consolidated, superseded and replayed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mnemonite._time import utcnow
from mnemonite.models import ConsolidationRule, Episode, Fact
from mnemonite.models.messages import Message
from mnemonite.models.search import Tier
from mnemonite.scope import Scope
from mnemonite.store import memory_users
from mnemonite.sync import SyncMemory

USER, AGENT = "sam", "assistant"
DEMO_DB = "mnemonite-demo.db"
NOT_A_MEMORY = "(not a mnemonite memory)"  # what `other_users` says of a file it cannot read as one
_T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _spo(predicate: str, obj: str, memory_type: str = "fact") -> dict[str, Any]:
    return {"subject": "Sam", "predicate": predicate, "object": obj, "memory_type": memory_type}


# session -> (start time, [(what Sam said, episode metadata)])
SESSIONS: dict[str, tuple[datetime, list[tuple[str, dict[str, Any]]]]] = {
    "2026-03-02": (
        _T0,
        [
            ("Hi! I'm Sam. I just settled in Lisbon, near the river.", _spo("lives in", "Lisbon")),
            ("I work as a product designer at Acme.", _spo("works at", "Acme")),
            ("I'm vegetarian, so please keep restaurant ideas meat-free.", _spo("diet", "vegetarian", "preference")),
            ("Thanks, that's all for now!", {"intent": "noop"}),
        ],
    ),
    "2026-05-18": (
        _T0 + timedelta(days=77),
        [
            # The assistant knows the old address, so it marks the episode as an update of it.
            (
                "Big news: I moved to Porto last week.",
                {**_spo("lives in", "Porto"), "intent": "update", "replaces": ["2026-03-02-0"]},
            ),
            ("I always prefer a window seat on trains.", _spo("seat preference", "window", "preference")),
            # Same (subject, predicate) again in this batch: consolidation turns it into an update.
            (
                "Well, technically it's Vila Nova de Gaia, just across the river from Porto.",
                _spo("lives in", "Vila Nova de Gaia"),
            ),
            ("Haha, the weather is lovely today.", {"intent": "noop"}),
        ],
    ),
    "2026-07-06": (
        _T0 + timedelta(days=126),
        [
            (
                "I started a new job at Figma as a senior designer.",
                {**_spo("works at", "Figma"), "intent": "update", "replaces": ["2026-03-02-1"]},
            ),
            (
                "I eat fish again now, so pescatarian places are fine.",
                {**_spo("diet", "pescatarian", "preference"), "intent": "update", "replaces": ["2026-03-02-2"]},
            ),
            ("Please forget my seat preference, I fly now.", {"intent": "delete", "replaces": ["2026-05-18-1"]}),
        ],
    ),
}


REMEMBERED = (
    "Sam is allergic to peanuts",
    "sam is allergic to   PEANUTS",
    "Sam's favourite colour is green",
    "Sam's favourite colour is now orange",
    "Sam's sister Ana lives in Porto",
)


def episodes_for(session: str) -> list[Episode]:
    start, turns = SESSIONS[session]
    return [
        Episode(
            id=f"{session}-{i}",
            content=text,
            timestamp=start + timedelta(minutes=2 * i),
            source_node="chat",
            metadata=meta,
        )
        for i, (text, meta) in enumerate(turns)
    ]


def _facts_table(title: str, facts: list[Fact]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("predicate · object", overflow="fold")  # wraps on a narrow terminal; dates and states never cut
    for column, width in (("valid", 23), ("status", 10), ("source", 12)):
        table.add_column(column, no_wrap=True, min_width=width)
    for fact in sorted(facts, key=lambda f: (f.predicate or "", f.valid_from)):
        valid_to = fact.valid_to.date().isoformat() if fact.valid_to else "now"
        interval = f"{fact.valid_from.date().isoformat()} → {valid_to}"
        table.add_row(f"{fact.predicate} · {fact.object}", interval, fact.status, ", ".join(fact.source_episode_ids))
    return table


def run_demo(url: str, console: Console | None = None) -> None:
    """Record three sessions, consolidate after each, then travel in time."""
    out = console or Console()
    with SyncMemory.open(url) as mem:
        out.rule(f"[bold]mnemonite demo[/] — {url}")
        mem.add_rule(
            ConsolidationRule(id="nightly", cadence={"cron": "0 3 * * *"}, when_filter="metadata.intent != 'noop'")
        )
        checkpoints: list[tuple[str, datetime]] = []
        for session in SESSIONS:
            stored = mem.episodic.put_many(episodes_for(session), user=USER, session=session, agent=AGENT)
            run = mem.consolidate("nightly")
            kinds = ", ".join(d.kind for d in run.deltas)
            out.print(f"session [cyan]{session}[/]: recorded {stored} episodes; consolidation applied {escape(kinds)}")
            checkpoints.append((session, utcnow()))
        out.print()
        latest = mem.episodic.recent(USER, limit=3)
        out.print("[bold]recent('sam', limit=3)[/] — widening read across sessions:")
        for episode in latest:
            out.print(f"  {episode.timestamp:%Y-%m-%d %H:%M}  {escape(f'[{episode.session}] {episode.content}')}")
        out.print()
        scope = Scope(user=USER, agent=AGENT)
        out.print(_facts_table("What Sam's assistant knows now", mem.semantic.facts(scope)))
        home = mem.semantic.facts(scope, predicate="lives in")[0]
        out.print(_facts_table("history of 'lives in': superseded, never overwritten", mem.semantic.history(home.id)))
        first_session, after_first = checkpoints[0]
        out.print(
            _facts_table(
                f"as_of = just after session {first_session} (system time)",
                mem.semantic.facts(scope, as_of=after_first),
            )
        )
        april = datetime(2026, 4, 15, tzinfo=UTC)
        out.print(
            _facts_table(
                "valid_at = 2026-04-15 (world time): where did Sam live and work in April?",
                mem.semantic.facts(scope, valid_at=april),
            )
        )
        mem.index()  # embed what the background indexer has not reached yet
        searches: tuple[tuple[str, str, tuple[Tier, ...]], ...] = (
            ("semantic.search", "Where does Sam live now?", ("semantic",)),
            ("search", "what food should I suggest for dinner", ("episodic", "semantic")),
        )
        for label, question, tiers in searches:
            out.print(f"[bold]{label}[/] {question!r} — hybrid (full text + vectors) over {' and '.join(tiers)}:")
            for hit in mem.search(Scope(user=USER), question, k=4, tiers=tiers):
                note = "  [dim](superseded)[/]" if hit.superseded else ""
                out.print(f"  {hit.score:.2f}  {hit.tier:<8} {escape(hit.text)}{note}")
        out.print()
        out.print("[bold]semantic.remember[/] — each statement decided by the five-stage conflict pipeline:")
        for statement in REMEMBERED:
            d = mem.semantic.remember_with_decision(Scope(user=USER, agent=AGENT), statement)
            cosine = "" if d.cosine is None else f", cosine {d.cosine:.2f}"
            out.print(f"  {escape(statement)!r} → [bold]{d.kind}[/] ({d.stage}{cosine})\n      {escape(d.reason)}")
        out.print()
        said = mem.session.push(
            Scope(user=USER, session=list(SESSIONS)[-1], agent=AGENT),
            Message("user", "my card is 4111 1111 1111 1111 and the wifi password is Bluefish42"),
        )
        out.print(
            "[bold]session.push[/] — a card number and a password said in passing, masked before they are stored:"
        )
        out.print(f"  {escape(said.content)}  [dim](sensitivity: {said.sensitivity})[/]")
        out.print()
        # The profile is what memory holds now about Sam, so it cannot contradict the tables above.
        profile = {f.predicate: f.object for f in mem.semantic.facts(scope, subject="Sam") if f.predicate}
        sam = mem.graph.create_entity(scope, name="Sam", entity_type="person", properties=profile)
        gaia = mem.graph.create_entity(scope, name="Vila Nova de Gaia", entity_type="city")
        mem.graph.relate(scope, source=sam.id, target=gaia.id, relation="LIVES_IN")
        mem.semantic.remember(scope, "Sam cooks risotto every Sunday", memory_type="experience",
                              entities=[(sam.id, "about")])  # fmt: skip
        out.print("[bold]graph.context_for[/] — Sam's profile, relations and memories within 200 tokens:")
        ctx = mem.graph.context_for(scope, entity="Sam", topic="cooking", max_tokens=200)
        out.print(escape(ctx.format()), highlight=False)
        audit = mem.semantic.deltas(limit=1000)
        counts = {kind: sum(1 for r in audit if r.kind == kind) for kind in ("add", "update", "delete", "noop")}
        out.print(f"audit log: {len(audit)} deltas applied — {counts}")
        health = mem.health()
        out.print(
            f"health: {health.fragment_count} episodes, {health.fact_count} facts"
            f" ({health.active_fact_count} active), schema v{health.schema_version}, journal={health.journal_mode}"
        )
        out.print(
            f"the memory is user {USER!r}, agent {AGENT!r}; see it in a browser with the inspector"
            f" (needs the server extras: pip install -e '.\\[server]'): mnemonite ui --db {escape(url)} -u {USER}",
            highlight=False,
        )


async def other_users(url: str) -> list[str]:
    """Up to five users whose records the memory at ``url`` holds besides the demo's: what ``demo --fresh`` would
    delete that the demo did not write (`NOT_A_MEMORY` for a file that is not a mnemonite memory)."""
    users = await memory_users(url)
    if users is None:
        return [NOT_A_MEMORY]
    return sorted(user for user in users if user != USER)[:5]
