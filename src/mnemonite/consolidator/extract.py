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
from typing import Protocol

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
    def refer(self, clause: str, antecedent: str | None) -> str | None: ...


_PREFIX = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:[\w .'-]{1,40}:\s+)?")
_ABBREVIATIONS = re.compile(r"\b(Dr|Mr|Mrs|Ms|St|Prof|Jr|Sr|vs|etc|e\.g|i\.e)\.", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s+-\s+|\n+")
_INTERJECTION = re.compile(
    r"^(?:(?:oh|wow|yeah|yep|yes|no|nope|ha|haha|hah|lol|well|ok|okay|so|hey|hi|hello|thanks|thank you|"
    r"by the way|btw|honestly|anyway|ah|um|uh|great|nice|cool|sure|right|also|and|but|plus|guess what|"
    r"totally|definitely|awesome|amazing|congrats|sorry)\b[\s,!.:]*)+",
    re.IGNORECASE,
)
_CONTRACTIONS = (
    (r"\bI'm\b", "I am"), (r"\bI've\b", "I have"), (r"\bI'll\b", "I will"), (r"\bI'd\b", "I would"),
    (r"\bwe're\b", "we are"), (r"\bwe've\b", "we have"), (r"\bhe's\b", "he is"), (r"\bshe's\b", "she is"),
    (r"\bthey're\b", "they are"), (r"\bdon't\b", "do not"), (r"\bdoesn't\b", "does not"),
    (r"\bdidn't\b", "did not"), (r"\bcan't\b", "cannot"), (r"\bwon't\b", "will not"), (r"\bisn't\b", "is not"),
    (r"\baren't\b", "are not"), (r"\bhaven't\b", "have not"), (r"\bhasn't\b", "has not"),
    (r"\bwasn't\b", "was not"), (r"\bgonna\b", "going to"), (r"\bwanna\b", "want to"),
)  # fmt: skip
_SUBJECTS = {"i", "we", "he", "she", "they", "my", "our", "his", "her", "their"}
_PRONOUNS = {"he": "he", "she": "she", "they": "they", "his": "his", "her": "her", "their": "their"}
_SKIP_START = {"it", "that", "this", "there", "these", "those", "what", "which", "who", "how", "why", "when",
               "where", "you", "your", "let", "please", "if", "maybe", "perhaps", "here", "tell", "do", "did",
               "is", "are", "can", "could", "would", "should", "will", "have", "has"}  # fmt: skip
# Modal or attitude phrasings: wishes, plans, opinions about the talk itself, not facts.
_NOT_FACT = re.compile(
    r"\b(?:you|your|yours|i think|i guess|i hope|i wish|i bet|i mean|i know|i agree|i feel like|"
    r"can(?:not)? wait|would love|would like|will try|will do|i will|we will|should|could|might|may be|"
    r"i am sure|not sure|let me|i see|i understand|i remember|i believe|looks like|sounds like|"
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
    "actually currently normally generally totally".split()
)
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
        parts = (part.strip() for part in _SENTENCE_END.split(body))
        return [part for part in parts if part and not part.endswith("?")]

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
            if clauses and head not in _SKIP_START and not _is_verb(head) and not self._has_subject(piece):
                clauses[-1] = f"{clauses[-1]} and {piece}"  # a list or an object, not a clause
                continue
            if self._has_subject(piece):
                subject = self._subject_of(piece)
                clauses.append(piece)
            elif subject and head not in _SKIP_START:
                clauses.append(f"{subject} {piece}")
            else:
                clauses.append(piece)
        return [clause[0].upper() + clause[1:] for clause in clauses if clause]

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
        if not self.min_words - 1 <= len(words) <= self.max_words or head in _SKIP_START:
            return False
        if _NOT_FACT.search(clause):
            return False
        if not self._has_subject(clause):
            return False
        return any(_is_verb(word) for word in words[1:4])

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
        names = [m.group("name") for m in _NAME_AFTER.finditer(sentence)]
        words = _INTERJECTION.sub("", sentence).split()
        if len(words) > 1 and words[0][:1].isupper() and words[0] not in _NOT_NAMES and _is_verb(words[1]):
            names.append(words[0].strip(",.!"))
        return [name for name in names if name not in _NOT_NAMES]

    def refer(self, clause: str, antecedent: str | None) -> str | None:
        """A clause whose subject is a third-person pronoun, with the antecedent in its place (or None)."""
        words = clause.split()
        head = words[0].lower()
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
        if lowered in _ADVERBS:
            continue
        if lowered in _AGREE:
            out[i] = _AGREE[lowered]
        elif lowered in _BASE_VERBS:  # a past form or a modal stays as it is
            out[i] = _conjugate(word)
        break
    return out


ENGLISH_STATEMENTS = EnglishStatements()


class Extractor:
    """Reads one conversation's messages in order; remembers who "he" and "she" last were."""

    def __init__(self, pack: StatementPack = ENGLISH_STATEMENTS) -> None:
        self.pack = pack
        self._antecedent: str | None = None

    def extract(self, text: str, *, speaker: str, about_user: bool) -> list[Statement]:
        """The statements of one message; ``about_user``: the speaker is the scope's user."""
        found: list[Statement] = []
        for sentence in self.pack.sentences(text):
            for clause in self.pack.clauses(sentence):
                referred = self.pack.refer(clause, self._antecedent)
                if referred is None or not self.pack.statement(referred):
                    continue
                resolved = self.pack.resolve(referred, None if about_user else speaker)
                found.append(Statement(text=resolved, speaker=speaker, about_user=about_user))
            named = [name for name in self.pack.antecedents(sentence) if name != speaker]
            if named:
                self._antecedent = named[-1]
        return list({s.text.lower(): s for s in found}.values())


def split_statements(text: str, *, speaker: str = "", about_user: bool = True) -> list[str]:
    """The statements of one message on its own (no earlier context), as text."""
    return [s.text for s in Extractor().extract(text, speaker=speaker, about_user=about_user)]
