"""The consolidator's language model: any OpenAI-compatible chat endpoint, under the day's budget.

`OpenAIProvider` posts JSON-mode chat requests with a timeout and retries (transport errors,
429 and 5xx), and reads the token counts from the answer's ``usage``. `BudgetedModel` checks
the day's usage against the ceilings before each call (counting the call at its most: the
prompt plus the completion limit, so a ceiling is never passed) and records what the call
cost. Every text leaves through `_outbound`, which redacts secrets first.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import httpx
import orjson

from mnemonite._http import client
from mnemonite._time import utcnow
from mnemonite.consolidator.budget import ConsolidatorConfig
from mnemonite.errors import BudgetExceededError, LLMProviderError
from mnemonite.models.consolidator import Phase, Usage
from mnemonite.recognisers import SecretScanner, marker
from mnemonite.tokens import TokenCounter, default_counter

__all__ = ["BudgetedModel", "Completion", "LLMProvider", "OpenAIProvider", "as_sent", "redact"]

log = logging.getLogger("mnemonite.consolidator")

_SECRETS = (
    re.compile(r"\b(?:sk|pk|rk|ghp|gho|xox[abp])[-_][A-Za-z0-9_-]{12,}\b"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\b(?:\d[ -]?){13,19}\b"),  # card and account numbers
    re.compile(r"(?i)(?<!\[)\b(password|passcode|passwd|pin|api key|secret|token)(\s*(?:is|:|=)\s*)(?!\[secret: )\S+"),
)
_RETRY_STATUS = {429, 500, 502, 503, 504}
_SCANNER = SecretScanner()


def redact(text: str) -> str:
    """``text`` with secrets replaced: what the recognisers find by its kind (``[secret: card number]``, as
    memory stores it), then anything left that looks like a key, a long number or a password said aloud by
    ``[redacted]`` (a memory written before recognition holds such text until `mnemonite scan --mask`)."""
    for span in reversed([s for s in _SCANNER.scan(text) if s.level == "secret"]):
        text = text[: span.start] + marker(span.kind) + text[span.end :]
    for pattern in _SECRETS:
        text = pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}[redacted]" if m.lastindex else "[redacted]", text)
    return text


def as_sent(ids: Iterable[str]) -> dict[str, str]:
    """Each id as a model may quote it back -> the id: itself, and as the prompt's redaction left it (a random hex
    id holds a run of digits that reads as a card number: 23 of 20,000 new ids)."""
    return {form: record_id for record_id in ids for form in (redact(record_id), record_id)}


def _outbound(texts: Sequence[str]) -> list[str]:
    """What may leave this process for a model: every text passes here (redaction)."""
    return [redact(text) for text in texts]


@dataclass(frozen=True)
class Completion:
    """A model's answer: the parsed JSON object and the tokens the endpoint counted."""

    content: dict[str, Any]
    prompt_tokens: int | None
    completion_tokens: int | None


@runtime_checkable
class LLMProvider(Protocol):
    """A chat model answering one system + user prompt with a JSON object."""

    model: str

    async def complete(self, system: str, user: str, *, max_tokens: int) -> Completion: ...


class OpenAIProvider:
    """``OpenAIProvider("http://localhost:8000/v1", "gpt-4o-mini")``: temperature 0, JSON mode."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        retries: int = 2,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.model = model
        self._client = client(base_url, api_key=api_key, timeout=timeout, transport=transport)
        self._retries = retries

    async def complete(self, system: str, user: str, *, max_tokens: int) -> Completion:
        system, user = _outbound([system, user])
        body = {"model": self.model, "temperature": 0, "max_tokens": max_tokens,
                "response_format": {"type": "json_object"},
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}  # fmt: skip
        answer = await self._post(body)
        return _completion(answer, str(self._client.base_url))

    async def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        for attempt in range(self._retries + 1):
            try:
                response = await self._client.post("/chat/completions", json=body)
                if response.status_code in _RETRY_STATUS and attempt < self._retries:
                    await asyncio.sleep(0.2 * 2**attempt)
                    continue
                response.raise_for_status()
                answer = response.json()
                if not isinstance(answer, dict):
                    raise ValueError("the answer is not a JSON object")
                return answer
            except (httpx.TimeoutException, httpx.TransportError) as error:
                if attempt < self._retries:
                    await asyncio.sleep(0.2 * 2**attempt)
                    continue
                raise LLMProviderError(f"model endpoint {self._client.base_url} failed: {error!r}") from error
            except (httpx.HTTPError, ValueError) as error:
                raise LLMProviderError(f"model endpoint {self._client.base_url} failed: {error}") from error
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        await self._client.aclose()


def _completion(answer: dict[str, Any], where: str) -> Completion:
    try:
        text = answer["choices"][0]["message"]["content"]
        content = orjson.loads(text)
    except (KeyError, IndexError, TypeError, orjson.JSONDecodeError) as error:
        raise LLMProviderError(f"model endpoint {where} answered no JSON object: {str(answer)[:200]}") from error
    if not isinstance(content, dict):
        raise LLMProviderError(f"model endpoint {where} answered JSON that is not an object: {text[:200]!r}")
    raw = answer.get("usage")
    usage: dict[str, Any] = raw if isinstance(raw, dict) else {}
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return Completion(content, prompt if isinstance(prompt, int) else None,
                      completion if isinstance(completion, int) else None)  # fmt: skip


class UsageStore(Protocol):
    async def charge_usage(self, day: str, phase: str, usage: Usage, *, run: bool = False) -> None: ...
    async def usage(self, day: str) -> list[Usage]: ...


class BudgetedModel:
    """A provider behind the day's ceilings; every call's tokens and cost are recorded per phase."""

    def __init__(
        self, provider: LLMProvider, config: ConsolidatorConfig, store: UsageStore, counter: TokenCounter | None = None
    ) -> None:
        self.provider = provider
        self._config = config
        self._store = store
        self._counter = counter or default_counter()

    async def ask(self, phase: Phase, system: str, user: str) -> tuple[dict[str, Any], Usage]:
        """The model's JSON answer, or `BudgetExceededError` before any call that could pass a ceiling."""
        day = utcnow().date().isoformat()
        limit = self._config.max_completion_tokens
        prompt = self._counter.count(system) + self._counter.count(user)
        await self._check(day, prompt + limit, self._config.price(self.provider.model, prompt, limit))
        completion = await self.provider.complete(system, user, max_tokens=limit)
        used_in = completion.prompt_tokens if completion.prompt_tokens is not None else prompt
        used_out = completion.completion_tokens if completion.completion_tokens is not None else limit
        usage = Usage(phase=phase, prompt_tokens=used_in, completion_tokens=used_out, calls=1,
                      cost=self._config.price(self.provider.model, used_in, used_out))  # fmt: skip
        await self._store.charge_usage(day, phase, usage)
        return completion.content, usage

    async def _check(self, day: str, tokens: int, cost: float) -> None:
        spent = await self._store.usage(day)
        tokens_today = sum(u.tokens for u in spent)
        cost_today = sum(u.cost for u in spent)
        if tokens_today + tokens > self._config.token_ceiling or cost_today + cost > self._config.cost_ceiling:
            raise BudgetExceededError(
                f"the consolidator's budget for {day} is spent: {tokens_today:,} of {self._config.token_ceiling:,}"
                f" tokens, ${cost_today:.4f} of ${self._config.cost_ceiling:.2f}; the next call needs up to"
                f" {tokens:,} tokens (${cost:.4f})"
            )
