"""The subject/predicate stage read by a dependency parser: typed values, possessed attributes, pronouns.

Where the locale pack's rules leave a statement undecided or admit it beside a held fact, the parser's readings
(`mnemonite.reading`) of the candidate and of its nearest held facts are compared, clause by clause, for the same
person:

- a value the statement says was replaced ("switched from Comcast to Verizon", "traded in the Civic") that a held
  fact holds: that fact is superseded; so is one the statement denies or ends, sharing a word of it ("I stopped
  volunteering at the shelter"), from a lower cosine than other decisions;
- the same attribute ("my rent" and "rent went up to", a dose "raised" by someone, a class "moved to" another day,
  two statements naming the same thing) with another value of the same type: superseded where the attribute holds
  one value at a time (an amount, something possessed, or a change word) and the statement is no past event and
  says no "also"; otherwise, for the same attribute said the same way, a candidate update (pending, naming the
  fact it may replace);
- the same values or words of content said another way ("I earn 4k a month" and "I'm paid 4000 a month", "proton
  is my vpn" and "i use proton vpn", "Sophie does my hair" and "my hairdresser is Sophie"): a duplicate.

"he" and "she" mean the one other person the nearest facts are about, or, in a memory about one named person with
no other, that person; among several, the closest fact's person of the pronoun's gender, for a candidate update
only. Everything else is left as the rules decided.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from mnemonite.models.conflict import ConflictThresholds, DecisionKind
from mnemonite.models.fact import Fact
from mnemonite.reading.statement import USER, Reading
from mnemonite.reading.values import Value

_TIME_UNITS = frozenset({"min", "day", "year", "month"})
_AMOUNTS = frozenset({"number", "money", "quantity", "percent"})
_GENERIC = frozenset({"be", "have", "do", "get", "go", "?"})
_SINGULAR = frozenset({"?he", "?she", "?him", "?her"})
_PARAPHRASE = 0.7  # how close in meaning two statements with the same amounts must be to be one fact
_RETRACTION = 0.3  # how close in meaning a denial must be to the statement it retracts, sharing a word of it
_CONTAINED = 0.75  # how close in meaning a statement must be to one whose words of content hold all of its own
_ANCHORED = 0.5  # how close two statements naming the same thing ("chess.com") must be to be of one attribute


@dataclass(frozen=True)
class Parsed:
    """The parser's readings of a candidate and of the held facts it was compared with (by fact id)."""

    candidate: tuple[Reading, ...]
    held: dict[str, tuple[Reading, ...]]
    names: frozenset[str] = frozenset()
    genders: Mapping[str, str] = field(default_factory=dict)  # relation noun -> "m" or "f" (the locale pack's)


@dataclass(frozen=True)
class Found:
    kind: DecisionKind
    reason: str
    targets: tuple[str, ...]


def by_parse(parsed: Parsed, neighbours: Sequence[tuple[Fact, float]], thresholds: ConflictThresholds) -> Found | None:
    """The parser's decision over the nearest held facts, or None where it sees nothing to decide."""
    floor = min(thresholds.conflict_check, _RETRACTION)  # a denial may reach a statement further in meaning
    near = [(f, cos) for f, cos in neighbours if cos > floor and f.id in parsed.held]
    if not near or not parsed.candidate:
        return None
    people = _others(neighbours, parsed)
    clauses = [c for c in parsed.candidate if not c.plan]
    if len(clauses) < len(parsed.candidate) and not any(c.old for c in clauses):
        return None  # a plan in the statement: nothing changes yet
    for clause in clauses:
        mine = _resolve(clause, people, parsed.names, parsed.genders)
        if mine is None:
            guessed = _guess(clause, near, parsed)
            return _unsure(guessed, near, parsed, thresholds) if guessed is not None else None
        for fact, cos in near:
            for theirs in parsed.held[fact.id]:
                held = _resolve(theirs, people, parsed.names, parsed.genders)
                found = _pair(mine, held, fact, cos, thresholds, len(clauses) > 1) if held is not None else None
                if found is not None:
                    return found
    return None


