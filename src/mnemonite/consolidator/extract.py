"""Rule-based statement extraction: a chat message becomes atomic, speaker-resolved statements.

"Hi, I'm Jo. I live in Berlin and work at Siemens." said by the user becomes "I live in Berlin"
and "I work at Siemens" (first person stays: the conflict pipeline reads it as the user); said
by Sam it becomes "Sam lives in Berlin" and "Sam works at Siemens". Questions, greetings,
plans, opinions about the conversation and clauses about the listener are dropped. A
`StatementPack` holds what one language needs; `ENGLISH_STATEMENTS` is the default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Protocol

from mnemonite.consolidator.replies import agrees, first_person

__all__ = ["ENGLISH_STATEMENTS", "EnglishStatements", "Statement", "StatementPack", "Extractor", "split_statements"]


@dataclass(frozen=True)
class Statement:
    """One atomic statement read from a message: its text and who it is about."""

    text: str
    speaker: str
    about_user: bool


class StatementPack(Protocol):
    """What the extractor needs from one language."""

    @property
    def name(self) -> str: ...

    def sentences(self, text: str) -> list[str]: ...
    def clauses(self, sentence: str) -> list[str]: ...
    def statement(self, clause: str) -> bool: ...
    def resolve(self, clause: str, speaker: str | None) -> str: ...
    def antecedents(self, sentence: str) -> list[str]: ...
    def refer(self, clause: str, antecedent: str | None, thing: str | None = None) -> str | None: ...
    def question(self, text: str) -> str | None: ...
    def reply(self, question: str, sentence: str) -> str | None: ...
    def extra(self, sentence: str) -> list[str]: ...
    def things(self, sentence: str) -> list[str]: ...


_PREFIX = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:[\w .'-]{1,40}:\s+)?")
_ABBREVIATIONS = re.compile(r"\b(Dr|Mr|Mrs|Ms|St|Prof|Jr|Sr|vs|etc|e\.g|i\.e)\.", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s+-\s+|\n+")
_INTERJECTION = re.compile(
    r"^(?:(?:oh|wow|yeah|yep|yes|no|nope|ha|haha|hah|lol|well|ok|okay|so|hey|hi|hello|thanks|thank you|"
    r"by the way|btw|honestly|anyway|ah|um|uh|great|nice|cool|sure|right|also|and|but|plus|guess what|"
    r"totally|definitely|awesome|amazing|congrats|sorry|now|actually|apparently|luckily|sadly|unfortunately|"
    r"fortunately|anyway)\b[\s,!.:]*)+",
    re.IGNORECASE,
)
_CONTRACTIONS = (
    (r"\bI'm\b", "I am"), (r"\bI've\b", "I have"), (r"\bI'll\b", "I will"), (r"\bI'd\b", "I would"),
    (r"\bwe're\b", "we are"), (r"\bwe've\b", "we have"), (r"\bhe's\b", "he is"), (r"\bshe's\b", "she is"),
    (r"\bthey're\b", "they are"), (r"\bdon't\b", "do not"), (r"\bdoesn't\b", "does not"),
    (r"\bdidn't\b", "did not"), (r"\bcan't\b", "cannot"), (r"\bwon't\b", "will not"), (r"\bisn't\b", "is not"),
    (r"\baren't\b", "are not"), (r"\bhaven't\b", "have not"), (r"\bhasn't\b", "has not"),
    (r"\bwasn't\b", "was not"), (r"\bthey've\b", "they have"), (r"\bshe'll\b", "she will"),
    (r"\bhe'll\b", "he will"), (r"\bthey'll\b", "they will"), (r"\bwe'll\b", "we will"), (r"\bit's\b", "it is"),
    (r"\bthat's\b", "that is"), (r"\bweren't\b", "were not"),
    (r"\bcouldn't\b", "could not"), (r"\bgonna\b", "going to"), (r"\bwanna\b", "want to"),
)  # fmt: skip
_SUBJECTS = {"i", "we", "he", "she", "they", "my", "our", "his", "her", "their"}
_PERSONAL = {"i", "we", "he", "she", "they"}
_PRONOUNS = {"he": "he", "she": "she", "they": "they", "his": "his", "her": "her", "their": "their"}
_SKIP_START = {"it", "that", "this", "there", "these", "those", "what", "which", "who", "how", "why", "when",
               "where", "you", "your", "let", "please", "if", "maybe", "perhaps", "here", "tell", "do", "did",
               "is", "are", "can", "could", "would", "should", "will", "have", "has"}  # fmt: skip
# Modal or attitude phrasings: wishes, plans, opinions about the talk itself, not facts.
_NOT_FACT = re.compile(
    r"\b(?:you|your|yours|i think|i guess|i hope|i wish|i bet|i mean|i know|i agree|i feel like|"
    r"can(?:not)? wait|would love|would like|will try|will do|i will|we will|should|could|might|may be|"
    r"i am sure|not sure|i did not know|i do not know|"
    r"let me|i see|i understand|i remember|i believe|looks like|sounds like|"
    r"agree|glad|happy to|sorry to|thank|congrat)\b",
    re.IGNORECASE,
)
_IRREGULAR_PAST = set(
    "went got had was were made took began bought left met found saw became ran grew sold wrote quit came gave "
    "lost won spent built taught brought thought felt kept held told said fell flew drove rode ate drank did "
    "broke chose forgot hurt read put set sent sat slept spoke stood swam threw understood woke wore".split()
)
_BASE_VERBS = set(
    "live work love like hate enjoy prefer play teach study take drink eat drive go have own use need cook bake "
    "walk run read write make keep visit speak know want plan train practice practise volunteer paint draw sing "
    "dance swim ride cycle climb hike travel collect watch listen grow sell buy build fix help care feel think "
    "do get attend join lead manage run own rent share stay sleep wake".split()
)
_ADVERBS = set(
    "also just really still usually always never often sometimes recently finally already even now only mostly "
    "actually currently normally generally totally probably finally once twice soon".split()
)
_NOT_ADVERBS = {"fly", "reply", "apply", "rely", "supply", "ally", "bully", "tally"}
# Words that follow a subject pronoun without being its verb: after "we" or "they", these are not clauses
# of their own ("we all", "they both"), and an unknown lower-case word in their place is read as a verb.
_NOT_VERBS = set(
    "all both each the a an my our your his her their its this that these those to of in on at for with from by "
    "about as and or but so if then than too very more most some any no one two three since because when while "
    "after before until though although unless whether where which who what how like into onto over under "
    "through during without within across around near".split()
)
# A clause that ends on one of these lost its object ("Melanie loves to", "Jo is obsessed with those").
_DANGLING = set(
    "to of in on at for with from by about as and or but a an the my our your his her their this that these those "
    "it them us one so myself yourself himself herself ourselves themselves".split()
)
# Endings of adjectives, gerunds and nouns: such a word after a subject is not its verb ("I supportive").
_NOT_VERB_ENDINGS = (
    "ing",
    "ive",
    "al",
    "ful",
    "ous",
    "ic",
    "able",
    "ible",
    "less",
    "ness",
    "ment",
    "tion",
    "sion",
    "ity",
)
_COLLECTIVE = re.compile(r"\b(?:each other|one another|us|we all|all of us|together)\b", re.IGNORECASE)
# "Mom" and "Dad" name the speaker's parent: "Mom called" is "my mom called".
_KIN = re.compile(r"(?P<before>\b\w+['\u2019]?s? )?\b(?P<kin>Mom|Mum|Dad|Mommy|Daddy|Grandma|Grandpa|Granny|Nana)\b")
_OWNERS = {"my", "our", "your", "his", "her", "their", "the", "a"}
_KIN_ANTECEDENT = re.compile(
    r"\b(?:my|our) (mom|mum|dad|mother|father|sister|brother|wife|husband|partner|son|daughter|grandma|grandpa|"
    r"boss|manager|teacher|girlfriend|boyfriend|aunt|uncle|cousin|niece|nephew)\b(?! [A-Z])"
)
_THING = re.compile(
    r"\b(?P<np>(?:my|our|the new|a new) (?:(?:new|old|first|little|big|small|current|favourite|favorite|"
    r"best) )?[a-z]+(?:-[a-z]+)?)\b"
)
# "It has two bedrooms" describes the thing; "it is a problem" or "it is doing well" is as likely about a situation.
_THING_VERBS = {"has", "had", "costs", "cost", "needs", "needed", "takes", "took", "holds", "seats", "sleeps"}
_ROLE_AT = re.compile(
    r"^(?P<s>(?:(?:my|our|his|her|their) )?\S+) (?P<be>am|is) (?P<role>an? [\w -]+?) (?:at|for) (?P<org>.+)$"
)
_AS_ROLE = re.compile(r"^(?P<clause>(?P<s>(?:(?:my|our|his|her|their) )?\S+) .+? at .+?) as (?P<role>an? [\w -]+)$")
_RELATION = re.compile(
    r"\b(?P<owner>my|our) (?P<rel>sister|brother|wife|husband|partner|son|daughter|friend|cousin|girlfriend|"
    r"boyfriend|fiancée?|boss|manager|roommate|flatmate|colleague|neighbou?r|niece|nephew|aunt|uncle|dog|cat),? "
    r"(?P<name>[A-Z][a-z]+)\b"
)
_YES_WORDS = re.compile(r"^\s*(?:yes|yeah|yep|yup|sure|of course|definitely|absolutely)\b[\s,!.]*", re.IGNORECASE)
_QUESTION_CONTRACTIONS = ((r"\bwhat's\b", "what is"), (r"\bwho's\b", "who is"), (r"\bwhere's\b", "where is"),
                          (r"\bwhen's\b", "when is"), (r"\bhow's\b", "how is"))  # fmt: skip
_MODALS = {"will", "would", "can", "could", "should", "might", "must", "may", "cannot", "used"}
_AGREE = {"am": "is", "have": "has", "do": "does", "were": "was", "are": "is"}
_OBJECT_PRONOUNS = ((r"\bme\b", "{s}"), (r"\bmyself\b", "{s}"), (r"\bmine\b", "{s}'s"), (r"\bours\b", "{s}'s"))
_NAME_AFTER = re.compile(
    r"\b(?i:named|called|(?:my|our|his|her) (?:sister|brother|wife|husband|partner|son|daughter|friend|mom|mother|"
    r"dad|father|cousin|aunt|uncle|boss|manager|colleague|cat|dog|niece|nephew|grandma|grandpa|kid|baby|"
    r"neighbou?r|roommate|flatmate|coworker|teacher|doctor|coach|fiancée?|girlfriend|boyfriend))"
    r",? (?P<name>[A-Z][a-z]+)"
)
_NOT_NAMES = set(
    "I The A An My Our His Her Their We He She They It This That Mom Dad January February March April May June "
    "July August September October November December Monday Tuesday Wednesday Thursday Friday Saturday Sunday "
    "Yes No Oh Wow Thanks Hey Hi Hello Well OK Okay So And But Also Just Yeah Ha Haha Lol".split()
)


def _conjugate(verb: str) -> str:
    if verb.endswith("y") and len(verb) > 2 and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    return verb + "s"


@dataclass(frozen=True)
class EnglishStatements:
    """The English statement pack: sentence and clause splitting, filters, person resolution."""

    name: str = "en"
    min_words: int = 3
    max_words: int = 40
    contractions: tuple[tuple[str, str], ...] = field(default=_CONTRACTIONS)

    def sentences(self, text: str) -> list[str]:
        """Sentences of a message, its ``[date] Speaker:`` prefix dropped and contractions expanded."""
        body = _ABBREVIATIONS.sub(lambda m: m.group(1), _PREFIX.sub("", text, count=1))
        for pattern, replacement in self.contractions:
            body = re.sub(pattern, replacement, body, flags=re.IGNORECASE)
        parts = (_kin(part.strip()) for part in _SENTENCE_END.split(body))
        return [part for part in parts if part and not part.endswith("?")]

    def question(self, text: str) -> str | None:
        """The last question a message asks (contractions expanded), if it asks one."""
        body = _PREFIX.sub("", text, count=1)
        asked = [part.strip() for part in re.split(r"(?<=[.!?])\s+", body) if part.strip().endswith("?")]
        if not asked:
            return None
        question = _INTERJECTION.sub("", asked[-1])
        for pattern, replacement in (*_QUESTION_CONTRACTIONS, *self.contractions):
            question = re.sub(pattern, replacement, question, flags=re.IGNORECASE)
        return question

    def reply(self, question: str, sentence: str) -> str | None:
        """The first-person statement a short answer (a fragment, or a yes) makes to a question put to its speaker."""
        if agrees(sentence) and any(self.statement(clause) for clause in self.clauses(sentence)):
            return first_person(question, "yes")
        if _INTERJECTION.match(sentence) and not agrees(sentence):  # "Thanks, Mel!" answers nothing
            return None
        words = _YES_WORDS.sub("", sentence).split()
        if any(word[:1].islower() and _is_verb(word) and not _is_adverb(word.strip(",.!")) for word in words):
            return None  # a sentence of its own ("It is a chance to ..."), not a fragment
        return first_person(question, sentence)

    def extra(self, sentence: str) -> list[str]:
        """Relations a sentence states in passing: "my husband Arjun" is "my husband is Arjun"."""
        return [f"{m.group('owner')} {m.group('rel')} is {m.group('name')}" for m in _RELATION.finditer(sentence)
                if m.group("name") not in _NOT_NAMES]  # fmt: skip

    def things(self, sentence: str) -> list[str]:
        """Noun phrases a later "it" (singular) or "they" (plural) may refer to, in order."""
        found = [m.group("np") for m in _THING.finditer(sentence) if m.group("np").split()[-1] not in _NOT_VERBS]
        return [re.sub(r"^a new\b", "the new", np) for np in found]

    def clauses(self, sentence: str) -> list[str]:
        """Atomic clauses: conjunctions split where a new subject or an elided one (a verb) follows."""
        body = _INTERJECTION.sub("", sentence.strip()).rstrip(".!;: ")
        pieces = re.split(r"\s*(?:;|,? and |,? but |, so |, then | - |, )\s*", body)
        clauses: list[str] = []
        subject = ""
        for piece in pieces:
            words = piece.split()
            if not words:
                continue
            head = words[0].lower().split("'")[0]
            if clauses and head not in _SKIP_START and not _verb_led(words) and not self._has_subject(piece):
                clauses[-1] = f"{clauses[-1]} and {piece}"  # a list or an object, not a clause
                continue
            if self._has_subject(piece):
                subject = self._subject_of(piece)
                clauses.append(piece)
            elif subject and head not in _SKIP_START:
                clauses.append(f"{subject} {piece}")
            else:
                clauses.append(piece)
        return [part[0].upper() + part[1:] for clause in clauses if clause for part in _split_role(clause)]

    def _has_subject(self, piece: str) -> bool:
        words = piece.split()
        head = words[0].lower()
        if head in _SUBJECTS:
            return True
        named = words[0][:1].isupper() and words[0] not in _NOT_NAMES and not head.endswith("ing")
        return named and len(words) > 1 and _is_verb(words[1])

    def _subject_of(self, piece: str) -> str:
        words = piece.split()
        if words[0].lower() in {"my", "our", "his", "her", "their"} and len(words) > 1:
            return " ".join(words[:2])
        return words[0]

    def statement(self, clause: str) -> bool:
        """Whether a clause states something about someone: a subject, a verb, enough words, no modal."""
        words = clause.split()
        head = words[0].lower().split("'")[0] if words else ""
        if not self.min_words <= len(words) <= self.max_words or head in _SKIP_START:
            return False
        if _NOT_FACT.search(clause) or _dangling(words) or (head == "we" and _COLLECTIVE.search(clause)):
            return False
        if not self._has_subject(clause):
            return False
        if head in _PERSONAL and _looks_verb(_after_adverbs(words[1:])):
            return True
        return any(_is_verb(word) and not _is_adverb(word.lower()) for word in words[1:4])

    def resolve(self, clause: str, speaker: str | None) -> str:
        """First person of ``speaker`` in the third person (``None``: the user; first person stays)."""
        if speaker is None:
            return clause
        words = clause.split()
        out: list[str] = []
        for i, word in enumerate(words):
            if word == "I" or (i == 0 and word.lower() == "we"):
                out.append(speaker)
                words[i + 1 :] = _agree(words[i + 1 :])
            else:
                out.append(word)
        text = " ".join(out)
        text = re.sub(r"\b(?:my|our)\b", f"{speaker}'s", text, flags=re.IGNORECASE)
        for pattern, replacement in _OBJECT_PRONOUNS:
            text = re.sub(pattern, replacement.format(s=speaker), text, flags=re.IGNORECASE)
        return text

    def antecedents(self, sentence: str) -> list[str]:
        """Names a later "he" or "she" may refer to: named people and capitalised subjects."""
        found = [(m.start(), m.group("name")) for m in _NAME_AFTER.finditer(sentence)]
        found += [(m.start(), m.group(0)) for m in _KIN_ANTECEDENT.finditer(sentence)]
        names = [name for _, name in sorted(found)]
        words = sentence.split()
        names += [word.strip(",.!") for word, after in pairwise(words[1:])
                  if word[:1].isupper() and word.strip(",.!").isalpha() and _is_verb(after)]  # fmt: skip
        words = _INTERJECTION.sub("", sentence).split()
        if len(words) > 1 and words[0][:1].isupper() and words[0] not in _NOT_NAMES and _is_verb(words[1]):
            names.append(words[0].strip(",.!"))
        return [name for name in names if name not in _NOT_NAMES]

    def refer(self, clause: str, antecedent: str | None, thing: str | None = None) -> str | None:
        """A clause whose subject is a third-person pronoun, with the antecedent in its place (or None).

        ``thing``: the last noun phrase named, for "it" (singular) or "they" (plural) before a verb.
        """
        words = clause.split()
        head = words[0].lower()
        if thing and len(words) > 2 and _refers_to(head, thing) and words[1].lower() in _THING_VERBS | {"have", "are"}:
            return " ".join([thing, *words[1:]])
        if head not in _PRONOUNS:
            return clause
        if antecedent is None:
            return None
        if head in {"his", "her", "their"}:
            return " ".join([f"{antecedent}'s", *words[1:]])
        return " ".join([antecedent, *(_agree(words[1:]) if head == "they" else words[1:])])


def _is_verb(word: str) -> bool:
    lowered = word.lower().strip(",.!")
    return (
        lowered in _BASE_VERBS
        or lowered in _IRREGULAR_PAST
        or lowered in _ADVERBS
        or lowered in _MODALS
        or lowered in {"am", "is", "are", "was", "were", "has", "have", "had", "do", "does", "did", "not"}
        or (lowered.endswith("ed") and len(lowered) > 4)
        or (lowered.endswith("s") and lowered[:-1] in _BASE_VERBS)
        or (lowered.endswith("es") and lowered[:-2] in _BASE_VERBS)
        or (lowered.endswith("ies") and lowered[:-3] + "y" in _BASE_VERBS)
    )


def _agree(rest: list[str]) -> list[str]:
    """The verb after a first-person subject made third person singular ("live" -> "lives")."""
    out = list(rest)
    for i, word in enumerate(out):
        lowered = word.lower()
        if _is_adverb(lowered):
            continue
        if lowered in _AGREE:
            out[i] = _AGREE[lowered]
        elif lowered in _BASE_VERBS or (_looks_verb(lowered) and not _is_verb(lowered)):
            out[i] = _conjugate(word)  # a past form, a modal or a known third-person form stays as it is
        break
    return out


def _verb_led(words: list[str]) -> bool:
    """Whether a piece after "and" starts with a verb of an elided subject ("... and come back on the 12th")."""
    head = words[0].lower().split("'")[0]
    if _is_verb(head):
        return True
    # an unknown word leads a verb phrase unless a known verb follows it ("support groups improved my life")
    return len(words) >= 3 and _looks_verb(head) and not head.endswith("s") and not any(map(_is_verb, words[1:3]))


def _is_adverb(word: str) -> bool:
    return word in _ADVERBS or (word.endswith("ly") and len(word) > 5 and word not in _NOT_ADVERBS)


def _after_adverbs(words: list[str]) -> str:
    """The first word that is not an adverb ("" if none)."""
    return next((word for word in words if not _is_adverb(word.lower())), "")


def _looks_verb(word: str) -> bool:
    """Whether a word right after a subject pronoun reads as its verb: a lower-case word, not a function word."""
    return word.isalpha() and word.islower() and word not in _NOT_VERBS and not word.endswith(_NOT_VERB_ENDINGS)


def _dangling(words: list[str]) -> bool:
    """A clause that lost its object, or says that someone did something to themselves by name."""
    last = words[-1].lower().strip(",.!;:")
    return last in _DANGLING or (len(words) == 3 and words[0].lower() == last)


def _refers_to(pronoun: str, thing: str) -> bool:
    plural = thing.endswith("s") and not thing.endswith("ss")
    return pronoun == ("they" if plural else "it")


def _kin(sentence: str) -> str:
    """ "Mom" and "Dad" as names of the speaker's parents: "my mom", "my dad" (kept after "my", "Sam's")."""

    def owned(match: re.Match[str]) -> str:
        before = match.group("before") or ""
        if before.strip().lower() in _OWNERS or before.rstrip().endswith(("'s", "\u2019s")):
            return match.group(0)
        return f"{before}my {match.group('kin').lower()}"

    return _KIN.sub(owned, sentence)


