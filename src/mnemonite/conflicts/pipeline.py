"""The five-stage conflict pipeline of `semantic.remember`.

Every candidate fact goes through the stages in order; the first that reaches a decision wins:

1. **exact** — the MD5 of the canonical text (lower-cased, whitespace collapsed, trimmed)
   equals a current fact's: a duplicate.
2. **embedding** — the top-K current facts by cosine set the zone. HOT (≥ 0.95) is a
   duplicate, except (unless ``ConflictThresholds.strict_hot``) when the candidate flips the
   nearest fact's polarity ("no longer allergic to cats" after "allergic to cats"), which
   supersedes it, or is about another subject, which is admitted.
3. **regex** — a plan or hypothetical ("might move", "thinking about") is admitted and
   changes nothing; a change signal of the locale pack with no parsable statement changes the
   nearest fact about the user, if it is close enough in meaning.
4. **subject_predicate** — the locale pack splits both into (subject, predicate, object,
   polarity), the user's names and first person meeting as ``user``: the same triple →
   duplicate; a negation or retraction of a held statement, or the same single-valued
   predicate with another object → supersede; another object of an additive predicate, another
   subject, or (without a judge) another predicate → admit. Where the statement has several clauses and the
   first reading replaces nothing, another clause may supersede; a duplicate whose other clauses say something
   new is admitted.
5. Still undecided: NEAR-DUP → duplicate; CONFLICT-CHECK → admitted ``pending`` for a
   `ConflictJudge` when the statement could not be parsed (or a judge is configured); COLD → admit.

`decide` is a pure function of the candidate and what the store found, so every decision
is reproducible from its audit row's inputs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher

from mnemonite.conflicts.pack import USER, LocalePack, Triple
from mnemonite.conflicts.parsed import Parsed, by_parse
from mnemonite.models.conflict import ConflictThresholds, DecisionKind, Stage, Zone
from mnemonite.models.fact import Fact

Related = list[tuple[Fact, Triple | None, float | None]]


@dataclass(frozen=True)
class Outcome:
    """What `decide` concluded: ``targets`` are the duplicate (dedup) or the facts to close (supersede)."""

    kind: DecisionKind
    stage: Stage
    zone: Zone
    cosine: float | None
    reason: str
    targets: tuple[str, ...] = ()
    clause: Triple | None = None  # set when another clause than the statement's first reading decided


def decide(
    text: str,
    *,
    exact: Fact | None,
    neighbours: Sequence[tuple[Fact, float]],
    same_predicate: Sequence[Fact],
    pack: LocalePack,
    thresholds: ConflictThresholds,
    triple: Triple | None = None,
    names: frozenset[str] = frozenset(),
    judged: bool = False,
    also: Sequence[tuple[Triple, Sequence[Fact]]] = (),
    parsed: Parsed | None = None,
) -> Outcome:
    """Run the five stages over what the store found for the candidate ``text``.

    ``exact``: a current fact with the same canonical hash; ``neighbours``: the top-K current
    facts with their cosine, best first; ``same_predicate``: current facts stored with the
    candidate's (subject, predicate); ``triple``: the candidate's (subject, predicate, object)
    when the caller knows it (otherwise the pack splits the text); ``names``: the user's names
    and aliases, lower-cased; ``judged``: a judge will see pending facts (otherwise pending is
    kept for statements that could not be parsed); ``also``: the statement's other clauses' triples
    (`LocalePack.readings`), each with the current facts stored with its (subject, predicate). Where the first
    reading changes nothing, another clause may supersede ("Greg left, my new boss is Tanya"); a statement whose
    first reading repeats a held fact is a duplicate only if its other clauses repeat held facts too. ``parsed``:
    the dependency parser's readings of the candidate and of its neighbours (`mnemonite.conflicts.parsed`),
    consulted where the rules leave the statement undecided or admit it beside a held fact.
    """
    outcome = _by_rules(text, exact, neighbours, same_predicate, pack, thresholds, triple, names, judged, also)
    return reconsider(outcome, parsed, neighbours, thresholds) if parsed is not None else outcome


def open_to_parsing(outcome: Outcome) -> bool:
    """Whether the parser's reading may change what the rules decided (so the caller parses only then): an
    admission or a pending fact, and a supersede by a change word alone (the statement may add a value: "also")."""
    if outcome.kind == "supersede":
        return outcome.stage == "regex"
    return outcome.kind in ("admit", "pending") and outcome.stage != "exact" and not outcome.reason.startswith(_SETTLED)


def reconsider(
    outcome: Outcome, parsed: Parsed, neighbours: Sequence[tuple[Fact, float]], thresholds: ConflictThresholds
) -> Outcome:
    """The rules' outcome, or the parser's decision where the rules left the statement open (`open_to_parsing`)."""
    if not open_to_parsing(outcome):
        return outcome
    if outcome.kind == "supersede":  # by a change word: kept, unless the statement adds a value beside the held
        if any(clause.additive for clause in parsed.candidate):
            reason = f"parsed: a value beside the held ones ('also', 'too'), not a change ({outcome.reason})"
            return Outcome("admit", "subject_predicate", outcome.zone, outcome.cosine, reason)
        return outcome
    found = by_parse(parsed, neighbours, thresholds)
    if found is None:
        return outcome
    return Outcome(found.kind, "subject_predicate", outcome.zone, outcome.cosine, found.reason, found.targets)


# admissions the parser leaves alone: a plan, and a value of a predicate the pack knows holds several
_SETTLED = ("a plan or hypothetical", "another value of the additive predicate")


def _by_rules(
    text: str,
    exact: Fact | None,
    neighbours: Sequence[tuple[Fact, float]],
    same_predicate: Sequence[Fact],
    pack: LocalePack,
    thresholds: ConflictThresholds,
    triple: Triple | None,
    names: frozenset[str],
    judged: bool,
    also: Sequence[tuple[Triple, Sequence[Fact]]],
) -> Outcome:
    best = neighbours[0][1] if neighbours else None
    zone = thresholds.zone(best)
    if exact is not None:
        return Outcome("dedup", "exact", zone, best, "same canonical text (MD5)", (exact.id,))
    triple = triple or pack.split(text, names)
    swap = _another_value(text, neighbours[0][0].text, pack) if zone == "HOT" and neighbours else None
    hot = _hot(text, triple, neighbours[0], pack, thresholds, names, swap) if zone == "HOT" and neighbours else None
    if hot is not None:
        return hot
    marker = pack.plan_marker(text)
    if marker is not None:
        return Outcome("admit", "regex", zone, best, f"a plan or hypothetical ({marker!r}): nothing changed yet")
    related = _related(neighbours, same_predicate, pack, thresholds, names)
    if triple is not None and not triple.resolved:
        kind: DecisionKind = "admit" if zone == "COLD" else "pending"
        return Outcome(kind, "subject_predicate", zone, best, f"{triple.subject[1:]!r} refers to no one known")
    if triple is not None:
        signal = pack.change_signal(text)
        replaces = pack.replaces(text)
        floor = thresholds.conflict_check if replaces else thresholds.change_signal
        verdict = _by_triple(triple, related, zone, best, pack, judged, signal, floor, replaces)
        if also and (verdict is None or verdict.kind != "supersede"):
            verdict = _other_clauses(verdict, also, neighbours, pack, thresholds, names, zone, best, judged)
        if verdict is not None and (swap is None or verdict.kind != "dedup"):  # a parse blind to the swapped value
            return verdict
    elif (marker := pack.change_signal(text)) is not None:
        targets = _changed(neighbours, pack, thresholds, names)
        if targets:
            return Outcome("supersede", "regex", zone, best, f"explicit change signal ({marker!r})", tuple(targets))
    return _by_zone(zone, best, neighbours, thresholds, judged or triple is None, swap, judged)


def _another_value(text: str, held: str, pack: LocalePack) -> tuple[str, str] | None:
    """Where the candidate says another value than the held statement it is nearly identical to, the held words
    and the candidate's: a number ("10mg" -> "20mg"; "two" and "2" are one), a capitalised word ("Tuesday" ->
    "Thursday") or one of the pack's `values` ("friday" -> "monday"), put in the place of another. Words added or
    dropped ("really", "now") are no other value."""
    names = _capitalised(text) | _capitalised(held) | set(pack.values)
    mine, theirs = _VALUE_WORD.findall(pack.digits(text)), _VALUE_WORD.findall(pack.digits(held))
    for op, i1, i2, j1, j2 in SequenceMatcher(a=theirs, b=mine, autojunk=False).get_opcodes():
        old, new = theirs[i1:i2], mine[j1:j2]
        if op == "replace" and any(_DIGIT.search(word) or word in names for word in (*old, *new)):
            return " ".join(old), " ".join(new)
    return None


def _capitalised(text: str) -> set[str]:
    """The words written with a capital, lower-cased: not the first one, nor "I"."""
    words = _VALUE_WORD.findall(text)[1:]
    return {word.lower() for word in words if word[:1].isupper() and word.lower() not in ("i", "i'm")}


def _numbers_only(swap: tuple[str, str]) -> bool:
    """Whether a swap changes only numbers, none of them a year ("in 2019" and "in 2022" are two events)."""
    old, new = swap[0].split(), swap[1].split()
    pairs = [(a, b) for a, b in zip(old, new, strict=False) if a != b]
    numbers = len(old) == len(new) and all(_DIGIT.search(a) and _DIGIT.search(b) for a, b in pairs)
    return numbers and not any(_YEAR.fullmatch(word) for pair in pairs for word in pair)


_VALUE_WORD = re.compile(r"[^\W_][\w'\u2019.:/-]*[^\W_]|[^\W_]")
_YEAR = re.compile(r"(?:1[89]|20)\d\d")
_DIGIT = re.compile(r"\d")


def _other_clauses(
    verdict: Outcome | None,
    also: Sequence[tuple[Triple, Sequence[Fact]]],
    neighbours: Sequence[tuple[Fact, float]],
    pack: LocalePack,
    thresholds: ConflictThresholds,
    names: frozenset[str],
    zone: Zone,
    best: float | None,
    judged: bool,
) -> Outcome | None:
    """The decision once the statement's other clauses are read: one may supersede what the first reading left
    alone, with the change words of its own clause (not another's), and of another predicate only by a negation or
    a word that names a replacement ("switched to"): "used to go riding as a kid" in the middle of a story ends
    nothing; a duplicate stays one only if no other clause says what no held fact does."""
    more = False
    for clause, held in also:
        if clause.resolved:
            found = _related(neighbours, held, pack, thresholds, names)
            signal, replaces = pack.change_signal(clause.said), pack.replaces(clause.said)
            if not (replaces or clause.negated):  # a change word reaches only the clause's own predicate here
                found = [row for row in found if row[1] is not None and row[1].predicate == clause.predicate]
            floor = thresholds.conflict_check if replaces else thresholds.change_signal
            other = _by_triple(clause, found, zone, best, pack, judged, signal, floor, replaces)
            if other is not None and other.kind == "supersede":
                return replace(other, reason=f"another clause: {other.reason}", clause=clause)
            # a clause with no object that only a catch-all read ("jess, my sister, ...") says nothing more
            says = bool(clause.object) or not clause.loose
            more = more or (says and (other is None or other.kind != "dedup"))
    if verdict is not None and verdict.kind == "dedup" and more:
        reason = f"repeats fact {verdict.targets[0]} and says more in another clause"
        return Outcome("admit", "subject_predicate", zone, best, reason)
    return verdict


def _hot(
    text: str,
    triple: Triple | None,
    nearest: tuple[Fact, float],
    pack: LocalePack,
    thresholds: ConflictThresholds,
    names: frozenset[str],
    swap: tuple[str, str] | None,
) -> Outcome | None:
    """The HOT zone's decision, or None where the statement puts another value in the place of one (left to
    parsing; admitted beside the fact if parsing does not decide)."""
    fact, cosine = nearest
    dedup = Outcome("dedup", "embedding", "HOT", cosine, f"cosine {cosine:.3f} ≥ {thresholds.hot}", (fact.id,))
    if thresholds.strict_hot:
        return dedup
    other = _triple_of(fact, pack, names)
    if triple is not None and other is not None and _people(triple.subject, other.subject):
        reason = f"cosine {cosine:.3f}, but about {triple.subject!r}, not {other.subject!r}"
        return Outcome("admit", "subject_predicate", "HOT", cosine, reason)
    mine = triple.negated if triple is not None else pack.negated(text)
    theirs = other.negated if other is not None else pack.negated(fact.text)
    if mine != theirs:
        flip = "negates or retracts" if mine else "reaffirms what was denied by"
        marker = pack.change_signal(text if mine else fact.text)
        reason = f"cosine {cosine:.3f}, but the statement {flip} fact {fact.id} ({marker!r}; polarity before identity)"
        return Outcome("supersede", "regex", "HOT", cosine, reason, (fact.id,))
    if swap is not None and _numbers_only(swap):  # "I take 20mg of lisinopril daily" after "10mg"
        reason = f"cosine {cosine:.3f}, the same statement with another number ({swap[0]!r} -> {swap[1]!r})"
        return Outcome("supersede", "embedding", "HOT", cosine, reason, (fact.id,))
    return None if swap is not None else dedup


def _by_zone(
    zone: Zone, best: float | None, neighbours: Sequence[tuple[Fact, float]], thresholds: ConflictThresholds,
    undecided: bool, swap: tuple[str, str] | None = None, judged: bool = False,
) -> Outcome:  # fmt: skip
    if swap is not None and neighbours:  # HOT, but with another value that parsing did not decide on: both are kept
        reason = f"cosine {best:.3f}, but another value ({swap[0]!r} -> {swap[1]!r}) than fact {neighbours[0][0].id}"
        return Outcome("pending" if judged else "admit", "embedding", zone, best, reason)
    if zone == "NEAR_DUP" and neighbours:
        reason = f"cosine {best:.3f} ≥ {thresholds.near_dup}, no change signal"
        return Outcome("dedup", "embedding", zone, best, reason, (neighbours[0][0].id,))
    if zone == "CONFLICT_CHECK" and undecided:
        return Outcome("pending", "embedding", zone, best, "related facts, undecided: left for the judge")
    return Outcome("admit", "embedding", zone, best, "no related current fact")


def _related(
    neighbours: Sequence[tuple[Fact, float]],
    same_predicate: Sequence[Fact],
    pack: LocalePack,
    thresholds: ConflictThresholds,
    names: frozenset[str],
) -> Related:
    """Facts worth comparing: same (subject, predicate) from the store, then close neighbours."""
    cosines = {fact.id: cos for fact, cos in neighbours}
    seen: dict[str, tuple[Fact, Triple | None, float | None]] = {}
    for fact in same_predicate:
        seen[fact.id] = (fact, _triple_of(fact, pack, names), cosines.get(fact.id))
    for fact, cos in neighbours:
        if cos > thresholds.conflict_check and fact.id not in seen:
            seen[fact.id] = (fact, _triple_of(fact, pack, names), cos)
    return list(seen.values())


def _triple_of(fact: Fact, pack: LocalePack, names: frozenset[str]) -> Triple | None:
    parsed = pack.split(fact.text, names)
    if fact.subject and fact.predicate and fact.object:
        single = parsed.single_valued if parsed is not None and parsed.predicate == fact.predicate else True
        negated = parsed.negated if parsed else False
        return Triple(pack.resolve(fact.subject, names), fact.predicate, fact.object, single, negated)
    return parsed


def _changed(
    neighbours: Sequence[tuple[Fact, float]], pack: LocalePack, thresholds: ConflictThresholds, names: frozenset[str]
) -> list[str]:
    """The fact an unparsed statement with a change signal replaces: the nearest one about the
    user (never someone else's) close enough in meaning."""
    for fact, cos in neighbours:
        if cos < thresholds.change_signal:
            break
        other = _triple_of(fact, pack, names)
        if other is None or other.subject == USER:
            return [fact.id]
    return []


def _by_triple(
    triple: Triple,
    related: Related,
    zone: Zone,
    best: float | None,
    pack: LocalePack,
    judged: bool,
    signal: str | None,
    floor: float,
    replaces: bool,
) -> Outcome | None:
    """The decision parsing reaches; ``floor``: the cosine from which an explicit change may
    replace the closest statement about the subject (lower for "switched to x", which names no old value);
    ``replaces``: the statement says it replaces something without naming it ("switched to x")."""
    if not related:
        return None
    parsed = [(fact, other, cos) for fact, other, cos in related if other is not None and other.resolved]
    people = _people_named(triple.subject, [o.subject for _, o, _ in parsed])
    mine = [(f, o) for f, o, _ in parsed if o.subject in people]
    same = [(f, o) for f, o in mine if _one_predicate(o.predicate, triple.predicate)]
    # With a change signal ("now", "new") only the very same value is a duplicate: "head nurse" is not "nurse".
    equal = [
        f.id
        for f, o in same
        if _same_object(pack, o.object, triple.object, exact=signal is not None) and o.negated == triple.negated
    ]
    if equal:
        return Outcome("dedup", "subject_predicate", zone, best, "same subject, predicate and object", (equal[0],))
    changed = _changes(triple, parsed, same, mine, pack, signal, floor, replaces, people)
    if changed is not None:
        return Outcome("supersede", changed[0], zone, best, changed[1], changed[2])
    if judged and triple.loose:  # a verb alone is too thin to admit on when a judge can look
        return None
    return _admits(triple, related, parsed, mine, same, zone, best, pack, judged, people)


def _changes(
    triple: Triple,
    parsed: list[tuple[Fact, Triple, float | None]],
    same: list[tuple[Fact, Triple]],
    mine: list[tuple[Fact, Triple]],
    pack: LocalePack,
    signal: str | None,
    floor: float,
    replaces: bool,
    people: frozenset[str],
) -> tuple[Stage, str, tuple[str, ...]] | None:
    """What a candidate supersedes, by which stage and why, or None (``people``: `_people_named`)."""
    negated = _negates(triple, same, mine, pack)
    if negated:
        return (
            "subject_predicate",
            f"negates or retracts a held statement ({triple.predicate} of {triple.subject}"
            + (f"; {signal!r})" if signal else ")"),
            tuple(negated),
        )
    if triple.single_valued and not triple.negated:
        other = [f.id for f, o in same if o.single_valued and not o.negated]
        if other:
            return (
                "subject_predicate",
                f"same subject and single-valued predicate ({triple.predicate}), another object",
                tuple(other),
            )
    if "'s " in triple.subject and triple.predicate in _COPULA and not triple.negated and _DIGIT.search(triple.object):
        # what a person has, said with a number ("my salary is 65000 dollars", "my address is 14 oak street")
        other = [f.id for f, o in same if not o.negated and _DIGIT.search(o.object) and o.object != triple.object]
        if other:
            return ("subject_predicate", f"another number for {triple.subject!r}", tuple(other))
    ranked = sorted(parsed, key=lambda row: -(row[2] or -1))
    if signal and not triple.negated and triple.predicate not in _VAGUE and not _own_verb(signal, triple.predicate):
        # "i run in the evenings now" after "i run in the mornings": a change of the same predicate
        # replaces the closest value held for it, even when the two sentences differ in meaning
        kept = {f.id for f, _ in same}
        alike = [f.id for f, o, cos in ranked if f.id in kept and (cos or -1) > _floor_same(floor)]
        if alike:
            reason = f"explicit change signal ({signal!r}); the closest held {triple.predicate} of {triple.subject!r}"
            return ("regex", reason, (alike[0],))
    # "i switched to y", "i was promoted to lead": a change replaces the closest statement about the subject,
    # close enough in meaning. A marker that in conversation mostly tells news ("now", "just got", "joined":
    # "she just joined an activist group") reaches only statements of its own predicate ("my doctor is now dr lee"
    # after "my doctor is dr smith").
    # Of a person, "is" and "has" hold many values ("gina is excited now"); of what a person has ("my doctor",
    # "my address") they hold one.
    reach = replaces or not pack.news(signal or "")
    own = not _own_verb(signal or "", triple.predicate) and (triple.predicate not in _VAGUE or "'s " in triple.subject)
    close = [
        f.id
        for f, o, cos in ranked
        if o.subject in people and (cos or -1) >= floor and (reach or (own and o.predicate == triple.predicate))
    ]
    if signal and not triple.negated and close:
        return (
            "regex",
            f"explicit change signal ({signal!r}); the closest statement about {triple.subject!r}",
            (close[0],),
        )
    return None


def _admits(
    triple: Triple,
    related: Related,
    parsed: list[tuple[Fact, Triple, float | None]],
    mine: list[tuple[Fact, Triple]],
    same: list[tuple[Fact, Triple]],
    zone: Zone,
    best: float | None,
    pack: LocalePack,
    judged: bool,
    people: frozenset[str],
) -> Outcome | None:
    """Admit what parsing shows to be new, dedup a paraphrase said with another verb, or defer to the zones."""
    if same:
        if triple.loose:  # a verb the pack reads by itself: it does not know whether it holds one value
            reason = f"another value of {triple.predicate} of {triple.subject}, a verb read alone: taken as additive"
        else:
            reason = f"another value of the additive predicate {triple.predicate} of {triple.subject}"
        return Outcome("admit", "subject_predicate", zone, best, reason)
    if parsed and not mine and len(parsed) == len(related):
        return Outcome("admit", "subject_predicate", zone, best, f"related facts are not about {triple.subject!r}")
    near = [f.id for f, o, cos in parsed if zone in ("HOT", "NEAR_DUP") and cos == best and o.subject in people]
    if near and any(_same_object(pack, o.object, triple.object) for f, o in mine if f.id == near[0]):
        reason = "same subject and object, said with another verb (a paraphrase)"
        return Outcome("dedup", "subject_predicate", zone, best, reason, (near[0],))
    if judged or (zone == "NEAR_DUP" and len(mine) < len(related)):
        return None
    reason = f"predicate {triple.predicate} differs from every held fact's about {triple.subject!r}"
    return Outcome("admit", "subject_predicate", zone, best, reason)


# Too vague to replace a value far in meaning on a change signal alone: an adjective ("i am tired
# now"), and having ("i have a cat now" is most often one more)
_VAGUE = frozenset({"is", "has"})
_COPULA = frozenset({"is", "is_a"})


def _own_verb(signal: str, predicate: str) -> bool:
    """Whether the change marker is the statement's own verb ("just started" of predicate start, "joined" of
    join): then it tells what happened, not that an earlier value of that verb stopped holding. "now likes"
    is a change of what is liked."""
    words = signal.split()
    if len(predicate) < 3 or (words and words[0] == "now"):
        return False
    return any(word.startswith(predicate) for word in words)


def _floor_same(floor: float) -> float:
    """How close in meaning a held value of the same predicate must be for an explicit change to replace it."""
    return min(floor, 0.0)


def _one_predicate(one: str, other: str) -> bool:
    """The same predicate ("i am a vegetarian" and "i am vegetarian" count as one), or a favourite of
    unsaid kind ("i like x best") and a favourite of a named kind."""
    if one == other or {one, other} <= _COPULA:
        return True
    return {one.partition("_")[0], other.partition("_")[0]} == {"favourite"} and "favourite" in (one, other)


def _people_named(subject: str, held: Sequence[str]) -> frozenset[str]:
    """The held subjects that are ``subject``: itself, and a name and the relation it was given with ("marco" is
    "user's brother marco", and the other way round). A bare name that two held relations carry ("my brother
    Sam", "my friend Sam") is neither of them."""
    described = {h for h in held if h != subject and _named(h, subject)}
    bare = {h for h in held if h != subject and _named(subject, h)}
    return frozenset({subject, *bare, *(described if len(described) == 1 else ())})


def _named(described: str, name: str) -> bool:
    """Whether ``described`` is a relation given with the bare ``name``: "user's brother marco" and "marco"."""
    return " " not in name and "'" not in name and described.startswith(f"{USER}'s ") and described.endswith(f" {name}")


def _people(one: str, other: str) -> bool:
    """Two subjects plainly not the same: the user and a relation ("my dad"), or two relations."""
    return one != other and all(s == USER or s.startswith(f"{USER}'s ") for s in (one, other))


def _negates(
    triple: Triple, same: list[tuple[Fact, Triple]], mine: list[tuple[Fact, Triple]], pack: LocalePack
) -> list[str]:
    """Held statements the candidate denies, or (negated) that it retracts whatever their verb."""
    # Without an object a verb is denied outright ("i quit smoking"); "has" or "is" without one says nothing.
    bare = triple.predicate not in _VAGUE
    flipped = [
        f.id
        for f, o in same
        if o.negated != triple.negated
        and ((bare and (not triple.object or not o.object)) or _same_object(pack, o.object, triple.object))
    ]
    if flipped or not triple.negated:
        return flipped
    words = pack.content(triple.object)
    return [f.id for f, o in mine if not o.negated and words and words <= pack.content(f"{o.object} {f.text.lower()}")]


def _same_object(pack: LocalePack, one: str, other: str, *, exact: bool = False) -> bool:
    """Objects name the same thing when one's words (plurals folded) hold all of the other's:
    "window seat" and "window seats on flights", "lisbon" and "lisbon portugal"; ``exact``: the same words."""
    a, b = pack.content(one), pack.content(other)
    return bool(a) and bool(b) and (a == b if exact else a <= b or b <= a)
