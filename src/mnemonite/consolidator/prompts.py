"""Every prompt the consolidator sends, in one place. Each asks for one JSON object (JSON mode)."""

from __future__ import annotations

from collections.abc import Sequence

from mnemonite.judge import PROMPT as JUDGE

__all__ = ["EXTRACT", "JUDGE", "PROCEDURE", "SUMMARY", "turns_listing"]

SUMMARY = """You keep an assistant's long-term memory. Summarise the conversation below in at most three
sentences, keeping names, places, dates and decisions. Answer with one JSON object and nothing else:
{"summary": "<the summary>"}"""

EXTRACT = """You keep an assistant's long-term memory of facts about people. From the messages below, list
every atomic fact a careful reader would record: one fact per statement, one subject, no opinions about the
conversation, no questions, no plans that were only considered. Write facts the user states about themself
in the first person ("I live in Berlin"); write facts about anyone else with their name ("Sam works at
Siemens"). Cite the id of the message each fact comes from. Answer with one JSON object and nothing else:
{"statements": [{"text": "<fact>", "source_id": "<message id>"}]}"""

PROCEDURE = """You keep an assistant's memory of procedures. From the messages below, list every procedure
(how to do something, as ordered steps) that was explained or followed. Answer with one JSON object and
nothing else: {"procedures": [{"name": "<what it achieves>", "steps": ["<step>", "..."], "source_id":
"<message id>"}]} (an empty list when there is none)."""


def turns_listing(turns: Sequence[tuple[str, str, str]]) -> str:
    """Messages as ``- id "<id>" <speaker>: <text>`` lines, for the prompts above."""
    return "\n".join(f'- id "{turn_id}" {speaker}: {text}' for turn_id, speaker, text in turns)
