"""The operator's verbs over HTTP (capability ``admin``): consolidation rules and runs, store health.

Rules are the memory's, not one user's: a run consolidates every user's new episodes into
their own facts, and its answer holds counts only, never another user's records. The delta audit
log holds every user's facts, so it is not served: a key reaches its own scope only (the CLI's
``mnemonite deltas`` reads it on the database itself).
"""

from __future__ import annotations

from pydantic import AwareDatetime

from mnemonite.models import ConsolidationRule, RuleState, StoreHealth
from mnemonite.models.base import Model
from mnemonite.server.graph import Removed
from mnemonite.server.verbs import Call, Verb

__all__ = ["VERBS"]


class Embedded(Model):
    """How many records were embedded."""

    embedded: int


class RunSummary(Model):
    """What one consolidation pass did, in counts."""

    rule_id: str
    ran_at: AwareDatetime
    episodes_scanned: int
    deltas_applied: int
    deltas_rejected: int
    remaining: int


async def rules(call: Call[None]) -> list[RuleState]:
    """Every registered consolidation rule with its progress and cadence state."""
    return await call.mem.rules()


async def add_rule(call: Call[ConsolidationRule]) -> RuleState:
    """Register a consolidation rule (or redefine one, keeping its progress)."""
    return await call.mem.add_rule(call.body)


async def remove_rule(call: Call[None]) -> Removed:
    """Unregister a rule; the facts it promoted stay."""
    await call.mem.remove_rule(call.ids["rule_id"])
    return Removed(removed=call.ids["rule_id"])


async def run_rule(call: Call[None]) -> RunSummary:
    """Run a registered rule now: claim its new episodes, classify them and apply the deltas."""
    run = await call.mem.consolidate(call.ids["rule_id"])
    rejected = sum(1 for record in run.deltas if record.rejected_at is not None)
    return RunSummary(rule_id=run.rule_id, ran_at=run.ran_at, episodes_scanned=run.episodes_scanned,
                      deltas_applied=len(run.deltas) - rejected, deltas_rejected=rejected,
                      remaining=run.remaining)  # fmt: skip


async def index(call: Call[None]) -> Embedded:
    """Embed every record that waits for a vector now, instead of in the background."""
    return Embedded(embedded=await call.mem.index())


async def health(call: Call[None]) -> StoreHealth:
    """Counts and schema version of the store, and how many records wait for a vector."""
    return await call.mem.health()


VERBS: tuple[Verb, ...] = (
    Verb("admin", "rules.list", "GET", "/v1/rules", "admin", rules, list[RuleState]),
    Verb("admin", "rules.add", "POST", "/v1/rules", "admin", add_rule, RuleState, body=ConsolidationRule, status=201),
    Verb("admin", "rules.remove", "DELETE", "/v1/rules/{rule_id}", "admin", remove_rule, Removed),
    Verb("admin", "rules.run", "POST", "/v1/rules/{rule_id}/run", "admin", run_rule, RunSummary),
    Verb("admin", "index", "POST", "/v1/index", "admin", index, Embedded),
    Verb("admin", "health", "GET", "/v1/health", "admin", health, StoreHealth),
)  # fmt: skip
