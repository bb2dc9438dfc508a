"""The `mnemonite` command line: a thin shell over `SyncMemory`.

Every command takes ``--db URL`` (default: ``$MNEMONITE_URL``, else ``sqlite:///mnemonite.db``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn
from rich.table import Table

from mnemonite.config import MemoryConfig
from mnemonite.errors import InvalidInputError, MnemoniteError
from mnemonite.models import ConsolidationRule, ConsolidationRun, Episode, MigrationPlan
from mnemonite.scope import Scope
from mnemonite.sync import SyncMemory

app = typer.Typer(help="mnemonite: layered long-term memory for AI agents.", no_args_is_help=True)
rules_app = typer.Typer(help="Register, list and remove consolidation rules.", no_args_is_help=True)
app.add_typer(rules_app, name="rules")
console = Console()
err = Console(stderr=True)

DbOption = Annotated[str | None, typer.Option("--db", help="Memory URL, e.g. sqlite:///./agent-memory.db")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON lines instead of a table.")]
UserOption = Annotated[str, typer.Option("--user", "-u", help="User id.")]


@contextmanager
def _memory(db: str | None, **overrides: object) -> Iterator[SyncMemory]:
    try:
        # A command is a short process: no background indexing; `search` and `index` embed what is pending.
        base = MemoryConfig.from_env(url=db, index_in_background=False)
        config = MemoryConfig.model_validate({**base.model_dump(), **overrides})
        with SyncMemory.open(config=config) as mem:
            yield mem
    except MnemoniteError as error:
        err.print(f"[red]error:[/] {type(error).__name__}: {error}", highlight=False)
        raise typer.Exit(code=2) from None


def _when(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise typer.BadParameter(f"not an ISO 8601 time: {text!r}") from None
    if moment.tzinfo is None:
        raise typer.BadParameter(f"add a timezone, e.g. {text}Z or {text}+00:00")
    return moment


def _metadata(pairs: list[str]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"--meta takes key=value, got {pair!r}")
        try:
            meta[key] = orjson.loads(raw)
        except orjson.JSONDecodeError:
            meta[key] = raw
    return meta


def _print_json(items: list[Any]) -> None:
    for item in items:
        console.print_json(item.model_dump_json(), indent=None)


@app.command()
def demo(
    db: Annotated[
        str, typer.Option("--db", help="SQLite file to create, or a postgresql:// URL of a scratch database.")
    ] = "mnemonite-demo.db",
    fresh: Annotated[
        bool, typer.Option(help="Start from nothing: delete the file, or every mnemonite table of the database.")
    ] = False,
) -> None:
    """Record a three-session conversation, consolidate it, and travel in time."""
    from mnemonite.demo import run_demo

    if db.startswith(("postgresql://", "postgres://")):
        url = db
        if fresh:
            _drop_postgres_tables(url)
    else:
        path = Path(db.removeprefix("sqlite:///"))
        if path.exists():
            if not fresh:
                err.print(f"[red]error:[/] {path} exists; pass --fresh to replace it or choose another --db")
                raise typer.Exit(code=2)
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        url = f"sqlite:///{path}"
    try:
        run_demo(url, console)
    except MnemoniteError as error:
        err.print(f"[red]error:[/] {type(error).__name__}: {error}")
        raise typer.Exit(code=2) from None


def _drop_postgres_tables(url: str) -> None:
    import asyncio

    from mnemonite.store.postgres import PostgresMemoryStore

    try:
        asyncio.run(PostgresMemoryStore(url).drop_tables())
    except MnemoniteError as error:
        err.print(f"[red]error:[/] {type(error).__name__}: {error}", highlight=False)
        raise typer.Exit(code=2) from None


@app.command()
def copy(
    source: Annotated[str, typer.Argument(help="Memory URL to copy from, e.g. sqlite:///./agent-memory.db")],
    destination: Annotated[str, typer.Argument(help="Memory URL of an empty memory, e.g. postgresql://host/db")],
) -> None:
    """Copy a whole memory into an empty one (another backend too), then verify every table's row count."""
    import asyncio

    from mnemonite.copy import copy_memory

    columns = (TextColumn("{task.description:>16}"), BarColumn(), MofNCompleteColumn())
    try:
        with Progress(*columns, console=err) as progress:
            tasks: dict[str, TaskID] = {}

            def step(table: str, done: int, total: int) -> None:
                if table not in tasks:
                    tasks[table] = progress.add_task(table, total=total)
                progress.update(tasks[table], completed=done)

            report = asyncio.run(copy_memory(source, destination, progress=step))
    except MnemoniteError as error:
        err.print(f"[red]error:[/] {type(error).__name__}: {error}", highlight=False)
        raise typer.Exit(code=2) from None
    table = Table("table", "source rows", "copied rows", "")
    for name, count in report.source.items():
        copied = report.destination[name]
        table.add_row(name, str(count), str(copied), "ok" if copied == count else "[red]MISMATCH[/]")
    console.print(table)
    if not report.ok:
        err.print("[red]error:[/] row counts differ; the destination is incomplete")
        raise typer.Exit(code=1)
    console.print(f"copied {sum(report.source.values())} rows; every table's count matches")


