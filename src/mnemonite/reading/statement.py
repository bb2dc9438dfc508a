"""Statements read by a dependency parser: who a clause is about, what it says of them, and the typed values.

A `Reading` is one clause: its ``owner`` ("user" for the first person and the user's names, "user's sister" for
a relation, a name, "?she" for a pronoun the caller resolves from context), its ``attribute`` (a possessed thing
"rent", "blood pressure", or the verb with its particle and preposition "live in"), the `Value` objects it gives,
its polarity, and what the locale pack knows that a parser cannot: change words ("switched", "went up to"), plan
words ("might", "thinking of"), person nouns ("sister", "boss").

`StatementReader.read_many` parses in batches and keeps what it read (held facts are read again at every
statement that meets them; their text never changes).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from mnemonite.reading.graph import GraphReading, read_graph, truecased
from mnemonite.reading.parser import MODEL, load_parser
from mnemonite.reading.values import FREQUENCY_WORDS, Value, value_of

if TYPE_CHECKING:
    from mnemonite.conflicts.pack import LocalePack

USER = "user"
MAX_CHARS = 2_000  # longer statements are read from their start: a parser's cost grows with the sentence
_CACHE = 20_000
_SUBJECTS = frozenset({"nsubj", "nsubjpass", "csubj", "expl"})
_VALUES = frozenset({"dobj", "attr", "acomp", "oprd", "pobj", "dative", "npadvmod", "appos", "xcomp", "ccomp"})
_NAMED = frozenset({"PROPN", "NUM"})
_LIGHT = frozenset({"be", "have", "do", "get", "go", "make", "take", "'s", "will", "would", "can", "just"})
_CONTENT = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "NUM", "ADV"})
_AMOUNT_ENTITIES = frozenset({"MONEY", "QUANTITY", "CARDINAL", "PERCENT", "DATE", "TIME", "ORDINAL"})
_PERIODS = frozenset({"hour", "day", "week", "month", "year", "night", "fortnight"})
_TIME_WORDS = frozenset({"day", "week", "month", "year", "time", "today", "now", "morning", "evening", "night"})
_PART_OF_DAY = ("in the evening", "in the afternoon", "in the morning", "at night", "tonight")
_SUFFIX = re.compile(r"(?:ers|er|ing|ings|ist|ists|ian|s)$")


@dataclass(frozen=True)
class Reading:
    """One clause of a statement, as the parser read it."""

    text: str
    owner: str
    attribute: str
    verb: str
    values: tuple[Value, ...] = ()
    old: tuple[Value, ...] = ()  # the values the clause says were replaced ("from Comcast", "traded in the Civic")
    negated: bool = False
    change: bool = False
    plan: bool = False
    past: bool = False
    possessed: bool = False  # the attribute is a thing the owner has one of ("my rent", "her dentist")
    implicit: bool = False  # no subject written: the speaker
    gist: frozenset[str] = field(default=frozenset(), compare=False)
    topic: frozenset[str] = field(default=frozenset(), compare=False)  # what it is about: content words, no values
    fragment: bool = False  # no verb ("dress size 12"): read from its nouns and values
    additive: bool = False  # says a value beside the held ones ("I also swim on Fridays")

    @property
    def resolved(self) -> bool:
        return not self.owner.startswith("?")

    def about(self, owner: str) -> Reading:
        """The same reading with its pronoun resolved to ``owner``."""
        return replace(self, owner=owner)


@dataclass
class _Who:
    """Whom a clause is about and what of them, as its reading goes on."""

    owner: str
    attribute: str
    possessed: bool
    implicit: bool
    subject: Any


class StatementReader:
    """Reads statements with the locale pack's words for what a parser cannot know."""

    def __init__(self, pack: LocalePack, model: str = MODEL) -> None:
        self.pack = pack
        self.model = model
        self._nlp: Any = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, frozenset[str]], tuple[Reading, ...]] = OrderedDict()
        self._graphs: OrderedDict[tuple[str, frozenset[str]], GraphReading] = OrderedDict()
        self._dictionary_words: frozenset[str] | None = None
        self._common = frozenset(pack.common_places)
        self._chat = frozenset(pack.chat_words)
        self._relations = frozenset(pack.relations)
        self._change = frozenset(pack.change_verbs)
        self._replacing = frozenset(pack.replacing_verbs)
        self._plans = frozenset(pack.plan_verbs)
        self._ending = frozenset(pack.ending_verbs)
        self._many = frozenset(pack.many_relations)
        self._additive = frozenset(pack.additive_words)
        self._first = frozenset(pack.first_person) | {"i", "me", "we", "us", "myself"}
        self._third = frozenset(pack.third_person)

    def load(self) -> None:
        """Load the parser now (raises `ParserUnavailableError` where it is missing)."""
        if self._nlp is None:
            self._nlp = load_parser(self.model)

    def parse(self, text: str) -> Any:
        """The parser's document of one text (spaCy's `Doc`)."""
        self.load()
        with self._lock:
            return self._nlp(_plain(text)[:MAX_CHARS])

    @property
    def relations(self) -> frozenset[str]:
        """The locale pack's nouns of people and animals someone has ("sister", "boss", "dog")."""
        return self._relations

    def read(self, text: str, names: Iterable[str] = ()) -> tuple[Reading, ...]:
        return self.read_many([text], names)[0]

    def read_many(self, texts: Sequence[str], names: Iterable[str] = ()) -> list[tuple[Reading, ...]]:
        """Every text's clauses, parsed in one batch (what was read before comes from the cache)."""
        known = frozenset(names)
        with self._lock:  # read from worker threads: one parse at a time, the caches consistent
            held = {t: self._cache[(t, known)] for t in texts if (t, known) in self._cache}  # before any eviction
            fresh = self._parse_missing(texts, known, self._cache)
            return [fresh[t][0] if t in fresh else held[t] for t in texts]

    def graphs(self, texts: Sequence[str], names: Iterable[str] = ()) -> list[GraphReading]:
        """Every text's people, pets, places and organisations and the relations it states between them
        (`mnemonite.reading.graph`), parsed in one batch (what was read before comes from the cache)."""
        known = frozenset(names)
        with self._lock:
            held = {t: self._graphs[(t, known)] for t in texts if (t, known) in self._graphs}  # before any eviction
            fresh = self._parse_missing(texts, known, self._graphs)
            return [fresh[t][1] if t in fresh else held[t] for t in texts]

    def _parse_missing(
        self, texts: Sequence[str], known: frozenset[str], cache: OrderedDict[Any, Any]
    ) -> dict[str, tuple[tuple[Reading, ...], GraphReading]]:
        """Parse the texts the cache lacks; both readings of each parsed text are kept, and returned."""
        missing = list(dict.fromkeys(t for t in texts if (t, known) not in cache))
        fresh: dict[str, tuple[tuple[Reading, ...], GraphReading]] = {}
        if not missing:
            return fresh
        self.load()
        docs = self._nlp.pipe([_plain(t)[:MAX_CHARS] for t in missing], batch_size=64)
        for text, doc in zip(missing, docs, strict=True):
            fresh[text] = self._clauses(doc, text, known), self._graph(doc, known)
            self._cache[(text, known)], self._graphs[(text, known)] = fresh[text]
            for held in (self._cache, self._graphs):
                if len(held) > _CACHE:
                    held.popitem(last=False)
        return fresh

    def _graph(self, doc: Any, known: frozenset[str]) -> GraphReading:
        """The graph reading of a parsed statement, read again with its names capitalised where it writes them in
        lower case (a parser takes "kavita" for a noun)."""
        pack = self.pack
        if any(t.lower_ in self._chat for t in doc):  # "my brother is dev btw": chat words break a parse
            doc = self._nlp("".join(t.text_with_ws for t in doc if t.lower_ not in self._chat))
        fixed = truecased(doc, pack.relation_nouns, pack.relation_words, self._dictionary(), self._common)
        if fixed is not None:
            doc = self._nlp(fixed)
        return read_graph(
            doc, pack.relation_nouns, pack.relation_words, pack.ending_verbs, pack.genders, known, self._dictionary()
        )

    def _dictionary(self) -> frozenset[str]:
        """The words of the language the parser's lemmatiser knows (no names of people among them)."""
        if self._dictionary_words is None:
            found: set[str] = set()
            try:
                table = self._nlp.get_pipe("lemmatizer").lookups.get_table("lemma_index")
                for key in table:
                    found.update(str(word) for word in table[key] if "_" not in str(word))
            except (KeyError, AttributeError):  # a model without the table: names in lower case stay unread
                pass
            self._dictionary_words = frozenset(found)
        return self._dictionary_words

    # -- one parsed statement ------------------------------------------------------------------

    def _clauses(self, doc: Any, text: str, names: frozenset[str]) -> tuple[Reading, ...]:
        found: list[Reading] = []
        plan_text = self.pack.plan_marker(text) is not None
        change_text = self.pack.change_signal(text) is not None
        for sent in doc.sents:
            # the main clause, the clauses joined to it, and those with a subject of their own ("we adopted a
            # puppy, I live in Leeds"); a clause without a verb ("lunch with Ana on Friday") is not read
            heads = [
                t
                for t in sent
                if t.pos_ in ("VERB", "AUX")
                and not any(ch.isdigit() for ch in t.text)  # "w0 fact 1": a code the tagger took for a verb
                and (
                    t.dep_ in ("ROOT", "conj")
                    or (t.dep_ in ("ccomp", "parataxis") and any(c.dep_ in _SUBJECTS for c in t.children))
                )
            ]
            if not heads:
                fragment = self._fragment(sent, names, plan_text, change_text)
                if fragment is not None:
                    found.append(fragment)
                continue
            inherited: Any = None
            for head in heads:
                subject = next((c for c in head.children if c.dep_ in _SUBJECTS), None)
                if subject is None and head.dep_ == "conj":
                    subject = inherited
                inherited = subject if head.dep_ == "ROOT" else inherited
                found.append(self._clause(head, subject, names, plan_text, change_text, frozenset(h.i for h in heads)))
        return tuple(found)

    def _clause(
        self, head: Any, subject: Any, names: frozenset[str], plan: bool, change: bool, heads: frozenset[int]
    ) -> Reading:
        who = _Who(*self._subject(subject, names), subject)
        verb = head.lemma_.lower()
        if verb in self._change:
            self._changed_target(head, names, who)
        values, old = self._values(head, verb, who)
        if who.subject is not None and _numeric(who.subject):
            amount = _value(who.subject)
            values = [amount, *values] if amount is not None else values
        particle = next((c.lower_ for c in head.children if c.dep_ == "prt"), "")
        if who.attribute == "":
            prep = next((c.lower_ for c in head.children if c.dep_ == "prep" and c.lower_ not in ("from",)), "")
            who.attribute = " ".join(w for w in (verb, particle, prep) if w)
        swapped = who.subject is not None and who.subject.pos_ in ("PROPN", "NOUN") and _my_attr(head) is not None
        if verb == "be" and (who.attribute == "be" or swapped):  # "my dentist is X", "X is my dentist"
            who.owner, who.attribute, who.possessed = self._role(head, who.subject, who.owner, values, names)
        auxes = [c for c in head.children if c.dep_ in ("aux", "auxpass")]
        modal = any(c.tag_ == "MD" and c.lemma_.lower() not in ("will", "can", "'ll", "ca") for c in auxes)
        changed = change or verb in self._change or bool(old) or _direction(head)
        own = [t for t in head.subtree if _clause_of(t, heads) == head.i]  # not the words of a clause inside it
        gist, topic = self._words(own, who)
        return Reading(
            text=" ".join(t.text for t in own),
            owner=who.owner,
            attribute=who.attribute,
            verb=verb,
            values=tuple(values),
            old=tuple(old),
            negated=self._negated(head, verb, particle),
            change=changed,
            plan=plan or modal or verb in self._plans,
            past=(head.tag_ == "VBD" and not changed) or any(c.lower_ == "used" for c in auxes),
            possessed=who.possessed,
            implicit=who.implicit,
            gist=gist | frozenset(v.norm for v in values if v.measured),
            topic=topic,
            additive=any(t.lower_ in self._additive and _adds(t, head) for t in own),
        )

    def _changed_target(self, head: Any, names: frozenset[str], who: _Who) -> None:
        """Whose value a change verb changes: "they raised my credit limit to $8,000", "they moved me to desk 7A"."""
        target = next((c for c in head.children if c.dep_ in ("dobj", "nsubjpass")), None)
        if target is not None and target.lower_ in ("me", "us"):
            who.owner, who.implicit = USER, False
        elif target is not None and target.pos_ == "NOUN" and _possessors(target):
            owner, attribute, possessed, _ = self._subject(target, names)
            if attribute:
                who.owner, who.attribute, who.possessed, who.subject = owner, attribute, possessed, target

    def _values(self, head: Any, verb: str, who: _Who) -> tuple[list[Value], list[Value]]:
        """The values a clause gives, and those it says were replaced ("switched from x to y")."""
        values: list[Value] = []
        old: list[Value] = []
        prep_to = any(c.dep_ == "prep" and c.lower_ in ("to", "into") for c in head.children)
        replacing = verb in self._replacing
        for child, prep in _objects(head):
            if who.subject is not None and child.i == who.subject.i:
                continue
            if verb in self._change and child.dep_ == "dobj" and child.lower_ in ("it", "that", "this", "them"):
                who.owner, who.attribute, who.possessed = USER, "?", False  # "the doctor raised it to 20mg"
            value = _at_hour(_value(child), prep)
            if value is None or any(value.same(v) for v in (*values, *old)):
                continue
            if (prep == "from" and prep_to) or (replacing and prep not in ("for", "with", "to", "by")):
                old.append(value)  # "switched from x to y", "traded in the Civic for a Subaru"
            else:
                values.append(value)
        return values, old

    def _negated(self, head: Any, verb: str, particle: str) -> bool:
        """A clause that denies, or ends what it names ("I stopped volunteering", "paid off the car loan")."""
        if verb in self._ending or f"{verb} {particle}" in self._ending:
            return True
        if any(c.dep_ == "neg" for c in head.children):
            return True
        return any(c.dep_ == "det" and c.lower_ == "no" for t in head.children for c in t.children if t.dep_ == "dobj")

    def _words(self, own: list[Any], who: _Who) -> tuple[frozenset[str], frozenset[str]]:
        """The clause's words of content (gist) and what it is about (topic: no values, no change or time words)."""
        subject = who.subject.i if who.subject is not None and who.owner != USER and who.attribute else -1
        gist = frozenset(
            _stem(t.lemma_.lower())
            for t in own
            if t.pos_ in _CONTENT and t.lemma_.lower() not in _LIGHT and t.i != subject
        )
        in_values = {t.i for t in own if t.ent_type_ or t.like_num or t.pos_ in ("PROPN", "NUM")}
        topic = frozenset(
            _stem(t.lemma_.lower())
            for t in own
            if t.pos_ in ("NOUN", "VERB", "ADJ") and t.i not in in_values and t.lemma_.lower() not in _LIGHT
            and t.lemma_.lower() not in self._change and t.lemma_.lower() not in _TIME_WORDS
        )  # fmt: skip
        if who.possessed:
            topic |= {_stem(word) for word in who.attribute.split()}
        return gist, topic

    def _role(
        self, head: Any, subject: Any, owner: str, values: list[Value], names: frozenset[str]
    ) -> tuple[str, str, bool]:
        """ "my guitar teacher is Sam" and "Sam is my guitar teacher" alike: the user's attribute "guitar teacher"
        with the value Sam, held one at a time unless a relation people have several of ("my friend is Tom")."""
        noun = subject
        swapped = _my_attr(head)
        if subject is not None and swapped is not None and subject.pos_ in ("PROPN", "NOUN"):
            noun = swapped  # "Sam is my guitar teacher", "proton is my vpn"
            values[:] = [v for v in values if v.kind != "thing"]
            named = _value(subject)
            if named is not None:
                person = subject.ent_type_ == "PERSON" or (subject.pos_ == "PROPN" and subject.text[:1].isupper())
                values.insert(0, Value(named.text, "person" if person else named.kind, named.norm))
            if not _possessors(noun):
                return owner, "be", False
        elif noun is None or not _possessors(noun) or not any(v.kind in ("person", "place", "org") for v in values):
            return owner, "be", False
        base = self._subject(_possessors(noun)[-1], names)[0]
        role = " ".join(t.lemma_.lower() for t in _compound(noun))
        if noun.lemma_.lower() in self._many:  # "X is Nina's sister": about Nina's sister, not Nina
            return f"{base}'s {role}", "be", False
        single = noun.lemma_.lower() not in self._many and noun.tag_ != "NNS"
        return base, role, single

    def _fragment(self, sent: Any, names: frozenset[str], plan: bool, change: bool) -> Reading | None:
        """A sentence without a verb ("dress size 12", "$2,100 now that the lease renewed"): what it is about is
        its first noun, its values are the amounts and names in it."""
        values: list[Value] = []
        for entity in sent.ents:
            value = value_of(entity.text, entity.label_)
            if value is not None and not any(value.same(v) for v in values):
                values.append(value)
        for token in sent:
            if token.like_num and not token.ent_type_:
                value = _value(token)
                if value is not None and not any(value.same(v) for v in values):
                    values.append(value)
        if not values:
            return None
        noun = next((t for t in sent if t.pos_ == "NOUN" and not t.ent_type_ and t.dep_ != "compound"), None)
        owner, attribute = USER, ""
        if noun is not None:
            owner, attribute, _, _ = self._subject(noun, names)
        topic = frozenset(_stem(t.lemma_.lower()) for t in sent if t.pos_ in ("NOUN", "PROPN", "ADJ", "VERB")
                          and t.ent_type_ not in _AMOUNT_ENTITIES and not t.like_num
                          and t.lemma_.lower() not in _TIME_WORDS)  # fmt: skip
        return Reading(
            text=sent.text, owner=owner, attribute=attribute or "?", verb="", values=tuple(values),
            negated=any(t.dep_ == "neg" for t in sent), change=change, plan=plan, possessed=bool(attribute),
            implicit=True, gist=topic | frozenset(v.norm for v in values), topic=topic, fragment=True,
        )  # fmt: skip

    def _owner_of(self, chain: list[Any], names: frozenset[str]) -> str:
        """Whose a possessed noun is: "my" -> user, "my sister's" -> user's sister, "Ana's" -> ana."""
        if not chain:
            return USER
        first = chain[0].lower_
        if first in self._first or first in ("my", "our"):
            base = USER
        elif chain[0].pos_ == "PRON":
            base = f"?{first}"
        else:
            base = USER if first in names else first
        relations = [t.lemma_.lower() for t in chain[1:]]
        return f"{base}'s {' '.join(relations)}" if relations else base

    def _subject(self, subject: Any, names: frozenset[str]) -> tuple[str, str, bool, bool]:
        """(owner, attribute or "", possessed, implicit) of a clause's subject."""
        if subject is None:
            return USER, "", False, True
        word = subject.lower_
        if _numeric(subject):  # "ten grand saved so far": an amount of the speaker's
            return USER, "", False, True
        if subject.pos_ == "PRON" or word in self._first or word in self._third:
            if word in self._first:
                return USER, "", False, False
            if word in ("it", "this", "that"):
                return USER, "?", False, False
            if word == "there":  # "there's twenty plants in my flat"
                return USER, "", False, True
            return f"?{word}", "", False, False
        chain = _possessors(subject)
        base = self._owner_of(chain, names)
        noun = " ".join(t.lemma_.lower() for t in _compound(subject))
        if subject.lemma_.lower() in self._relations:
            return (f"{base}'s {noun}", "", False, False) if chain else (f"{USER}'s {noun}", "", False, False)
        if subject.ent_type_ == "PERSON" or (subject.pos_ == "PROPN" and subject.text[:1].isupper()):
            name = " ".join(t.lower_ for t in _compound(subject))
            return (USER if name in names or subject.lower_ in names else name), "", False, False
        return base, noun, subject.tag_ != "NNS", not chain


