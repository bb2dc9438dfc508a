"""Short answers read with the question they answer (English, rule-based).

"What did you study?" answered "Environmental engineering." states that the one who answered
studied environmental engineering; neither message says it alone. `first_person` turns such a
question and a fragment answering it into a first-person statement ("I studied environmental
engineering"), which the statement pack then resolves to the speaker like any other.
"""

from __future__ import annotations

import re

__all__ = ["agrees", "first_person", "past_tense"]

_WH = r"(?P<wh>what|where|when|who|which \w+|what \w+|how long|how many \w+|how often)"
_AUX = r"(?P<aux>did|do|does|are|were|will|have|can)"
# "What did you study?", "Where do you work now?", "When are you moving?", "How long have you lived there?"
_ASKED_DOING = re.compile(rf"^{_WH}\s+{_AUX}\s+you\s+(?P<vp>.+?)\s*\?$", re.IGNORECASE)
# "What is your current job?", "Who is your new manager?", "Where is your office?"
_ASKED_YOUR = re.compile(rf"^{_WH}\s+(?:is|was)\s+your\s+(?P<noun>[\w' -]+?)\s*\?$", re.IGNORECASE)
# "Do you have a watch?", "Are you still doing the on-call rotation?", "Can you drive stick?"
_ASKED_YES_NO = re.compile(rf"^{_AUX}\s+you\s+(?P<vp>.+?)\s*\?$", re.IGNORECASE)
_NOUN_PHRASE_START = re.compile(
    r"^(?:a|an|the|on|in|at|by|for|with|about|every|around|since|from|to|my|our|once|twice|\d+)\b"
)
_ADVERBIAL = re.compile(r"^(?:every|on|in|at|since|for|about|around|once|twice|\d+|from|near|by|with)\b")
_PREPOSITION = re.compile(r"^(?:in|at|on|near|by|from|to|outside|inside|close to)\b", re.IGNORECASE)
_DECLINE = re.compile(r"^(?:no|nope|not|never|nah|i do not|i did not)\b", re.IGNORECASE)
_YES = re.compile(r"^(?:yes|yeah|yep|yup|sure|of course|definitely|absolutely)\b[\s,!.]*", re.IGNORECASE)
_TENSE = {"did": "{past}", "do": "{base}", "does": "{base}", "are": "am {base}", "were": "was {base}",
          "will": "will {base}", "have": "have {base}", "can": "can {base}"}  # fmt: skip
_IRREGULAR = dict(
    pair.split(":")
    for pair in "go:went get:got have:had make:made take:took come:came leave:left meet:met find:found see:saw "
    "buy:bought teach:taught do:did eat:ate drink:drank write:wrote run:ran begin:began grow:grew sell:sold "
    "spend:spent think:thought pay:paid say:said hear:heard feel:felt keep:kept lose:lost win:won read:read "
    "put:put choose:chose bring:brought build:built fly:flew drive:drove ride:rode become:became give:gave "
    "know:knew sleep:slept speak:spoke swim:swam wear:wore tell:told stand:stood sit:sat send:sent".split()
)
_MAX_ANSWER_WORDS = 10
# "Did you see/hear/know ...?" asks about news; a yes says nothing about the one answering.
_NEWS = frozenset("see hear know remember think mean mind get notice understand agree recall".split())
_ANY = re.compile(r"\bany\s+", re.IGNORECASE)


def past_tense(verb: str) -> str:
    """The simple past of an English verb: irregular from a table, else regular spelling."""
    lowered = verb.lower()
    if lowered in _IRREGULAR:
        return _IRREGULAR[lowered]
    if lowered.endswith("e"):
        return lowered + "d"
    if lowered.endswith("y") and len(lowered) > 2 and lowered[-2] not in "aeiou":
        return lowered[:-1] + "ied"
    return lowered + "ed"


def agrees(answer: str) -> bool:
    """Whether an answer opens with a yes."""
    return bool(_YES.match(answer.strip()))


def first_person(question: str, answer: str) -> str | None:
    """The first-person statement a short answer makes to a question put to its speaker (or None)."""
    reply = answer.strip().rstrip(".!")
    agreed = bool(_YES.match(reply))
    reply = _YES.sub("", reply).strip()
    if _DECLINE.match(reply) or len(reply.split()) > _MAX_ANSWER_WORDS:
        return None
    asked = " ".join(question.split())
    if match := _ASKED_YOUR.match(asked):
        return _your(match.group("wh").lower(), match.group("noun"), reply) if reply else None
    if match := _ASKED_DOING.match(asked):
        return (
            _doing(match.group("wh").lower(), match.group("aux").lower(), match.group("vp"), reply) if reply else None
        )
    if (match := _ASKED_YES_NO.match(asked)) and (agreed or reply):
        vp = _ANY.sub("", _mine(re.split(r",? or ", match.group("vp"))[0]))  # "... or know anyone who ...?"
        tail = (
            _lower(reply) if _ADVERBIAL.match(reply.lower()) else ""
        )  # "Love it." or "A buddy of mine ..." adds nothing
        return None if vp.split()[0].lower() in _NEWS else _clause(match.group("aux").lower(), vp, tail)
    return None


def _your(wh: str, noun: str, reply: str) -> str:
    place = "in " if wh == "where" and not _PREPOSITION.match(reply) else ""
    return f"my {noun} is {place}{_lower(reply)}"


def _doing(wh: str, aux: str, vp: str, reply: str) -> str | None:
    vp = _mine(vp)
    if wh in {"where"} and not _PREPOSITION.match(reply):
        reply = f"in {reply}"
    if wh.startswith(("what", "which", "who")) and not wh.startswith("what time"):
        verb, _, rest = vp.partition(" ")
        return _clause(aux, verb, " ".join(part for part in (_lower(reply), rest) if part))
    return _clause(aux, vp, _lower(reply))


def _clause(aux: str, vp: str, tail: str) -> str | None:
    verb, _, rest = vp.partition(" ")
    if not verb.isalpha():
        return None
    form = _TENSE[aux].format(past=past_tense(verb), base=verb)
    return " ".join(part for part in ("I", form, rest, tail) if part)


def _mine(vp: str) -> str:
    """The question's second person as the answerer's first person."""
    vp = re.sub(r"\byours\b", "mine", vp, flags=re.IGNORECASE)
    vp = re.sub(r"\byour\b", "my", vp, flags=re.IGNORECASE)
    vp = re.sub(r"\byourself\b", "myself", vp, flags=re.IGNORECASE)
    return re.sub(r"\byou\b", "me", vp, flags=re.IGNORECASE)


def _lower(reply: str) -> str:
    """The answer inside a sentence: a leading article or preposition in lower case, names kept."""
    return reply[0].lower() + reply[1:] if _NOUN_PHRASE_START.match(reply.lower()) and reply[:1].isupper() else reply
