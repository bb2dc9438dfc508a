"""Judges for pending facts: what stage 5 of the conflict pipeline defers to.

A `ConflictJudge` sees a pending fact and the current facts it was found close to, and
rules: it supersedes one of them, duplicates one, or stands alone (admit).
`OpenAIJudge` asks any OpenAI-compatible ``/chat/completions`` endpoint for that ruling
as JSON. Without a judge, pending facts stay visible to search with ``status="pending"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import httpx
import orjson

from mnemonite._http import client
from mnemonite.errors import ConfigurationError, InvalidInputError
from mnemonite.models.conflict import JudgeVerdict
from mnemonite.models.fact import Fact
from mnemonite.privacy import redact

__all__ = ["ConflictJudge", "OpenAIJudge"]

PROMPT = """You maintain an assistant's long-term memory of facts about a user.
A new statement was recorded; decide how it relates to the existing facts.
Answer with one JSON object and nothing else:
{"kind": "supersede" | "dedup" | "admit", "target_id": "<id of the existing fact, or null>", "reason": "<short>"}
- "supersede": the new statement replaces an existing fact that is no longer true (a move, a new job, a changed
  preference, a retraction).
- "dedup": the new statement says the same as an existing fact.
- "admit": the new statement is a separate fact; both stay true."""


@runtime_checkable
class ConflictJudge(Protocol):
    async def judge(self, candidate: Fact, existing: Sequence[Fact]) -> JudgeVerdict: ...


class OpenAIJudge:
    """``OpenAIJudge(base_url="http://localhost:8000/v1", model="gpt-4o-mini")``; temperature 0, JSON answers.

    A reply that is not a valid verdict, or names a fact that was not offered, raises
    `InvalidInputError`; a failed request raises `ConfigurationError`. Either way the fact stays pending.
    Secret facts reach the endpoint as a marker, never as their text (see `mnemonite.privacy`).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._client = client(base_url, api_key=api_key, timeout=timeout, transport=transport)
        self._model = model

    async def judge(self, candidate: Fact, existing: Sequence[Fact]) -> JudgeVerdict:
        listing = "\n".join(f'- id "{fact.id}": {redact(fact.text, fact.sensitivity)}' for fact in existing)
        statement = redact(candidate.text, candidate.sensitivity)
        messages = [
            {"role": "system", "content": PROMPT},
            {"role": "user", "content": f"Existing facts:\n{listing or '(none)'}\n\nNew statement: {statement}"},
        ]
        body = {
            "model": self._model,
            "messages": messages,
            "temperature": 0,
            "response_format": {"type": "json_object"},
        }
        try:
            response = await self._client.post("/chat/completions", json=body)
            response.raise_for_status()
            content = response.json()["choices"][0]["message"]["content"]
        except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as error:
            raise ConfigurationError(f"judge request to {self._client.base_url} failed: {error}") from error
        try:
            verdict = JudgeVerdict.model_validate(orjson.loads(content))
        except (orjson.JSONDecodeError, InvalidInputError) as error:
            raise InvalidInputError(f"the judge's answer is not a verdict: {content[:200]!r}") from error
        if verdict.kind != "admit" and verdict.target_id not in {fact.id for fact in existing}:
            raise InvalidInputError(f"the judge named {verdict.target_id!r}, which was not offered")
        return verdict

    async def aclose(self) -> None:
        await self._client.aclose()
