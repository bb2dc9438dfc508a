"""The semantic tier: facts changed only by typed, audited deltas, readable at any point in time."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, Literal

from mnemonite import conflicts as pipeline
from mnemonite._time import utcnow
from mnemonite.conflicts import LocalePack, locale_pack
from mnemonite.conflicts.names import UserNames
from mnemonite.conflicts.parsed import Parsed
from mnemonite.embedding.base import Vectors as Vector
from mnemonite.embedding.indexer import Indexer
from mnemonite.errors import ConfigurationError, FactConflictError, InvalidInputError, NotFoundError
from mnemonite.inputs import checked
from mnemonite.judge import ConflictJudge
from mnemonite.learned_graph import GraphLearner
from mnemonite.models import (
    AddDelta,
    DeleteDelta,
    DeltaRecord,
    Fact,
    FactFilter,
    Lineage,
    MemoryDelta,
    NoopDelta,
    UpdateDelta,
    parse_delta,
)
from mnemonite.models.conflict import ConflictDecision, ConflictThresholds, JudgeVerdict, PurgeRecord
from mnemonite.models.deltas import GraphChange
from mnemonite.models.fact import MAY_REPLACE, EntityLink, EventDateConfidence, FactStatus, MemoryType
from mnemonite.models.search import SearchFilter, SearchHit
from mnemonite.models.sensitivity import Sensitivity, check_sensitivity
from mnemonite.privacy import SECRETS_KEY, SecretGuard
from mnemonite.reading import ParserUnavailableError, StatementReader, parser_available
from mnemonite.scope import Scope, as_scope
from mnemonite.search import Reranker, SearchEngine, SearchOptions
from mnemonite.store import Store
from mnemonite.tokens import TokenCounter, default_counter
from mnemonite.tracing import span

log = logging.getLogger("mnemonite.conflicts")

AfterWrite = Callable[[], Awaitable[object]]

__all__ = ["SemanticTier"]


def fact_scope(scope: Scope) -> tuple[str, str]:
    if not isinstance(scope, Scope):
        raise InvalidInputError("scope must be a Scope")
    if scope.agent is None:
        raise InvalidInputError(
            f"facts and the graph are one agent's memory: name the agent (Scope(user={scope.user!r}, agent=...);"
            ' over HTTP, "agent" in the request, or a key bound to an agent)'
        )
    return scope.user, scope.agent


def link_of(item: EntityLink | tuple[str, str] | str) -> EntityLink:
    """An entity link from ``EntityLink``, ``(entity_id, role)`` or a bare id (role "about")."""
    if isinstance(item, EntityLink):
        return item
    if isinstance(item, str):
        return EntityLink(entity_id=item)
    if isinstance(item, tuple) and len(item) == 2:
        return EntityLink.model_validate({"entity_id": item[0], "role": item[1]})
    raise InvalidInputError(f"an entity link is (entity_id, role) or an entity id, got {item!r}")


def fact_extras(
    counter: TokenCounter, text: str, entities: Sequence[EntityLink | tuple[str, str] | str], summary: str | None
) -> dict[str, Any]:
    """Entity links (validated), summary and token counts of a fact about to be written."""
    links = list(dict.fromkeys(link_of(item) for item in entities))
    if summary is not None and not summary.strip():
        summary = None
    return {"entities": [link.model_dump() for link in links] or None, "summary": summary,
            "token_count": counter.count(text),
            "summary_token_count": counter.count(summary) if summary else None}  # fmt: skip


def check_text(text: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInputError("a fact's text must be a non-empty string")
    if len(text) > pipeline.MAX_FACT_CHARS:
        raise InvalidInputError(
            f"a fact's text is {len(text):,} characters; the limit is {pipeline.MAX_FACT_CHARS:,} (store long"
            " documents as episodes)"
        )
    return text.strip()


@checked
class SemanticTier:
    """``mem.semantic``: apply deltas, read facts (now, ``as_of`` or ``valid_at``), follow lineage."""

    def __init__(
        self,
        store: Store,
        *,
        after_write: AfterWrite | None = None,
        engine: SearchEngine | None = None,
        indexer: Indexer | None = None,
        locale: str | LocalePack = "en",
        thresholds: ConflictThresholds | None = None,
        judge: ConflictJudge | None = None,
        counter: TokenCounter | None = None,
        sensitivity: Sensitivity = "internal",
        guard: SecretGuard | None = None,
        reader: Literal["auto", "parser", "rules"] | StatementReader | None = "auto",
        learn_graph: bool = True,
    ) -> None:
        self._store = store
        self.sensitivity = check_sensitivity(sensitivity, "internal")
        self.guard = guard or SecretGuard()
        self._after_write = after_write
        self._engine = engine or SearchEngine(store)
        self._indexer = indexer
        self.locale = locale if isinstance(locale, LocalePack) else locale_pack(locale)
        self.thresholds = thresholds or ConflictThresholds()
        self.judge = judge
        self.counter = counter or default_counter()
        self._names = UserNames(store, self.locale)
        self.reader = _reader(reader, self.locale)
        self.learn_graph = learn_graph

    # -- remember: the five-stage conflict pipeline ------------------------------------------

    async def remember_with_decision(
        self,
        scope: Scope,
        text: str,
        *,
        memory_type: MemoryType = "fact",
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        tags: Sequence[str] = (),
        valid_from: datetime | None = None,
        source_episode_ids: Sequence[str] = (),
        confidence: float = 1.0,
        entities: Sequence[EntityLink | tuple[str, str] | str] = (),
        summary: str | None = None,
        payload: dict[str, Any] | None = None,
        rule_id: str = "remember",
        event_date: datetime | None = None,
        event_date_confidence: EventDateConfidence | None = None,
        sensitivity: Sensitivity | None = None,
    ) -> ConflictDecision:
        """Decide what a new statement does to memory (supersede, dedup, pending, admit) and apply it.

        One `ConflictDecision` row is logged per call (see `conflicts`); the facts change through
        the same audited delta path as consolidation (``rule_id`` names the writer in the
        provenance, ``payload`` is free-form data kept with the fact; ``event_date`` is when the
        described event happened, with how sure that date is). ``entities`` links the new fact to graph
        entities of the same scope: ``(entity_id, role)`` pairs (roles: about, by, for, mentions)
        or bare ids (role "about"). A statement found to duplicate a held fact adds nothing, links
        included: the held fact is immutable. ``sensitivity`` defaults to the tier's (see
        `MemoryConfig.sensitivity`); an unknown value raises `SensitivityError`. A secret recognised in
        the statement is stored as ``[secret: PIN]`` and makes the fact secret (see `mnemonite.privacy`).
        """
        user, agent = fact_scope(scope)
        guarded = self.guard.text(check_text(text), check_sensitivity(sensitivity, self.sensitivity))
        text = guarded.text
        (subject, object, summary), level = self._masked((subject, object, summary), guarded.sensitivity)
        if guarded.spans or (payload and SECRETS_KEY in payload):
            payload = guarded.into(payload)
        fields = {"memory_type": memory_type, "subject": subject, "predicate": predicate, "object": object,
                  "tags": list(tags), "valid_from": valid_from, "payload": dict(payload) if payload else None,
                  "event_date": event_date, "event_date_confidence": event_date_confidence,
                  "sensitivity": level, **fact_extras(self.counter, text, entities, summary)}  # fmt: skip
        if not isinstance(rule_id, str) or not rule_id.strip():
            raise InvalidInputError("rule_id must be a non-empty string")
        _precheck(user, agent, text, fields, list(source_episode_ids), confidence, rule_id)
        for attempt in (1, 2):
            try:
                return await self._remember(user, agent, text, fields, list(source_episode_ids), confidence, rule_id)
            except FactConflictError:
                if attempt == 2:
                    raise
                log.info("remember: a fact it meant to supersede changed meanwhile; deciding again")
        raise AssertionError("unreachable")

    async def remember(self, scope: Scope, text: str, **fields: Any) -> Fact:
        """`remember_with_decision`, returning the fact memory holds afterwards (new, or the duplicate kept)."""
        decision = await self.remember_with_decision(scope, text, **fields)
        return await self.get(decision.fact_id)

    async def _remember(
        self,
        user: str,
        agent: str,
        text: str,
        fields: dict[str, Any],
        sources: list[str],
        confidence: float,
        rule_id: str = "remember",
    ) -> ConflictDecision:
        embedder = self._engine.active
        if self._indexer is not None:
            await self._indexer.catch_up(kinds=("fact",))  # every current fact has a vector to compare with
        exact = await self._store.current_by_hash(user, agent, pipeline.text_hash(text))
        vector = await embedder.embed(text) if embedder is not None and exact is None else None  # none for a dup
        neighbours: list[tuple[Fact, float]] = []
        if vector is not None:
            neighbours = await self._nearest(user, agent, vector, self.thresholds.top_k)
        names = await self._names.known(user, agent)
        given = (fields["subject"], fields["predicate"], fields["object"])
        readings = self.locale.readings(text, names)
        told = bool(given[0] and given[1] and given[2])
        triple = pipeline.Triple(*given) if told else (readings[0] if readings else None)
        same: list[Fact] = []
        also: list[tuple[pipeline.Triple, list[Fact]]] = []
        if triple is not None and exact is None:
            same = await self._names.same_predicate(user, agent, triple, names)
            for clause in readings[1:] if not told else ():  # the caller's triple is the statement's reading
                also.append((clause, await self._names.same_predicate(user, agent, clause, names)))
        outcome = pipeline.decide(
            text,
            exact=exact,
            neighbours=neighbours,
            same_predicate=same,
            pack=self.locale,
            thresholds=self.thresholds,
            triple=triple,
            names=names,
            judged=self.judge is not None,
            also=also,
        )
        outcome = await self._reconsider(outcome, text, neighbours, names)  # a duplicate (exact) stays one
        fields = _stored(fields, outcome, triple if exact is None else None)
        graph: GraphChange | None = None
        if outcome.kind != "dedup":
            graph, fields = await self._learned(user, agent, text, names, fields)
        now = utcnow()
        provenance = {"source_episode_ids": sources, "promotion_ts": now, "rule_id": rule_id,
                      "confidence": confidence}  # fmt: skip
        payload = {"text": text, "user": user, "agent": agent, **{k: v for k, v in fields.items() if v is not None},
                   "status": "pending" if outcome.kind == "pending" else "active"}  # fmt: skip
        if fields["valid_from"] is None:
            payload["valid_from"] = now
        delta: MemoryDelta
        if outcome.kind == "dedup":
            delta = NoopDelta(**provenance)
        elif outcome.kind == "supersede":
            delta = UpdateDelta(replaces=list(outcome.targets), fact_payload=payload, graph=graph, **provenance)
        else:
            delta = AddDelta(fact_payload=payload, graph=graph, **provenance)
        decision = ConflictDecision(
            kind=outcome.kind, stage=outcome.stage, zone=outcome.zone, cosine=outcome.cosine, reason=outcome.reason,
            fact_id=outcome.targets[0] if outcome.kind == "dedup" else "", matched_ids=list(outcome.targets),
            user=user, agent=agent, candidate_text=text, decided_at=now,
        )  # fmt: skip
        with span("memory.conflict") as traced:
            model = (embedder.model, vector) if embedder is not None and vector is not None else None
            decision, _, _ = await self._store.remember(delta, decision, model)
            traced(decision, fields["sensitivity"])
        await self._names.learn(user, agent, text)
        if self._after_write is not None:
            await self._after_write()
        return decision

    async def _learned(
        self, user: str, agent: str, text: str, names: frozenset[str], fields: dict[str, Any]
    ) -> tuple[GraphChange | None, dict[str, Any]]:
        """What the statement adds to the graph (`mnemonite.learned_graph`), and the fields with its links to the
        entities it names after the caller's own."""
        if not self.learn_graph or self.reader is None or fields.get("entities") or fields["sensitivity"] == "secret":
            return None, fields  # linked as told by the caller; a secret names nobody in the graph
        planned = await self._graph_of(user, agent, text, names)
        if planned is None:
            return None, fields
        change, links = planned
        return change, {**fields, "entities": [link.model_dump() for link in links] or None}

    async def _graph_of(
        self, user: str, agent: str, text: str, names: frozenset[str]
    ) -> tuple[GraphChange, list[EntityLink]] | None:
        """What a statement of the scope adds to its graph and the statement's links, or None: it names nothing, or
        there is no parser (the graph is learned by the parser alone; see `mnemonite.learned_graph`)."""
        if self.reader is None:
            return None
        try:
            return await GraphLearner(self._store, self.reader).plan(user, agent, text, names)
        except ParserUnavailableError as error:
            log.warning("remember: the statement parser is unavailable, reading by rules alone: %s", error)
            self.reader = None
            return None
        except Exception:  # the graph never stands in the way of the fact: it is written, unlinked
            log.exception("remember: the graph could not be read from a statement; the fact is kept without it")
            return None

    async def _reconsider(
        self, outcome: pipeline.Outcome, text: str, neighbours: list[tuple[Fact, float]], names: frozenset[str]
    ) -> pipeline.Outcome:
        """The rules' outcome, read again by the parser where it may change (the candidate and its nearest held
        facts parsed in a worker thread, only then)."""
        if self.reader is None or not neighbours or not pipeline.open_to_parsing(outcome):
            return outcome
        held = [fact.text for fact, _ in neighbours]
        try:
            read = await asyncio.to_thread(self.reader.read_many, [text, *held], names)
        except ParserUnavailableError as error:  # a damaged model: the rules alone from now on, never a failed write
            log.warning("remember: the statement parser is unavailable, reading by rules alone: %s", error)
            self.reader = None
            return outcome
        ids = [fact.id for fact, _ in neighbours]
        parsed = Parsed(read[0], dict(zip(ids, read[1:], strict=True)), names, self.locale.genders)
        return pipeline.reconsider(outcome, parsed, neighbours, self.thresholds)

    # -- who "I" is: the user's names and aliases ---------------------------------------------

    async def add_names(self, scope: Scope, *names: str) -> list[str]:
        """Record names the scope's user goes by ("Jo", "Joanna"); returns every name known.

        A statement about one of them is a statement about the user ("Jo moved to Riga" meets
        "I live in Oslo"). Names are also learned from what the user says ("I'm Jo", "my name is
        Jo", "call me Jo"), and the user id counts as one when it is a plain word. Each name is
        kept as a fact (subject ``user``, predicate ``alias``), so it is audited and can be forgotten.
        """
        user, agent = fact_scope(scope)
        await self._names.add(user, agent, [pipeline.check_name(name, self.locale) for name in names])
        return sorted(await self._names.known(user, agent))

    async def names(self, scope: Scope) -> list[str]:
        """The names the scope's user goes by, lower-cased (see `add_names`)."""
        user, agent = fact_scope(scope)
        return sorted(await self._names.known(user, agent))

    async def supersede(self, old_id: str, text: str, *, scope: Scope | None = None, **fields: Any) -> Fact:
        """Replace a current fact explicitly: the old one is closed, the new one cites it (SUPERSEDES).

        The new text is read as `remember` reads it: (subject, predicate, object) from the locale
        pack unless given as keywords, and a vector from the active embedder. The new version
        keeps the old one's entity links and sensitivity unless ``entities=`` or ``sensitivity=`` is given.
        With ``scope``, a fact of another user (or agent) raises `NotFoundError` as an unknown id does.
        """
        old = await self._get_in(old_id, scope)
        if old.superseded_at is not None:
            raise FactConflictError(f"fact {old_id!r} is {old.status}: only a current fact can be superseded")
        level = check_sensitivity(fields.pop("sensitivity", None), old.sensitivity)
        guarded = self.guard.text(check_text(text), level)
        text, now = guarded.text, utcnow()
        given = [fields.get(key) for key in ("subject", "object", "summary")]
        masked, level = self._masked(given, guarded.sensitivity)
        fields |= {k: v for k, v in zip(("subject", "object", "summary"), masked, strict=True) if v is not None}
        if guarded.spans or SECRETS_KEY in (fields.get("payload") or {}):
            fields["payload"] = guarded.into(fields.get("payload"))
        graph: GraphChange | None = None
        links: Sequence[EntityLink | tuple[str, str] | str] = old.entities
        if "entities" not in fields:  # the new text is read for the graph as remember reads it
            names = await self._names.known(old.user, old.agent)
            graph, learned = await self._learned(old.user, old.agent, text, names, {"entities": None,
                                                                                    "sensitivity": level})  # fmt: skip
            links = [EntityLink.model_validate(link) for link in learned["entities"]] if graph else links
        extras = fact_extras(self.counter, text, fields.pop("entities", links), fields.pop("summary", None))
        payload = {"text": text, "user": old.user, "agent": old.agent, "valid_from": now,
                   "sensitivity": level, **self._parts(text, fields),
                   **{k: v for k, v in {**fields, **extras}.items() if v is not None}}  # fmt: skip
        delta = UpdateDelta(replaces=[old_id], fact_payload=payload, source_episode_ids=[], promotion_ts=now,
                            rule_id="supersede", confidence=1.0, graph=graph)  # fmt: skip
        decision = ConflictDecision(
            kind="supersede", stage="explicit", reason="supersede() called", fact_id="", matched_ids=[old_id],
            user=old.user, agent=old.agent, candidate_text=text, decided_at=now,
        )  # fmt: skip
        embedder = self._engine.active
        model = (embedder.model, await embedder.embed(text)) if embedder is not None else None
        with span("memory.conflict") as traced:
            decision, _, _ = await self._store.remember(delta, decision, model)
            traced(decision, str(payload.get("sensitivity", old.sensitivity)))
        if self._after_write is not None:
            await self._after_write()
        return await self.get(decision.fact_id)

    def _masked(self, texts: Sequence[str | None], level: Sensitivity) -> tuple[list[str | None], Sensitivity]:
        """Optional text fields (subject, object, summary) with recognised secrets masked, and the level they raise."""
        present = [t for t in texts if isinstance(t, str)]
        masked, level = self.guard.texts(present, level)
        found = iter(masked)
        return [next(found) if isinstance(t, str) else t for t in texts], level

    def _guarded(self, delta: MemoryDelta) -> MemoryDelta:
        """A delta whose new fact's text holds no recognised secret (the consolidator's, an import's)."""
        if not isinstance(delta, AddDelta | UpdateDelta) or not isinstance(delta.fact_payload.get("text"), str):
            return delta
        body = dict(delta.fact_payload)
        level = check_sensitivity(body.get("sensitivity"), self.sensitivity)
        guarded = self.guard.text(body["text"], level)
        held = body.get("payload") if isinstance(body.get("payload"), dict) else None
        if not guarded.spans and guarded.sensitivity == level and SECRETS_KEY not in (held or {}):
            return delta
        body |= {"text": guarded.text, "sensitivity": guarded.sensitivity}
        if guarded.spans or held is not None:
            body["payload"] = guarded.into(held)
        return delta.model_copy(update={"fact_payload": body})

    def _parts(self, text: str, fields: dict[str, Any]) -> dict[str, str]:
        """Subject, predicate and object of a statement: the given ones, else the locale pack's reading."""
        given = {key: fields.pop(key, None) for key in ("subject", "predicate", "object")}
        triple = self.locale.split(text)
        parsed = {} if triple is None else {"subject": triple.subject, "predicate": triple.predicate,
                                            "object": triple.object}  # fmt: skip
        return {key: value for key in given if (value := given[key] or parsed.get(key))}

    async def forget(self, fact_id: str, *, scope: Scope | None = None) -> Fact:
        """Soft-delete a current fact: it stops being believed now, and stays for ``as_of`` replay.

        With ``scope``, a fact of another user (or agent) raises `NotFoundError` as an unknown id does.
        """
        fact = await self._get_in(fact_id, scope)
        if fact.superseded_at is not None:
            raise FactConflictError(f"fact {fact_id!r} is already {fact.status}")
        delta = DeleteDelta(replaces=[fact_id], source_episode_ids=[], promotion_ts=utcnow(), rule_id="forget",
                            confidence=1.0)  # fmt: skip
        await self._store.apply_deltas([delta])
        return await self.get(fact_id)

    async def purge(self, fact_id: str, *, reason: str) -> PurgeRecord:
        """Really remove a fact and every version of its supersede chain (privacy requests).

        Their vectors go too, and the audit rows that held their text are redacted; the
        `PurgeRecord` (ids, reason, time) is kept. Episodes the facts were promoted from are
        not touched. Every process's search engine drops its cached facts at its next search
        (it sees the purge log move), and never returns a purged fact meanwhile (hits are
        re-read from the database).
        """
        if not reason.strip():
            raise InvalidInputError("purge needs a reason (it is kept in the audit log)")
        return await self._store.purge(fact_id, reason.strip())

    async def purges(self, scope: Scope | str) -> list[PurgeRecord]:
        """The purge audit rows of the scope's user, oldest first (a purge is kept per user)."""
        return await self._store.purges(as_scope(scope).user)

    async def conflicts(
        self, scope: Scope | str, *, fact_id: str | None = None, limit: int = 100
    ) -> list[ConflictDecision]:
        """The decision log of a scope, oldest first; ``fact_id`` narrows to decisions involving that fact."""
        read = as_scope(scope)
        return await self._store.conflicts(read.user, read.agent, limit=limit, fact_id=fact_id)

    async def resolve_pending(self, scope: Scope, judge: ConflictJudge | None = None) -> list[ConflictDecision]:
        """Ask the judge about every pending fact of the scope; each verdict is applied and logged.

        A judge that fails on one fact leaves it pending (logged) and goes on with the rest.
        """
        judge = judge or self.judge
        if judge is None:
            raise InvalidInputError("no judge: pass one, or set it on the tier (mem.semantic.judge = ...)")
        decisions = []
        for fact in await self.facts(scope, status="pending", limit=100_000):
            others = await self._candidates_for(fact)
            with span("memory.conflict") as traced:
                try:
                    verdict = await judge.judge(fact, others)
                    decision = await self._store.resolve_pending(fact, verdict)
                except (InvalidInputError, ConfigurationError, FactConflictError) as error:
                    log.warning("judge: fact %s stays pending: %s", fact.id, error)
                    continue
                traced(decision, fact.sensitivity)
            decisions.append(decision)
        if decisions and self._after_write is not None:
            await self._after_write()
        return decisions

    async def decide_pending(
        self, fact_id: str, verdict: JudgeVerdict, *, scope: Scope | None = None
    ) -> ConflictDecision:
        """Apply one verdict (a person's review, or any judge's) to one pending fact and log it (stage "judge").

        With ``scope``, a fact of another user (or agent) raises `NotFoundError` as an unknown id does;
        a fact that is no longer pending raises `FactConflictError` and nothing changes.
        """
        fact = await self._get_in(fact_id, scope)
        if fact.status != "pending":
            raise FactConflictError(f"fact {fact_id!r} is {fact.status}, not pending: there is nothing to decide")
        decision = await self._store.resolve_pending(fact, verdict)
        if self._after_write is not None:
            await self._after_write()
        return decision

    async def _candidates_for(self, fact: Fact) -> list[Fact]:
        """The current facts a pending one was found close to."""
        embedder = self._engine.active
        if embedder is None:
            return []
        nearest = await self._nearest(fact.user, fact.agent, await embedder.embed(fact.text), self.thresholds.top_k + 1)
        return [other for other, _ in nearest if other.id != fact.id]

    async def _nearest(self, user: str, agent: str, vector: Vector, k: int) -> list[tuple[Fact, float]]:
        """The ``k`` current facts of (user, agent) closest to ``vector``, with their cosine."""
        flt = SearchFilter(scope=Scope(user=user, agent=agent), tiers=("semantic",))
        nearest = await self._engine.nearest("fact", flt, vector, k)
        return [(fact, cos) for fact, cos in nearest if isinstance(fact, Fact)]

    async def apply_delta(self, delta: MemoryDelta | dict[str, object]) -> DeltaRecord:
        """Validate and apply one delta atomically; applying the same ``delta_id`` again changes nothing."""
        return (await self.apply_deltas([delta]))[0]

    async def apply_deltas(self, deltas: Iterable[MemoryDelta | dict[str, object]]) -> list[DeltaRecord]:
        """Apply several deltas in order, in one transaction: all of them or none."""
        records = await self._store.apply_deltas([self._guarded(parse_delta(d)) for d in deltas])
        if self._after_write is not None:
            await self._after_write()
        return records

    async def apply_pending(self) -> list[DeltaRecord]:
        """Apply the deltas consolidation emitted that were never applied (e.g. after a crash).

        One that cannot be applied is recorded as rejected, with the reason, and the rest go on.
        """
        pending = await self._store.delta_log(rule_id=None, pending=True, limit=100_000)
        records = await self._store.apply_deltas([record.delta for record in pending], reject_conflicts=True)
        if self._after_write is not None:
            await self._after_write()
        return records

    async def search(
        self,
        scope: Scope | str,
        query: str,
        k: int = 10,
        *,
        as_of: datetime | None = None,
        memory_types: Sequence[MemoryType] | None = None,
        tags: Sequence[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        options: SearchOptions | None = None,
        reranker: Reranker | None = None,
    ) -> list[SearchHit]:
        """Hybrid search over this scope's facts (current ones, or as of a moment), best first."""
        flt = SearchFilter.model_validate(
            {
                "scope": as_scope(scope),
                "tiers": ("semantic",),
                "memory_types": memory_types,
                "tags": tags,
                "since": since,
                "until": until,
                "as_of": as_of,
            }
        )
        return await self._engine.search(query, flt, k, options=options, reranker=reranker)

    async def facts(
        self,
        scope: Scope | str,
        *,
        as_of: datetime | None = None,
        valid_at: datetime | None = None,
        status: FactStatus | None = None,
        subject: str | None = None,
        predicate: str | None = None,
        channel: str | None = None,
        limit: int = 100,
    ) -> list[Fact]:
        """Facts of a scope, newest first; a scope without an agent (or a plain user id) widens to all agents.

        ``as_of`` (system time) replays what memory believed then; ``valid_at`` (world time)
        asks what held then, superseded history included.
        """
        read = as_scope(scope)
        query = FactFilter(
            user=read.user,
            agent=read.agent,
            as_of=as_of,
            valid_at=valid_at,
            status=status,
            subject=subject,
            predicate=predicate,
            channel=channel,
            limit=limit,
        )
        return await self._store.facts(query)

    async def get(self, fact_id: str) -> Fact:
        """One fact by id, whatever its status, or NotFoundError."""
        fact = await self._store.get_fact(fact_id)
        if fact is None:
            raise NotFoundError(f"no fact with id {fact_id!r}")
        return fact

    async def _get_in(self, fact_id: str, scope: Scope | None) -> Fact:
        fact = await self._store.get_fact(fact_id)
        outside = (
            scope is not None
            and fact is not None
            and (fact.user != scope.user or (scope.agent is not None and fact.agent != scope.agent))
        )
        if fact is None or outside:
            raise NotFoundError(f"no fact with id {fact_id!r}")  # the same words: no hint that it exists elsewhere
        return fact

    async def history(self, fact_id: str) -> list[Fact]:
        """Every version in the fact's supersede chain, oldest first, with validity intervals."""
        return await self._store.history(fact_id)

    async def lineage(self, fact_id: str) -> list[Lineage]:
        """The lineage edges (SUPERSEDES, CONSOLIDATES) touching a fact."""
        return await self._store.lineage(fact_id)

    async def deltas(self, *, rule_id: str | None = None, pending: bool = False, limit: int = 100) -> list[DeltaRecord]:
        """The audit log of deltas, oldest first; ``pending=True`` lists emitted but unapplied ones."""
        return await self._store.delta_log(rule_id=rule_id, pending=pending, limit=limit)


def _precheck(
    user: str, agent: str, text: str, fields: dict[str, Any], sources: list[str], confidence: float, rule_id: str
) -> None:
    """Validate what `remember` will write before the pipeline embeds or reads anything: a refused
    call must leave the database as it was (the pipeline's catch-up embeds pending facts)."""
    payload = {"text": text, "user": user, "agent": agent, "valid_from": utcnow(),
               **{k: v for k, v in fields.items() if v is not None}}  # fmt: skip
    AddDelta(fact_payload=payload, source_episode_ids=sources, promotion_ts=utcnow(), rule_id=rule_id,
             confidence=confidence)  # fmt: skip


def _reader(
    reader: Literal["auto", "parser", "rules"] | StatementReader | None, pack: LocalePack
) -> StatementReader | None:
    """The statement reader a tier uses: the parser where asked for (or, for "auto", where it is installed and the
    pack is English; loaded on first use), None for the rules alone."""
    if reader is None or isinstance(reader, StatementReader):
        return reader
    if reader == "rules" or (reader == "auto" and (pack.name != "en" or not parser_available())):
        return None
    made = StatementReader(pack)
    if reader == "parser":
        made.load()  # asked for by name: without the extra, ParserUnavailableError naming it, at open
    return made


def _stored(fields: dict[str, Any], outcome: pipeline.Outcome, triple: pipeline.Triple | None) -> dict[str, Any]:
    """The fields a fact is stored with: the reading of the clause that changed a held fact (or the statement's)
    where the caller gave none, and for a candidate update the facts it may replace."""
    read = outcome.clause or triple
    if read is not None:
        parts = {"subject": read.subject, "predicate": read.predicate, "object": read.object}
        fields = {**fields, **{key: fields[key] or value for key, value in parts.items()}}
    if outcome.kind == "pending" and outcome.targets:
        fields = {**fields, "payload": {**(fields["payload"] or {}), MAY_REPLACE: list(outcome.targets)}}
    return fields
