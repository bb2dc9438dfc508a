"""The search engine's per-user caches, bounded by the memory they hold, least recently used out first.

A fixed number of slots thrashes as soon as more users search in turn than there are slots (ten
users over two tiers need twenty), and then every search re-reads and re-tokenises a user's texts.
Sizing by bytes keeps thousands of small users cached next to a few large ones; an empty tier
costs a few kilobytes. What one cached user costs is documented in the README ("Search").
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ByteBoundedCache(Generic[K, V]):
    """An LRU map whose entries are weighed by ``weigh`` (bytes) whenever they are settled."""

    def __init__(self, budget: int, weigh: Callable[[V], int]) -> None:
        self.budget = budget
        self._weigh = weigh
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._sizes: dict[K, int] = {}
        self._total = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __getitem__(self, key: K) -> V:
        return self._entries[key]

    @property
    def nbytes(self) -> int:
        """The bytes of every entry, as weighed when it was last settled."""
        return self._total

    def values(self) -> Iterator[V]:
        return iter(list(self._entries.values()))

    def get(self, key: K, create: Callable[[], V]) -> V:
        """The entry of ``key`` (created if missing), now the most recently used."""
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = create()
        self._entries.move_to_end(key)
        return entry

    def drop(self, keep: Callable[[K], bool]) -> None:
        """Forget every entry whose key ``keep`` refuses."""
        for key in [key for key in self._entries if not keep(key)]:
            del self._entries[key]
            self._total -= self._sizes.pop(key, 0)

    def settle(self, used: Iterable[K]) -> None:
        """Weigh the entries just used, then evict the least recently used others while over budget."""
        used = [key for key in used if key in self._entries]
        for key in used:
            size = self._weigh(self._entries[key])
            self._total += size - self._sizes.get(key, 0)
            self._sizes[key] = size
        if self._total <= self.budget:
            return  # the common case: no walk over every cached user
        spared = set(used)
        for key in list(self._entries):
            if self._total <= self.budget:
                break
            if key not in spared:
                del self._entries[key]
                self._total -= self._sizes.pop(key, 0)
