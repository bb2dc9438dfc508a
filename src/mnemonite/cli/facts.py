"""Facts: ``remember``, ``supersede``, ``facts``, ``forget``, ``purge``, ``history``, ``conflicts``, ``deltas``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from mnemonite.cli._app import app
from mnemonite.cli._common import (
    AgentOption,
    CsvOption,
    DbOption,
    JsonOption,
    LimitOption,
    MemoryType,
    NlOption,
    OptionalAgent,
    UserOption,
    day,
    e,
    emit_one,
    emit_rows,
    opened,
    resolve,
    say,
    table,
    text_argument,
    when,
)
from mnemonite.scope import DEFAULT_AGENT

if TYPE_CHECKING:
    from mnemonite.models import DeltaRecord

FactId = Annotated[str, typer.Argument(help="A fact id, or any unique prefix of one.")]
FACT_COLUMNS = ("id", "text", "valid from", "valid to", "status", "episodes", "rule")


@app.command()
def remember(
    text: Annotated[str, typer.Argument(help="The statement, e.g. 'I moved to Lisbon'; - reads standard input.")],
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    memory_type: Annotated[MemoryType, typer.Option("--type", help="The kind of fact.")] = MemoryType.fact,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Remember a fact through the conflict pipeline; prints the decision (supersede, dedup, pending, admit)."""
    from mnemonite.scope import Scope

    with opened(db, create=True) as mem:
        decision = mem.semantic.remember_with_decision(
            Scope(user=user, agent=agent), text_argument(text), memory_type=memory_type.value
        )
    if emit_one(decision, as_json=as_json):
        return
    cosine = "" if decision.cosine is None else f", cosine {decision.cosine:.3f}"
    say(
        f"[bold]{decision.kind}[/] fact {e(decision.fact_id)} (stage {decision.stage}, zone {decision.zone}{cosine}):"
        f" {e(decision.reason)}"
    )
    for old in decision.matched_ids:
        say(f"  {'supersedes' if decision.kind == 'supersede' else 'same as'} {e(old)}")


@app.command()
def supersede(
    old_id: FactId,
    text: Annotated[str, typer.Argument(help="The new statement; - reads standard input.")],
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Replace a current fact with a new statement; the old one is closed and kept for as-of replay."""
    with opened(db, create=False) as mem:
        old = resolve(mem, "fact", old_id)
        fact = mem.semantic.supersede(old, text_argument(text))
    if not emit_one(fact, as_json=as_json):
        say(f"fact [bold]{e(fact.id)}[/] supersedes {e(old)}: {e(fact.text)}")


@app.command()
def facts(
    user: UserOption,
    agent: OptionalAgent = None,
    as_of: Annotated[str | None, typer.Option(help="System time (ISO 8601): what memory believed then.")] = None,
    valid_at: Annotated[str | None, typer.Option(help="World time (ISO 8601): what held then.")] = None,
    predicate: Annotated[str | None, typer.Option(help="Only facts with this predicate.")] = None,
    limit: LimitOption = 100,
    as_json: JsonOption = False,
    nl: NlOption = False,
    as_csv: CsvOption = False,
    db: DbOption = None,
) -> None:
    """Facts of a user (and agent), with provenance; time-travel with --as-of / --valid-at."""
    from mnemonite.scope import Scope

    moments = when(as_of, "--as-of"), when(valid_at, "--valid-at")
    scope = Scope(user=user, agent=agent)
    with opened(db, create=False) as mem:
        found = mem.semantic.facts(scope, as_of=moments[0], valid_at=moments[1], predicate=predicate, limit=limit)
    if emit_rows(found, as_json=as_json, nl=nl, as_csv=as_csv):
        return
    rows = [
        (f.id, f.text, day(f.valid_from), day(f.valid_to), f.status, ", ".join(f.source_episode_ids), f.rule_id)
        for f in found
    ]
    table(FACT_COLUMNS, rows)


@app.command()
def forget(fact_id: FactId, as_json: JsonOption = False, db: DbOption = None) -> None:
    """Soft-delete a fact (kept for as-of replay)."""
    with opened(db, create=False) as mem:
        fact = mem.semantic.forget(resolve(mem, "fact", fact_id))
    if not emit_one(fact, as_json=as_json):
        say(f"forgot fact [bold]{e(fact.id)}[/] (status {fact.status})")


@app.command()
def purge(
    fact_id: FactId,
    reason: Annotated[str, typer.Option(help="Why (kept in the audit log), e.g. 'GDPR erasure request'.")],
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Remove a fact and its whole supersede chain for good (privacy requests); audited."""
    with opened(db, create=False) as mem:
        done = mem.semantic.purge(resolve(mem, "fact", fact_id), reason=reason)
    if not emit_one(done, as_json=as_json):
        say(f"purged {len(done.fact_ids)} fact version(s): {e(', '.join(done.fact_ids))}")


@app.command()
def history(
    fact_id: FactId,
    as_json: JsonOption = False,
    nl: NlOption = False,
    as_csv: CsvOption = False,
    db: DbOption = None,
) -> None:
    """The supersede chain of a fact, oldest first."""
    with opened(db, create=False) as mem:
        chain = mem.semantic.history(resolve(mem, "fact", fact_id))
    if emit_rows(chain, as_json=as_json, nl=nl, as_csv=as_csv):
        return
    rows = [(f.id, f.text, day(f.valid_from), day(f.valid_to), f.status) for f in chain]
    table(FACT_COLUMNS[:5], rows)


@app.command()
def conflicts(
    user: UserOption,
    agent: OptionalAgent = None,
    limit: LimitOption = 100,
    as_json: JsonOption = False,
    nl: NlOption = False,
    as_csv: CsvOption = False,
    db: DbOption = None,
) -> None:
    """The decision log of remember, oldest first."""
    from mnemonite.scope import Scope

    with opened(db, create=False) as mem:
        found = mem.semantic.conflicts(Scope(user=user, agent=agent), limit=limit)
    if emit_rows(found, as_json=as_json, nl=nl, as_csv=as_csv):
        return
    rows = [(d.fact_id, d.kind, d.stage, d.zone, ", ".join(d.matched_ids), d.reason) for d in found]
    table(("fact", "decision", "stage", "zone", "matched", "reason"), rows)


@app.command()
def deltas(
    pending: Annotated[bool, typer.Option(help="Only emitted deltas not yet applied.")] = False,
    rule: Annotated[str | None, typer.Option(help="Only this rule's deltas.")] = None,
    limit: LimitOption = 100,
    as_json: JsonOption = False,
    nl: NlOption = False,
    as_csv: CsvOption = False,
    db: DbOption = None,
) -> None:
    """The audit log: every delta consolidation emitted and every delta applied."""
    with opened(db, create=False) as mem:
        found = mem.semantic.deltas(rule_id=rule, pending=pending, limit=limit)
    if emit_rows(found, as_json=as_json, nl=nl, as_csv=as_csv):
        return
    rows = [(d.delta_id, d.kind, d.rule_id, ", ".join(d.delta.source_episode_ids), _state(d)) for d in found]
    table(("id", "kind", "rule", "episodes", "state"), rows)


def _state(record: DeltaRecord) -> str:
    if record.applied_at is not None:
        return "applied"
    return "rejected" if record.rejected_at is not None else "pending"
