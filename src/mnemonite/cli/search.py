"""Search and the vector index: ``search``, ``index``, ``migrate-embedder``."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from mnemonite.cli._app import app
from mnemonite.cli._common import (
    CsvOption,
    DbOption,
    JsonOption,
    NlOption,
    OptionalAgent,
    OptionalSession,
    UserOption,
    emit_one,
    emit_rows,
    err,
    opened,
    progress_bar,
    say,
    table,
)

if TYPE_CHECKING:
    from mnemonite.models.search import SearchHit
    from mnemonite.models.search import Tier as SearchTier
    from mnemonite.sync import SyncMemory


class Tier(StrEnum):
    """The tiers search reads (`mnemonite.models.search.Tier`)."""

    episodic = "episodic"
    semantic = "semantic"


class Route(StrEnum):
    """``search --route``: routed retrieval (`mnemonite.search.routing`); ``auto`` picks by the query."""

    auto = "auto"
    sequential = "sequential"
    multihop = "multihop"
    graph = "graph"
    flat = "flat"


class Strategy(StrEnum):
    """How ``migrate-embedder`` treats the previous model's vectors."""

    auto_migrate = "auto-migrate"
    multi_active = "multi-active"


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    user: UserOption,
    agent: OptionalAgent = None,
    session: OptionalSession = None,
    k: Annotated[int, typer.Option("-k", min=1, help="How many hits.")] = 10,
    tier: Annotated[list[Tier] | None, typer.Option(help="A tier to search (repeatable; default: both).")] = None,
    fresh: Annotated[
        bool, typer.Option(help="Embed every record not yet indexed first (with a progress bar), then search.")
    ] = False,
    route: Annotated[
        Route | None,
        typer.Option(
            help="Routed retrieval: auto picks sequential, multihop, graph or flat by the query (says which and why)."
        ),
    ] = None,
    facts_stand_in: Annotated[
        bool,
        typer.Option(
            "--facts-stand-in/--facts-beside",
            help="A fact stands in for the turns it was read from, or is shown beside them. Not with --route.",
        ),
    ] = True,
    current_first: Annotated[
        bool,
        typer.Option(
            "--current-first/--as-scored",
            help="A turn whose facts were all superseded since comes below what replaced them, or stays where it"
            " scored (marked (superseded) either way). Not with --route.",
        ),
    ] = True,
    as_json: JsonOption = False,
    nl: NlOption = False,
    as_csv: CsvOption = False,
    db: DbOption = None,
) -> None:
    """Hybrid search (full text + vectors) over a scope's episodes and facts.

    Records written just before are found: a few waiting for a vector are embedded inline.
    """
    from mnemonite.scope import Scope

    tiers: tuple[SearchTier, ...] = tuple(t.value for t in tier or (Tier.episodic, Tier.semantic))
    if route is not None and not (facts_stand_in and current_first):
        raise typer.BadParameter("applies to a plain search, not to --route", param_hint="--facts-beside/--as-scored")
    scope = Scope(user=user, agent=agent, session=session)
    with opened(db, create=False) as mem:
        if fresh:
            _index_with_progress(mem, "embedding")
        if route is not None:
            routed = mem.retrieve(scope, query, k, route=route.value)
            if emit_one(routed, as_json=as_json):
                return
            err.print(f"route: {routed.route} ({routed.reason})", markup=False, soft_wrap=True)
            hits = routed.hits
        else:
            off = {name: False for name, on in (("facts_stand_in", facts_stand_in), ("current_first", current_first))
                   if not on}  # fmt: skip
            options = mem.config.search.model_copy(update=off) if off else None
            hits = mem.search(scope, query, k, tiers=tiers, fresh=fresh, options=options)
    unsearched = getattr(hits, "unsearched", 0)
    if unsearched:  # on stderr, so that --json and --csv stay one document
        err.print(f"{unsearched:,} records of this scope were not searched by meaning yet (still being indexed):"
                  " a record that says it in other words may be missing; `mnemonite index` or --fresh embeds them",
                  markup=False, soft_wrap=True)  # fmt: skip
    if emit_rows(hits, as_json=as_json, nl=nl, as_csv=as_csv):
        return
    rows = [
        (
            f"{h.score:.3f}",
            h.tier,
            h.record.id,
            _marked(h),
            h.fulltext_rank or "-",
            h.vector_rank or "-",
        )
        for h in hits
    ]
    table(("score", "tier", "id", "text", "full text #", "vector #"), rows)


def _index_with_progress(mem: SyncMemory, label: str) -> int:
    with progress_bar(label) as step:
        return mem.index(progress=lambda p: step(p.embedded, p.embedded + p.remaining))


@app.command()
def index(as_json: JsonOption = False, db: DbOption = None) -> None:
    """Embed every record the active embedder has not embedded yet (with a progress bar)."""
    with opened(db, create=False) as mem:
        count = _index_with_progress(mem, "embedding")
    if not emit_one({"embedded": count}, as_json=as_json):
        say(f"embedded {count} records")


@app.command("migrate-embedder")
def migrate_embedder(
    strategy: Annotated[
        Strategy, typer.Option(help="Re-embed then drop the old vectors, or keep both models' vectors.")
    ] = Strategy.auto_migrate,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Re-embed every record with the configured embedder; resumable (Ctrl-C, then run it again)."""
    try:
        with opened(db, create=False, embedder_strategy=strategy.value) as mem:
            _migrate_with_progress(mem)
    except KeyboardInterrupt:
        err.print("interrupted: progress is saved, run the same command again to resume")
        raise typer.Exit(code=130) from None
    if not emit_one({"migrated": True}, as_json=as_json):
        say("embedder migration complete")


def _migrate_with_progress(mem: SyncMemory) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

    columns = (TextColumn("re-embedding {task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err, disable=not err.is_terminal) as bar:
        tasks: dict[str, TaskID] = {}
        for step in mem.migrate_embedder():
            if step.kind not in tasks:
                tasks[step.kind] = bar.add_task(f"{step.kind}s", total=step.embedded + step.remaining)
            bar.update(tasks[step.kind], completed=step.embedded)


def _marked(hit: SearchHit) -> str:
    """A hit's text with what a reader must know first: not yet confirmed, possibly replaced, or replaced."""
    if hit.pending:
        return f"(pending) {hit.text}"
    if hit.possibly_replaced_by:
        return f"(possibly replaced by {hit.possibly_replaced_by[:8]}) {hit.text}"
    return f"(superseded) {hit.text}" if hit.superseded else hit.text