@app.command()
def record(
    content: Annotated[str, typer.Argument(help="What happened: a message, an observation.")],
    user: UserOption,
    session: Annotated[str, typer.Option("--session", "-s", help="Session id.")],
    agent: Annotated[str, typer.Option("--agent", "-a", help="Agent id.")],
    episode_id: Annotated[str | None, typer.Option("--id", help="Episode id (default: random).")] = None,
    timestamp: Annotated[str | None, typer.Option(help="ISO 8601 time with timezone (default: now).")] = None,
    meta: Annotated[list[str] | None, typer.Option("--meta", help="Metadata key=value (value may be JSON).")] = None,
    source_node: Annotated[str, typer.Option(help="Originating node id.")] = "",
    db: DbOption = None,
) -> None:
    """Record one episode under (user, session, agent)."""
    fields: dict[str, Any] = {"content": content, "metadata": _metadata(meta or []), "source_node": source_node}
    if episode_id:
        fields["id"] = episode_id
    if timestamp:
        fields["timestamp"] = _when(timestamp)
    with _memory(db) as mem:
        try:
            episode = mem.episodic.put(Episode(**fields), user=user, session=session, agent=agent)
        except InvalidInputError as error:
            raise typer.BadParameter(str(error)) from None
        console.print(f"recorded episode [bold]{episode.id}[/]")


