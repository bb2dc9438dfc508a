"""Statements from chat, read by the dependency parser: every clause of a turn with its speaker resolved.

`ParsedExtractor` has the interface of the rule-based `mnemonite.consolidator.extract.Extractor` (``hear``,
``extract``) and reads one conversation's messages in order: "I", "my" and a clause without a subject are the
speaker's; "he" and "she" the person named last (a name, or a relation: "my husband" is "Nadia's husband"), "they"
the group named last; a clause about the listener ("you"), a question, an opinion of the moment ("I think", "I
guess"), a wish or a maybe is no statement; a short answer is read with the question before it; a statement said
twice in one conversation is written once. What the locale pack's rules read and the parser's statements do not
say (a relation said in passing, "my husband Luis") is added, so that nothing the rules found is lost.
"""

from __future__ import annotations

import logging
from typing import Any

from mnemonite.consolidator.extract import ENGLISH_STATEMENTS, Extractor, Statement, StatementPack
from mnemonite.consolidator.segment import words
from mnemonite.reading.parser import ParserUnavailableError
from mnemonite.reading.statement import StatementReader

log = logging.getLogger("mnemonite.reading")

_SUBJECTS = frozenset({"nsubj", "nsubjpass", "expl", "csubj"})
_LISTENER = frozenset({"you", "u", "ya", "your", "ur", "yourself"})
_SINGULAR = frozenset({"he", "she", "him", "her"})
_THINGS = frozenset({"it", "this", "that", "there", "what", "which", "who", "these", "those"})
_OPINION = frozenset({"think", "guess", "hope", "wish", "bet", "mean", "feel", "know", "suppose", "believe", "wonder",
                      "say", "tell", "ask", "love", "hate", "miss", "see", "hear", "remember", "forget"})  # fmt: skip
_MAYBE = frozenset({"might", "may", "could", "would", "should", "must", "'d", "can", "ca", "wanna", "gonna"})
_FILLER = frozenset({"lol", "lmao", "haha", "obvs", "btw", "tbh", "omg", "ok", "okay", "yeah", "yep", "yup", "oh",
                     "well", "so", "like", "hmm", "um", "uh", "anyway", "also", "honestly", "literally",
                     "ugh"})  # fmt: skip
_CONTENT = frozenset({"NOUN", "PROPN", "NUM", "ADJ"})
_NAMING = frozenset({"NOUN", "PROPN", "NUM"})
_THIRD = {"am": "is", "are": "is", "have": "has", "do": "does", "were": "was"}
# contractions, with and without their apostrophe ("hes", "im", "cant" are split by the tokenizer too)
_CONTRACTED = {"'m": "am", "m": "am", "'re": "are", "re": "are", "'ve": "have", "ve": "have", "'s": "is", "s": "is",
               "n't": "not", "nt": "not", "'ll": "will", "ll": "will", "'d": "would", "wo": "will", "ca": "can",
               "im": "am"}  # fmt: skip


