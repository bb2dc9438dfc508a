"""``mem.keys``: the API keys of the HTTP and MCP server, each bound to one (user[, agent]) scope.

A key's secret is ``mnm_`` and 43 random URL-safe characters (256 bits); only its SHA-256 is
stored, so a leaked database opens nothing, and the secret is shown once, when it is created.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable

from mnemonite._time import utcnow
from mnemonite.errors import AuthenticationError, InvalidInputError, NotFoundError
from mnemonite.models.base import new_id
from mnemonite.models.keys import CAPABILITIES, ApiKey, Capability, IssuedKey
from mnemonite.store.base import KeyStore

__all__ = ["ApiKeys", "hash_secret", "parse_capabilities"]

PREFIX = "mnm_"
_MAX_SECRET = 200  # longer than any secret issued: refused before hashing


def hash_secret(secret: str) -> str:
    """The stored form of a secret: its SHA-256, hex."""
    return hashlib.sha256(secret.encode()).hexdigest()


def parse_capabilities(value: str | Iterable[str]) -> tuple[Capability, ...]:
    """``"read,write"`` or ``["read", "write"]`` to capabilities; an unknown or empty one is `InvalidInputError`."""
    names = [part.strip() for part in (value.split(",") if isinstance(value, str) else value)]
    unknown = [name for name in names if name not in CAPABILITIES]
    if unknown or not names:
        raise InvalidInputError(f"capabilities are some of {', '.join(CAPABILITIES)}, got {unknown or 'none'}")
    return tuple(c for c in CAPABILITIES if c in names)


class ApiKeys:
    """Create, list, revoke and check the server's API keys."""

    def __init__(self, store: KeyStore) -> None:
        self._store = store

    async def create(
        self,
        user: str,
        *,
        agent: str | None = None,
        can: str | Iterable[str] = ("read", "write"),
        label: str | None = None,
    ) -> IssuedKey:
        """A new key bound to ``user`` (and ``agent``, when given) with capabilities ``can``.

        The returned `IssuedKey` holds the secret: it is not stored and cannot be shown again.
        """
        key = ApiKey(id=new_id()[:16], user=user, agent=agent, capabilities=parse_capabilities(can), label=label,
                     created_at=utcnow())  # fmt: skip
        secret = PREFIX + secrets.token_urlsafe(32)
        await self._store.create_key(key, hash_secret(secret))
        return IssuedKey(key=key, secret=secret)

    async def all(self, user: str | None = None) -> list[ApiKey]:
        """Every key (of ``user``, when given), revoked ones included, oldest first; never a secret."""
        return await self._store.keys(user)

    async def revoke(self, key_id: str) -> ApiKey:
        """Revoke a key for good: the next request with it gets 401. Revoking twice changes nothing."""
        revoked = await self._store.revoke_key(key_id, utcnow())
        if revoked is None:
            raise NotFoundError(f"no API key with id {key_id!r} (see: mnemonite keys list)")
        return revoked

    async def active(self) -> int:
        """How many keys are not revoked (the server listens beyond loopback only when there is one)."""
        return sum(1 for key in await self._store.keys(None) if key.active)

    async def authenticate(self, secret: str | None) -> ApiKey:
        """The active key of a secret, or `AuthenticationError` (missing, unknown or revoked: the same message)."""
        if not secret:
            raise AuthenticationError("an API key is required: send 'Authorization: Bearer <key>'")
        key = None if len(secret) > _MAX_SECRET else await self._store.key_by_hash(hash_secret(secret))
        if key is None or not key.active:
            raise AuthenticationError("the API key is unknown or revoked")
        return key
