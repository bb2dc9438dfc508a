"""What an existing memory holds of secrets nobody tagged, and masking them in place.

A memory written before recognition (or under other recognisers) may hold card numbers, keys and
passwords in clear: in its records and in the audit rows that quote them. `scan_secrets` reads
every table of `store.sql_scan.TEXT_TABLES` through the memory's `SecretGuard` and reports what it
finds; with ``mask=True`` it rewrites each row that holds one as a write would have stored it
(``[secret: card number]``, the sensitivity raised, the note of what was found), one transaction
per batch, audited in the purge log, the episodes' and facts' vectors embedded again from the
masked text. Interrupted, it loses nothing: run it again and it goes on (a masked row holds
nothing more to find).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from mnemonite.embedding.base import Embedder
from mnemonite.models.base import Model
from mnemonite.models.sensitivity import SECRETS_KEY
from mnemonite.privacy import Guarded, SecretGuard
from mnemonite.store import Store
from mnemonite.store.sql_scan import TEXT_TABLES, TextRow

__all__ = ["ScanProgress", "ScanReport", "scan_secrets"]

ScanProgress = Callable[[str, int, int], None]
"""Called after each batch with (table, rows read, rows in the table)."""
_MAIN = {"episodes": ("content", "metadata"), "facts": ("text", "payload"), "session_messages": ("content", "metadata")}


class ScanReport(Model):
    """What `Memory.scan_secrets` found: secret values by kind, rows holding one by table, what was masked."""

    kinds: dict[str, int]
    rows: dict[str, int]
    read: int
    masked: int
    mask: bool


async def scan_secrets(
    store: Store,
    guard: SecretGuard,
    embedder: Embedder | None,
    *,
    mask: bool = False,
    progress: ScanProgress | None = None,
    batch: int = 500,
) -> ScanReport:
    """Scan (and with ``mask``, mask) every table's text; see the module docstring."""
    kinds: Counter[str] = Counter()
    rows: Counter[str] = Counter()
    read = masked = 0
    for name, table in TEXT_TABLES.items():
        total, after, done = await store.text_count(name), 0, 0
        while found := await store.text_rows(name, after, batch):
            changed = [row for row in found if _guard_row(name, table.texts, table.json, row, guard)]
            for row in changed:
                kinds.update(row.kinds)
            rows[name] += len(changed)
            if mask and changed:
                await store.rewrite_texts(name, changed, "mnemonite scan --mask")
                await _embed_again(store, embedder, table.kind, changed)
                masked += len(changed)
            after, done, read = found[-1].seq, done + len(found), read + len(found)
            if progress is not None:
                progress(name, done, max(total, done))
    return ScanReport(kinds=dict(kinds), rows={k: v for k, v in rows.items() if v}, read=read, masked=masked, mask=mask)


def _guard_row(name: str, texts: tuple[str, ...], json: tuple[str, ...], row: TextRow, guard: SecretGuard) -> bool:
    """Mask the row's text in place (in ``row``); whether any secret was found."""
    level: Any = row.sensitivity or "internal"
    main = _MAIN.get(name)
    for column in texts:
        value = row.values.get(column)
        if isinstance(value, str) and value:
            guarded = guard.text(value, level)
            _count(row, guarded)
            row.values[column] = guarded.text
            level = guarded.sensitivity
            if main is not None and column == main[0] and guarded.spans:
                held = row.values.get(main[1])
                row.values[main[1]] = _noted(held if isinstance(held, dict) else {}, guarded)
    for column in json:
        row.values[column], level = guard.data(row.values.get(column), level, row.kinds)
    if row.sensitivity is not None:
        row.sensitivity = level
    return bool(row.kinds)


def _noted(held: dict[str, Any], guarded: Guarded) -> dict[str, Any]:
    """A record's note of what was found, merged with one an earlier write or scan left."""
    earlier = held.get(SECRETS_KEY)
    note = guarded.into(held)
    if isinstance(earlier, dict) and isinstance(note.get(SECRETS_KEY), dict):
        note[SECRETS_KEY]["raised"] = bool(earlier.get("raised", True)) and note[SECRETS_KEY]["raised"]
    return note


def _count(row: TextRow, guarded: Guarded) -> None:
    row.kinds += [str(span["kind"]) for span in guarded.spans]


async def _embed_again(store: Store, embedder: Embedder | None, kind: str | None, rows: list[TextRow]) -> None:
    """The rewritten episodes' and facts' vectors, from their masked text (the old ones were dropped)."""
    if kind is None or embedder is None or not rows:
        return
    column = "content" if kind == "episode" else "text"
    matrix = await embedder.embed_batch([str(row.values[column]) for row in rows])
    await store.save_vectors(kind, embedder.model, [row.seq for row in rows], np.asarray(matrix), upto=0)  # type: ignore[arg-type]