def _plain(text: str) -> str:
    return text.replace("\u2019", "'").replace("\u2018", "'")


def _stem(word: str) -> str:
    """A rough stem, the same for a verb and the noun of who does it ("run", "runner"; "swim", "swimmer")."""
    if len(word) <= 4:
        return word
    stem = _SUFFIX.sub("", word)
    return stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "aeiouls" else stem


def _rate(token: Any) -> bool:
    """ "a month", "per week": the period of a rate."""
    return token.lemma_.lower() in _PERIODS and any(c.lower_ in ("a", "an", "per", "each") for c in token.children)


def _numeric(token: Any) -> bool:
    """A subject that is an amount ("ten grand", "6 percent of my pay")."""
    return bool(token.like_num or token.ent_type_ in ("MONEY", "CARDINAL", "QUANTITY", "PERCENT")) or any(
        c.dep_ == "nummod" for c in token.children
    )


def _my_attr(head: Any) -> Any:
    """The possessed noun a copula says its subject is ("... is my vpn"), or None."""
    return next((c for c in head.children if c.dep_ == "attr" and _possessors(c)), None)


def _adds(token: Any, head: Any) -> bool:
    """An additive word of the clause ("I also swim", "a cat too", "another cat"), not a degree ("too expensive")."""
    if token.head.i == head.i:
        return True
    return token.dep_ in ("det", "amod") and token.head.dep_ in ("dobj", "attr") and token.head.head.i == head.i