@app.command()
def recent(
    user: UserOption,
    session: Annotated[str | None, typer.Option("--session", "-s")] = None,
    agent: Annotated[str | None, typer.Option("--agent", "-a")] = None,
    limit: Annotated[int, typer.Option(min=1)] = 10,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """The newest episodes; leave out --session (and --agent) to widen."""
    with _memory(db) as mem:
        episodes = mem.episodic.recent(user, session, agent, limit=limit)
    if as_json:
        _print_json(episodes)
        return
    table = Table("time", "session", "agent", "id", "content")
    for e in episodes:
        table.add_row(f"{e.timestamp:%Y-%m-%d %H:%M:%S}", e.session, e.agent, e.id, e.content)
    console.print(table)


@app.command()
def consolidate(
    rule_id: Annotated[str | None, typer.Argument(help="Run this rule now, until it has caught up.")] = None,
    db: DbOption = None,
) -> None:
    """Run one rule now, or every registered rule whose cadence is due."""
    with _memory(db) as mem:
        if rule_id is None:
            runs = mem.run_due()
            if not runs:
                console.print("no rule is due")
        else:
            runs = _catch_up(mem, rule_id)
    for run in runs:
        applied = [d for d in run.deltas if d.applied_at is not None]
        kinds = {k: sum(1 for d in applied if d.kind == k) for k in ("add", "update", "delete", "noop")}
        rejected = [d for d in run.deltas if d.rejected_at is not None]
        console.print(f"rule [bold]{run.rule_id}[/]: scanned {run.episodes_scanned} episodes, applied {kinds}")
        for record in rejected:
            err.print(
                f"[yellow]rejected[/] {record.kind} from {record.delta.source_episode_ids}: {record.rejected_reason}"
            )


def _catch_up(mem: SyncMemory, rule_id: str) -> list[ConsolidationRun]:
    state = next((s for s in mem.rules() if s.rule.id == rule_id), None)
    total = state.episodes_since if state else 0
    merged: list[ConsolidationRun] = []
    columns = (TextColumn("consolidating"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        task = progress.add_task(rule_id, total=total)
        while True:
            run = mem.consolidate(rule_id)
            merged.append(run)
            progress.update(task, advance=run.episodes_scanned)
            if run.remaining == 0 or run.episodes_scanned == 0:
                break
    deltas = [d for run in merged for d in run.deltas]
    scanned = sum(run.episodes_scanned for run in merged)
    return [merged[-1].model_copy(update={"deltas": deltas, "episodes_scanned": scanned})]


@app.command()
def facts(
    user: UserOption,
    agent: Annotated[str | None, typer.Option("--agent", "-a")] = None,
    as_of: Annotated[str | None, typer.Option(help="System time: what memory believed then.")] = None,
    valid_at: Annotated[str | None, typer.Option(help="World time: what held then.")] = None,
    predicate: Annotated[str | None, typer.Option()] = None,
    limit: Annotated[int, typer.Option(min=1)] = 100,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Facts of a user (and agent), with provenance; time-travel with --as-of / --valid-at."""
    with _memory(db) as mem:
        scope = Scope(user=user, agent=agent)
        found = mem.semantic.facts(
            scope, as_of=_when(as_of), valid_at=_when(valid_at), predicate=predicate, limit=limit
        )
    if as_json:
        _print_json(found)
        return
    table = Table("id", "text", "valid from", "valid to", "status", "episodes", "rule")
    for f in found:
        valid_to = f"{f.valid_to:%Y-%m-%d}" if f.valid_to else "-"
        table.add_row(
            f.id[:8], f.text, f"{f.valid_from:%Y-%m-%d}", valid_to, f.status, ", ".join(f.source_episode_ids), f.rule_id
        )
    console.print(table)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    user: UserOption,
    agent: Annotated[str | None, typer.Option("--agent", "-a")] = None,
    session: Annotated[str | None, typer.Option("--session", "-s")] = None,
    k: Annotated[int, typer.Option("-k", min=1, help="How many hits.")] = 10,
    tier: Annotated[list[str] | None, typer.Option(help="episodic and/or semantic (default: both).")] = None,
    fresh: Annotated[bool, typer.Option(help="Embed records not yet indexed before searching.")] = True,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Hybrid search (full text + vectors) over a scope's episodes and facts."""
    scope = Scope(user=user, agent=agent, session=session)
    tiers = tuple(tier or ("episodic", "semantic"))
    if not set(tiers) <= {"episodic", "semantic"}:
        raise typer.BadParameter(f"--tier must be episodic or semantic, got {tiers}")
    with _memory(db) as mem:
        try:
            hits = mem.search(scope, query, k, tiers=tiers, fresh=fresh)  # type: ignore[arg-type]
        except InvalidInputError as error:
            raise typer.BadParameter(str(error)) from None
    if as_json:
        _print_json(hits)
        return
    table = Table("score", "tier", "text", "full text #", "vector #")
    for h in hits:
        text = h.record.content if isinstance(h.record, Episode) else h.record.text
        table.add_row(f"{h.score:.3f}", h.tier, text, str(h.fulltext_rank or "-"), str(h.vector_rank or "-"))
    console.print(table)


@app.command()
def index(db: DbOption = None) -> None:
    """Embed every record the active embedder has not embedded yet."""
    with _memory(db) as mem:
        console.print(f"embedded {mem.index()} records")


@app.command("migrate-embedder")
def migrate_embedder(
    strategy: Annotated[str, typer.Option(help="auto-migrate (re-embed, then drop old vectors) or multi-active.")] = (
        "auto-migrate"
    ),
    db: DbOption = None,
) -> None:
    """Re-embed every record with the configured embedder; resumable (Ctrl-C, then run it again)."""
    if strategy not in ("auto-migrate", "multi-active"):
        raise typer.BadParameter("--strategy must be auto-migrate or multi-active")
    try:
        with _memory(db, embedder_strategy=strategy) as mem:
            _migrate_with_progress(mem)
    except KeyboardInterrupt:
        err.print("interrupted: progress is saved, run the same command again to resume")
        raise typer.Exit(code=130) from None


def _migrate_with_progress(mem: SyncMemory) -> None:
    columns = (TextColumn("re-embedding {task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err) as progress:
        tasks: dict[str, TaskID] = {}
        for step in mem.migrate_embedder():
            if step.kind not in tasks:
                tasks[step.kind] = progress.add_task(f"{step.kind}s", total=step.embedded + step.remaining)
            progress.update(tasks[step.kind], completed=step.embedded)
    console.print("embedder migration complete")


@app.command()
def remember(
    text: Annotated[str, typer.Argument(help="The statement to remember, e.g. 'I moved to Lisbon'.")],
    user: UserOption,
    agent: Annotated[str, typer.Option("--agent", "-a", help="Agent id.")],
    memory_type: Annotated[str, typer.Option("--type", help="fact, preference, decision, ...")] = "fact",
    db: DbOption = None,
) -> None:
    """Remember a fact through the conflict pipeline; prints the decision (supersede, dedup, pending, admit)."""
    with _memory(db) as mem:
        try:
            decision = mem.semantic.remember_with_decision(
                Scope(user=user, agent=agent),
                text,
                memory_type=memory_type,  # type: ignore[arg-type]
            )
        except InvalidInputError as error:
            raise typer.BadParameter(str(error)) from None
        cosine = "" if decision.cosine is None else f", cosine {decision.cosine:.3f}"
        console.print(
            f"[bold]{decision.kind}[/] fact {decision.fact_id} (stage {decision.stage}, zone {decision.zone}{cosine}):"
            f" {decision.reason}"
        )
        for old in decision.matched_ids:
            console.print(f"  {'supersedes' if decision.kind == 'supersede' else 'same as'} {old}")


@app.command()
def conflicts(
    user: UserOption,
    agent: Annotated[str | None, typer.Option("--agent", "-a")] = None,
    limit: Annotated[int, typer.Option(min=1)] = 100,
    db: DbOption = None,
) -> None:
    """The decision log of remember: one JSON line per decision, oldest first."""
    with _memory(db) as mem:
        _print_json(mem.semantic.conflicts(Scope(user=user, agent=agent), limit=limit))


@app.command()
def forget(fact_id: str, db: DbOption = None) -> None:
    """Soft-delete a fact (kept for as-of replay)."""
    with _memory(db) as mem:
        fact = mem.semantic.forget(fact_id)
        console.print(f"forgot fact [bold]{fact.id}[/] (status {fact.status})")


@app.command()
def purge(
    fact_id: str,
    reason: Annotated[str, typer.Option(help="Why (kept in the audit log), e.g. 'GDPR erasure request'.")],
    db: DbOption = None,
) -> None:
    """Remove a fact and its whole supersede chain for good (privacy requests); audited."""
    with _memory(db) as mem:
        record = mem.semantic.purge(fact_id, reason=reason)
        console.print(f"purged {len(record.fact_ids)} fact version(s): {', '.join(record.fact_ids)}")


@app.command()
def history(fact_id: str, db: DbOption = None) -> None:
    """The supersede chain of a fact, oldest first."""
    with _memory(db) as mem:
        _print_json(mem.semantic.history(fact_id))


@app.command()
def deltas(
    pending: Annotated[bool, typer.Option(help="Only emitted deltas not yet applied.")] = False,
    rule: Annotated[str | None, typer.Option(help="Only this rule's deltas.")] = None,
    limit: Annotated[int, typer.Option(min=1)] = 100,
    db: DbOption = None,
) -> None:
    """The audit log: every delta consolidation emitted and every delta applied."""
    with _memory(db) as mem:
        _print_json(mem.semantic.deltas(rule_id=rule, pending=pending, limit=limit))


@app.command()
def health(
    deep: Annotated[bool, typer.Option(help="Also run the integrity check (reads the whole file).")] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Counts, schema version and (with --deep) integrity of the store."""
    with _memory(db) as mem:
        report = mem.health(deep=deep)
    if as_json:
        _print_json([report])
        return
    table = Table("metric", "value")
    for key, value in report.model_dump().items():
        table.add_row(key, str(value))
    console.print(table)
    if not report.ok:
        raise typer.Exit(code=1)


@app.command()
def migrate(plan_file: Annotated[Path, typer.Argument(help="A MigrationPlan as JSON.")], db: DbOption = None) -> None:
    """Apply a schema migration plan (adding nullable columns only)."""
    with _memory(db) as mem:
        mem.migrate(MigrationPlan.model_validate_json(plan_file.read_bytes()))
    console.print(f"applied {plan_file}")


@rules_app.command("add")
def rules_add(
    rule_id: str,
    every: Annotated[int | None, typer.Option(help="Fire after N new episodes (1 = streaming).")] = None,
    cron: Annotated[str | None, typer.Option(help='Fire on a cron schedule, e.g. "0 3 * * *" (UTC).')] = None,
    when: Annotated[str, typer.Option("--filter", help="when_filter, e.g. \"metadata.intent != 'noop'\".")] = "",
    emits: Annotated[list[str] | None, typer.Option("--emits", help="Fact channel (repeatable).")] = None,
    db: DbOption = None,
) -> None:
    """Register or redefine a rule (default cadence: nightly at 03:00 UTC)."""
    cadence: dict[str, Any] = {"every": every} if every is not None else {"cron": cron or "0 3 * * *"}
    if every is not None and cron is not None:
        raise typer.BadParameter("give --every or --cron, not both")
    with _memory(db) as mem:
        rule = ConsolidationRule(id=rule_id, cadence=cadence, when_filter=when, then_emits=emits or ["facts"])
        state = mem.add_rule(rule)
    console.print(f"rule [bold]{state.rule.id}[/] registered ({state.rule.cadence})")


@rules_app.command("list")
def rules_list(db: DbOption = None) -> None:
    """Registered rules, their cadence and progress."""
    with _memory(db) as mem:
        states = mem.rules()
    table = Table("id", "cadence", "filter", "last run", "next run", "new episodes")
    for s in states:
        nxt = s.next_run_at()
        last = f"{s.last_run_at:%Y-%m-%d %H:%M}" if s.last_run_at else "-"
        table.add_row(
            s.rule.id,
            str(s.rule.cadence),
            s.rule.when_filter or "(all)",
            last,
            f"{nxt:%Y-%m-%d %H:%M}" if nxt else "-",
            str(s.episodes_since),
        )
    console.print(table)


@rules_app.command("remove")
def rules_remove(rule_id: str, db: DbOption = None) -> None:
    """Unregister a rule; the facts it promoted stay."""
    with _memory(db) as mem:
        mem.remove_rule(rule_id)
    console.print(f"rule {rule_id} removed")


from mnemonite.cli_graph import graph_app  # noqa: E402  # its commands reuse the helpers above

app.add_typer(graph_app, name="graph")


def main() -> None:
    app()
