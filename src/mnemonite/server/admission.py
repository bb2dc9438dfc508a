"""Back-pressure: a bounded number of requests run at once, a bounded number wait, the rest are told to retry.

A server that takes every request it is sent queues them without bound: under a flood each waits
longer than its client will, memory grows with the waiting bodies, and the requests that finally run
answer clients that left. `Admission` lets ``running`` requests run at once (the service's work is
I/O and the embedding worker, so this is many per core); up to ``waiting`` more wait at most
``wait_seconds`` for a place; any other is answered at once with 429 and a ``Retry-After`` header
(problem details, ``error: ServerBusyError``). ``/health`` is always answered: a load balancer's
probe must not read a busy server as a dead one.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

from mnemonite.server.problems import RETRY_AFTER_SECONDS, problem

_ALWAYS = frozenset({"/health"})


@dataclass(frozen=True)
class Capacity:
    """How much a server takes at once; the defaults are sized from the machine's cores."""

    running: int
    waiting: int
    wait_seconds: float = 5.0

    @classmethod
    def for_machine(cls, cores: int | None = None) -> Capacity:
        """64 running per core (at least 64), eight times as many waiting."""
        running = max(64, 64 * (cores or os.cpu_count() or 1))
        return cls(running=running, waiting=8 * running)


class Admission:
    """ASGI middleware enforcing a `Capacity` (see the module's docstring)."""

    def __init__(self, app: ASGIApp, capacity: Capacity) -> None:
        if capacity.running < 1 or capacity.waiting < 0 or capacity.wait_seconds < 0:
            raise ValueError(f"a capacity needs running >= 1, waiting >= 0 and wait_seconds >= 0, got {capacity}")
        self.app, self.capacity = app, capacity
        self.running = self.waiting = 0
        self.refused = 0  # answered 429 since the server started
        self._places: asyncio.Semaphore | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in _ALWAYS:
            await self.app(scope, receive, send)
            return
        if self._places is None:
            self._places = asyncio.Semaphore(self.capacity.running)
        places = self._places
        if places.locked():
            if self.waiting >= self.capacity.waiting:
                await self._refuse(scope, receive, send, "waiting")
                return
            self.waiting += 1
            try:
                await asyncio.wait_for(places.acquire(), self.capacity.wait_seconds)
            except TimeoutError:
                await self._refuse(scope, receive, send, "waited")
                return
            finally:
                self.waiting -= 1
        else:
            await places.acquire()
        self.running += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.running -= 1
            places.release()

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, why: str) -> None:
        self.refused += 1
        full = self.capacity
        detail = (
            f"the server is at capacity ({full.running} requests running and {full.waiting} waiting)"
            if why == "waiting"
            else f"no place came free within {full.wait_seconds:g} s ({full.running} requests running)"
        )
        await problem(429, f"{detail}: retry after {RETRY_AFTER_SECONDS} s", scope["path"], "ServerBusyError")(
            scope, receive, send
        )
