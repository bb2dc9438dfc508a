"""A chat loop that records every turn and recalls what matters before answering (no LLM: scripted turns).

Run: python examples/chat_loop.py
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from mnemonite import Episode, Memory, Scope

USER, AGENT = "sam", "assistant"

# (what the user says, what the assistant answers): a real agent would call its LLM here,
# with the recalled memories in the prompt.
TURNS = [
    ("My sister Ana is vegan and visits me next week.", "Noted, I will keep Ana's diet in mind."),
    ("I am training for the Porto half marathon in May.", "Good luck with the training!"),
    ("Where should I take my sister for dinner?", "Somewhere vegan: Ana does not eat animal products."),
    ("How long until my half marathon?", "It is in May, so you have a few weeks of training left."),
]


def prompt_for(message: str, recalled: list[str]) -> str:
    """What the assistant would send its LLM: the recalled memories, then the message."""
    context = "\n".join(f"- {text}" for text in recalled) or "- (nothing yet)"
    return f"Relevant memories:\n{context}\nUser: {message}"


async def chat(mem: Memory, session: str) -> None:
    for turn, (message, answer) in enumerate(TURNS):
        hits = await mem.episodic.search(Scope(user=USER), message, k=2)
        print(prompt_for(message, [hit.text for hit in hits]))
        print(f"Assistant: {answer}\n")
        await mem.episodic.put_many(
            [
                Episode(id=f"{session}-{turn}-user", content=message, source_node="user"),
                Episode(id=f"{session}-{turn}-assistant", content=answer, source_node="assistant"),
            ],
            user=USER,
            session=session,
            agent=AGENT,
        )


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        async with await Memory.open(f"sqlite:///{Path(folder) / 'chat.db'}") as mem:
            await chat(mem, session="2026-05-01")
            print(f"{len(await mem.episodic.recent(USER, limit=100))} turns recorded")


if __name__ == "__main__":
    asyncio.run(main())
