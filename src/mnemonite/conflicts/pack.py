"""Locale packs: what the conflict pipeline knows of one language, and how it reads a statement.

A pack turns a sentence into a `Triple` (subject, predicate, object, polarity): retraction
phrasings are rewritten to negations, negations are removed and remembered, first person and
the user's names resolve to the subject ``user``, "my sister" to ``user's sister`` (someone
else), and a pronoun with no antecedent to an unresolved subject (``?she``) that matches
nothing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import Field, field_validator

from mnemonite.errors import ConfigurationError, InvalidInputError
from mnemonite.models.base import Model
from mnemonite.recognisers import SecretPattern

MAX_FACT_CHARS = 8_000
USER = "user"
_SPACE = re.compile(r"\s+")
_PARSED_CACHE = 50_000
_CLAUSE = re.compile(r"[,;]| and | but | so ")
_PERSON_PRONOUNS = frozenset({"he", "she", "they"})


def canonical(text: str) -> str:
    """Lower-cased, whitespace collapsed, trimmed: the body stage 1 hashes."""
    return _SPACE.sub(" ", text).strip().lower()


def text_hash(text: str) -> str:
    return hashlib.md5(canonical(text).encode(), usedforsecurity=False).hexdigest()


def _compiles(value: str, groups: set[str]) -> str:
    try:
        compiled = re.compile(value)
    except re.error as error:
        raise InvalidInputError(f"pattern {value!r} does not compile: {error}") from None
    if not groups <= set(compiled.groupindex):
        raise InvalidInputError(f"pattern {value!r} needs named groups {sorted(groups)}")
    return value


class Normaliser(Model):
    """A pattern over the prepared sentence with named groups ``subject`` and ``object`` (and
    optionally ``what``, substituted into ``predicate`` as ``{what}``; a verb there is reduced
    to its stem and looked up in the pack's ``verb_predicates``)."""

    pattern: str
    predicate: str
    single_valued: bool = True
    fallback: bool = Field(default=False, description="tried only on a clause that says its own subject")
    object_template: str = Field(
        default="{object}", description="the object stored, from the named groups: '{what} {object}' keeps 'engaged'"
    )
    names_object: bool = Field(
        default=False,
        description="the object is a name: when the writer uses capitals, it must start with a capitalised word"
        " ('my wife is Sarah', not 'my wife is vegetarian')",
    )

    @field_validator("pattern")
    @classmethod
    def _groups(cls, value: str) -> str:
        return _compiles(value, {"subject", "object"})


@dataclass(frozen=True)
class Triple:
    subject: str
    predicate: str
    object: str
    single_valued: bool = True
    negated: bool = False
    loose: bool = False  # read by a catch-all normaliser: its predicate is only the verb
    said: str = field(default="", compare=False)  # the clause it was read from, in a statement of several

    @property
    def resolved(self) -> bool:
        """False for a pronoun with no antecedent: such a subject is compared with nothing."""
        return not self.subject.startswith("?")


class LocalePack(Model):
    """What the regex and subject/predicate stages know of one language."""

    name: str = Field(min_length=1)
    change_markers: list[str] = Field(min_length=1, description="explicit change signals (regex)")
    negation_markers: list[str] = Field(default_factory=list, description="negations (regex), removed before parsing")
    rewrites: list[tuple[str, str]] = Field(
        default_factory=list, description="(regex, replacement) applied before parsing: retractions become negations"
    )
    news_markers: list[str] = Field(
        default_factory=list,
        description="change markers that in conversation mostly tell news ('just got', 'now'): regex; they"
        " replace only a held statement of the same predicate",
    )
    replace_markers: list[str] = Field(
        default_factory=list, description="changes that name only the new value ('switched to'): regex"
    )
    plan_markers: list[str] = Field(default_factory=list, description="plans and hypotheticals (regex): no change yet")
    name_patterns: list[str] = Field(
        default_factory=list, description="over the original text, group 'name': the user saying who they are"
    )
    not_names: str | None = Field(default=None, description="regex: capitalised words that are not names")
    apposition: str | None = Field(
        default=None,
        description="over the original text, groups 'owner', 'relation', 'name': a relation and the name after it"
        " ('My sister Ana'), read as one subject",
    )
    contractions: dict[str, str] = Field(default_factory=dict, description="expanded before parsing")
    numbers: dict[str, int] = Field(
        default_factory=dict,
        description="number words read as digits before parsing ('twenty-nine' is 29, as 'twenty nine' is): the units,"
        " the teens and the tens; a ten and a unit after it are summed; a word for 1 is read only after a ten"
        " ('twenty-one'), since alone it is often a pronoun ('the red one')",
    )
    values: list[str] = Field(
        default_factory=list,
        description="words that name a value however they are written (days, months): a statement nearly identical"
        " to a held fact but with another of them is not its duplicate (a capitalised word or a number is one too)",
    )
    fillers: list[str] = Field(default_factory=list, description="words dropped before parsing (adverbs)")
    first_person: list[str] = Field(default_factory=list, description="subjects that mean the user")
    possessives: list[str] = Field(default_factory=list, description="first-person possessives: 'my sister'")
    third_person: list[str] = Field(default_factory=list, description="pronouns that need an antecedent")
    articles: list[str] = Field(default_factory=list, description="dropped from the start of objects")
    trailing: list[str] = Field(default_factory=list, description="dropped from the end of objects")
    stopwords: list[str] = Field(default_factory=list, description="ignored when objects are compared")
    verb_suffixes: list[str] = Field(default_factory=list, description="stripped to stem a verb, longest first")
    verb_predicates: dict[str, str] = Field(default_factory=dict, description="verb stem -> predicate family")
    single_valued: list[str] = Field(default_factory=list, description="predicates from verbs that hold one value")
    normalisers: list[Normaliser] = Field(min_length=1)
    relations: list[str] = Field(
        default_factory=list,
        description="nouns that name a person or an animal someone has ('sister', 'boss', 'dog'): 'my sister works at"
        " x' is about the sister, where 'my rent is x' is the user's rent (for the statement parser)",
    )
    change_verbs: list[str] = Field(
        default_factory=list, description="verb lemmas that change a value ('raise', 'switch', 'move'): parser"
    )
    replacing_verbs: list[str] = Field(
        default_factory=list, description="verb lemmas whose object is the value replaced ('replace', 'trade'): parser"
    )
    ending_verbs: list[str] = Field(
        default_factory=list,
        description="verb lemmas that end what their object names ('stop', 'quit', 'cancel', 'lose'): parser",
    )
    many_relations: list[str] = Field(
        default_factory=list,
        description="relations a person often has several of ('friend', 'cousin'): 'my friend is Tom' does not"
        " replace 'my friend is Ana' (parser)",
    )
    genders: dict[str, str] = Field(
        default_factory=dict,
        description="relation nouns of one gender, 'm' or 'f' ('son': 'm'): 'she' is never 'my son' (parser)",
    )
    additive_words: list[str] = Field(
        default_factory=list, description="words that add a value beside the held ones ('also', 'too'): parser"
    )
    plan_verbs: list[str] = Field(
        default_factory=list, description="verb lemmas of plans and wishes ('plan', 'consider', 'want'): parser"
    )
    relation_nouns: dict[str, str] = Field(
        default_factory=dict,
        description="graph: nouns of a relation and its edge ('sister': 'SIBLING_OF', 'mum': 'PARENT_OF'): 'my mum"
        " Rosa' is Rosa PARENT_OF the user; a relation written '>PARENT_OF' runs from the owner ('my son Rui': the user"
        " PARENT_OF Rui); a noun of an animal ('dog') has '>HAS_PET'",
    )
    relation_words: dict[str, dict[str, str]] = Field(
        default_factory=dict,
        description="graph: verb or noun lemmas (a particle after a space: 'grow up') -> the preposition after them"
        " ('' for a direct object) -> the relation their subject has with its object ('live': {'in': 'LIVES_IN'},"
        " 'job': {'at': 'WORKS_AT'})",
    )
    common_places: list[str] = Field(
        default_factory=list,
        description="graph: nouns of a place that are no name ('home', 'town', 'school'): 'moved to town' names no"
        " town, where 'moved to coventry' names Coventry",
    )
    relation_phrases: dict[str, list[str]] = Field(
        default_factory=dict,
        description="graph: how a relation is said as a statement, [of someone, by the user] ('LIVES_IN': ['{source}"
        " lives in {target}', 'I live in {target}']; 'ROLE': ['{named} is {owner}'s {label}', '{named} is my"
        " {label}'] for a relation noun)",
    )
    relation_cues: list[str] = Field(
        default_factory=list,
        description="graph: the words, as written, of the relation_words ('lived', 'moved', 'works', 'went'): a"
        " message without one of them or of the relation_nouns states no relation and is not parsed for one",
    )
    chat_words: list[str] = Field(
        default_factory=list,
        description="graph: words of chat that belong to no clause ('lol', 'btw'), left out before a statement is"
        " read for the graph",
    )
    secrets: list[SecretPattern] = Field(
        default_factory=list,
        description="recognisers of this locale's own secrets (a national id, a bank's account format), beside the"
        " international defaults of mnemonite.recognisers",
    )

    @field_validator("name_patterns")
    @classmethod
    def _name_groups(cls, value: list[str]) -> list[str]:
        return [_compiles(pattern, {"name"}) for pattern in value]

    @field_validator("apposition")
    @classmethod
    def _apposition_groups(cls, value: str | None) -> str | None:
        return None if value is None else _compiles(value, {"owner", "relation", "name"})

    @field_validator("rewrites", "plan_markers", "replace_markers", "news_markers")
    @classmethod
    def _patterns(cls, value: list[Any]) -> list[Any]:
        for item in value:
            _compiles(item[0] if isinstance(item, tuple) else item, set())
        return value

    def model_post_init(self, context: Any, /) -> None:
        join = "|".join
        self._change = re.compile(join(f"(?:{m})" for m in self.change_markers))
        self._negation = re.compile(join(f"(?:{m})" for m in self.negation_markers)) if self.negation_markers else None
        self._replace = re.compile(join(f"(?:{m})" for m in self.replace_markers)) if self.replace_markers else None
        self._news = re.compile(join(f"(?:{m})" for m in self.news_markers)) if self.news_markers else None
        self._plan = re.compile(join(f"(?:{m})" for m in self.plan_markers)) if self.plan_markers else None
        self._rewrites = [(re.compile(pattern), replacement) for pattern, replacement in self.rewrites]
        self._names = [re.compile(pattern) for pattern in self.name_patterns]
        self._apposition = re.compile(self.apposition) if self.apposition else None
        # whole words only: "new" goes from "my new number", not from "jo@new.com"
        fillers = join(map(re.escape, self.fillers))
        self._fillers = re.compile(rf"(?<!\S)(?:{fillers})(?!\S)") if self.fillers else None
        self._compiled = [(re.compile(n.pattern), n) for n in self.normalisers]
        words = join(map(re.escape, sorted(self.numbers, key=len, reverse=True)))
        units = join(map(re.escape, sorted((w for w, v in self.numbers.items() if v < 10), key=len, reverse=True)))
        # a ten takes the unit after it ("twenty-nine"); two tens stay two numbers ("twenty twenty-one": 20 21)
        self._numbers = re.compile(rf"\b({words})(?:[- ]({units}))?\b") if self.numbers else None
        # held facts are parsed again at every remember that meets them; their text never changes
        self._parsed: dict[tuple[str, frozenset[str]], tuple[Triple, ...]] = {}

    def has_change_signal(self, text: str) -> bool:
        return self.change_signal(text) is not None

    def change_signal(self, text: str) -> str | None:
        """The change or negation marker the statement carries ("moved to", "no longer"), or None."""
        prepared = self._prepare(text)
        found = (
            self._change.search(prepared)
            or (self._replace.search(prepared) if self._replace else None)
            or (self._negation.search(prepared) if self._negation else None)
        )
        return found.group(0) if found else None

    def negated(self, text: str) -> bool:
        """Whether the statement denies or retracts something (after rewrites: "I quit smoking")."""
        return bool(self._negation and self._negation.search(self._prepare(text)))

    def news(self, marker: str) -> bool:
        """Whether a change marker found in a statement is one that mostly tells news (`news_markers`)."""
        return bool(self._news and marker and self._news.fullmatch(marker))

    def replaces(self, text: str) -> bool:
        """Whether the statement names a new value without the old one ("I switched to oat milk")."""
        return bool(self._replace and self._replace.search(self._prepare(text)))

    def plan_marker(self, text: str) -> str | None:
        """The marker of a plan or hypothetical ("might", "thinking about"), or None."""
        found = self._plan.search(self._prepare(text)) if self._plan else None
        return found.group(0) if found else None

    def declared_names(self, text: str) -> list[str]:
        """Names the user gives themselves in ``text`` ("I'm Jo", "my name is Jo"), lower-cased."""
        plain = text.replace("\u2019", "'")
        found = [match.group("name") for pattern in self._names for match in pattern.finditer(plain)]
        return [name.lower() for name in found if not (self.not_names and re.fullmatch(self.not_names, name))]

    def split(self, text: str, names: Iterable[str] = ()) -> Triple | None:
        """The naive (subject, predicate, object) of a statement, or None.

        A sentence of several clauses ("I left Acme and joined Globex") is read from its last
        clause back, a clause without a subject borrowing the sentence's first word. ``names``
        are the user's names: a statement about one of them is about ``user``.
        """
        found = self.readings(text, names)
        return found[0] if found else None

    def readings(self, text: str, names: Iterable[str] = ()) -> tuple[Triple, ...]:
        """Every clause's (subject, predicate, object), what `split` reads first: the others are what the
        statement also says ("Greg left, my new boss is Tanya": Greg's leaving, then the user's manager)."""
        known = frozenset(names)
        key = (text, known)
        if key not in self._parsed:
            if len(self._parsed) >= _PARSED_CACHE:
                self._parsed.clear()
            joined = text  # "My sister Ana is ...": the relation and the name are one subject word
            if self._apposition is not None:
                joined = self._apposition.sub(rf"\g<owner> \g<relation>{_JOIN}\g<name>", text)
            self._parsed[key] = self._split(joined, _Reading(known, _proper_words(joined)))
        return self._parsed[key]

    def _split(self, text: str, known: _Reading) -> tuple[Triple, ...]:
        clauses = [c.strip() for c in _CLAUSE.split(self._prepare(text)) if c.strip()]
        if len(clauses) < 2:
            one = self._split_clause(text, known)
            return (one,) if one is not None else ()
        lead = self._lead(clauses[0])
        found = [
            replace(triple, said=clause)
            for clause in reversed(clauses)
            if (triple := self._clause(clause, lead, known))
        ]
        if not found:
            return ()
        # A retraction is what a compound statement changes ("not vegetarian anymore, i eat fish now"),
        # unless another clause gives the same predicate its new value ("left acme and joined globex").
        positive = {triple.predicate for triple in found if not triple.negated}
        # The first clause that denies is the one the others explain ("i stopped learning guitar, just did not
        # have the time"): clauses were read last first.
        retraction = next((t for t in reversed(found) if t.negated and t.predicate not in positive), None)
        # A clause read only by a catch-all ("..., office 310") says less than one a normaliser knows, and one
        # about someone unknown ("..., it was amazing") less than one about someone known.
        ranked = sorted(found, key=lambda t: (not t.resolved, t.loose))
        first = retraction or ranked[0]
        return (first, *(t for t in ranked if t is not first))

    def _lead(self, clause: str) -> str:
        """The subject a later clause without one borrows: "my brother", not "my"."""
        words = clause.split()
        possessive = words[0] in self.possessives or words[0].endswith("'s")
        return " ".join(words[:2]) if possessive and len(words) > 1 else words[0]

    def _clause(self, clause: str, lead: str, names: _Reading) -> Triple | None:
        """One clause of a compound sentence; one without a subject of its own borrows the lead's, and a
        person's pronoun stands for a lead who is not the speaker ("my brother changed jobs, he is a surgeon")."""
        first = clause.split()[0]
        if first in _PERSON_PRONOUNS and lead not in self.first_person:  # "my brother", "sam"; not "i", "we"
            clause = f"{lead} {clause.split(maxsplit=1)[1]}" if len(clause.split()) > 1 else clause
        if not lead.startswith(first) and first not in {*self.first_person, *self.third_person, *self.possessives}:
            borrowed = self._split_clause(f"{lead} {clause}", names, fallback=False)
            if borrowed is not None:
                return borrowed
        return self._split_clause(clause, names)

    def resolve(self, subject: str, names: Iterable[str] = ()) -> str:
        """Who a subject phrase is: ``user``, ``user's <relation>``, a name, or ``?<pronoun>``."""
        subject = subject.strip().removesuffix("'s").strip()
        words = subject.split()
        if not words:
            return subject
        # "on flights i prefer ...": a phrase put before a first-person subject does not change who it is
        if subject in self.first_person or words[-1] in self.first_person or subject in names:
            return USER
        owner = words[0].removesuffix("'s")
        if len(words) > 1 and (words[0] in self.possessives or (words[0].endswith("'s") and owner in names)):
            return f"{USER}'s {' '.join(words[1:])}"
        return f"?{subject}" if subject in self.third_person else subject

    def stem(self, verb: str) -> str:
        """A verb reduced so that "smoke", "smokes" and "smoking" meet."""
        for suffix in self.verb_suffixes:
            if verb.endswith(suffix) and len(verb) - len(suffix) >= 3:
                verb = verb[: -len(suffix)]
                break
        verb = verb.removesuffix("e")
        if len(verb) > 3 and verb[-1] == verb[-2] and verb[-1] not in "ls":
            verb = verb[:-1]
        return verb

    def _split_clause(self, text: str, names: _Reading, *, fallback: bool = True) -> Triple | None:
        prepared = re.sub(r"[;,]+(\s|$)", r"\1", self._prepare(text))
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
            if normaliser.fallback and not fallback:
                continue
            found = compiled.fullmatch(prepared)
            if found is not None:
                triple = self._triple(found.groupdict(), normaliser, negated, names)
                if triple is not None:
                    return triple
        return None

    def _triple(
        self, groups: dict[str, str | None], normaliser: Normaliser, negated: bool, reading: _Reading
    ) -> Triple | None:
        names = reading.names
        if normaliser.names_object and not reading.may_name(groups["object"] or "", self.articles):
            return None
        what = _SPACE.sub("_", (groups.get("what") or "").strip())
        predicate = normaliser.predicate
        single = normaliser.single_valued
        if predicate == "{what}":
            if not what.isalpha():  # a verb is a word: "office 310" is no clause
                return None
            predicate = self.verb_predicates.get(self.stem(what), self.stem(what))
            single = predicate in self.single_valued
        else:
            predicate = predicate.replace("{what}", what)
        said = normaliser.object_template.format_map({k: v or "" for k, v in groups.items()})
        subject, obj = self.resolve(groups["subject"] or "", names), self._object(_SPACE.sub(" ", said).strip())
        subject, obj = _unjoined(subject), _unjoined(obj)
        if not normaliser.fallback and obj.split()[:1] and obj.split()[0] in self.third_person:
            return None  # "that is where i was born": a value only the sentence before could say
        if subject and (obj or negated or normaliser.predicate == "{what}"):  # "i smoke", "i quit smoking"
            return Triple(subject, predicate, obj, single, negated, normaliser.fallback)
        return None

    def _prepare(self, text: str) -> str:
        prepared = " " + canonical(text).replace("\u2019", "'") + " "
        for short, full in self.contractions.items():
            prepared = prepared.replace(short, full)
        prepared = re.sub(r"[.!?]+(\s|$)", r"\1", prepared)
        if self._numbers is not None:
            prepared = self._numbers.sub(self._number, prepared)
        for compiled, replacement in self._rewrites:
            prepared = compiled.sub(replacement, prepared)
        return prepared.strip()

    def digits(self, text: str) -> str:
        """``text`` canonical (lower-cased, whitespace collapsed), its number words as digits ("two kids": "2 kids")."""
        plain = canonical(text).replace("\u2019", "'")
        return self._numbers.sub(self._number, plain) if self._numbers is not None else plain

    def _number(self, found: re.Match[str]) -> str:
        """Digits for a number word, or for a ten and the unit after it ("twenty-nine"); other pairs stay apart."""
        first = self.numbers[found.group(1)]
        second = self.numbers.get(found.group(2) or "")
        if second is None:
            return found.group(0) if first == 1 else str(first)
        if first >= 20 and first % 10 == 0:
            return str(first + second)
        pair = ((found.group(1), first), (found.group(2), second))  # "two one": each a number of its own
        return " ".join(word if value == 1 else str(value) for word, value in pair)

    def _object(self, obj: str) -> str:
        words = obj.split()
        while words and words[0] in self.articles:
            words = words[1:]
        while words and words[-1] in self.trailing:
            words = words[:-1]
        return " ".join(words)

    def content(self, text: str) -> set[str]:
        """The words of an object that name something, plurals folded."""
        words = re.findall(r"\w+", text)
        return {w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words} - set(
            self.stopwords
        )


@dataclass(frozen=True)
class _Reading:
    """What a sentence's parse needs besides its text: the user's names, and the words the
    writer capitalised (None when they wrote without capitals: then any word may be a name)."""

    names: frozenset[str]
    proper: frozenset[str] | None

    def may_name(self, obj: str, articles: Iterable[str] = ()) -> bool:
        """Whether ``obj`` may be a name: not led by an article ("a firefighter"), and led by a capitalised word
        when the writer uses capitals."""
        words = obj.split()
        return bool(words) and words[0] not in articles and (self.proper is None or words[0] in self.proper)


# A relation and the name after it (`LocalePack.apposition`) are joined into one subject word by a letter text
# does not use (U+02BC, a word character to the patterns), and parted again in the triple.
_JOIN = "\u02bc"


def _unjoined(text: str) -> str:
    return text.replace(_JOIN, " ")


def _proper_words(text: str) -> frozenset[str] | None:
    if text == text.lower():
        return None
    capitalised = [word.lower() for word in re.findall(r"\b[^\W\d_][\w'\u2019-]*", text) if word[0].isupper()]
    # "Linda's my manager": the name is "linda"
    return frozenset([*capitalised, *(re.sub(r"['\u2019]s$", "", word) for word in capitalised)])


_NAME = re.compile(r"[^\W\d_][\w'-]{0,39}(?: [^\W\d_][\w'-]{0,39}){0,3}")


def check_name(name: str, pack: LocalePack) -> str:
    """A name the user goes by, lower-cased, or InvalidInputError (a pronoun is not a name)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name.strip()):
        raise InvalidInputError(
            f"a name is one to four words of letters (hyphens and apostrophes allowed), like 'Jo'; got {name!r}"
        )
    lowered = canonical(name)
    if lowered == USER or lowered in {*pack.first_person, *pack.third_person, *pack.possessives}:
        raise InvalidInputError(f"{name!r} is a pronoun, not a name")
    return lowered


_PACKS: dict[str, LocalePack] = {}


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