def _pair(
    mine: Reading, held: Reading, fact: Fact, cos: float, thresholds: ConflictThresholds, several: bool
) -> Found | None:
    """The decision one clause of the candidate reaches against one clause of a held fact, or None."""
    if held.negated:
        return None
    if held.owner != mine.owner:  # "Sophie does my hair" and "my hairdresser is Sophie"
        return _named_alike(mine, held, fact, cos)
    if cos <= thresholds.conflict_check and not mine.negated:
        return None
    return _compare(mine, held, fact, cos, several)


def _compare(mine: Reading, held: Reading, fact: Fact, cosine: float, several: bool) -> Found | None:
    said = f"{mine.owner}'s {_name(mine, held)}"
    replaced = [v for v in mine.old if any(v.same(h) for h in held.values)]
    if replaced and not mine.negated:
        return Found("supersede", f"parsed: {said} was {replaced[0].text!r}, now another", (fact.id,))
    if mine.negated and not held.negated and mine.topic & held.topic and cosine >= _RETRACTION:
        words = ", ".join(sorted(mine.topic & held.topic))
        return Found("supersede", f"parsed: {mine.owner} no longer ({words})", (fact.id,))
    anchored = bool(_named(mine.values) & _named(held.values)) and cosine >= _ANCHORED
    # a word in common relates two statements; a sentence without a verb, only if all its words are the other's
    shared = mine.topic <= held.topic if mine.fragment else bool(mine.topic & held.topic)
    related = _same_attribute(mine, held) or shared
    if not (related or anchored):
        return _paraphrase(mine, held, fact, cosine, several)
    pairs = [(m, h) for m in mine.values for h in held.values if _comparable(m, h)]
    if not pairs:
        return _paraphrase(mine, held, fact, cosine, several)
    equal = [m for m, h in pairs if m.same(h)]
    other = [(m, h) for m, h in pairs if not m.same(h) and not any(m.same(x) for x in held.values)]
    alike = _salient(mine.values) == _salient(held.values)
    # one attribute said of both, not a guess from the values' kinds: "it takes me 45 minutes" is "my commute is 45
    # minutes", "dress size 12" (all its words) is "I'm a size 12 in dresses", "w1 fact 0" is not "w0 fact 0"
    guessed = next((r for r in (mine, held) if r.attribute == "?"), None)
    if guessed is not None:
        other_topic = held.topic if guessed is mine else mine.topic
        same = not guessed.fragment or guessed.topic <= other_topic
    else:
        same = _same_attribute(mine, held) or not (mine.possessed or held.possessed)
    if equal and not other and alike and related and same and mine.negated == held.negated and not mine.change \
            and not several:  # fmt: skip
        return Found("dedup", f"parsed: the same {said} ({equal[0].text!r})", (fact.id,))
    if not other or mine.negated or mine.additive or (mine.past and not mine.change):
        return None
    new, old = other[0]
    if _one_value(mine, held, other):
        return Found("supersede", f"parsed: {said} is {new.text!r}, was {old.text!r}", (fact.id,))
    if _same_slot(mine, held):  # another value where one may be held at a time: kept, marked, never silent
        reason = f"parsed: {said} is {new.text!r}, was {old.text!r}: a candidate update of fact {fact.id}"
        return Found("pending", reason, (fact.id,))
    return None


def _same_slot(mine: Reading, held: Reading) -> bool:
    """The same attribute said the same way of both, with a verb: where another value may replace the held one
    ("I drive a Civic", "I drive a Subaru"), unless a sentence without a verb or a generic verb."""
    if mine.fragment or held.fragment or mine.attribute != held.attribute:
        return False
    return mine.possessed or mine.attribute.split(" ")[0] not in _GENERIC


def _paraphrase(mine: Reading, held: Reading, fact: Fact, cosine: float, several: bool) -> Found | None:
    """The same values or the same words of content, said another way, is one fact."""
    if mine.negated != held.negated or mine.change or several or cosine < _PARAPHRASE:
        return None
    if mine.possessed and held.possessed and mine.attribute != held.attribute:
        return None  # "my rent is 2000" and "my salary is 2000"
    measured = {(v.kind, v.norm) for v in mine.values if v.measured}
    theirs = {(v.kind, v.norm) for v in held.values if v.measured}
    # a sentence without a verb matches on amounts only where all its words are the other's ("dress size 12" and
    # "I'm a size 12 in dresses"; not "w1 fact 0" and "w0 fact 0")
    fragment = next((r for r in (mine, held) if r.fragment), None)
    worded = fragment is None or fragment.topic <= (held.topic if fragment is mine else mine.topic)
    if measured and measured == theirs and worded and _named_agree(mine.values, held.values):
        return Found("dedup", f"parsed: the same amounts of {mine.owner} said another way", (fact.id,))
    if mine.gist and mine.gist == held.gist:
        return Found("dedup", f"parsed: the same words of content about {mine.owner}", (fact.id,))
    if _contained(mine, held) and cosine >= _CONTAINED and mine.past == held.past and not mine.additive:
        return Found("dedup", f"parsed: what {mine.owner} holds, said with fewer or other words", (fact.id,))
    return None