class ParsedExtractor:
    """Reads one conversation's messages in order with the statement reader's parser."""

    def __init__(self, reader: StatementReader, pack: StatementPack = ENGLISH_STATEMENTS) -> None:
        self.reader = reader
        self.pack = pack
        self._person: str | None = None
        self._group: str | None = None
        self._asked: tuple[str, str] | None = None
        self._said: set[str] = set()
        self._rules = Extractor(pack)

    def hear(self, text: str, *, speaker: str) -> None:
        """A message read for its context only (an assistant's): the question it asks may be answered next."""
        self._remember_question(text, speaker)
        self._rules.hear(text, speaker=speaker)

    def extract(self, text: str, *, speaker: str, about_user: bool) -> list[Statement]:
        """The statements of one message; ``about_user``: the speaker is the scope's user (first person stays)."""
        who = None if about_user else speaker
        try:
            doc = self.reader.parse(text)
        except ParserUnavailableError as error:  # a damaged model: this message is read by the rules alone
            log.warning("extraction: the statement parser is unavailable, reading by rules alone: %s", error)
            self._remember_question(text, speaker)
            return self._rules.extract(text, speaker=speaker, about_user=about_user)
        found: list[str] = []
        sentences = [s for s in doc.sents if not s.text.rstrip().endswith("?")]
        answered = self._answered(sentences, speaker, who)
        if answered:
            found.append(answered)
        for sent in sentences:
            heads = _heads(sent)
            for head in heads:
                statement = self._statement(head, heads, speaker, who)
                if statement:
                    found.append(statement)
            self._antecedents(sent, speaker, who)
        self._remember_question(text, speaker)
        found = _merged(found, [s.text for s in self._rules.extract(text, speaker=speaker, about_user=about_user)])
        out = []
        for statement in found:
            key = statement.lower().rstrip(".!")
            if key not in self._said:
                self._said.add(key)
                out.append(Statement(text=statement, speaker=speaker, about_user=about_user))
        return out

    # -- one clause -----------------------------------------------------------------------------

    def _statement(self, head: Any, heads: list[Any], speaker: str, who: str | None) -> str | None:
        subject = next((c for c in head.children if c.dep_ in _SUBJECTS), None)
        if subject is None and head.dep_ == "conj":
            subject = next((c for c in head.head.children if c.dep_ in _SUBJECTS), None)
        if not _stated(head, subject):
            return None
        named = self._subject(subject, speaker, who)
        if named is None:
            return None
        inside = {h.i for h in heads if h.i != head.i}
        skip = {t.i for t in subject.subtree} if subject is not None and subject.head.i == head.i else set()
        if subject is not None and subject.head.i == head.i:  # "As always, I go running": the adjunct before
            skip |= {
                t.i
                for c in head.children
                if c.i < subject.i and c.dep_ not in ("aux", "neg") and not any(t.pos_ in _NAMING for t in c.subtree)
                for t in c.subtree
            }
        own = [t for t in head.subtree if t.i not in skip and not _inside(t, head, inside) and _kept(t)]
        while own and (own[0].is_punct or (own[0].dep_ in ("cc", "mark", "advmod") and own[0].i < head.i)):
            own.pop(0)
        while own and (own[-1].is_punct or own[-1].dep_ in ("cc", "mark") or own[-1].lower_ in _FILLER):
            own.pop()
        if not any(t.pos_ in _CONTENT for t in own) or len(own) < 2:
            return None
        first = subject is None or subject.lower_ in ("i", "we")
        finite = next((t for t in own if t.dep_ in ("aux", "auxpass") or t.i == head.i), None)
        third = first and who is not None
        words = [self._word(t, who, third and finite is not None and t.i == finite.i) for t in own]
        if subject is not None and skip and own and own[0].i < min(skip):  # "since 2019, I run": in its place
            cut = next((n for n, t in enumerate(own) if t.i > min(skip)), len(own))
            return _tidy(" ".join([*words[:cut], named, *words[cut:]]))
        return _tidy(f"{named} {' '.join(w for w in words if w)}")

    def _subject(self, subject: Any, speaker: str, who: str | None) -> str | None:
        """The clause's subject as the statement says it, or None where it is no statement about someone."""
        if subject is None:
            return who or "I"
        word = subject.lower_
        if word in ("i", "we"):
            return who or ("I" if word == "i" else "we")
        if word in _LISTENER:
            return None
        if word in _SINGULAR:
            return self._person
        if word in ("they", "them"):
            return self._group
        if word in _THINGS:
            return None
        text = " ".join(t.text for t in subject.subtree)
        if who is not None:
            text = _own(text, who)
        return text

    def _word(self, token: Any, who: str | None, finite: bool) -> str:
        """A token as the statement says it: first person in the third where the speaker is named."""
        lowered = token.lower_
        if who is not None and lowered in ("my", "our"):
            return f"{who}'s"
        if who is not None and lowered in ("me", "us", "myself"):
            return who
        if finite and token.tag_ in ("VBP", "VB") and lowered not in _CONTRACTED:
            return _third_person(token)
        if lowered in _CONTRACTED and token.pos_ in ("AUX", "VERB", "PART"):
            said = _CONTRACTED[lowered]
            return _THIRD.get(said, said) if finite else said
        return str(token.text)

    # -- who he, she and they are -----------------------------------------------------------------

    def _antecedents(self, sent: Any, speaker: str, who: str | None) -> None:
        for token in sent:
            vocative = token.i == sent.start  # "jayyy wanna come": the listener, addressed
            if (
                token.ent_type_ == "PERSON"
                and token.ent_iob_ == "B"
                and token.lower_ != speaker.lower()
                and not vocative
            ):
                span = next((e for e in sent.ents if e.start == token.i), None)
                if span is not None:
                    self._person = span.text
            elif token.lemma_.lower() in self.reader.relations:
                owner = next((c for c in token.children if c.dep_ == "poss"), None)
                after = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else None
                if after is not None and after.pos_ == "PROPN" and after.text[:1].isupper():
                    self._person = after.text  # "my sister Ana": Ana
                elif owner is not None and owner.lower_ in ("my", "our"):
                    phrase = f"{who}'s {token.text}" if who else f"my {token.text}"
                    if token.tag_ == "NNS":
                        self._group = phrase
                    else:
                        self._person = phrase

    def _answered(self, sentences: list[Any], speaker: str, who: str | None) -> str | None:
        """A short answer (no verb of its own) read with the question the previous message asked."""
        if self._asked is None or self._asked[1] == speaker or not sentences:
            return None
        first = sentences[0]
        if _heads(first):
            return None
        stated = self.pack.reply(self._asked[0], first.text)
        return self.pack.resolve(stated, who) if stated else None

    def _remember_question(self, text: str, speaker: str) -> None:
        question = self.pack.question(text)
        self._asked = (question, speaker) if question else None


