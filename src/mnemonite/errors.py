"""The mnemonite exception tree.

Every error mnemonite raises on purpose derives from :class:`MnemoniteError`, so
``except MnemoniteError`` catches all of them and nothing else::

    MnemoniteError
    ├── ConfigurationError          bad URL, unknown backend, bad option
    │   └── CustomTierMisconfiguredError  a custom consolidator tier without ceilings or models
    ├── InvalidInputError           a value failed validation at the API boundary
    │   ├── DeltaValidationError    a MemoryDelta is malformed (missing provenance, unknown kind)
    │   ├── AmbiguousIdError        an id prefix matches several records
    │   └── SensitivityError        a sensitivity other than public, internal, secret
    ├── MemoryScopeError            an empty or inconsistent (user, session, agent) scope
    ├── ConsolidationRuleError      a malformed rule: cadence, cron, when_filter
    ├── FactConflictError           `replaces` cannot be resolved to exactly one active fact
    ├── EpisodeConflictError        an episode id already holds a different episode
    ├── EntityConflictError         an entity name already taken in its (user, agent) scope
    ├── NotFoundError               a fact, episode or rule id that does not exist
    ├── EmbeddingError              the embedding model is missing, broken or unreachable
    │   └── EmbedderMismatchError   a different embedder than the one the vectors were made with
    ├── BudgetExceededError         the consolidator's daily token or cost ceiling is reached
    ├── LLMProviderError            the language-model endpoint failed or answered nonsense
    ├── SecretScanError             recognising secrets in a text failed: nothing was written
    ├── ConsolidatorBusyError       another consolidator took over this one's claimed work
    └── StoreError                  the database refused or is unusable
        ├── StoreUnavailableError   the database cannot be reached (down, restarting, network)
        ├── DatabaseNotFoundError   opened with create=False, and there is no database there
        ├── NotADatabaseError       the file exists but is not a SQLite database
        ├── MigrationNotSupported   a migration other than "add a nullable column"
        ├── SchemaVersionError      the database was written by a newer mnemonite
        ├── StoreBusyError          another process held the write lock past the busy timeout
        ├── StoreFullError          the disk (or the file system's quota) is full
        ├── StoreReadOnlyError      the file or its folder cannot be written
        └── DatabaseCorruptError    the database file is damaged

The agent tiers (working, session, procedural, shared) add::

    InvalidInputError
    ├── BlockLimitError             a block write over its character or token limit (says how much to cut)
    └── BlockPatchError             a patch whose text matches zero or several places in the block
    BlockConflictError              a block label already taken among the blocks an agent sees
    ReadOnlyBlockError              an edit of a read-only block
    GroupAccessError                a group the agent is not a member (or not an owner) of

The service (HTTP API, MCP over HTTP) adds::

    MnemoniteError
    ├── AuthenticationError         no API key, or one that is unknown or revoked
    ├── PermissionDeniedError       the key lacks the capability, or names another scope
    ├── ServerBusyError             the server is at capacity: retry after its Retry-After (HTTP 429)
    └── ConfigurationError
        └── InsecureServerError     asked to listen beyond loopback with no API key configured

None of them subclasses ``ValueError``: pydantic would otherwise swallow them into its
own ``ValidationError`` when raised from a validator, and the caller would lose the type.
"""

from __future__ import annotations

__all__ = [
    "AmbiguousIdError",
    "BudgetExceededError",
    "ConsolidatorBusyError",
    "CustomTierMisconfiguredError",
    "LLMProviderError",
    "SecretScanError",
    "BlockConflictError",
    "BlockLimitError",
    "BlockPatchError",
    "GroupAccessError",
    "ReadOnlyBlockError",
    "AuthenticationError",
    "DatabaseNotFoundError",
    "ConfigurationError",
    "ConsolidationRuleError",
    "DeltaValidationError",
    "EmbedderMismatchError",
    "EmbeddingError",
    "EntityConflictError",
    "EpisodeConflictError",
    "FactConflictError",
    "InsecureServerError",
    "InvalidInputError",
    "MemoryScopeError",
    "MnemoniteError",
    "MigrationNotSupported",
    "NotADatabaseError",
    "NotFoundError",
    "PermissionDeniedError",
    "SchemaVersionError",
    "ServerBusyError",
    "SensitivityError",
    "StoreError",
    "StoreUnavailableError",
    # reliability: faults named by cause
    "DatabaseCorruptError",
    "StoreBusyError",
    "StoreFullError",
    "StoreReadOnlyError",
]


class MnemoniteError(Exception):
    """Base class of every error mnemonite raises on purpose."""


class ConfigurationError(MnemoniteError):
    """The configuration or the database URL cannot be used."""


class InvalidInputError(MnemoniteError):
    """A value passed to mnemonite failed validation; nothing was written."""