def _named_alike(mine: Reading, held: Reading, fact: Fact, cosine: float) -> Found | None:
    """A statement about a named person or thing and one of the user's naming it: one fact where they name the
    same (the owner counted among the names), with the same polarity, close in meaning."""
    if USER not in (mine.owner, held.owner) or mine.negated != held.negated or mine.change or cosine < _PARAPHRASE:
        return None
    named, user = (mine, held) if held.owner == USER else (held, mine)
    if not _as_name(named.owner) or named.owner not in _salient(user.values):
        return None  # the one statement's person must be a value of the user's statement
    ours, theirs = _salient(mine.values) | _as_name(mine.owner), _salient(held.values) | _as_name(held.owner)
    if ours == theirs:
        return Found("dedup", f"parsed: the same names ({', '.join(sorted(ours))}) said another way", (fact.id,))
    return None


def _as_name(owner: str) -> set[str]:
    """An owner that is a name ("sophie"), not the user or a relation of the user's."""
    return set() if owner == USER or owner.startswith(f"{USER}'s") or owner.startswith("?") else {owner}


def _contained(mine: Reading, held: Reading) -> bool:
    """One statement's words of content all in the other's (at least two), and no value of one that the other
    gives otherwise: "proton is my vpn" and "i use proton vpn"."""
    small, large = sorted((mine.gist, held.gist), key=len)
    if len(small) < 2 or not small <= large:
        return False
    ours, theirs = _salient(mine.values), _salient(held.values)
    return ours <= theirs or theirs <= ours


def _named(values: Sequence[Value]) -> set[str]:
    """The names among the values (a place, an organisation, a person, a capitalised thing)."""
    return {
        v.norm for v in values if v.kind in ("place", "org", "person") or (v.kind == "thing" and v.text[:1].isupper())
    }


def _salient(values: Sequence[Value]) -> set[str]:
    """The values that tell two statements apart: amounts, times, dates, names (a capitalised thing too)."""
    return {v.norm for v in values if v.kind != "thing" or v.text[:1].isupper()}


def _named_agree(mine: Sequence[Value], held: Sequence[Value]) -> bool:
    """No named value (a place, an organisation, a person) on one side that the other names otherwise."""
    ours = [v for v in mine if v.kind in ("place", "org", "person")]
    theirs = [v for v in held if v.kind in ("place", "org", "person")]
    return all(any(v.same(h) for h in theirs) for v in ours) if ours and theirs else True


def _same_attribute(mine: Reading, held: Reading) -> bool:
    if mine.attribute == "?" or held.attribute == "?":  # "it" of a change verb, or a sentence without a verb
        unknown, known = (mine, held) if mine.attribute == "?" else (held, mine)
        if unknown.fragment and not (unknown.topic and unknown.topic <= known.topic):
            return False  # "w1 fact 0" is not about what "w0 fact 0" is
        return any(v.measured for v in mine.values) and any(v.measured for v in held.values)
    if mine.attribute == held.attribute:
        return mine.attribute.split(" ")[0] not in _GENERIC or mine.possessed
    if mine.possessed and held.possessed:
        one, other = set(mine.attribute.split()), set(held.attribute.split())
        return mine.attribute.split()[-1] == held.attribute.split()[-1] or one <= other or other <= one
    if mine.possessed != held.possessed:  # "my rent went up" and "I pay 1800 in rent"
        noun, other_reading = (mine, held) if mine.possessed else (held, mine)
        return noun.attribute.split()[-1] in other_reading.gist or _stem_in(noun.attribute, other_reading)
    return mine.verb == held.verb and mine.verb not in _GENERIC


