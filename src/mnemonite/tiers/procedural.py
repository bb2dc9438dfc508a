"""The procedural tier: named workflows of an agent, matched to the task at hand.

`activate` ranks an agent's procedures against a task by full text and, with an embedder, by
the cosine of the task's vector with each procedure's (name, trigger and steps), fused by
reciprocal rank fusion as hybrid search fuses them. A procedure's vector is made when it is
defined and kept with the name of the model that made it; one made by another model is made
again at activation, never compared.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

import numpy as np

from mnemonite.embedding.base import Embedder, embed_query
from mnemonite.errors import InvalidInputError
from mnemonite.inputs import checked
from mnemonite.models.procedures import Procedure, ProcedureMatch
from mnemonite.models.sensitivity import Sensitivity, check_sensitivity
from mnemonite.privacy import SecretGuard
from mnemonite.scope import Scope, as_scope
from mnemonite.search import query as q
from mnemonite.search.fusion import rrf_fusion
from mnemonite.store import Store
from mnemonite.tiers._log import agent_scope, event_for

__all__ = ["ProceduralTier"]


@checked
class ProceduralTier:
    """``mem.procedural``: define, remove, list, activate."""

    def __init__(
        self,
        store: Store,
        *,
        embedder: Embedder | None = None,
        sensitivity: Sensitivity = "internal",
        guard: SecretGuard | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._sensitivity = sensitivity
        self._guard = guard or SecretGuard()

    async def define(
        self,
        scope: Scope,
        name: str,
        steps: Sequence[str],
        *,
        trigger: str = "",
        sensitivity: Sensitivity | None = None,
    ) -> Procedure:
        """Define (or redefine, keeping its id) the agent's procedure ``name``: ordered ``steps`` and the
        ``trigger`` text saying when it applies."""
        user, agent = agent_scope(scope, "procedural.define")
        if isinstance(steps, str):
            raise InvalidInputError("steps must be a list of strings, not one string")
        given = Procedure(user=user, agent=agent, name=name, steps=tuple(steps), trigger=trigger)
        (trigger, *masked), level = self._guard.texts(
            [given.trigger, *given.steps], check_sensitivity(sensitivity, self._sensitivity)
        )
        procedure = given.model_copy(update={"trigger": trigger, "steps": tuple(masked), "sensitivity": level})
        vector = None
        if self._embedder is not None:
            matrix = await self._embedder.embed_batch([procedure.text()])
            vector = (self._embedder.model, np.asarray(matrix[0], dtype=np.float32).tobytes())
        event = event_for(scope, "memory_write", "procedural.define", {}, procedure.sensitivity)
        return await self._store.define_procedure(procedure, vector, event)

    async def remove(self, scope: Scope, name: str) -> Procedure:
        """Remove the agent's procedure ``name`` (`NotFoundError` when it has none); returns it."""
        user, agent = agent_scope(scope, "procedural.remove")
        event = event_for(scope, "memory_write", "procedural.remove", {})
        return await self._store.remove_procedure(user, agent, name, event)

    async def list(self, scope: Scope | str) -> builtins.list[Procedure]:
        """The scope's procedures by name (a user id or agent-less scope: every agent's)."""
        read = as_scope(scope)
        return await self._store.procedures(read.user, read.agent)

    async def activate(
        self, scope: Scope, task_text: str, k: int = 3, *, min_similarity: float = 0.2
    ) -> builtins.list[ProcedureMatch]:
        """The agent's procedures that best match a task, best first: by full text and by meaning
        (a procedure with no word in common counts only when its cosine is at least ``min_similarity``;
        with the packaged model, 0.2 kept paraphrases, 0.25-0.33, and left unrelated tasks, under 0.1, out)."""
        user, agent = agent_scope(scope, "procedural.activate")
        if not isinstance(task_text, str) or not task_text.strip():
            raise InvalidInputError("activate needs the task's text")
        if not isinstance(k, int) or k < 1:
            raise InvalidInputError(f"k must be a positive integer, got {k!r}")
        candidates = await self._store.procedures_with_vectors(user, agent)
        by_id = {p.id: p for p, _, _ in candidates}
        lexical = [
            pid for pid, _ in await self._store.search_procedures(user, agent, q.terms(task_text), len(by_id) + 1)
        ]
        dense = await self._dense(candidates, task_text, min_similarity)
        index = {pid: i for i, pid in enumerate(by_id)}
        fused = rrf_fusion([[index[p] for p in lexical], [index[p] for p in dense]], [1.0, 1.0])
        ranked = sorted(fused.items(), key=lambda item: -item[1])[:k]
        ids = list(by_id)
        matches = [ProcedureMatch(procedure=by_id[ids[i]], score=score) for i, score in ranked]
        event = event_for(
            scope, "memory_read", "procedural.activate", {"procedures": [m.procedure.id for m in matches]}
        )
        if event is not None:
            await self._store.log_events([event])
        return matches

    async def _dense(
        self, candidates: Sequence[tuple[Procedure, str | None, bytes | None]], task: str, floor: float
    ) -> builtins.list[str]:
        """Procedure ids by cosine with the task, best first, those under ``floor`` left out."""
        if self._embedder is None or not candidates:
            return []
        model = self._embedder.model
        stale = [p for p, used, blob in candidates if used != model or blob is None]
        made = await self._embedder.embed_batch([p.text() for p in stale]) if stale else np.zeros((0, 0))
        vectors = {p.id: np.asarray(row, dtype=np.float32) for p, row in zip(stale, made, strict=True)}
        for procedure, used, blob in candidates:
            if used == model and blob is not None:
                vectors[procedure.id] = np.frombuffer(blob, dtype=np.float32)
        query = np.asarray(await embed_query(self._embedder, task), dtype=np.float32).reshape(-1)
        query /= max(float(np.linalg.norm(query)), 1e-12)
        cosine = {pid: float(v @ query) / max(float(np.linalg.norm(v)), 1e-12) for pid, v in vectors.items()}
        return [pid for pid, c in sorted(cosine.items(), key=lambda item: -item[1]) if c >= floor]