def _split_role(clause: str) -> list[str]:
    """A role at a place is two facts: "I am a nurse at the clinic" -> "I am a nurse", "I work at the clinic"."""
    if match := _ROLE_AT.match(clause):
        subject, be = match.group("s"), match.group("be")
        return [
            f"{subject} {be} {match.group('role')}",
            f"{subject} {'work' if be == 'am' else 'works'} at {match.group('org')}",
        ]
    if match := _AS_ROLE.match(clause):
        subject = match.group("s")
        be = "am" if subject.lower() in {"i", "we"} else "is"
        return [match.group("clause"), f"{subject} {be} {match.group('role')}"]
    return [clause]


ENGLISH_STATEMENTS = EnglishStatements()


class Extractor:
    """Reads one conversation's messages in order; remembers who "he" and "she" last were, what "it"
    was, and the question the previous message asked (a short answer is read with it)."""

    def __init__(self, pack: StatementPack = ENGLISH_STATEMENTS) -> None:
        self.pack = pack
        self._antecedent: str | None = None
        self._thing: str | None = None
        self._asked: tuple[str, str] | None = None  # (question, who asked it) of the previous message

    def hear(self, text: str, *, speaker: str) -> None:
        """A message read for its context only (an assistant's): the question it asks may be answered next."""
        self._remember_question(text, speaker)

    def extract(self, text: str, *, speaker: str, about_user: bool) -> list[Statement]:
        """The statements of one message; ``about_user``: the speaker is the scope's user."""
        who = None if about_user else speaker
        sentences = self.pack.sentences(text)
        found = self._answered(sentences, speaker, who)
        for sentence in sentences:
            found += self._read(sentence, speaker, who)
        self._remember_question(text, speaker)
        statements = [Statement(text=text, speaker=speaker, about_user=about_user) for text in found]
        return list({s.text.lower(): s for s in statements}.values())

    def _read(self, sentence: str, speaker: str, who: str | None) -> list[str]:
        found = []
        for clause in self.pack.clauses(sentence):
            referred = self.pack.refer(clause, self._antecedent, self._thing)
            by_thing = referred is not None and self._thing is not None and referred.startswith(self._thing)
            if referred is not None and (self.pack.statement(referred) or (by_thing and referred != clause)):
                found.append(self.pack.resolve(referred, who))
        found += [self.pack.resolve(extra, who) for extra in self.pack.extra(sentence)]
        named = [self.pack.resolve(name, who) for name in self.pack.antecedents(sentence) if name != speaker]
        if named:
            self._antecedent = named[-1]
        things = self.pack.things(sentence)
        if things:
            thing = self.pack.resolve(things[-1], who)
            self._thing = thing[0].upper() + thing[1:]
        return found

    def _answered(self, sentences: list[str], speaker: str, who: str | None) -> list[str]:
        """What the first sentence states as the answer to the previous message's question, if anything."""
        if self._asked is None or self._asked[1] == speaker or not sentences:
            return []
        stated = self.pack.reply(self._asked[0], sentences[0])
        if stated is None:
            return []
        alone = sentences[0].strip(" .!,")
        if alone.istitle() and alone.isalpha():  # "Dmitri." answering "Who is your new manager?"
            self._antecedent = alone
        return [self.pack.resolve(stated, who)]

    def _remember_question(self, text: str, speaker: str) -> None:
        question = self.pack.question(text)
        self._asked = (question, speaker) if question else None
        named = self.pack.antecedents(question) if question else []
        if named:  # "Did you hear that Marta got promoted?": "she" is Marta next
            self._antecedent = named[-1]


def split_statements(text: str, *, speaker: str = "", about_user: bool = True) -> list[str]:
    """The statements of one message on its own (no earlier context), as text."""
    return [s.text for s in Extractor().extract(text, speaker=speaker, about_user=about_user)]
