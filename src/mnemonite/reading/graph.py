"""What a statement says of people, pets, places and organisations: the mentions a graph is built from and the
relations between them, read from a dependency parse.

"My sister Ana lives in Porto with her husband Leo" reads as the mentions user, Ana, Porto, Leo and the links
Ana SIBLING_OF user, Ana LIVES_IN Porto, Leo PARTNER_OF Ana, Leo LIVES_IN Porto. The words of relations come from
the locale pack (``relation_nouns``: "sister" is SIBLING_OF; ``relation_words``: "live in" is LIVES_IN); what
kind of thing a name is comes from the relation it takes part in first ("works at Spotify": an organisation,
whatever the entity recogniser guessed), then from the recogniser. A relation noun without a name ("my sister
moved to Lyon") is an unnamed mention (``role`` "sister" of the user) the graph resolves to the one entity it
knows in that role, if any. A clause that ends a relation ("I quit my job at Acme", "she moved out of Leeds",
"we broke up") gives its link with ``ended``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

PERSON, PET, PLACE, ORGANISATION, PRODUCT = "person", "pet", "place", "organisation", "product"
KINDS = (PERSON, PET, PLACE, ORGANISATION, PRODUCT)
# the kinds of a relation's two ends ("" where any kind of name may stand)
ENDS: Mapping[str, tuple[str, str]] = {
    "LIVES_IN": (PERSON, PLACE), "FROM": (PERSON, PLACE), "VISITED": (PERSON, PLACE),
    "WORKS_AT": (PERSON, ORGANISATION), "STUDIES_AT": (PERSON, ORGANISATION), "MEMBER_OF": (PERSON, ORGANISATION),
    "SIBLING_OF": (PERSON, PERSON), "PARTNER_OF": (PERSON, PERSON), "PARENT_OF": (PERSON, PERSON),
    "RELATIVE_OF": (PERSON, PERSON), "FRIEND_OF": (PERSON, PERSON), "COLLEAGUE_OF": (PERSON, PERSON),
    "MANAGER_OF": (PERSON, PERSON), "HAS_PET": (PERSON, PET), "OWNS": (PERSON, PRODUCT),
    "LOCATED_IN": ("", PLACE),
}  # fmt: skip
SYMMETRIC = frozenset({"SIBLING_OF", "PARTNER_OF", "RELATIVE_OF", "FRIEND_OF", "COLLEAGUE_OF"})
# relations a person holds one of at a time: a new one ends the others
SINGLE = frozenset({"LIVES_IN"})
_LABELS = {"PERSON": PERSON, "GPE": PLACE, "LOC": PLACE, "FAC": PLACE, "ORG": ORGANISATION, "PRODUCT": PRODUCT}
_GROUPS = frozenset(
    "club team band choir society league union group orchestra crew squad association federation guild".split()
)
_FIRST = frozenset({"i", "me", "my", "we", "us", "our", "myself", "mine", "ours"})
_HE_SHE = {"he": "m", "him": "m", "his": "m", "she": "f", "her": "f", "hers": "f"}
_NOT_NAMES = frozenset(
    "i mom mum dad lol omg ok okay yeah yes no hi hey btw tbh idk haha nah yep ya thanks thx pls plz uni".split()
)
_COMPANIONS = frozenset({"LIVES_IN", "VISITED"})
_PLACE_PREPOSITIONS = frozenset({"in", "near", "outside", "around", "from"})


@dataclass(frozen=True)
class Mention:
    """Someone or something a statement names: the user, a name, or a relation never named ("my sister")."""

    name: str = ""  # as written ("Ana", "Kofi Mensah"); "" for the user and for a relation without a name
    kind: str = ""  # one of KINDS, "" while unknown
    user: bool = False
    role: str = ""  # the relation noun that introduced them ("sister")
    of: int | None = None  # whose: the index of the owner's mention
    sure: bool = False  # the kind is what a relation says, not the entity recogniser's guess

    @property
    def named(self) -> bool:
        return bool(self.name)


@dataclass(frozen=True)
class Link:
    """A relation between two mentions (indexes), as the statement says it; ``ended``: it no longer holds."""

    source: int
    relation: str
    target: int
    label: str = ""  # the relation noun that said it ("sister"), for telling relations of one kind apart
    ended: bool = False


@dataclass(frozen=True)
class GraphReading:
    """The mentions and links of one statement; ``about``: the mention the statement is about."""

    mentions: tuple[Mention, ...] = ()
    links: tuple[Link, ...] = ()
    about: int | None = None


_WORD = re.compile(r"[^\W\d_][\w'-]*|[.!?]")
_I = frozenset({"I", "I'm", "I've", "I'll", "I'd"})


def may_relate(text: str, nouns: frozenset[str], cues: frozenset[str]) -> bool:
    """Whether a message may state a relation, before it is parsed: it has a relation noun ("sister"), or a word
    of a relation ("lives", "works", "from") and a name: a capitalised word inside a sentence, or any word of a
    message written in lower case, as people chat."""
    words = _WORD.findall(text)
    lowered = [w.lower() for w in words]
    if any(w in nouns for w in lowered):
        return True
    if not any(w in cues for w in lowered):
        return False
    if words and words[0][:1].islower():
        return True  # written in lower case, as people chat: names may be too
    start = True
    for word in words:
        if word in ".!?":
            start = True
            continue
        if word[:1].isupper() and not start and word not in _I:
            return True
        start = False
    return False


def said(readings: Iterable[GraphReading]) -> set[tuple[str, str, str]]:
    """The relations the readings state, as (source, relation, target) names ("" for the user), both ways round
    for a symmetric relation: what `statements` need not say again."""
    found: set[tuple[str, str, str]] = set()
    for reading in readings:
        for link in reading.links:
            source, target = (reading.mentions[i] for i in (link.source, link.target))
            if (source.named or source.user) and (target.named or target.user):
                ends = source.name.casefold(), target.name.casefold()
                found.add((ends[0], link.relation, ends[1]))
                if link.relation in SYMMETRIC:
                    found.add((ends[1], link.relation, ends[0]))
    return found


def statements(
    reading: GraphReading,
    nouns: Mapping[str, str],
    phrases: Mapping[str, Sequence[str]],
    speaker: str | None = None,
    known: set[tuple[str, str, str]] | None = None,
) -> list[str]:
    """The relations a reading states, each said as a plain statement ("Anjali is my mum", "Leela lives in Pune"):
    what the consolidator records beside the statements it extracts, so that a relation said in passing ("mum and
    dad (anjali and rakesh) flew out") is a fact, found by search and read into the graph. ``phrases`` are the
    locale pack's (``relation_phrases``: a relation -> [said of someone, said by the user]; "ROLE" for a relation
    noun); ``speaker``: the name of a speaker who is not the user (their "I" is their name). Ended relations,
    relations with someone never named and those ``known`` (said by an extracted statement, see `said`) are left
    to the extracted statements."""
    found: list[str] = []
    mentions = reading.mentions
    for link in reading.links:
        source, target = mentions[link.source], mentions[link.target]
        if link.ended or not all(m.named or (m.user and (speaker is None or speaker)) for m in (source, target)):
            continue
        if known and (source.name.casefold(), link.relation, target.name.casefold()) in known:
            continue  # said plainly by a statement extracted already
        found.append(_said(link, mentions, nouns, phrases, speaker))
    return list(dict.fromkeys(f for f in found if f))


def _said(
    link: Link, mentions: Sequence[Mention], nouns: Mapping[str, str], phrases: Mapping[str, Sequence[str]],
    speaker: str | None,
) -> str:  # fmt: skip
    """One relation as a statement, "" where the pack has no words for it."""

    def name(index: int) -> str:
        return (speaker or "") if mentions[index].user else mentions[index].name

    first = speaker is None
    if link.label and link.label in nouns:
        from_owner = nouns[link.label].startswith(">")
        named, owner = (link.target, link.source) if from_owner else (link.source, link.target)
        third, mine = phrases.get("ROLE", ("", ""))
        if mentions[named].user:
            return ""  # "I am Ana's sister" is said as Ana's relation elsewhere
        if mentions[owner].user and first:
            return mine.format(named=name(named), label=link.label)
        return third.format(named=name(named), owner=name(owner), label=link.label)
    if mentions[link.target].user and link.relation in SYMMETRIC:
        link = replace(link, source=link.target, target=link.source)
    if mentions[link.target].user:
        return ""
    third, mine = phrases.get(link.relation, ("", ""))
    if mentions[link.source].user and first and mine:
        return mine.format(target=name(link.target))
    return third.format(source=name(link.source), target=name(link.target)) if third else ""


def read_graph(
    doc: Any, nouns: Mapping[str, str], words: Mapping[str, Mapping[str, str]], ending: Iterable[str],
    genders: Mapping[str, str], names: Iterable[str] = (), known: frozenset[str] = frozenset(),
) -> GraphReading:  # fmt: skip
    """The graph reading of a parsed statement (spaCy's `Doc`); ``known``: the words of the language, so that a
    word capitalised for emphasis or at the start of a sentence ("DEAD", "Brain is mush") is no name."""
    names_of = frozenset(n.lower() for n in names)
    return _Builder(doc, nouns, words, frozenset(ending), genders, names_of, known).read()


class _Builder:
    def __init__(
        self,
        doc: Any,
        nouns: Mapping[str, str],
        words: Mapping[str, Mapping[str, str]],
        ending: frozenset[str],
        genders: Mapping[str, str],
        names: frozenset[str],
        known: frozenset[str] = frozenset(),
    ) -> None:
        self.doc = doc
        self.known = known
        self.nouns = nouns
        self.words = words
        self.ending = ending
        self.genders = genders
        self.names = names
        self.mentions: list[Mention] = []
        self.links: list[Link] = []
        self.at: dict[int, int | None] = {}  # token index -> mention (None: looked at, names nobody)
        self.people: list[tuple[int, int]] = []  # (token index, mention) of people, for "he" and "she"
        self.loud: set[int] = set()  # tokens that may be a word in capitals, not a name ("I am DEAD")

    def read(self) -> GraphReading:
        for token in self.doc:  # relation nouns first: they say who the names are
            if self._relation_of(token) is not None:
                self._who(token)
        for token in self.doc:
            self._words_of(token)
        for token in self.doc:
            self._located(token)
        for token in self.doc:  # names said with nothing else: a mention still (the statement is about them)
            if token.pos_ == "PROPN" or token.ent_type_ in _LABELS:
                self._who(token)
        about = next((self.at.get(t.i) for t in self.doc if t.dep_ in ("nsubj", "nsubjpass") and t.head.dep_ == "ROOT"
                      and self.at.get(t.i) is not None), None)  # fmt: skip
        links = [link for link in dict.fromkeys(self.links) if self._fits(link)]
        mentions = [self._typed(i, m, links) for i, m in enumerate(self.mentions)]
        if about is None and mentions:
            about = 0
        return self._quiet(GraphReading(tuple(mentions), tuple(links), about))

    def _quiet(self, reading: GraphReading) -> GraphReading:
        """Without the words in capitals or opening a sentence that no relation makes names ("Brain is mush")."""
        linked = {i for link in reading.links for i in (link.source, link.target)}
        loud = {self.at[t] for t in self.loud if self.at.get(t) is not None} - linked
        if not loud:
            return reading
        kept = [i for i in range(len(reading.mentions)) if i not in loud]
        new = {old: new for new, old in enumerate(kept)}
        mentions = tuple(
            replace(m, of=new.get(m.of)) if m.of is not None else m for m in (reading.mentions[i] for i in kept)
        )
        links = tuple(replace(link, source=new[link.source], target=new[link.target]) for link in reading.links)
        about = new.get(reading.about) if reading.about is not None else None
        return GraphReading(mentions, links, about if about is not None or not mentions else 0)

    # -- who a token is ------------------------------------------------------------------------

    def _add(self, mention: Mention) -> int:
        for i, held in enumerate(self.mentions):
            same = (
                (mention.user and held.user)
                or (mention.named and held.named and mention.name.lower() == held.name.lower())
                or (not mention.named and not mention.user and not held.named and not held.user
                    and (held.role, held.of) == (mention.role, mention.of))
            )  # fmt: skip
            if same:
                if (not held.kind or (mention.sure and not held.sure)) and mention.kind:
                    self.mentions[i] = replace(held, kind=mention.kind, sure=mention.sure or held.sure)
                return i
        self.mentions.append(mention)
        return len(self.mentions) - 1

    def _who(self, token: Any) -> int | None:
        """The mention a token stands for: the user, a name, a relation, a pronoun's person; None for nobody."""
        if token.i in self.at:
            return self.at[token.i]
        self.at[token.i] = None  # a relation noun's owner may lead back here
        found: int | None = None
        word = token.lower_
        if word in _FIRST:
            found = self._add(Mention(user=True, kind=PERSON, sure=True))
        elif word in _HE_SHE and token.pos_ == "PRON":
            found = self._pronoun(token)
        elif self._relation_of(token) is not None:
            found = self._relation(token)
        else:
            name = self._name(token)
            if name is not None:
                text, kind = name
                if not kind and token.dep_ in ("nsubj", "nsubjpass") and token.head.pos_ in ("VERB", "AUX"):
                    kind = PERSON  # a name that does something: most often someone (a guess a relation may correct)
                found = self._add(Mention(user=True, kind=PERSON, sure=True) if text.lower() in self.names
                                  else Mention(name=text, kind=kind))  # fmt: skip
        self.at[token.i] = found
        if found is not None and self.mentions[found].kind in (PERSON, ""):
            self.people.append((token.i, found))
        return found

    def _name(self, token: Any) -> tuple[str, str] | None:
        """The name a token heads, with the kind the entity recogniser gave it ("" if none)."""
        if token.ent_type_ and token.ent_type_ not in _LABELS:
            return None  # a date, an amount, a nationality
        if token.dep_ == "compound" and token.head.pos_ == "PROPN" and token.head.i > token.i:
            return None  # part of the name its head carries ("Porto FC")
        span = next((e for e in token.doc.ents if e.start <= token.i < e.end), None) if token.ent_type_ else None
        odd = ("ADP", "CCONJ", "PRON") if span is not None and len(span) > 1 else ()
        if span is not None and not any(t.pos_ in odd or (t.pos_ in ("VERB", "AUX") and len(span) > 1) for t in span):
            if span.root.i != token.i:
                return None  # part of the name its root carries
            words = [t for t in span if t.lower_ not in ("the", "'s", "'")]
            text = " ".join(t.text for t in words)
            if len(words) == 1 and words[0].is_upper and self._shouted(words):
                self.loud.add(token.i)
            if text and text[:1].isupper() and text.lower() not in _NOT_NAMES:
                kind = _LABELS[token.ent_type_]
                after_in = token.dep_ == "pobj" and token.head.lower_ in _PLACE_PREPOSITIONS
                return text, PLACE if kind == ORGANISATION and after_in else kind
            return None
        if token.pos_ != "PROPN" or not token.text[:1].isupper() or token.lower_ in _NOT_NAMES:
            return None
        if token.dep_ == "compound" and token.head.pos_ == "PROPN":
            return None  # part of the name its head carries
        parts = [c for c in token.lefts if c.dep_ == "compound" and c.pos_ == "PROPN"] + [token]
        parts += [c for c in token.rights if c.dep_ == "flat"]
        if self._shouted(parts):
            self.loud.add(token.i)
        after_in = token.dep_ == "pobj" and token.head.lower_ in _PLACE_PREPOSITIONS
        return " ".join(t.text for t in parts), PLACE if after_in else ""

    def _shouted(self, words: list[Any]) -> bool:
        """A word of the language written in capitals or opening a sentence ("I am DEAD", "Brain is mush")."""
        if len(words) != 1 or not self.known:
            return False
        word = words[0]
        common = word.lower_ in self.known and word.lower_ not in self.names
        return common and (word.is_upper or word.is_sent_start) and len(word.text) > 1

    def _pronoun(self, token: Any) -> int | None:
        """ "he", "she": the nearest person named before it (of that gender where the relation says one)."""
        gender = _HE_SHE[token.lower_]
        for _, index in reversed([p for p in self.people if p[0] < token.i]):
            held = self.mentions[index]
            if held.user:
                continue
            known = self.genders.get(held.role) if held.role else None
            if known is None or known == gender:
                return index
        return None

    # -- relation nouns: "my sister Ana", "Kofi is my boyfriend", "a cat called Miso" ---------------

    def _relation_of(self, token: Any) -> str | None:
        if token.pos_ != "NOUN" and not (token.pos_ == "PROPN" and token.ent_type_ != "PERSON"):
            return None  # "Dad (Marek)": a relation noun the tagger took for a name
        return self.nouns.get(token.lemma_.lower()) or self.nouns.get(token.lower_)

    def _relation(self, noun: Any) -> int | None:
        relation = self._relation_of(noun)
        assert relation is not None
        role = noun.lemma_.lower() if noun.lemma_.lower() in self.nouns else noun.lower_
        owner = self._owner(noun)
        kind = PET if relation == ">HAS_PET" else PERSON
        named = [t for t in self._named(noun) if self._name(t) is not None]
        if not named:
            if owner is None:
                return None
            return self._add(Mention(role=role, of=owner, kind=kind, sure=True))
        first: int | None = None
        for token in named:
            text, _ = self._name(token) or ("", "")
            index = self._add(Mention(user=True, kind=PERSON, sure=True) if text.lower() in self.names
                              else Mention(name=text, kind=kind, role=role, of=owner, sure=True))  # fmt: skip
            self.at[token.i] = index
            self.people.append((token.i, index))
            first = index if first is None else first
            if owner is not None and owner != index:
                if relation.startswith(">"):
                    self.links.append(Link(owner, relation[1:], index, role))
                else:
                    self.links.append(Link(index, relation, owner, role))
        return first

    def _owner(self, noun: Any) -> int | None:
        """Whose relation a noun names: its possessor, else the subject of the clause that has it, else the user."""
        possessor = next((c for c in noun.children if c.dep_ == "poss"), None)
        if possessor is None and noun.dep_ == "compound":  # "her husband Suresh": "her" hangs on the name
            possessor = next((c for c in noun.head.children if c.dep_ == "poss"), None)
        if possessor is not None:
            return self._who(possessor)
        head = noun.head
        if noun.dep_ in ("dobj", "attr") and head.pos_ in ("VERB", "AUX") and head.lemma_ != "be":
            subject = next((c for c in head.children if c.dep_ in ("nsubj", "nsubjpass")), None)
            if subject is not None:
                return self._who(subject)
        return self._add(Mention(user=True, kind=PERSON, sure=True))

    def _named(self, noun: Any) -> list[Any]:
        """The names a relation noun gives: "my sister Ana", "Ana, my sister", "a cat called Miso", "Kofi is my
        boyfriend", "my boyfriend is Kofi", "Ana's kids Rui and Bea"."""
        found = _beside(noun) or self._bracketed(noun)
        if not found and noun.i + 1 < len(noun.doc):
            after = noun.doc[noun.i + 1]
            if after.pos_ == "PROPN" and after.text[:1].isupper():  # "my bf Kofi" parsed apart
                while after.dep_ == "compound" and after.head.pos_ == "PROPN" and after.head.i > after.i:
                    after = after.head
                found.append(after)
        if noun.dep_ == "appos" and noun.head.pos_ == "PROPN" and noun.head.ent_type_ in ("PERSON", ""):
            found.append(noun.head)  # "Leo, Ana's husband"
        head = noun.head
        if head.lemma_ == "be" and noun.dep_ == "attr":
            found += [c for c in head.children if c.dep_ == "nsubj" and c.pos_ == "PROPN"]
        elif head.lemma_ == "be" and noun.dep_ == "nsubj":
            found += [c for c in head.children if c.dep_ == "attr" and c.pos_ == "PROPN"]
        return list(dict.fromkeys(found))

    def _bracketed(self, noun: Any) -> list[Any]:
        """ "dad (marek)", "mum and dad (anjali and rakesh, married 40 yrs)": the names in brackets after a relation
        noun or a list of them, one per noun in order (all of them for one noun: "my kids (rui and bea)")."""
        group = [noun.head, *_conjuncts(noun.head)] if noun.dep_ == "conj" else [noun, *_conjuncts(noun)]
        group = [t for t in group if self._relation_of(t) is not None]
        doc, last = noun.doc, max(t.i for t in group) if group else noun.i
        if last + 1 >= len(doc) or doc[last + 1].text != "(":
            return []
        names = []
        for token in doc[last + 2 :]:
            if token.text in (")", ",", ";", ":"):
                break
            if self._name(token) is not None:
                names.append(token)
        if len(group) == 1:
            return names
        return [names[group.index(noun)]] if len(names) == len(group) and noun in group else []

    def _group(self, token: Any) -> list[int]:
        """ "they": the last people named together before it ("mum and dad (anjali and rakesh) ... they live")."""
        for head in reversed([t for t in token.doc[: token.i] if t.dep_ != "conj" and _conjuncts(t)]):
            people = [self._who(t) for t in (head, *_conjuncts(head))]
            found = [p for p in people if p is not None and not self.mentions[p].user]
            if len(found) >= 2 and all(self.mentions[p].kind in (PERSON, "") for p in found):
                return found
        return []

    # -- verbs and nouns of relations: "lives in Porto", "a job at Spotify", "quit Acme" --------------

    def _words_of(self, token: Any) -> None:
        table = self._table(token)
        subjects = self._subjects(token) if table else []
        if not table or not subjects:
            return
        ended = self._ends(token, token.lemma_.lower())
        together = [r for k, r in table.items() if k in ("", "with") and r in SYMMETRIC]
        alone = not any(prep in ("", "with") for prep, _ in _objects(token))
        if together and len(subjects) >= 2 and alone:  # "liam and i broke up", "Ana and Leo got married"
            self.links.append(Link(subjects[0], together[0], subjects[1], "", ended))
        for prep, target in _objects(token):
            relation, gone = table.get(prep), ended
            if relation is None and prep == "from" and table.get("to") == "LIVES_IN":
                relation, gone = "LIVES_IN", True  # "moved from Hackney to Walthamstow"
            index = self._who(target) if relation is not None else None
            chosen = self._choose(relation, index, target, prep) if relation is not None and index is not None else None
            if chosen is None or index is None:
                continue
            self.links += [Link(subject, chosen, index, "", gone) for subject in subjects if subject != index]
            if chosen in _COMPANIONS:
                self.links += [Link(companion, chosen, index, "", gone) for companion in self._with(token)]

    def _table(self, token: Any) -> Mapping[str, str] | None:
        """The relations a verb or noun says with each preposition after it (the pack's ``relation_words``); a
        noun of what someone is ("a nurse at St Mary's", "a junior doctor at Leeds General") works where it is."""
        if (
            token.pos_ == "NOUN"
            and token.dep_ == "attr"
            and token.head.lemma_ == "be"
            and token.lemma_ not in self.nouns
        ):
            return self.words.get(token.lemma_.lower()) or {"at": "WORKS_AT", "for": "WORKS_AT"}
        if token.pos_ not in ("VERB", "AUX", "NOUN"):
            return None
        lemma = token.lemma_.lower()
        particle = next((c.lower_ for c in token.children if c.dep_ == "prt"), "")
        table = (self.words.get(f"{lemma} {particle}") if particle else None) or self.words.get(lemma)
        if (
            table is not None
            and lemma == "be"
            and not any(c.dep_ == "prep" and c.lower_ == "from" for c in token.children)
        ):
            table = {k: v for k, v in table.items() if k != "in" or self._in_place(token)}  # not "is in a band"
        return table

    def _subjects(self, token: Any) -> list[int]:
        """Who the relation word is of: a verb's subjects, a noun's possessor or the subject of its verb."""
        if token.pos_ == "NOUN":
            possessor = next((c for c in token.children if c.dep_ == "poss"), None)
            if possessor is not None:
                whose = self._who(possessor)
                return [whose] if whose is not None else []
            verb = token.head
            while verb.dep_ in ("prep", "pobj", "dobj", "attr") and verb.pos_ not in ("VERB", "AUX"):
                verb = verb.head
            return self._subjects(verb) if verb.pos_ in ("VERB", "AUX") and verb.i != token.i else []
        current = token
        for _ in range(4):
            subjects = [c for c in current.children if c.dep_ in ("nsubj", "nsubjpass")]
            if len(subjects) == 1 and subjects[0].lower_ == "they":
                return self._group(subjects[0])
            if subjects:
                who = [self._who(s) for s in [*subjects, *(c for s in subjects for c in _conjuncts(s))]]
                return [f for f in dict.fromkeys(who) if f is not None]
            if (
                current.dep_ not in ("conj", "xcomp", "advcl", "ccomp", "relcl", "acl", "dep")
                or current.head is current
            ):
                break
            if current.dep_ in ("relcl", "acl") and current.head.pos_ in ("PROPN", "NOUN"):
                found_one = self._who(current.head)
                return [found_one] if found_one is not None else []
            current = current.head
        if current.dep_ == "ROOT" and current.tag_ in ("VBD", "VBG", "VBN") and token.tag_ in ("VBD", "VBG", "VBN"):
            return [
                self._add(Mention(user=True, kind=PERSON, sure=True))
            ]  # "grew up in valencia, then moved to dublin"
        return []

    def _ends(self, token: Any, lemma: str) -> bool:
        """A clause that ends what it names: "quit", "left", "don't live there anymore", "used to", "lived in"."""
        verb = token if token.pos_ in ("VERB", "AUX") else token.head
        verb_lemma = verb.lemma_.lower()
        particle = next((c.lower_ for c in verb.children if c.dep_ == "prt"), "")
        if verb_lemma in self.ending or f"{verb_lemma} {particle}" in self.ending or lemma in self.ending:
            return True
        if any(c.dep_ == "neg" for c in verb.children):
            return True
        if any(c.lower_ == "used" for c in verb.children if c.dep_ in ("aux", "auxpass")):
            return True
        return verb_lemma in ("live", "work", "study") and verb.tag_ == "VBD"

    def _choose(self, relation: str, index: int, token: Any, prep: str) -> str | None:
        """The relation among those a word may say ("left": a home, a job, a school) that fits what its object is.
        A name after a preposition of a place or a workplace is one, whatever the entity recogniser guessed
        ("she's from Cork"), unless a relation noun made it a person."""
        mention = self.mentions[index]
        kind = mention.kind
        wanted_one = ENDS.get(relation, ("", ""))[1]
        if prep and kind == PERSON and not mention.role and not mention.user and wanted_one in (PLACE, ORGANISATION):
            self.mentions[index] = replace(mention, kind=wanted_one, sure=True)
            kind = wanted_one
        options = relation.split()
        if len(options) == 1:
            wanted = ENDS.get(relation, ("", ""))[1]
            if relation in ("WORKS_AT", "STUDIES_AT") and _group(token):
                return "MEMBER_OF"
            if wanted and kind and kind != wanted and not (kind == PLACE and wanted == ORGANISATION):
                return None if kind in (PERSON, PET) or wanted in (PERSON, PET) else relation
            return relation
        if _group(token) and "MEMBER_OF" in options:
            return "MEMBER_OF"
        return next((o for o in options if ENDS[o][1] == kind), None)

    def _in_place(self, token: Any) -> bool:
        """ "is in Lisbon", "they've been in dubai": a copula whose "in" names a place (by name, not "in a band")."""
        places = [g for c in token.children if c.dep_ == "prep" and c.lower_ == "in" for g in c.children
                  if g.dep_ == "pobj"]  # fmt: skip
        return any(self._name(g) is not None and (g.ent_type_ in ("GPE", "LOC", "FAC", "") or g.pos_ == "PROPN")
                   for g in places)  # fmt: skip

    def _with(self, token: Any) -> list[int]:
        """The people a verb says its subject did it with ("lives in Porto with her husband Leo")."""
        found: list[int] = []
        for child in token.children:
            if child.dep_ == "prep" and child.lower_ in ("with", "w", "w/"):
                for target in (g for g in child.children if g.dep_ == "pobj"):
                    for one in (target, *_conjuncts(target)):
                        index = self._who(one)
                        if index is not None and self.mentions[index].kind in (PERSON, ""):
                            found.append(index)
        return found

    def _located(self, token: Any) -> None:
        """ "Globex, a startup in Lisbon", "Hackney in London": a named organisation or place inside a place."""
        if self._name(token) is None:
            return
        holders = [token, *(c for c in token.children if c.dep_ == "appos" and c.pos_ == "NOUN")]
        for holder in holders:
            for child in holder.children:
                if child.dep_ != "prep" or child.lower_ not in ("in", "near", "outside"):
                    continue
                for place in (g for g in child.children if g.dep_ == "pobj" and self._name(g) is not None):
                    inner, outer = self._who(token), self._who(place)
                    if inner is not None and outer is not None and self.mentions[inner].kind not in (PERSON, PET):
                        self.links.append(Link(inner, "LOCATED_IN", outer))

    # -- what kind each mention is ---------------------------------------------------------------

    def _fits(self, link: Link) -> bool:
        """Both ends may be what the relation joins (a person does not live in a person)."""
        source, target = self.mentions[link.source], self.mentions[link.target]
        want_source, want_target = ENDS[link.relation]
        if target.user and want_target != PERSON:
            return False
        for mention, wanted in ((source, want_source), (target, want_target)):
            if not mention.sure and not mention.user:
                continue  # the recogniser's guess: the relation says what it is
            if wanted in (PERSON, PET) and mention.kind not in (wanted, "") and not mention.user:
                return False
            if wanted in (PLACE, ORGANISATION, PRODUCT) and mention.kind in (PERSON, PET):
                return False
        return not (link.relation == "LOCATED_IN" and source.kind in (PERSON, PET))

    def _typed(self, index: int, mention: Mention, links: list[Link]) -> Mention:
        """A mention's kind as its first relation says (an organisation is worked at), else the recogniser's."""
        if mention.user or (mention.sure and mention.kind):
            return mention
        for link in links:
            if link.target == index:
                wanted = ENDS[link.relation][1]
                if link.relation == "LOCATED_IN" or not wanted:
                    return mention if mention.kind else replace(mention, kind=PLACE)
                return replace(mention, kind=wanted, sure=True)
            if link.source == index and ENDS[link.relation][0]:
                return replace(mention, kind=ENDS[link.relation][0], sure=True)
        return mention


def truecased(
    doc: Any, nouns: Mapping[str, str], words: Mapping[str, Mapping[str, str]], known: frozenset[str],
    common: frozenset[str],
) -> str | None:  # fmt: skip
    """The statement with the names it writes in lower case capitalised ("my aunt kavita moved to coventry" ->
    "my aunt Kavita moved to Coventry"), or None where it writes none. A lower-case word is taken for a name where
    a name stands (after a relation noun, beside a name, as a subject without an article, after the preposition of
    a relation word) and it is no word of the language (``known``: the parser's dictionary), or, after a word of a
    home or a trip ("moved to coventry"), no common noun of a place (``common``: "home", "town", "school")."""
    marked: set[int] = set()
    for token in doc:
        text = token.text
        if not (text.isalpha() and text.islower() and len(text) > 1) or token.is_stop or text in _NOT_NAMES:
            continue
        if token.pos_ not in ("PROPN", "NOUN", "ADJ", "X", "VERB") or token.lower_ in nouns or _FIRST & {text}:
            continue
        unknown = text not in known and token.lemma_.lower() not in known
        called = token.dep_ in ("oprd", "xcomp", "attr", "dobj") and token.head.lemma_.lower() in ("call", "name")
        if token.pos_ == "VERB" and not unknown:
            continue  # "a dog named Biscuit"; an unknown word read as a verb may be a name ("moved to walthamstow")
        before = doc[token.i - 1] if token.i > 0 else None
        after_relation = before is not None and before.lower_ in nouns
        if not after_relation and any(c.dep_ in ("det", "poss") or c.lower_ in ("a", "an", "the") for c in token.lefts):
            continue
        beside = token.dep_ in ("conj", "appos") and (token.head.i in marked or token.head.text[:1].isupper())
        subject = token.dep_ in ("nsubj", "nsubjpass", "attr", "acomp", "dobj", "pobj", "conj", "appos", "npadvmod",
                                 "ROOT")  # fmt: skip
        placed = token.dep_ == "pobj" and _place_slot(token.head, words)
        tagged = token.pos_ == "PROPN" and subject and text not in common  # the tagger took it for a name
        slot = after_relation or beside or _in_brackets_after(token, nouns)
        named = slot and (unknown or token.pos_ in ("PROPN", "NOUN"))  # "my dog biscuit", "her grandson mike"
        alone = subject and unknown and token.pos_ in ("PROPN", "NOUN", "ADJ")
        if named or alone or (placed and text not in common) or tagged or called:
            marked.add(token.i)
    if not marked:
        return None
    return "".join((t.text[:1].upper() + t.text[1:] if t.i in marked else t.text) + t.whitespace_ for t in doc)


def _in_brackets_after(token: Any, nouns: Mapping[str, str]) -> bool:
    """In brackets right after a relation noun, before a comma: "mum and dad (anjali and rakesh, married ...)"."""
    for before in reversed(token.doc[: token.i]):
        if before.text in (")", ",", ";", ":"):
            return False
        if before.text == "(":
            return before.i > 0 and token.doc[before.i - 1].lower_ in nouns
    return False


def _place_slot(prep: Any, words: Mapping[str, Mapping[str, str]]) -> bool:
    """A preposition after a word of a home, an origin or a trip ("live in", "moved to", "from", "a trip to")."""
    if prep.dep_ != "prep":
        return False
    if prep.lower_ == "from":
        return True
    head = prep.head
    while head.dep_ in ("prep", "pobj") and head.head is not head:  # "moved out of leicester to coventry"
        head = head.head
    particle = next((c.lower_ for c in head.children if c.dep_ == "prt"), "")
    table = words.get(f"{head.lemma_.lower()} {particle}", {}) or words.get(head.lemma_.lower(), {})
    return any(relation in ("LIVES_IN", "FROM", "VISITED") for relation in table.values())


def _beside(noun: Any) -> list[Any]:
    """The names written with a relation noun: "my aunt Kavita", "my sister, Ana", "a cat called Miso"."""
    found: list[Any] = []
    if noun.dep_ == "compound" and noun.head.pos_ == "PROPN" and noun.head.i > noun.i:
        found.append(noun.head)
    for child in noun.children:
        if child.dep_ in ("appos", "compound", "npadvmod") and child.i > noun.i:
            found += [child, *_conjuncts(child)]
        elif child.dep_ == "acl" and child.lemma_.lower() in ("call", "name"):
            found += [g for g in child.children if g.dep_ in ("oprd", "attr", "dobj", "xcomp", "npadvmod")]
    return found


def _conjuncts(token: Any) -> list[Any]:
    found: list[Any] = []
    for child in token.children:
        if child.dep_ == "conj":
            found += [child, *_conjuncts(child)]
    return found


def _objects(token: Any) -> list[tuple[str, Any]]:
    """(preposition, object) pairs of a relation word; "" for a direct object; conjoined objects too; "from X
    to Y" both; the prepositions of the verb a noun is the object of ("started a new job at Spotify")."""
    found: list[tuple[str, Any]] = []
    children = list(token.children)
    if token.pos_ == "NOUN" and token.dep_ == "dobj":
        children += [c for c in token.head.children if c.dep_ == "prep" and c.lower_ in ("at", "with", "for")]
    for child in children:
        if child.dep_ == "prep":
            for pobj in (g for g in child.children if g.dep_ == "pobj"):
                found += [(child.lower_, g) for g in (pobj, *_conjuncts(pobj))]
                found += [(child.lower_, g) for g in pobj.children if g.dep_ == "appos"]  # "a team, the Kickers"
                found += [(c.lower_, g) for c in pobj.children if c.dep_ == "prep" and c.lower_ == "to"
                          for g in c.children if g.dep_ == "pobj"]  # fmt: skip
        elif child.dep_ in ("dobj", "attr", "oprd") and token.lemma_ != "be":
            found += [("", g) for g in (child, *_conjuncts(child))]
            # "quit my job at Acme": the job's own preposition says the relation; "left Porto for Leeds"
        elif child.dep_ in ("advcl", "xcomp") and child.text[:1].isupper() and child.i > child.sent.start:
            if any(c.lower_ == "to" for c in child.children):  # "moved to Walthamstow" with the name read as a verb
                found.append(("to", child))
        elif child.dep_ == "agent":
            found += [("by", g) for g in child.children if g.dep_ == "pobj"]
    return found


def _group(token: Any) -> bool:
    """A club, a team, a band: a name whose words say it is a group one is a member of."""
    words = {t.lower_ for t in token.subtree} | {token.lemma_.lower()}
    return bool(words & _GROUPS)