def _stated(head: Any, subject: Any) -> bool:
    """Whether a clause states something: not a question, a command, a maybe, or an opinion of the moment."""
    lemma = head.lemma_.lower()
    auxes = [c for c in head.children if c.dep_ in ("aux", "auxpass")]
    if any(c.lower_ in _MAYBE for c in auxes):
        return False  # a maybe, a wish, an ability
    first = head.doc[head.sent.start]
    if subject is not None and first.pos_ == "AUX" and first.i < subject.i < head.i and first.dep_ != "ROOT":
        return False  # "did your dad get the results back": a question without its mark
    if first.i == head.i and head.tag_ == "VB" and subject is None:
        return False  # "send me his number": a command
    if subject is not None and subject.lower_ in ("i", "we") and lemma in _OPINION:
        return lemma in ("love", "hate", "miss") and any(c.dep_ == "dobj" for c in head.children)
    return True


def _kept(token: Any) -> bool:
    """A token a statement keeps: not a filler, an interjection or an emoji."""
    if token.lower_ in _FILLER or token.pos_ == "INTJ" or not token.text.strip():
        return False
    return token.is_punct or any(ch.isalnum() for ch in token.text)


def _heads(sent: Any) -> list[Any]:
    """The clauses of a sentence: the main one, those joined to it, and those with a subject of their own."""
    return [
        t
        for t in sent
        if t.pos_ in ("VERB", "AUX")
        and (
            t.dep_ in ("ROOT", "conj")
            or (
                t.dep_ not in ("relcl", "acl", "csubj", "pcomp", "aux") and any(c.dep_ in _SUBJECTS for c in t.children)
            )
        )
    ]


def _inside(token: Any, head: Any, others: set[int]) -> bool:
    """Whether a token belongs to another clause nested in ``head``'s."""
    for ancestor in (token, *token.ancestors):
        if ancestor.i == head.i:
            return False
        if ancestor.i in others:
            return True
    return False


def _own(text: str, who: str) -> str:
    words = text.split()
    return " ".join(f"{who}'s" if w.lower() in ("my", "our") else w for w in words)


def _third_person(token: Any) -> str:
    lemma = token.lemma_.lower()
    if lemma == "be":
        return "is"
    if lemma == "have":
        return "has"
    if lemma.endswith(("s", "sh", "ch", "x", "z", "o")):
        return f"{lemma}es"
    if lemma.endswith("y") and lemma[-2:-1] not in ("a", "e", "i", "o", "u"):
        return f"{lemma[:-1]}ies"
    return f"{lemma}s"


def _tidy(text: str) -> str:
    for before, after in ((" 's", "'s"), (" ,", ","), (" .", "."), (" n't", "n't"), ("  ", " "), (" !", "!")):
        text = text.replace(before, after)
    return text[:1].upper() + text[1:]


def _overlap(one: set[str], other: set[str]) -> float:
    """F1 of two statements' content words: 0.5 and above say the same thing."""
    shared = len(one & other)
    return 0.0 if not shared else 2 * shared / (len(one) + len(other))


def _merged(parsed: list[str], ruled: list[str]) -> list[str]:
    """The parser's statements with the rules': a parser's statement that two or more of the rules' statements
    split finer ("I live in Berlin and work at Siemens") gives way to them; a rule's statement that says what no
    other does is added."""
    ruled_words = [(text, set(words(text))) for text in ruled]
    out: list[str] = []
    for statement in parsed:
        mine = set(words(statement))
        parts = [text for text, theirs in ruled_words if theirs and theirs < mine]
        out.extend(parts if len(parts) >= 2 else [statement])
    read = [set(words(text)) for text in out]
    for text, theirs in ruled_words:
        if theirs and all(_overlap(theirs, other) < 0.5 for other in read):
            out.append(text)
            read.append(theirs)
    return list(dict.fromkeys(out))
