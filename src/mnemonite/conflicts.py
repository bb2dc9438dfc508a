"""The five-stage conflict pipeline of `semantic.remember`, and the locale packs it reads.

Every candidate fact goes through the stages in order; the first that reaches a decision wins:

1. **exact** — the MD5 of the canonical text (lower-cased, whitespace collapsed, trimmed)
   equals a current fact's: a duplicate.
2. **embedding** — the top-K current facts by cosine set the zone: HOT (≥ 0.95) is always
   a duplicate; NEAR-DUP (≥ 0.85), CONFLICT-CHECK (> 0.4) and COLD go on.
3. **regex** — the candidate carries an explicit change signal of the locale pack
   (``moved to``, ``no longer``, ``got promoted``, …) and a current fact on the same
   subject + predicate, or else close enough in meaning, is what it changes: supersede.
4. **subject_predicate** — the locale pack's normalisers split both into (subject,
   predicate, object): same subject and single-valued predicate with another object →
   supersede; the same triple → duplicate; a different subject or predicate → admit.
5. Still undecided: NEAR-DUP → duplicate; CONFLICT-CHECK → admitted ``pending`` for a
   `ConflictJudge`; COLD → admit.

`decide` is a pure function of the candidate and what the store found, so every decision
is reproducible from its audit row's inputs.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import Field, field_validator

from mnemonite.errors import ConfigurationError, InvalidInputError
from mnemonite.models.base import Model
from mnemonite.models.conflict import ConflictThresholds, DecisionKind, Stage, Zone
from mnemonite.models.fact import Fact

__all__ = [
    "LocalePack",
    "Outcome",
    "Triple",
    "canonical",
    "decide",
    "define_locale_pack",
    "locale_pack",
    "text_hash",
]

MAX_FACT_CHARS = 8_000
_SPACE = re.compile(r"\s+")
_CLAUSE = re.compile(r"[,;]| and | but | so ")


def canonical(text: str) -> str:
    """Lower-cased, whitespace collapsed, trimmed: the body stage 1 hashes."""
    return _SPACE.sub(" ", text).strip().lower()


def text_hash(text: str) -> str:
    return hashlib.md5(canonical(text).encode(), usedforsecurity=False).hexdigest()


class Normaliser(Model):
    """A pattern over the prepared sentence with named groups ``subject`` and ``object`` (and
    optionally ``what``, substituted into ``predicate`` as ``{what}``)."""

    pattern: str
    predicate: str
    single_valued: bool = True

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            compiled = re.compile(value)
        except re.error as error:
            raise InvalidInputError(f"normaliser pattern {value!r} does not compile: {error}") from None
        if not {"subject", "object"} <= set(compiled.groupindex):
            raise InvalidInputError(f"normaliser pattern {value!r} needs named groups 'subject' and 'object'")
        return value


class LocalePack(Model):
    """What the regex and subject/predicate stages know of one language."""

    name: str = Field(min_length=1)
    change_markers: list[str] = Field(min_length=1, description="explicit change signals (regex)")
    negation_markers: list[str] = Field(default_factory=list, description="negations (regex), removed before parsing")
    contractions: dict[str, str] = Field(default_factory=dict, description="expanded before parsing")
    fillers: list[str] = Field(default_factory=list, description="words dropped before parsing (adverbs)")
    first_person: list[str] = Field(default_factory=list, description="subjects that mean the user")
    articles: list[str] = Field(default_factory=list, description="dropped from the start of objects")
    trailing: list[str] = Field(default_factory=list, description="dropped from the end of objects")
    normalisers: list[Normaliser] = Field(min_length=1)

    def model_post_init(self, context: Any, /) -> None:
        join = "|".join
        self._change = re.compile(join(f"(?:{m})" for m in self.change_markers))
        self._negation = re.compile(join(f"(?:{m})" for m in self.negation_markers)) if self.negation_markers else None
        self._fillers = re.compile(rf"\b(?:{join(map(re.escape, self.fillers))})\b") if self.fillers else None
        self._compiled = [(re.compile(n.pattern), n) for n in self.normalisers]

    def has_change_signal(self, text: str) -> bool:
        prepared = self._prepare(text)
        return bool(self._change.search(prepared) or (self._negation and self._negation.search(prepared)))

    def split(self, text: str) -> Triple | None:
        """The naive (subject, predicate, object) of a statement, or None.

        A sentence of several clauses ("I left Acme and joined Globex") is read from its last
        clause back, a clause without a subject borrowing the sentence's first word.
        """
        clauses = [c.strip() for c in _CLAUSE.split(canonical(text)) if c.strip()]
        if len(clauses) > 1:
            lead = clauses[0].split()[0]
            for clause in reversed(clauses):
                found = self._split_clause(clause) or self._split_clause(f"{lead} {clause}")
                if found is not None:
                    return found
        return self._split_clause(text)

    def _split_clause(self, text: str) -> Triple | None:
        prepared = self._prepare(text)
        negated = False
        if self._negation is not None:
            prepared, count = self._negation.subn(" ", prepared)
            negated = count > 0
        if self._fillers is not None:
            prepared = self._fillers.sub(" ", prepared)
        prepared = " " + _SPACE.sub(" ", prepared).strip() + " "
        for short, full in self.contractions.items():  # again: "i've just moved" is "i have moved" only now
            prepared = prepared.replace(short, full)
        prepared = prepared.strip()
        for compiled, normaliser in self._compiled:
            found = compiled.fullmatch(prepared)
            if found is None:
                continue
            groups = found.groupdict()
            predicate = normaliser.predicate.replace("{what}", _SPACE.sub("_", (groups.get("what") or "").strip()))
            subject, obj = self._subject(groups["subject"]), self._object(groups["object"])
            if subject and obj:
                return Triple(subject, predicate, obj, normaliser.single_valued, negated)
        return None

    def _prepare(self, text: str) -> str:
        prepared = " " + canonical(text).replace("\u2019", "'") + " "
        for short, full in self.contractions.items():
            prepared = prepared.replace(short, full)
        return re.sub(r"[.!?;,]+(\s|$)", r"\1", prepared).strip()

    def _subject(self, subject: str) -> str:
        subject = subject.strip().removesuffix("'s").strip()
        words = subject.split()
        # "on flights i prefer ...": a phrase put before a first-person subject does not change who it is
        return "user" if subject in self.first_person or (words and words[-1] in self.first_person) else subject

    def _object(self, obj: str) -> str:
        words = obj.split()
        while words and words[0] in self.articles:
            words = words[1:]
        while words and words[-1] in self.trailing:
            words = words[:-1]
        return " ".join(words)


@dataclass(frozen=True)
class Triple:
    subject: str
    predicate: str
    object: str
    single_valued: bool = True
    negated: bool = False


_SUBJ = r"(?P<subject>[\w' ]+?)"
_OBJ = r"(?P<object>.+)"
# fmt: off
ENGLISH = LocalePack(
    name="en",
    change_markers=[
        r"\bmoved (?:to|into|out)\b", r"\brelocat\w*\b", r"\bno longer\b", r"\bnot any ?more\b", r"\bany ?more\b",
        r"\bgot promoted\b", r"\bpromoted to\b", r"\bnew (?:job|role|position|gig|home|place|address|number)\b",
        r"\bswitched (?:to|from)\b", r"\bchanged\b", r"\bquit\b", r"\bleft (?:my|the|his|her|their)\b",
        r"\bjust (?:moved|started|joined|bought|got|switched)\b", r"\bstarted (?:a|my|working|at)\b", r"\bjoined\b",
        r"\bused to\b", r"\bstopped\b", r"\bgave up\b", r"\bnowadays\b", r"\bthese days\b", r"\bfrom now on\b",
        r"^now\b", r"\b(?:am|is|are) now\b", r"\bnow (?:live|lives|work|works|prefer|prefers|like|likes|love|loves"
        r"|drive|drives|use|uses|go|goes|eat|eats|drink|drinks|am|is|are)\b",
        r"\bactually\b", r"\binstead\b",
    ],
    negation_markers=[r"\bdo not\b", r"\bdoes not\b", r"\bdid not\b", r"\bam not\b", r"\bis not\b", r"\bare not\b",
                      r"\bno longer\b", r"\bnever\b", r"\bnot any ?more\b", r"\bany ?more\b", r"\bnot\b"],
    contractions={
        " i'm ": " i am ", " i've ": " i have ", " i'd ": " i would ", " don't ": " do not ",
        " doesn't ": " does not ", " didn't ": " did not ", " isn't ": " is not ", " aren't ": " are not ",
        " can't ": " can not ", " won't ": " will not ", " he's ": " he is ", " she's ": " she is ",
        " we're ": " we are ", " they're ": " they are ", " it's ": " it is ",
        " have been promoted ": " got promoted ", " has been promoted ": " got promoted ",
        " have moved ": " moved ", " has moved ": " moved ", " have joined ": " joined ", " has joined ": " joined ",
        " have started ": " started ", " has started ": " started ", " have got ": " got ", " has got ": " got ",
        " favorite ": " favourite ", " color ": " colour ", " colors ": " colours ",
    },
    fillers=["just", "recently", "finally", "actually", "now", "currently", "also", "still", "really", "officially",
             "already", "can", "new", "these days", "nowadays", "lately", "right now", "at the moment", "today"],
    first_person=["i", "me", "my", "we", "our", "myself", "user"],
    articles=["a", "an", "the", "my"],
    trailing=["now", "today", "again", "nowadays", "anymore", "currently", "these", "days", "lately", "too"],
    normalisers=[
        Normaliser(pattern=rf"{_SUBJ} (?:live|lives|living|reside|resides|am living|is living|are living|am based"
                   rf"|is based|are based|stay|stays|am staying|is staying) (?:in|at) {_OBJ}", predicate="lives_in"),
        Normaliser(pattern=rf"{_SUBJ} (?:moved|relocated|am moving|is moving) (?:to|into) {_OBJ}",
                   predicate="lives_in"),
        Normaliser(pattern=rf"{_OBJ} is where {_SUBJ} (?:live|lives|am living|is living)", predicate="lives_in"),
        Normaliser(pattern=rf"(?P<subject>my|our|[\w]+'s) home is (?:in )?{_OBJ}", predicate="lives_in"),
        Normaliser(pattern=rf"{_SUBJ} (?:joined|started (?:a new job |a job |working )?(?:at|with)"
                   rf"|got (?:a |a new )?job (?:at|with)|am employed (?:at|by)|is employed (?:at|by)) {_OBJ}",
                   predicate="works_at"),
        Normaliser(pattern=rf"{_SUBJ} (?:work|works|working|am working|is working|are working) (?:at|for) {_OBJ}",
                   predicate="works_at"),
        Normaliser(pattern=rf"{_OBJ} is where {_SUBJ} (?:work|works)", predicate="works_at"),
        Normaliser(pattern=rf"(?P<subject>my|[\w]+'s) employer is {_OBJ}", predicate="works_at"),
        Normaliser(pattern=rf"{_SUBJ} (?:got promoted|was promoted|am promoted|is promoted) to {_OBJ}",
                   predicate="job_title"),
        Normaliser(pattern=rf"{_SUBJ} (?:work|works|am working|is working) as {_OBJ}", predicate="job_title"),
        Normaliser(pattern=rf"(?P<subject>my|[\w]+'s) (?:job title|job|role|position) is {_OBJ}",
                   predicate="job_title"),
        Normaliser(pattern=rf"(?P<subject>my|[\w]+'s) (?:favourite|favorite) (?P<what>[\w ]+?) is {_OBJ}",
                   predicate="favourite_{what}"),
        Normaliser(pattern=rf"{_OBJ} is (?P<subject>my|[\w]+'s) (?:favourite|favorite) (?P<what>[\w ]+)",
                   predicate="favourite_{what}"),
        Normaliser(pattern=rf"(?P<subject>my|[\w]+'s) name is {_OBJ}", predicate="name"),
        Normaliser(pattern=rf"{_SUBJ} (?:am|is|are) called {_OBJ}", predicate="name"),
        Normaliser(pattern=rf"{_SUBJ} (?:am|is|are|got) (?:married|engaged) to {_OBJ}", predicate="partner"),
        Normaliser(pattern=rf"(?P<subject>my|[\w]+'s) (?:wife|husband|partner|spouse) is {_OBJ}",
                   predicate="partner"),
        Normaliser(pattern=rf"{_SUBJ} (?:am|is|are) (?P<object>\d+)(?: years old)?", predicate="age"),
        Normaliser(pattern=rf"(?P<subject>my|[\w]+'s) age is {_OBJ}", predicate="age"),
        Normaliser(pattern=rf"{_SUBJ} (?:drive|drives|am driving|is driving) {_OBJ}", predicate="drives"),
        Normaliser(pattern=rf"(?P<subject>my|[\w]+'s) car is {_OBJ}", predicate="drives"),
        Normaliser(pattern=rf"(?P<subject>my|[\w]+'s) (?:phone number|number) is {_OBJ}", predicate="phone"),
        Normaliser(pattern=rf"{_SUBJ} (?:weigh|weighs) {_OBJ}", predicate="weight"),
        Normaliser(pattern=rf"(?P<subject>my|[\w]+'s) (?:manager|boss) is {_OBJ}", predicate="manager"),
        Normaliser(pattern=rf"(?P<subject>my|[\w]+'s) (?:email|email address) is {_OBJ}", predicate="email"),
        Normaliser(pattern=rf"{_SUBJ} (?:like|likes|love|loves|enjoy|enjoys|prefer|prefers|adore|adores) {_OBJ}",
                   predicate="likes", single_valued=False),
        Normaliser(pattern=rf"{_SUBJ} (?:dislike|dislikes|hate|hates) {_OBJ}", predicate="dislikes",
                   single_valued=False),
        Normaliser(pattern=rf"{_SUBJ} (?:eat|eats|drink|drinks) {_OBJ}", predicate="consumes", single_valued=False),
        Normaliser(pattern=rf"{_SUBJ} (?:have|has|own|owns) {_OBJ}", predicate="has", single_valued=False),
        Normaliser(pattern=rf"{_SUBJ} (?:use|uses) {_OBJ}", predicate="uses", single_valued=False),
        Normaliser(pattern=rf"{_SUBJ} (?:speak|speaks) {_OBJ}", predicate="speaks", single_valued=False),
        Normaliser(pattern=rf"{_SUBJ} (?:play|plays) {_OBJ}", predicate="plays", single_valued=False),
        Normaliser(pattern=rf"{_SUBJ} (?:am|is|are) (?:a|an) {_OBJ}", predicate="is_a", single_valued=False),
    ],
)
# fmt: on

_PACKS: dict[str, LocalePack] = {"en": ENGLISH}


def define_locale_pack(spec: LocalePack | Mapping[str, Any]) -> LocalePack:
    """Register (or replace) a locale pack; pass its ``name`` as ``MemoryConfig(locale=...)``."""
    pack = spec if isinstance(spec, LocalePack) else LocalePack.model_validate(dict(spec))
    _PACKS[pack.name] = pack
    return pack


def locale_pack(name: str) -> LocalePack:
    try:
        return _PACKS[name]
    except KeyError:
        raise ConfigurationError(f"no locale pack {name!r}; known: {sorted(_PACKS)} (see define_locale_pack)") from None


@dataclass(frozen=True)
class Outcome:
    """What `decide` concluded: ``targets`` are the duplicate (dedup) or the facts to close (supersede)."""

    kind: DecisionKind
    stage: Stage
    zone: Zone
    cosine: float | None
    reason: str
    targets: tuple[str, ...] = ()


def decide(
    text: str,
    *,
    exact: Fact | None,
    neighbours: Sequence[tuple[Fact, float]],
    same_predicate: Sequence[Fact],
    pack: LocalePack,
    thresholds: ConflictThresholds,
    triple: Triple | None = None,
) -> Outcome:
    """Run the five stages over what the store found for the candidate ``text``.

    ``exact``: a current fact with the same canonical hash; ``neighbours``: the top-K current
    facts with their cosine, best first; ``same_predicate``: current facts stored with the
    candidate's (subject, predicate); ``triple``: the candidate's (subject, predicate, object)
    when the caller knows it (otherwise the pack splits the text).
    """
    best = neighbours[0][1] if neighbours else None
    zone = thresholds.zone(best)
    if exact is not None:
        return Outcome("dedup", "exact", zone, best, "same canonical text (MD5)", (exact.id,))
    if zone == "HOT" and neighbours:
        nearest = neighbours[0][0]
        return Outcome("dedup", "embedding", zone, best, f"cosine {best:.3f} ≥ {thresholds.hot}", (nearest.id,))
    triple = triple or pack.split(text)
    related = _related(neighbours, same_predicate, pack, thresholds)
    if pack.has_change_signal(text):
        targets = _changed(triple, related, neighbours, pack, thresholds)
        if targets:
            return Outcome("supersede", "regex", zone, best, "explicit change signal", tuple(targets))
    if triple is not None:
        verdict = _by_triple(triple, related, zone, best)
        if verdict is not None:
            return verdict
    if zone == "NEAR_DUP" and neighbours:
        reason = f"cosine {best:.3f} ≥ {thresholds.near_dup}, no change signal"
        return Outcome("dedup", "embedding", zone, best, reason, (neighbours[0][0].id,))
    if zone == "CONFLICT_CHECK":
        return Outcome("pending", "embedding", zone, best, "related facts, undecided: left for the judge")
    return Outcome("admit", "embedding", zone, best, "no related current fact")


def _related(
    neighbours: Sequence[tuple[Fact, float]],
    same_predicate: Sequence[Fact],
    pack: LocalePack,
    thresholds: ConflictThresholds,
) -> list[tuple[Fact, Triple | None, float | None]]:
    """Facts worth comparing: same (subject, predicate) from the store, then close neighbours."""
    cosines = {fact.id: cos for fact, cos in neighbours}
    seen: dict[str, tuple[Fact, Triple | None, float | None]] = {}
    for fact in same_predicate:
        seen[fact.id] = (fact, _triple_of(fact, pack), cosines.get(fact.id))
    for fact, cos in neighbours:
        if cos > thresholds.conflict_check and fact.id not in seen:
            seen[fact.id] = (fact, _triple_of(fact, pack), cos)
    return list(seen.values())


def _triple_of(fact: Fact, pack: LocalePack) -> Triple | None:
    parsed = pack.split(fact.text)
    if fact.subject and fact.predicate and fact.object:
        single = parsed.single_valued if parsed is not None and parsed.predicate == fact.predicate else True
        return Triple(fact.subject, fact.predicate, fact.object, single, parsed.negated if parsed else False)
    return parsed


def _changed(
    triple: Triple | None,
    related: list[tuple[Fact, Triple | None, float | None]],
    neighbours: Sequence[tuple[Fact, float]],
    pack: LocalePack,
    thresholds: ConflictThresholds,
) -> list[str]:
    """Which current facts a candidate with a change signal replaces."""
    if triple is not None:
        same = [
            fact.id
            for fact, other, _ in related
            if other is not None
            and (other.subject, other.predicate) == (triple.subject, triple.predicate)
            and (
                not _same_object(other.object, triple.object) or other.negated != triple.negated
                if triple.single_valued
                else _same_object(other.object, triple.object) and other.negated != triple.negated
            )
        ]
        if same:
            return same
        if triple.negated:  # "I no longer drink coffee" retracts "I love coffee", whatever the verb
            retracted = [
                f.id
                for f, o, _ in related
                if o is not None
                and o.subject == triple.subject
                and _same_object(o.object, triple.object)
                and not o.negated
            ]
            if retracted:
                return retracted
    # No triple to go by: the nearest fact close enough in meaning that is not plainly about something else.
    for fact, cos in neighbours:
        if cos < thresholds.change_signal:
            break
        other = _triple_of(fact, pack)
        if triple is None or other is None or (other.subject, other.predicate) == (triple.subject, triple.predicate):
            return [fact.id]
    return []


def _by_triple(
    triple: Triple, related: list[tuple[Fact, Triple | None, float | None]], zone: Zone, best: float | None
) -> Outcome | None:
    parsed = [(fact, other) for fact, other, _ in related if other is not None]
    same = [(f, o) for f, o in parsed if (o.subject, o.predicate) == (triple.subject, triple.predicate)]
    equal = [f.id for f, o in same if _same_object(o.object, triple.object) and o.negated == triple.negated]
    if equal:
        return Outcome("dedup", "subject_predicate", zone, best, "same subject, predicate and object", (equal[0],))
    if triple.single_valued:
        other = [f.id for f, o in same if o.single_valued]
        if other:
            reason = f"same subject and predicate ({triple.predicate}), another object"
            return Outcome("supersede", "subject_predicate", zone, best, reason, tuple(other))
    elif triple.negated:
        flipped = [f.id for f, o in same if _same_object(o.object, triple.object)]
        if flipped:
            return Outcome("supersede", "subject_predicate", zone, best, "negates a current fact", tuple(flipped))
    clashing = [f for f, o in same if triple.single_valued or _same_object(o.object, triple.object)]
    others = all(o.subject != triple.subject for _, o in parsed)
    if zone != "COLD" and parsed and len(parsed) == len(related) and not clashing and (others or zone != "NEAR_DUP"):
        reason = "related facts are about another subject, predicate or (multi-valued) object"
        return Outcome("admit", "subject_predicate", zone, best, reason)
    return None


def _same_object(one: str, other: str) -> bool:
    """Objects name the same thing when one's words (plurals folded) hold all of the other's:
    "window seat" and "window seats on flights", "lisbon" and "lisbon portugal"."""
    a, b = _words(one), _words(other)
    return bool(a) and bool(b) and (a <= b or b <= a)


def _words(text: str) -> set[str]:
    return {w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in re.findall(r"\w+", text)}