def _at_hour(value: Value | None, prep: str) -> Value | None:
    """A bare hour after "at" is a time of day: "I go to bed at 11"."""
    at_hour = value is not None and prep == "at" and value.kind == "number" and value.norm.isdigit()
    if value is not None and at_hour and 0 < int(value.norm) <= 24:
        return Value(value.text, "time", f"{int(value.norm) % 24:02d}:00")
    return value


def _clause_of(token: Any, heads: frozenset[int]) -> int | None:
    """The index of the clause head a token belongs to: its own, or its nearest ancestor's that heads a clause."""
    if token.i in heads:
        return int(token.i)
    return next((int(a.i) for a in token.ancestors if a.i in heads), None)


def _possessors(token: Any) -> list[Any]:
    """The chain of possessors before a noun, outermost first: "my sister's husband" -> [my, sister]."""
    chain: list[Any] = []
    current = token
    while True:
        owner = next((c for c in current.children if c.dep_ == "poss"), None)
        if owner is None:
            break
        chain.insert(0, owner)
        current = owner
    return chain


def _compound(token: Any) -> list[Any]:
    return [c for c in token.lefts if c.dep_ == "compound"] + [token]


def _objects(head: Any) -> list[tuple[Any, str]]:
    """The tokens that carry a clause's values, each with the preposition it follows ("" for none)."""
    found: list[tuple[Any, str]] = []
    for child in head.children:
        if child.dep_ in ("prep", "agent"):
            found.extend((grand, child.lower_) for grand in child.children if grand.dep_ in ("pobj", "pcomp"))
        elif child.dep_ in _VALUES and child.pos_ not in ("VERB", "AUX"):
            found.append((child, ""))
            found.extend(_after_prep(child))  # "a nurse at St Mary's", "2,400 a month"
        elif child.dep_ == "advmod" and child.lower_ in ("up", "down"):
            found.extend(_after_prep(child))  # "up to 2,000"
        elif child.dep_ in ("advmod", "acomp") and child.lower_ in FREQUENCY_WORDS:
            found.append((child, ""))  # "the podcast is fortnightly now"
    return found