def _stem_in(attribute: str, reading: Reading) -> bool:
    word = attribute.split()[-1]  # "rent" in "I pay 1800 in rent", "payment" of "I pay 350 a month"
    return len(word) > 3 and any(g.startswith(word[:-1]) or (len(g) > 2 and word.startswith(g)) for g in reading.gist)


def _comparable(mine: Value, held: Value) -> bool:
    """Two values of one type: amounts in the same unit (or one without), two times, two dates, two names."""
    if mine.measured or held.measured:
        kinds = {mine.kind, held.kind}
        same_kind = mine.kind == held.kind or kinds <= {"number", "quantity", "money"}
        if {mine.unit, held.unit} & _TIME_UNITS:  # "daily" is no other value than "8 glasses"
            return same_kind and mine.unit == held.unit
        return same_kind and (mine.unit == held.unit or not (mine.unit and held.unit))
    return mine.kind == held.kind and mine.kind in ("place", "org", "person")


def _one_value(mine: Reading, held: Reading, other: list[tuple[Value, Value]]) -> bool:
    """Whether the attribute holds one value at a time here: an amount (a rent, a dose, a size); a change the
    statement says ("moved to", "switched", "went up to"); a day, a time or a name of something possessed ("my
    dentist is", "my wedding is on"), not of a fragment ("lunch with Ana on Friday" is one more lunch)."""
    if mine.fragment and held.fragment and not mine.change:
        return False  # two sentences without a verb ("w1 fact 0", "w1 fact 1"): two notes, not one changed
    if mine.change or any(m.kind in _AMOUNTS for m, _ in other):
        return True
    return mine.possessed and held.possessed and not (mine.fragment or held.fragment)


def _name(mine: Reading, held: Reading) -> str:
    return mine.attribute if mine.attribute not in ("?", "") else held.attribute


def _others(near: Sequence[tuple[Fact, float]], parsed: Parsed) -> set[str]:
    """The people other than the user that the related facts are about."""
    found: set[str] = set()
    for fact, _ in near:
        for reading in parsed.held.get(fact.id, ()):
            if reading.resolved and reading.owner != USER:
                found.add(reading.owner)
    return found


def _may_be(pronoun: str, person: str, genders: Mapping[str, str]) -> bool:
    """Whether "he" or "she" may be this person: a relation of the other gender ("my son" for "she") may not."""
    said = "m" if pronoun in ("?he", "?him") else "f"
    known = genders.get(person.rsplit(" ", 1)[-1])
    return known is None or known == said


def _guess(clause: Reading, near: Sequence[tuple[Fact, float]], parsed: Parsed) -> Reading | None:
    """ "he" or "she" among several people: the one the closest held fact is about, of the pronoun's gender."""
    if clause.owner not in _SINGULAR:
        return None
    for fact, _ in near:
        for reading in parsed.held.get(fact.id, ()):
            if reading.resolved and reading.owner != USER and _may_be(clause.owner, reading.owner, parsed.genders):
                return clause.about(reading.owner)
    return None


def _unsure(
    guessed: Reading, near: Sequence[tuple[Fact, float]], parsed: Parsed, thresholds: ConflictThresholds
) -> Found | None:
    """A decision about a person guessed by closeness of meaning: never a supersede nor a duplicate of what may be
    someone else's fact, at most a candidate update of it."""
    for fact, cos in near:
        for theirs in parsed.held[fact.id]:
            if theirs.owner != guessed.owner:
                continue
            found = _pair(guessed, theirs, fact, cos, thresholds, False)
            if found is not None and found.kind == "supersede":
                reason = f"{found.reason}; {guessed.owner!r} guessed from the closest fact: a candidate update"
                return Found("pending", reason, found.targets)
    return None


def _resolve(
    reading: Reading, people: set[str], names: frozenset[str], genders: Mapping[str, str] | None = None
) -> Reading | None:
    """The reading with "he"/"she"/"they" resolved, or None where it cannot be."""
    if reading.resolved:
        return reading
    if reading.owner not in _SINGULAR:  # "they" may be several people
        return None
    people = {p for p in people if _may_be(reading.owner, p, genders or {})}
    if len(people) == 1:
        return reading.about(next(iter(people)))
    if not people and names:
        return reading.about(USER)
    return None