class DeltaValidationError(InvalidInputError):
    """A MemoryDelta is malformed: missing provenance, unknown kind, bad payload."""


class AmbiguousIdError(InvalidInputError):
    """An id prefix matches more than one record; give more characters."""


class SensitivityError(InvalidInputError):
    """A sensitivity value other than ``public``, ``internal`` or ``secret``."""


class SecretScanError(MnemoniteError):
    """Recognising secrets in a text failed (a locale pack's recogniser raised): nothing was written,
    since storing the text unchecked could store a secret in clear."""


class MemoryScopeError(MnemoniteError):
    """A (user, session, agent) scope is empty, blank or contradicts the record."""


class ConsolidationRuleError(MnemoniteError):
    """A ConsolidationRule has a bad id, cadence, cron expression or when_filter."""


class FactConflictError(MnemoniteError):
    """A delta's `replaces` does not resolve to exactly one active fact per entry."""


class EpisodeConflictError(MnemoniteError):
    """An episode id is already stored with different content or scope."""


class EntityConflictError(MnemoniteError):
    """An entity with that name (case-insensitive) already exists in the (user, agent) scope."""


class NotFoundError(MnemoniteError):
    """The fact, episode, entity, edge or rule named does not exist."""


class EmbeddingError(MnemoniteError):
    """The embedding model is missing, failed to load, or returned unusable vectors."""


class EmbedderMismatchError(EmbeddingError):
    """The memory's vectors were made by another embedder; see the embedder migration strategies."""


class StoreError(MnemoniteError):
    """The database refused an operation or is not usable."""


class StoreUnavailableError(StoreError):
    """The database server cannot be reached: down, restarting, or the connection dropped.

    Idempotent writes are retried first (see the store's ``retries``); this is raised when they ran out.
    """


class DatabaseNotFoundError(StoreError):
    """There is no database at the URL, and it was opened with ``create=False`` (nothing was created)."""


class NotADatabaseError(StoreError):
    """The file at the URL exists but is not a SQLite database (or is encrypted or corrupt)."""


class MigrationNotSupported(StoreError):
    """The migration plan contains an operation other than adding a nullable column."""


class SchemaVersionError(StoreError):
    """The database schema is newer than this version of mnemonite understands."""


# -- the background consolidator ---------------------------------------------------------------


class CustomTierMisconfiguredError(ConfigurationError):
    """A ``custom`` consolidator tier lacks a ceiling (tokens or cost per day), or a model a phase needs."""


class BudgetExceededError(MnemoniteError):
    """The consolidator's daily token or cost ceiling would be passed by the next model call."""


class LLMProviderError(MnemoniteError):
    """The language-model endpoint failed: unreachable, timed out, or answered something unusable
    (not JSON, not the asked shape, ids that were not offered). Nothing of that work was applied."""


class ConsolidatorBusyError(MnemoniteError):
    """Another consolidator holds the work this one was doing (its claim expired and was taken over)."""


# -- the agent tiers: working blocks, sessions, procedures, shared groups ------------------------


class BlockLimitError(InvalidInputError):
    """A block write would exceed the block's character or token limit; the message says how much to cut."""


class BlockPatchError(InvalidInputError):
    """The text to replace in a block matches no place or several places; the message says what to do."""


class BlockConflictError(MnemoniteError):
    """A block label is already taken among the blocks that agent sees."""


class ReadOnlyBlockError(MnemoniteError):
    """The block is read-only: only a redefinition (``define(..., replace=True)``) changes it."""


class GroupAccessError(MnemoniteError):
    """The agent is not a member of the group (or not an owner, for a change of members)."""


# -- the service: API keys and where a server may listen ------------------------------------------


class AuthenticationError(MnemoniteError):
    """No API key was given, or the key is unknown or revoked (HTTP 401)."""


class PermissionDeniedError(MnemoniteError):
    """The API key lacks the capability a call needs, or the call names a scope the key is not bound to (HTTP 403)."""


class ServerBusyError(MnemoniteError):
    """The server is at capacity (requests running and waiting at their bounds): retry after the seconds its
    ``Retry-After`` header says (HTTP 429)."""


class InsecureServerError(ConfigurationError):
    """The server was asked to listen beyond loopback while no API key exists: create one first."""


# -- faults named by cause: each message says what happened and what to do --------------------


class StoreBusyError(StoreError):
    """Another connection held the write lock longer than the busy timeout (``MemoryConfig.busy_timeout``)."""


class StoreFullError(StoreError):
    """The disk or the file system holding the database is full; nothing of the failed call was written."""


class StoreReadOnlyError(StoreError):
    """The database file, or the folder it lives in, cannot be written; nothing was written."""


class DatabaseCorruptError(StoreError):
    """The database file is damaged: restore a backup (see the README's "Reliability")."""