def _after_prep(token: Any) -> list[tuple[Any, str]]:
    return [(g, grand.lower_) for grand in token.children if grand.dep_ == "prep" for g in grand.children
            if g.dep_ == "pobj"]  # fmt: skip


def _direction(head: Any) -> bool:
    """A value said to go "up to", "down to", "from … to": a change whatever the verb."""
    doc = head.doc
    return any(
        token.lower_ in ("up", "down") and token.i + 1 < len(doc) and doc[token.i + 1].lower_ == "to"
        for token in head.subtree
    )


def _value(token: Any) -> Value | None:
    """The value a token carries: the named entity it is part of, or the token with its modifiers."""
    if token.pos_ == "PRON" or token.lower_ in ("it", "that", "this", "one"):
        return None
    if _rate(token):
        return None  # "£750 a month": a rate, not a value of its own
    if token.lower_ in ("quarter", "half") and not token.ent_type_:  # "at quarter to six", "half seven"
        whole = value_of(" ".join(t.text for t in token.subtree))
        if whole is not None and whole.kind == "time":
            return whole
    if token.ent_type_:
        span = next((e for e in token.doc.ents if e.start <= token.i < e.end), None)
        if span is not None:
            after = token.doc[span.end : span.end + 3].text.lower()  # "half past seven in the evening"
            part = next((p for p in _PART_OF_DAY if after.startswith(p)), "")
            return value_of(f"{span.text} {part}".strip(), span.label_)
    # the words before the token that modify it, and the unit after a number ("20 mg")
    parts = [t for left in token.lefts if left.dep_ not in ("det", "poss", "punct", "cc", "prep") and not _rate(left)
             for t in left.subtree]  # fmt: skip
    parts += [token, *(r for r in token.rights if r.dep_ in ("compound", "nummod", "quantmod", "npadvmod"))]
    text = " ".join(t.text for t in sorted(parts, key=lambda t: t.i))
    if token.pos_ not in _NAMED and token.pos_ not in ("NOUN", "ADJ") and token.lower_ not in FREQUENCY_WORDS:
        return None
    return value_of(text, None)
