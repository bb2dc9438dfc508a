"""Generate ``bench/data/conflicts_stress.jsonl``: a stress set of conflict cases built from paraphrase families.

Each case holds 1-4 existing facts (one of them, for a dedup or supersede, the target; the others about other
attributes or other people) and one new statement, the candidate, labelled with what a careful reader decides:

* ``supersede``: the candidate replaces a held fact (an update) or retracts it; ``target`` is its index;
* ``dedup``: the candidate repeats a held fact, maybe in other words; ``target`` is its index;
* ``admit``: the candidate is new and replaces nothing, even where it looks like a change (a plan, another
  person's value, an additive value, a past event, a hypothetical, a fact about something else).

A paraphrase family is one way of phrasing one kind of decision ("X went up to V", "no more OLD, ... now",
"I'm thinking of switching to V", "my sister's X is V", ...). The families are applied to 47 attributes of a
user's life (rent, a medicine's dose, bedtime, bank, dentist, city, instruments played, ...), each with a pool
of values written in several surface forms: numbers ("$2,400", "2400 dollars", "2.4k", "twenty-four hundred
dollars"), times ("7:30pm", "19:30", "half past seven in the evening"), dates ("May 3rd", "3 May", "the third of
May"), days, names, places and organisations. The mix is about 40% supersede, 25% dedup and 35% admit.

Every family belongs wholly to the ``train`` or the ``test`` split, about half of each decision kind's families
in each, so a learned decider trained on the train families is judged on phrasings it has not seen. The
``family`` field reads "attribute/phrasing"; the split goes by the phrasing. A case may name the user in an
optional ``user`` field (then the candidate or a held fact speaks of the user by that name).

Standard library only and seeded: ``python bench/conflict_stress.py`` rewrites the file byte for byte.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

SEED = 20250611
OUT = Path(__file__).resolve().parent / "data" / "conflicts_stress.jsonl"
CASES_PER_FAMILY = {"supersede": 30, "dedup": 41, "admit": 46}

# ---------------------------------------------------------------------------------------------- surface forms

ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen"
).split()
TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
ORDINALS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
    "fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
).split()
MONTHS = "January February March April May June July August September October November December".split()
DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()


def words(n: int) -> str:
    """An integer below a million in words: 1850 -> "one thousand eight hundred fifty"."""
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + (f"-{ONES[n % 10]}" if n % 10 else "")
    if n < 1000:
        return f"{ONES[n // 100]} hundred" + (f" {words(n % 100)}" if n % 100 else "")
    return f"{words(n // 1000)} thousand" + (f" {words(n % 1000)}" if n % 1000 else "")


def ordinal_word(n: int) -> str:
    if n <= 20:
        return ORDINALS[n - 1]
    return "twenty-" + ORDINALS[n - 21] if n < 30 else "thirtieth"


def ordinal(n: int) -> str:
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def counted(n: float, one: str, many: str) -> str:
    return f"{n:g} {one if n == 1 else many}"


def money(n: int) -> list[str]:
    forms = [f"${n:,}", f"{n:,} dollars"]
    if n >= 1000:
        forms.append(f"${n}")
    if n >= 1000 and n % 100 == 0:
        forms += [f"{n / 1000:g}k", f"${n / 1000:g}k"]
    if n % 1000 == 0 or n >= 10000:
        forms.append(f"{words(n)} dollars")
    elif n % 100 == 0:
        forms.append(f"{words(n // 100)} hundred dollars")  # 2400 -> "twenty-four hundred dollars"
    return forms


def pounds(n: int) -> list[str]:
    return [counted(n, "pound", "pounds"), f"{n} lbs", f"{words(n)} pound{'s' * (n != 1)}"]


def milligrams(n: int) -> list[str]:
    return [f"{n} mg", f"{n}mg", f"{n} milligrams", f"{words(n)} milligrams"]


def step_count(n: int) -> list[str]:
    forms = [f"{n:,}", f"{words(n)}"]
    if n >= 1000:
        forms += [f"{n}", f"{n / 1000:g}k"]
    return forms


def hours(x: float) -> list[str]:
    whole = int(x)
    if x == 0.5:
        return ["half an hour", "30 minutes"]
    if x == 1:
        return ["1 hour", "one hour", "an hour"]
    if x != whole:
        return [f"{x:g} hours", f"{words(whole)} and a half hours", f"{whole} and a half hours"]
    return [f"{whole} hours", f"{words(whole)} hours", f"{whole} hrs"]


def shoe(x: float) -> list[str]:
    whole = int(x)
    return [f"{x:g}", words(whole) if x == whole else f"{words(whole)} and a half"]


def pace(seconds: int) -> list[str]:
    m, s = divmod(seconds, 60)
    clock = f"{m}:{s:02d}"
    spoken = {0: f"{words(m)} minutes", 30: f"{words(m)} and a half minutes"}.get(
        s, f"{words(m)} minutes {words(s)} seconds"
    )
    return [f"{clock} per mile", f"{clock} a mile", f"{clock} minutes per mile", f"{spoken} per mile"]


def cups(n: int) -> list[str]:
    unit = "cup" if n == 1 else "cups"
    return [f"{n} {unit}", f"{words(n)} {unit}"] + (["a cup"] if n == 1 else [])


MINUTE_WORDS = {
    30: ["half an hour"],
    45: ["three quarters of an hour"],
    60: ["an hour", "one hour"],
    90: ["an hour and a half", "one and a half hours"],
}


def minutes(n: int) -> list[str]:
    return [f"{n} minutes", f"{words(n)} minutes", f"{n} mins", *MINUTE_WORDS.get(n, [])]


def degrees(n: int) -> list[str]:
    return [f"{n} degrees", f"{words(n)} degrees", f"{n} degrees Fahrenheit"]


def spoken_time(h: int, m: int) -> str:
    period = (
        "in the morning" if h < 12 else "in the afternoon" if h < 17 else "in the evening" if h < 21 else "at night"
    )
    hour = words(h % 12 or 12)
    if (h, m) == (12, 0):
        return "noon"
    if m == 0:
        return f"{hour} o'clock {period}"
    if m == 45:
        return f"quarter to {words(h % 12 + 1)} {period}"
    return {30: f"half past {hour} {period}", 15: f"quarter past {hour} {period}"}.get(m, f"{hour} {words(m)}")


def clock_forms(h: int, m: int) -> list[str]:
    suffix = "am" if h < 12 else "pm"
    short = str(h % 12 or 12) if m == 0 else f"{h % 12 or 12}:{m:02d}"
    return [f"{short}{suffix}", f"{short} {suffix}", f"{h:02d}:{m:02d}", spoken_time(h, m)]


def date_forms(month: int, day: int) -> list[str]:
    name = MONTHS[month - 1]
    return [f"{name} {ordinal(day)}", f"{name} {day}", f"{day} {name}", f"the {ordinal_word(day)} of {name}"]


def join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def days_forms(days: tuple[int, ...]) -> list[str]:
    names = [DAYS[d] for d in days]
    return [join([n + "s" for n in names]), join(names), join([n[:3] for n in names])]


def meeting_forms(day: int, h: int, m: int) -> list[str]:
    name, clock = DAYS[day], clock_forms(h, m)
    return [f"{name}s at {clock[0]}", f"{name}s at {clock[2]}", f"{clock[0]} on {name}s", f"{name}s at {clock[3]}"]


# ---------------------------------------------------------------------------------------------- values


@dataclass(frozen=True)
class Value:
    """One value of an attribute: its identity, the ways of writing it, its order, and words that go with it."""

    key: object
    forms: tuple[str, ...]
    rank: float
    extra: tuple[tuple[str, str], ...] = ()


def amounts(fmt: Callable[[int], list[str]], numbers: list[int] | range) -> list[Value]:
    return [Value(n, tuple(fmt(n)), n) for n in numbers]


def halves(fmt: Callable[[float], list[str]], low: float, high: float) -> list[Value]:
    steps = int((high - low) * 2) + 1
    return [Value(low + i / 2, tuple(fmt(low + i / 2)), low + i / 2) for i in range(steps)]


def named(spec: str) -> list[Value]:
    """Values from "A|another way to write A; B; ...", ranked in the order given."""
    items = [item.strip().split("|") for item in spec.split(";")]
    return [Value(forms[0], tuple(forms), rank) for rank, forms in enumerate(items)]


def with_words(spec: str, fields: str) -> list[Value]:
    """Values that carry words of their own: "bike: bike, bikes, biking; ..." with fields "verb verbs ing"."""
    names, values = fields.split(), []
    for rank, item in enumerate(spec.split(";")):
        key, rest = item.split(":")
        extra = tuple(zip(names, (part.strip() for part in rest.split(",")), strict=True))
        values.append(Value(key.strip(), (key.strip(),), rank, extra))
    return values


def clock(start: tuple[int, int], end: tuple[int, int], step: int = 15) -> list[Value]:
    first, last = start[0] * 60 + start[1], end[0] * 60 + end[1]
    pairs = [divmod(t, 60) for t in range(first, last + 1, step)]
    return [Value((h, m), tuple(clock_forms(h, m)), h + m / 60) for h, m in pairs]


def calendar() -> list[Value]:
    return [Value((m, d), tuple(date_forms(m, d)), m * 100 + d) for m in range(1, 13) for d in range(1, 29)]


def day_sets() -> list[Value]:
    sets = [(a, b) for a in range(7) for b in range(a + 2, 7)] + [(0, 2, 4), (1, 3, 5), (0, 3, 5), (1, 3, 6)]
    return [Value(s, tuple(days_forms(s)), i) for i, s in enumerate(sets)]


def meetings() -> list[Value]:
    slots = [(d, h, m) for d in range(5) for h in range(9, 17) for m in (0, 30)]
    return [Value(s, tuple(meeting_forms(*s)), s[0] * 100 + s[1] + s[2] / 60) for s in slots]


# ---------------------------------------------------------------------------------------------- attributes


@dataclass
class Attr:
    """An attribute of a person, and how to talk about it.

    ``facts`` are statements of the attribute in the present, written for any subject: ``{I}``, ``{my}``,
    ``{me}`` stand for the person ("I"/"my"/"me", "my sister"/"my sister's", "Dana", "she"/"her") and
    ``{first|third}`` picks a verb form by person. ``{v}`` is the value as written, ``{av}`` the value with the
    attribute's article ("a", "at", "on"), ``{nv}`` with "a"/"an" only, ``{a_v}`` always with "a"/"an";
    ``{v.x}`` a word that goes with the value. ``{old}`` and the like are the replaced value. ``np`` names the
    attribute after a possessive ("my {np}"). ``say`` holds the phrasings some families need (``r:...`` for
    retractions); ``skip`` lists families that would read badly.
    """

    name: str
    kind: str  # amount, time, meeting, date, days or choice
    pools: dict[str, list[Value]]
    facts: tuple[str, ...]
    np: str | None = None
    art: str = ""
    plural: bool = False
    groups: tuple[str, ...] = ()
    multi: bool = False  # several values at once (instruments); a bare new value adds, it does not replace
    implicit: bool = True  # a bare statement of a new value reads as a change
    changeable: bool = False  # "I changed my X to V" makes sense
    others: bool = True  # facts about other people make sense
    goal: int = 0  # +1 or -1: the direction people hope to move it
    ctx: tuple[dict[str, str], ...] = ({},)
    say: dict[str, str] = field(default_factory=dict)
    skip: frozenset[str] = frozenset()

    def pool(self, ctx: dict[str, str]) -> list[Value]:
        return self.pools[ctx.get("pool", "")]


def pools(values: list[Value]) -> dict[str, list[Value]]:
    return {"": values}


MEDS = (
    {"med": "lisinopril", "pool": "lisinopril"},
    {"med": "metformin", "pool": "metformin"},
    {"med": "sertraline", "pool": "sertraline"},
    {"med": "atorvastatin", "pool": "atorvastatin"},
)
TRACKS = ({"pool": "eng"}, {"pool": "design"}, {"pool": "marketing"}, {"pool": "nursing"})
NO_WISH = frozenset({"wish", "hyp_if"})

# fmt: off
ATTRS: list[Attr] = [
    Attr(
        "rent", "amount", pools(amounts(money, range(1100, 3301, 50))),
        ("{my} rent is {v} a month", "{I} {pay|pays} {v} a month in rent", "{my} monthly rent is {v}",
         "the rent on {my} apartment is {v} a month"),
        np="rent", groups=("home",),
        say={"agent_up": "{my} landlord raised {my} rent to {v}",
             "agent_down": "{my} landlord lowered {my} rent to {v}",
             "plan_down": "negotiate {my} rent down to {v}",
             "hyp_up": "if {I} took the bigger apartment, {my} rent would be {v} a month",
             "offer": "a landlord quoted {me} {v} a month for a bigger place"},
    ),
    Attr(
        "weight", "amount", pools(amounts(pounds, range(120, 241))),
        ("{I} {weigh|weighs} {v}", "{my} weight is {v}", "{I} {am|is} {v}"),
        np="weight", groups=("body",), goal=-1,
        say={"plan_down": "get down to {v}", "hyp": "if {I} {keep|keeps} this up, {I} will weigh {v} by summer"},
    ),
    Attr(
        "dose", "amount",
        {"lisinopril": amounts(milligrams, [5, 10, 20, 40]), "metformin": amounts(milligrams, [500, 850, 1000, 1500]),
         "sertraline": amounts(milligrams, [25, 50, 100, 150, 200]),
         "atorvastatin": amounts(milligrams, [10, 20, 40, 80])},
        ("{I} {take|takes} {v} of {med}", "{my} {med} dose is {v}", "{I} {am|is} on {v} of {med}"),
        np="{med} dose", groups=("meds",), ctx=MEDS, skip=NO_WISH,
        say={"agent_up": "the doctor raised {my} {med} dose to {v}",
             "agent_down": "the doctor lowered {my} {med} dose to {v}",
             "plan": "ask {my} doctor about going to {v} of {med}",
             "r:stopped": "{I} stopped taking {med}", "r:no_longer": "{I} {am|is} no longer on {med}",
             "r:dont_anymore": "{I} {don't|doesn't} take {med} anymore",
             "r:done_with": "{I} {am|is} done with {med}, the doctor took {me} off it"},
    ),
    Attr(
        "sleep_hours", "amount", pools(halves(hours, 5, 9)),
        ("{I} {sleep|sleeps} about {v} a night", "{I} {get|gets} {v} of sleep a night",
         "{my} average sleep is {v} a night"),
        np="average sleep", groups=("sleep",), goal=1,
        say={"plan_up": "get {my} sleep up to {v} a night"},
    ),
    Attr(
        "daily_steps", "amount", pools(amounts(step_count, range(3000, 15001, 500))),
        ("{I} {walk|walks} about {v} steps a day", "{my} daily step count is around {v}",
         "{I} {average|averages} {v} steps a day"),
        np="daily step count", groups=("steps",), goal=1,
        say={"plan_up": "get up to {v} steps a day"},
    ),
    Attr(
        "shoe_size", "amount", pools(halves(shoe, 6, 13)),
        ("{I} {wear|wears} a size {v}", "{my} shoe size is {v}", "{I} {take|takes} a size {v} in shoes"),
        np="shoe size", groups=("shoes",), skip=frozenset({"by_delta", "wish", "hyp_if"}),
    ),
    Attr(
        "running_pace", "amount", pools(amounts(pace, range(420, 721, 15))),
        ("{my} running pace is {v}", "{I} usually {run|runs} at {v}", "{I} {run|runs} about {v}"),
        np="running pace", groups=("sport",), goal=-1, skip=frozenset({"by_delta"}),
        say={"plan_down": "get {my} running pace down to {v}", "agent_down": "{my} coach got {my} pace down to {v}"},
    ),
    Attr(
        "savings_goal", "amount", pools(amounts(money, range(3000, 60001, 1000))),
        ("{my} savings goal is {v}", "{I} {am|is} saving {v} for a down payment",
         "{I} {am|is} trying to save {v} for a down payment"),
        np="savings goal", groups=("savings",), changeable=True, skip=frozenset({"wish"}),
        say={"agent_up": "{my} financial planner bumped {my} savings goal to {v}",
             "plan_up": "raise {my} savings goal to {v}", "r:gave_up": "{I} gave up on {my} savings goal",
             "r:dropped": "{I} dropped {my} savings goal",
             "r:dont_anymore": "{I} {don't|doesn't} have a savings goal anymore"},
    ),
    Attr(
        "salary", "amount", pools(amounts(money, range(40000, 200001, 1000))),
        ("{my} salary is {v} a year", "{I} {make|makes} {v} a year", "{I} {earn|earns} {v} a year"),
        np="salary", groups=("job",), goal=1,
        say={"agent_up": "{my} boss bumped {my} salary to {v}",
             "agent_down": "{my} salary got cut to {v} in the restructuring", "plan_up": "ask for a raise to {v}",
             "hyp": "if {I} took the other offer, {my} salary would be {v}",
             "offer": "a recruiter offered {me} {v} a year at another company"},
    ),
    Attr(
        "coffee_per_day", "amount", pools(amounts(cups, range(1, 7))),
        ("{I} {drink|drinks} {v} of coffee a day", "{my} coffee intake is {v} a day",
         "{I} {have|has} {v} of coffee a day"),
        np="coffee intake", groups=("coffee",), goal=-1,
        say={"plan_down": "cut down to {v} of coffee a day",
             "agent_down": "{my} doctor had {me} cut down to {v} of coffee a day",
             "r:quit": "{I} quit coffee", "r:gave_up": "{I} gave up coffee",
             "r:dont_anymore": "{I} {don't|doesn't} drink coffee anymore", "r:stopped": "{I} stopped drinking coffee",
             "r:no_more_for_me": "no more coffee for {me}", "r:done_with": "{I} {am|is} done with coffee"},
    ),
    Attr(
        "commute_time", "amount", pools(amounts(minutes, [10, 15, 20, 25, 30, 35, 40, 45, 50, 60, 75, 90])),
        ("{my} commute is {v} each way", "{my} commute takes {v}", "it takes {me} {v} to get to work"),
        np="commute", groups=("commute",), goal=-1,
        say={"agent_down": "the new bus line cut {my} commute to {v}",
             "agent_up": "the roadworks stretched {my} commute to {v}",
             "hyp_down": "if {I} moved closer to the office, {my} commute would be {v}"},
    ),
    Attr(
        "thermostat", "amount", pools(amounts(degrees, range(62, 77))),
        ("{I} {keep|keeps} the thermostat at {v}", "{my} thermostat is set to {v}", "{my} thermostat setting is {v}"),
        np="thermostat setting", groups=("thermostat",), changeable=True,
        say={"plan": "set the thermostat to {v}"},
    ),
    Attr(
        "bedtime", "time", pools(clock((21, 0), (23, 45))),
        ("{I} {go|goes} to bed at {v}", "{my} bedtime is {v}", "{I} usually {turn|turns} in at {v}"),
        np="bedtime", groups=("bedtime",), changeable=True,
        say={"plan": "move {my} bedtime to {v}"},
    ),
    Attr(
        "wake_time", "time", pools(clock((5, 0), (8, 30))),
        ("{I} {get|gets} up at {v}", "{my} alarm is set for {v}", "{I} {wake|wakes} up at {v} on weekdays"),
        np="wake-up time", groups=("wake",), changeable=True,
        say={"agent": "{my} new shift means {I} {get|gets} up at {v}", "plan": "move {my} wake-up time to {v}"},
    ),
    Attr(
        "class_time", "time", pools(clock((6, 0), (8, 0)) + clock((17, 0), (20, 0))),
        ("{my} {cls} class is at {v}", "{I} {have|has} {cls} class at {v}", "{I} {go|goes} to {cls} at {v}"),
        np="{cls} class", art="at", groups=("class",), implicit=False, changeable=True,
        ctx=({"cls": "yoga"}, {"cls": "spin"}, {"cls": "pottery"}, {"cls": "salsa"}, {"cls": "Pilates"}),
        skip=frozenset({"new_np"}),
        say={"agent": "the studio moved {my} {cls} class to {v}", "plan": "move {my} {cls} class to {v}",
             "r:dropped": "{I} dropped {my} {cls} class", "r:quit": "{I} quit {cls}",
             "r:cancelled": "{my} {cls} class got cancelled for good", "r:stopped": "{I} stopped going to {cls}",
             "r:dont_anymore": "{I} {don't|doesn't} go to {cls} anymore",
             "r:ended": "{my} {cls} class ended for good when the studio closed"},
    ),
    Attr(
        "team_meeting", "meeting", pools(meetings()),
        ("{my} weekly team meeting is {v}", "{my} team meets {v}", "{my} team's weekly sync is {v}"),
        np="weekly team meeting", groups=("job",), others=False,
        skip=frozenset({"new_np", "switched_from_to", "wish", "hyp_if", "used_to_be", "back_in_year", "long_ago"}),
        say={"agent": "{my} manager moved {my} weekly team meeting to {v}",
             "r:cancelled": "{my} weekly team meeting got cancelled for good",
             "r:ended": "{my} team scrapped the weekly meeting",
             "r:no_more_for_me": "no more weekly team meeting for {me}",
             "r:dont_anymore": "{my} team doesn't have a weekly meeting anymore"},
    ),
    Attr(
        "appointment_date", "date", pools(calendar()),
        ("{my} next {appt} is on {v}", "{I} {have|has} {a_appt} on {v}", "{my} {appt} is booked for {v}"),
        np="next {appt}", art="on", groups=("dentist", "hair", "eyes"), implicit=False, changeable=True,
        ctx=({"appt": "dentist appointment", "a_appt": "a dentist appointment", "office": "dentist's office"},
             {"appt": "eye exam", "a_appt": "an eye exam", "office": "optician"},
             {"appt": "haircut appointment", "a_appt": "a haircut appointment", "office": "salon"}),
        skip=frozenset({"new_np", "switched_from_to"}),
        say={"agent": "the {office} moved {my} {appt} to {v}", "plan": "move {my} {appt} to {v}"},
    ),
    Attr(
        "lease_end", "date", pools(calendar()),
        ("{my} lease ends on {v}", "{my} lease is up on {v}", "{my} lease runs until {v}"),
        np="lease end date", groups=("home",), skip=frozenset({"new_np", "switched_from_to"}),
        say={"agent_up": "{my} landlord extended {my} lease to {v}", "plan_up": "extend {my} lease to {v}"},
    ),
    Attr(
        "gym_days", "days", pools(day_sets()),
        ("{I} {go|goes} to the gym on {v}", "{my} gym days are {v}", "{I} {hit|hits} the gym on {v}"),
        np="gym days", plural=True, groups=("gym",), changeable=True,
        say={"agent": "{my} trainer moved {my} gym days to {v}", "plan": "switch {my} gym days to {v}",
             "r:quit": "{I} quit the gym", "r:cancelled": "{I} cancelled {my} gym membership",
             "r:dont_anymore": "{I} {don't|doesn't} go to the gym anymore", "r:no_more_for_me": "no more gym for {me}",
             "r:stopped": "{I} stopped going to the gym", "r:gave_up": "{I} gave up the gym"},
    ),
    Attr(
        "phone", "choice",
        pools(named("iPhone 12; iPhone 13; Galaxy S22|Samsung Galaxy S22; iPhone 14; Pixel 7|Google Pixel 7; "
                    "Galaxy S23|Samsung Galaxy S23; iPhone 15; Pixel 8|Google Pixel 8; Galaxy S24|Samsung Galaxy S24; "
                    "Pixel 9|Google Pixel 9; iPhone 16")),
        ("{my} phone is {av}", "{I} {use|uses} {av}", "{I} {am|is} on {av}"),
        np="phone", art="a", groups=("phone",),
        say={"switch": "{I} switched from {nold} to {nv}", "plan": "get {nv}",
             "offer": "the phone store offered {me} {nv} at half price"},
    ),
    Attr(
        "laptop", "choice",
        pools(named("Dell XPS 13; ThinkPad T14|Lenovo ThinkPad T14; Surface Laptop 5|Microsoft Surface Laptop 5; "
                    "Framework 13; MacBook Air; MacBook Pro")),
        ("{my} laptop is {av}", "{I} {work|works} on {av}", "{I} {use|uses} {av} as {my} laptop"),
        np="laptop", art="a", groups=("laptop",),
        say={"switch": "{I} switched from {nold} to {nv}", "plan": "buy {nv}",
             "r:got_rid_of": "{I} sold {my} {old} and {don't|doesn't} have a laptop now"},
    ),
    Attr(
        "car", "choice",
        pools(named("Ford Focus; Honda Civic|Civic; Toyota Corolla|Corolla; Volkswagen Golf|VW Golf; Mazda CX-5; "
                    "Subaru Outback; Toyota RAV4|RAV4; Kia Niro; Hyundai Ioniq 5; Tesla Model 3")),
        ("{I} {drive|drives} {av}", "{my} car is {av}", "{I} {have|has} {av}"),
        np="car", art="a", groups=("car",), implicit=False,
        say={"switch": "{I} traded in {my} {old} for {nv}", "plan": "buy {nv}",
             "hyp": "if {I} had the money, {I} would buy {nv}",
             "offer": "the dealer offered {me} a good deal on {nv}", "r:got_rid_of": "{I} sold {my} {old}",
             "r:dont_anymore": "{I} {don't|doesn't} have a car anymore",
             "r:no_longer": "{I} no longer {own|owns} a car", "r:gave_up": "{I} gave up {my} car"},
    ),
    Attr(
        "commute_mode", "choice",
        pools(with_words(
            "bike: bike, bikes, biking, by bike, biked; train: take the train, takes the train, taking the train, "
            "by train, took the train; drive: drive, drives, driving, by car, drove; bus: take the bus, takes the bus, "
            "taking the bus, by bus, took the bus; walk: walk, walks, walking, on foot, walked; subway: take the "
            "subway, takes the subway, taking the subway, by subway, took the subway",
            "verb verbs ing by past",
        )),
        ("{I} {v.verb|v.verbs} to work", "{I} {commute|commutes} {v.by}", "{I} usually {get|gets} to work {v.by}"),
        groups=("commute", "sport"),
        say={"switch": "{I} switched from {old.ing} to {v.ing} to get to work", "nomore": "{old.ing}",
             "oldref": "{old.ing}", "used_to": "{I} used to {old.verb} to work, but now {I} {v.verb|v.verbs}",
             "still": "{I} still {v.verb|v.verbs} to work", "plan": "commute {v.by}",
             "hyp": "if the weather were nicer, {I} would {v.verb} to work", "past": "{I} {v.past} to work",
             "used": "{I} used to {v.verb} to work",
             "r:dont_anymore": "{I} {don't|doesn't} commute anymore, {I} {work|works} from home now",
             "r:no_longer": "{I} no longer {commute|commutes}, {I} went fully remote",
             "r:no_more_for_me": "no more commuting for {me}, {I} went fully remote"},
    ),
    Attr(
        "internet_provider", "choice",
        pools(named("Comcast; Spectrum; Google Fiber; Sonic; Frontier; Optimum; Starlink")),
        ("{my} internet provider is {v}", "{I} {have|has} {v} for internet", "{my} home internet is through {v}"),
        np="internet provider", groups=("internet",), changeable=True,
        say={"switch": "{I} switched internet providers from {old} to {v}",
             "agent": "{my} building switched everyone to {v} for internet", "plan": "switch {my} internet to {v}",
             "offer": "{v} sent {me} a promo for half-price internet",
             "hyp": "if {I} switched to {v}, {I} would save twenty dollars a month"},
    ),
    Attr(
        "phone_carrier", "choice",
        pools(named("Verizon; T-Mobile; AT&T; Mint Mobile; Visible; Cricket Wireless|Cricket")),
        ("{my} phone carrier is {v}", "{I} {am|is} on {v} for {my} phone", "{my} cell plan is with {v}"),
        np="phone carrier", groups=("phone",), changeable=True, skip=frozenset({"wish"}),
        say={"switch": "{I} switched carriers from {old} to {v}", "plan": "switch {my} phone plan to {v}",
             "offer": "{v} offered {me} a free line"},
    ),
    Attr(
        "bank", "choice",
        pools(named("Chase|JPMorgan Chase; Bank of America|BofA; Wells Fargo; Ally|Ally Bank; Capital One; "
                    "Citibank|Citi; Charles Schwab|Schwab")),
        ("{my} main bank is {v}", "{I} mainly {bank|banks} with {v}", "{I} {keep|keeps} most of {my} money at {v}"),
        np="main bank", groups=("bank",), changeable=True, skip=frozenset({"wish"}),
        say={"switch": "{I} moved {my} money from {old} to {v}", "plan": "move {my} money to {v}",
             "offer": "{v} offered {me} 300 dollars to open an account"},
    ),
    Attr(
        "health_insurer", "choice",
        pools(named("Aetna; Cigna; Kaiser Permanente|Kaiser; Blue Cross Blue Shield|Blue Cross; UnitedHealthcare; "
                    "Humana; Oscar Health|Oscar")),
        ("{my} health insurance is with {v}", "{I} {am|is} insured through {v}", "{my} health insurer is {v}"),
        np="health insurer", groups=("insurance",), changeable=True, skip=frozenset({"wish"}),
        say={"switch": "{I} switched {my} health insurance from {old} to {v}",
             "agent": "{my} employer moved everyone to {v} for health insurance",
             "plan": "switch {my} health insurance to {v}", "offer": "{v} sent {me} a quote for a cheaper plan",
             "r:dont_anymore": "{I} {don't|doesn't} have health insurance anymore",
             "r:cancelled": "{I} cancelled {my} {old} plan"},
    ),
    Attr(
        "electricity_supplier", "choice",
        pools(named("Octopus Energy|Octopus; British Gas; EDF; E.ON; OVO Energy|OVO; Good Energy")),
        ("{my} electricity supplier is {v}", "{I} {get|gets} {my} electricity from {v}", "{my} power is with {v}"),
        np="electricity supplier", groups=("energy",), changeable=True, skip=frozenset({"wish"}),
        say={"switch": "{I} switched {my} electricity from {old} to {v}",
             "agent": "{my} old supplier went bust, so {my} electricity is with {v} now",
             "plan": "switch {my} electricity to {v}", "offer": "{v} quoted {me} a cheaper rate"},
    ),
    Attr(
        "airline", "choice",
        pools(named("Delta; United Airlines|United; Southwest; JetBlue; Alaska Airlines|Alaska; "
                    "American Airlines|American")),
        ("{my} usual airline is {v}", "{I} usually {fly|flies} {v}", "{I} mostly {fly|flies} with {v}"),
        np="usual airline", groups=("airline",), changeable=True,
        say={"switch": "{I} switched {my} usual airline from {old} to {v}", "plan": "switch to {v} for flights",
             "offer": "{v} offered {me} a status match"},
    ),
    Attr(
        "dentist", "choice",
        pools(named("Dr. Ravi Shah|Dr. Shah; Dr. Helen Cho|Dr. Cho; Dr. Paolo Rossi|Dr. Rossi; Dr. Grace Kim|Dr. Kim; "
                    "Dr. Paul Novak|Dr. Novak; Dr. Amara Eze|Dr. Eze")),
        ("{my} dentist is {v}", "{I} {see|sees} {v} for {my} teeth", "{v} is {my} dentist"),
        np="dentist", groups=("dentist",), changeable=True, skip=NO_WISH,
        say={"switch": "{I} switched dentists from {old} to {v}",
             "agent": "{my} old dentist retired, so {I} {see|sees} {v} now", "plan": "switch to {v} for {my} teeth"},
    ),
    Attr(
        "doctor", "choice",
        pools(named("Dr. Emily Carter|Dr. Carter; Dr. Samuel Osei|Dr. Osei; Dr. Ana Lopez|Dr. Lopez; "
                    "Dr. Ian Brooks|Dr. Brooks; Dr. Mei Tan|Dr. Tan; Dr. Farid Nasser|Dr. Nasser")),
        ("{my} family doctor is {v}", "{I} {see|sees} {v} for checkups", "{my} GP is {v}"),
        np="family doctor", groups=("doctor",), changeable=True, skip=NO_WISH,
        say={"switch": "{I} switched doctors from {old} to {v}",
             "agent": "{my} old doctor retired, so {my} family doctor is {v} now",
             "plan": "switch to {v} as {my} family doctor"},
    ),
    Attr(
        "therapist", "choice",
        pools(named("Dr. Lena Hoffman|Dr. Hoffman; Dr. Ruth Adler|Dr. Adler; Dr. Kevin Park|Dr. Park; "
                    "Dr. Sofia Marin|Dr. Marin; Dr. James Whitfield|Dr. Whitfield")),
        ("{my} therapist is {v}", "{I} {see|sees} {v} for therapy", "{I} {am|is} in therapy with {v}"),
        np="therapist", groups=("therapy",), changeable=True, skip=NO_WISH,
        say={"switch": "{I} switched therapists from {old} to {v}",
             "agent": "{my} old therapist moved away, so {I} {see|sees} {v} now", "plan": "switch to {v} for therapy",
             "r:stopped": "{I} stopped seeing {old}", "r:no_longer": "{I} {am|is} no longer in therapy with {old}",
             "r:dont_anymore": "{I} {don't|doesn't} see {old} anymore",
             "r:ended": "{my} therapy with {old} ended last month", "r:done_with": "{I} {am|is} done with therapy"},
    ),
    Attr(
        "hair_salon", "choice",
        pools(named("Shear Genius; The Cutting Room; Salon Verde; Studio Nine; Mane Street; Blade and Bloom")),
        ("{I} {get|gets} {my} hair cut at {v}", "{my} hair salon is {v}", "{my} go-to salon is {v}"),
        np="hair salon", groups=("hair",), changeable=True, skip=NO_WISH | {"no_more"},
        say={"switch": "{I} switched salons from {old} to {v}",
             "agent": "{my} old salon closed, so {I} {get|gets} {my} hair cut at {v} now",
             "plan": "try {v} for {my} next haircut", "r:stopped": "{I} stopped going to {old}"},
    ),
    Attr(
        "team_lead", "choice", pools(named("Priya; Marcus; Elena; Dev; Hiroshi; Fatima; Grant; Leah")),
        ("{my} team lead is {v}", "{I} {report|reports} to {v}", "{v} is {my} team lead"),
        np="team lead", groups=("job",), skip=frozenset({"wish"}),
        say={"switch": "{my} team lead changed from {old} to {v}",
             "agent": "{my} manager made {v} {my} new team lead",
             "hyp": "if the reorg goes through, {my} team lead will be {v}"},
    ),
    Attr(
        "landlord", "choice",
        pools(named("Mr. Alvarez; Mrs. Okafor; Greenway Properties; Brightside Rentals; Mr. Lindqvist; "
                    "Harbor Point Management")),
        ("{my} landlord is {v}", "{I} {rent|rents} from {v}", "{v} is {my} landlord"),
        np="landlord", groups=("home",), skip=NO_WISH,
        say={"switch": "{my} landlord changed from {old} to {v}",
             "agent": "the building was sold, so {my} landlord is {v} now",
             "r:dont_anymore": "{I} {don't|doesn't} have a landlord anymore, {I} bought a place",
             "r:no_longer": "{I} {am|is} no longer renting from {old}"},
    ),
    Attr(
        "employer", "choice", pools(named("Stripe; Shopify; Deloitte; Pfizer; Spotify; Airbnb; Target; Nike; IKEA")),
        ("{I} {work|works} at {v}", "{I} {am|is} employed by {v}", "{my} employer is {v}"),
        np="employer", groups=("job",),
        say={"switch": "{I} left {old} for a job at {v}", "plan": "apply for a job at {v}",
             "hyp": "if the interview goes well, {I} will be working at {v}",
             "offer": "{v} reached out to {me} about a job", "pos": "{I} {am|is} {a_v} employee",
             "r:quit": "{I} quit {my} job at {old}", "r:no_longer": "{I} no longer {work|works} at {old}",
             "r:dont_anymore": "{I} {don't|doesn't} work at {old} anymore",
             "r:ended": "{my} last day at {old} was Friday"},
    ),
    Attr(
        "job_title", "choice",
        {"eng": named("junior developer; software engineer; senior software engineer; staff engineer; "
                      "principal engineer"),
         "design": named("junior designer; product designer; senior product designer; design lead; design director"),
         "marketing": named("marketing coordinator; marketing manager; senior marketing manager; marketing director"),
         "nursing": named("staff nurse; charge nurse; nurse manager; director of nursing")},
        ("{I} {work|works} as {a_v}", "{my} job title is {v}", "{I} {am|is} {a_v}"),
        np="job title", groups=("job",), ctx=TRACKS, skip=frozenset({"no_more"}),
        say={"agent_up": "{I} got promoted to {v}", "switch": "{I} went from {old} to {v}",
             "plan": "apply for {a_v} role"},
    ),
    Attr(
        "kids_school", "choice",
        pools(named("Lincoln Elementary; Oak Hill Academy; Riverside Middle School; Maple Grove Elementary; "
                    "Westview School; St. Anne's Primary")),
        ("{my} {kid} goes to {v}", "{my} {kid} attends {v}", "{my} {kid}'s school is {v}"),
        np="{kid}'s school", groups=("kid",), ctx=({"kid": "son"}, {"kid": "daughter"}),
        skip=frozenset({"new_np", "wish"}),
        say={"switch": "{my} {kid} switched schools from {old} to {v}", "agent": "we moved {my} {kid} to {v}",
             "plan": "move {my} {kid} to {v}", "hyp": "if {I} moved, {my} {kid} would go to {v}"},
    ),
    Attr(
        "coffee_order", "choice",
        pools(named("flat white; oat milk latte; cortado; black americano; cappuccino; iced caramel macchiato; "
                    "mocha; double espresso")),
        ("{my} usual coffee order is {av}", "{I} always {get|gets} {av}", "{I} usually {order|orders} {av}"),
        np="usual coffee order", art="a", groups=("coffee",), changeable=True,
        say={"switch": "{I} switched from {nold} to {nv}",
             "agent": "the barista talked {me} into {nv}, and now it is {my} usual", "plan": "try {nv} instead"},
    ),
    Attr(
        "city", "choice",
        pools(named("Denver; Austin; Chicago; Seattle; Boston; Portland; New York City|New York|NYC; "
                    "San Francisco|SF; Los Angeles|LA; Philadelphia|Philly; Toronto; London")),
        ("{I} {live|lives} in {v}", "{I} {am|is} based in {v}", "{my} home is in {v}"),
        groups=("city",),
        say={"agent": "{my} company relocated {me} to {v}", "switch": "{I} moved from {old} to {v}",
             "used_to": "{I} used to live in {old}, but now {I} {live|lives} in {v}", "oldref": "{old}",
             "still": "{I} still {live|lives} in {v}", "plan": "move to {v}",
             "hyp": "if {I} took the transfer, {I} would be living in {v}",
             "offer": "{my} company offered {me} a transfer to {v}", "past": "{I} lived in {v}",
             "used": "{I} used to live in {v}"},
    ),
    Attr(
        "hair_colour", "choice", pools(named("red; blonde; brown; black; purple; pink; blue; silver")),
        ("{my} hair is {v}", "{I} {have|has} {v} hair", "{my} hair colour is {v}"),
        np="hair colour", groups=("hair",), changeable=True,
        say={"switch": "{I} dyed {my} hair from {old} to {v}", "agent": "{my} hairdresser talked {me} into going {v}",
             "plan": "dye {my} hair {v}"},
    ),
    Attr(
        "diet", "choice",
        pools(with_words("vegan: a vegan; vegetarian: a vegetarian; pescatarian: a pescatarian; keto: on keto; "
                         "paleo: on paleo", "noun")),
        ("{I} {am|is} {v}", "{I} {eat|eats} {v}", "{I} {follow|follows} {a_v} diet"),
        np="diet", groups=("diet",), skip=NO_WISH | {"inverted"},
        say={"switch": "{I} went from {old} to {v}", "agent": "{my} doctor put {me} on {a_v} diet", "plan": "go {v}",
             "pos": "{I} {am|is} {v.noun}", "nomore": "{old} diet",
             "r:no_longer": "{I} {am|is} no longer {old}", "r:dont_anymore": "{I} {am|is} not {old} anymore",
             "r:gave_up": "{I} gave up being {old}", "r:stopped": "{I} stopped following {a_old} diet",
             "r:no_more_for_me": "no more {old} diet for {me}", "r:done_with": "{I} {am|is} done with the {old} diet"},
    ),
    Attr(
        "partner", "choice", pools(named("Sam; Alex; Jordan; Taylor; Morgan; Riley; Casey; Jamie")),
        ("{my} partner is {v}", "{I} {am|is} dating {v}", "{my} partner's name is {v}"),
        np="partner", groups=("partner",),
        skip=frozenset({"switched_from_to", "no_more", "used_to", "instead_of", "terse", "went_from_to", "wish",
                        "hyp_if", "is_now"}),
        say={"r:ended": "{old} and {I} broke up", "r:no_longer": "{I} {am|is} no longer with {old}",
             "r:dont_anymore": "{I} {am|is} not seeing {old} anymore", "r:stopped": "{I} stopped seeing {old}"},
    ),
    Attr(
        "language", "choice",
        pools(named("Spanish; Japanese; French; German; Korean; Italian; Portuguese; Mandarin")),
        ("{I} {am|is} learning {v}", "{I} {study|studies} {v}", "{I} {am|is} taking {v} lessons"),
        groups=("language",), multi=True,
        say={"switch": "{I} switched from learning {old} to learning {v}",
             "used_to": "{I} used to study {old}, but now {I} {am|is} learning {v}", "oldref": "{old}",
             "still": "{I} {am|is} still learning {v}", "past": "{I} studied {v}", "used": "{I} used to study {v}",
             "also": "{I} {am|is} also learning {v}", "as_well": "{I} started learning {v} too", "plan": "pick up {v}",
             "r:stopped": "{I} stopped learning {old}", "r:gave_up": "{I} gave up on {old}",
             "r:no_longer": "{I} {am|is} no longer learning {old}",
             "r:dont_anymore": "{I} {am|is} not learning {old} anymore", "r:dropped": "{I} dropped {old}",
             "r:quit": "{I} quit {old}"},
    ),
    Attr(
        "instrument", "choice",
        pools(with_words("guitar: a guitarist; piano: a pianist; cello: a cellist; violin: a violinist; "
                         "drums: a drummer; saxophone: a saxophonist; bass: a bassist; ukulele: a ukulele player",
                         "agent")),
        ("{I} {play|plays} the {v}", "{I} {play|plays} {v}"),
        groups=("instrument",), multi=True,
        say={"switch": "{I} switched from the {old} to the {v}",
             "used_to": "{I} used to play the {old}, but now {I} {play|plays} the {v}", "oldref": "the {old}",
             "still": "{I} still {play|plays} the {v}", "past": "{I} played the {v}",
             "used": "{I} used to play the {v}",
             "also": "{I} also {play|plays} the {v}", "as_well": "{I} picked up the {v} as well",
             "plan": "take up the {v}", "pos": "{I} {am|is} {v.agent}",
             "r:stopped": "{I} stopped playing the {old}", "r:gave_up": "{I} gave up the {old}",
             "r:dont_anymore": "{I} {don't|doesn't} play the {old} anymore",
             "r:no_longer": "{I} {am|is} no longer playing the {old}", "r:quit": "{I} quit the {old}",
             "r:got_rid_of": "{I} sold {my} {old} and {don't|doesn't} play anymore"},
    ),
    Attr(
        "streaming_service", "choice",
        pools(named("Netflix; Hulu; Disney+; Apple TV+; Paramount+; Peacock; Prime Video")),
        ("{I} {subscribe|subscribes} to {v}", "{I} {have|has} {v}", "{I} {pay|pays} for {v}"),
        groups=("tv",), multi=True,
        say={"switch": "{I} switched from {old} to {v}",
             "used_to": "{I} used to have {old}, but now {I} {have|has} {v}", "oldref": "{old}",
             "still": "{I} still {have|has} {v}", "past": "{I} had {v}", "used": "{I} used to have {v}",
             "also": "{I} also {have|has} {v}", "as_well": "{I} signed up for {v} too", "plan": "sign up for {v}",
             "offer": "{v} offered {me} three months free",
             "r:cancelled": "{I} cancelled {my} {old} subscription", "r:dropped": "{I} dropped {old}",
             "r:dont_anymore": "{I} {don't|doesn't} have {old} anymore",
             "r:no_longer": "{I} {am|is} no longer subscribed to {old}", "r:no_more_for_me": "no more {old} for {me}",
             "r:got_rid_of": "{I} got rid of {old}, too expensive"},
    ),
    Attr(
        "sport", "choice",
        pools(with_words("run: run, runs, running, a runner; swim: swim, swims, swimming, a swimmer; "
                         "climb: climb, climbs, climbing, a climber; cycle: cycle, cycles, cycling, a cyclist; "
                         "row: row, rows, rowing, a rower; box: box, boxes, boxing, a boxer", "verb verbs ing agent")),
        ("{I} {v.verb|v.verbs} regularly", "{I} {go|goes} {v.ing} a few times a week",
         "{I} {do|does} a lot of {v.ing}"),
        groups=("sport",), multi=True,
        say={"switch": "{I} switched from {old.ing} to {v.ing}",
             "used_to": "{I} used to {old.verb}, but now {I} {v.verb|v.verbs}", "oldref": "{old.ing}",
             "nomore": "{old.ing}", "still": "{I} still {v.verb|v.verbs} regularly", "past": "{I} did a lot of {v.ing}",
             "used": "{I} used to {v.verb} a lot", "also": "{I} also {v.verb|v.verbs}",
             "as_well": "{I} took up {v.ing} as well", "plan": "take up {v.ing}", "pos": "{I} {am|is} {v.agent}",
             "r:stopped": "{I} stopped {old.ing}", "r:dont_anymore": "{I} {don't|doesn't} {old.verb} anymore",
             "r:gave_up": "{I} gave up {old.ing}", "r:quit": "{I} quit {old.ing}",
             "r:no_longer": "{I} {am|is} no longer {old.agent}"},
    ),
]
# fmt: on
# attributes whose facts name another person (a pronoun in the candidate could point at them)
PERSON_VALUED = frozenset({"kids_school", "partner", "team_lead", "landlord", "dentist", "doctor", "therapist"})

# ---------------------------------------------------------------------------------------------- people and text


@dataclass(frozen=True)
class Who:
    """Whom a statement is about: the words at the first mention and after it, and whether verbs take -s."""

    owner: str
    first: tuple[str, str, str]  # subject, possessive, object
    later: tuple[str, str, str]
    third: bool = True


PRONOUNS = {"she": ("she", "her", "her"), "he": ("he", "his", "him")}
USER = Who("user", ("I", "my", "me"), ("I", "my", "me"), third=False)
RELATIVES = (("sister", "she"), ("brother", "he"), ("mom", "she"), ("dad", "he"), ("aunt", "she"), ("uncle", "he"))
SIBLING_NAMES = {
    "sister": ("Maya", "Lucia", "Aisha", "Yuki", "Carmen"),
    "brother": ("Tom", "Ben", "Raj", "Pete", "Luis"),
}
USER_NAMES = (
    ("Dana", "she"),
    ("Kofi", "he"),
    ("Ingrid", "she"),
    ("Mateo", "he"),
    ("Noor", "she"),
    ("Felix", "he"),
    ("Hana", "she"),
    ("Rowan", "he"),
    ("Tessa", "she"),
    ("Wes", "he"),
)
OTHER_NAMES = (
    ("Maya", "she"),
    ("Tom", "he"),
    ("Lucia", "she"),
    ("Ben", "he"),
    ("Aisha", "she"),
    ("Raj", "he"),
    ("Yuki", "she"),
    ("Pete", "he"),
    ("Carmen", "she"),
    ("Luis", "he"),
)


def relatives(attr: Attr) -> list[tuple[str, str]]:
    """The relatives whose fact of ``attr`` reads naturally ("my mom's son" would be the user's brother)."""
    parents = attr.name in ("kids_school", "partner")
    return [(rel, gender) for rel, gender in RELATIVES if not (parents and rel in ("mom", "dad"))]


def person(owner: str, noun: str, gender: str) -> Who:
    return Who(owner, (noun, f"{noun}'s", noun), PRONOUNS[gender])


def pronoun(owner: str, gender: str) -> Who:
    return Who(owner, PRONOUNS[gender], PRONOUNS[gender])


SLOT = re.compile(r"\{([^{}]+)\}")
ROLES = {"I": 0, "my": 1, "me": 2}
CONTRACTIONS = (
    ("I am", "I'm"),
    ("it is", "it's"),
    ("he is", "he's"),
    ("she is", "she's"),
    ("they are", "they're"),
    ("do not", "don't"),
    ("does not", "doesn't"),
    ("is not", "isn't"),
    ("I would", "I'd"),
    ("I will", "I'll"),
    ("he will", "he'll"),
    ("she will", "she'll"),
    ("he would", "he'd"),
    ("she would", "she'd"),
)


def render(template: str, who: Who, slots: dict[str, str]) -> str:
    """Fill a template: the person's words (a full mention first, a pronoun after), verb forms, values."""
    seen = False

    def fill(match: re.Match[str]) -> str:
        nonlocal seen
        key = match.group(1)
        if key in ROLES:
            text = (who.later if seen else who.first)[ROLES[key]]
            seen = True
            return text
        if "|" in key:
            first, third = key.split("|")
            key = third if who.third else first
            return slots.get(key, key)
        return slots[key]

    return SLOT.sub(fill, template)


def contract(text: str, short: bool) -> str:
    for long, brief in CONTRACTIONS:
        text = re.sub(rf"\b{long}\b", brief, text) if short else re.sub(rf"\b{brief}(?!\w)", long, text)
    return text


def finish(text: str, mode: str, short: bool) -> str:
    """Style a rendered statement: "plain" as written, "cap" as a sentence, "chat" lower case."""
    text = contract(text, short or mode == "chat")
    if mode == "chat":
        return text.lower()
    if mode == "cap":
        text = text[0].upper() + text[1:]
        text += "" if text[-1] in ".?!" else "."
    return text


def article(text: str) -> str:
    return "an" if text[0].lower() in "aeiou" else "a"


def gerund(phrase: str) -> str:
    verb, _, rest = phrase.partition(" ")
    irregular = {"get": "getting", "set": "setting", "cut": "cutting", "dye": "dyeing", "buy": "buying"}
    ing = irregular.get(verb) or (verb[:-1] + "ing" if verb.endswith("e") else verb + "ing")
    return f"{ing} {rest}".strip()


def value_slots(name: str, attr: Attr, value: Value, form: int) -> dict[str, str]:
    text = value.forms[form]
    indefinite = f"{article(text)} {text}"
    with_article = indefinite if attr.art == "a" else f"{attr.art} {text}" if attr.art else text
    slots = {
        name: text,
        f"a{name}": with_article,
        f"n{name}": indefinite if attr.art == "a" else text,
        f"a_{name}": indefinite,
    }
    slots.update({f"{name}.{k}": v for k, v in value.extra})
    return slots


def attr_slots(attr: Attr, ctx: dict[str, str]) -> dict[str, str]:
    slots = {k: v for k, v in ctx.items() if k != "pool"}
    if attr.np:
        slots["np"] = SLOT.sub(lambda m: ctx[m.group(1)], attr.np)
    plural = {"BE": "are", "WAS": "were", "IT": "they", "HASNT": "haven't"}
    slots |= plural if attr.plural else {"BE": "is", "WAS": "was", "IT": "it", "HASNT": "hasn't"}
    return slots


# ---------------------------------------------------------------------------------------------- drafting cases


@dataclass(frozen=True)
class Entry:
    owner: str
    attr: str
    key: object
    text: str


@dataclass
class Draft:
    """What a family decides: the facts a case must hold, the candidate, and which held fact it names."""

    held: list[Entry]
    candidate: str
    target: Entry | None = None
    user: str | None = None
    people: bool = True  # may the other existing facts be about other people?
    owner: str = "user"  # whom the candidate is about
    avoid: tuple[object, ...] = ()  # values another person's fact of the same attribute must not take


class Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    # --- picking

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, options: list[str] | tuple[str, ...]) -> str:
        return self.rng.choice(list(options))

    def ctx(self, attr: Attr) -> dict[str, str]:
        return self.rng.choice(list(attr.ctx))

    def value(self, attr: Attr, ctx: dict[str, str], avoid: tuple[object, ...] = ()) -> Value | None:
        pool = [v for v in attr.pool(ctx) if v.key not in avoid]
        return self.rng.choice(pool) if pool else None

    def other(
        self, attr: Attr, ctx: dict[str, str], ref: Value, direction: int = 0, avoid: tuple[object, ...] = ()
    ) -> Value | None:
        """Another value than ``ref``: above it (+1), below it (-1) or either, and near it for amounts."""
        pool = sorted(attr.pool(ctx), key=lambda v: v.rank)
        at = pool.index(ref)
        near = pool[max(0, at - 6) : at + 7] if attr.kind == "amount" else pool
        options = [v for v in near if v.key != ref.key and v.key not in avoid and (v.rank - ref.rank) * direction >= 0]
        return self.rng.choice(options) if options else None

    def form(self, value: Value) -> int:
        return 0 if self.chance(0.5) else self.rng.randrange(len(value.forms))

    def mode(self) -> str:
        return "cap" if self.chance(0.35) else "plain"

    # --- writing

    def say(
        self,
        template: str,
        attr: Attr,
        who: Who,
        ctx: dict[str, str],
        *,
        new: Value | None = None,
        old: Value | None = None,
        nf: int | None = None,
        of: int | None = None,
        mode: str | None = None,
        short: bool | None = None,
        extra: dict[str, str] | None = None,
    ) -> str:
        slots = attr_slots(attr, ctx)
        if new is not None:
            slots |= value_slots("v", attr, new, self.form(new) if nf is None else nf)
        if old is not None:
            slots |= value_slots("old", attr, old, self.form(old) if of is None else of)
        slots |= extra or {}
        text = render(template, who, slots)
        return finish(text, mode or self.mode(), self.chance(0.5) if short is None else short)

    def fact(self, attr: Attr, who: Who, ctx: dict[str, str], value: Value, **kw: object) -> str:
        template = str(kw.pop("template", None) or self.pick(attr.facts))
        return self.say(template, attr, who, ctx, new=value, **kw)  # type: ignore[arg-type]

    def entry(self, attr: Attr, who: Who, ctx: dict[str, str], value: Value, **kw: object) -> Entry:
        kw.setdefault("mode", "cap" if self.chance(0.25) else "plain")
        return Entry(who.owner, attr.name, value.key, self.fact(attr, who, ctx, value, **kw))

    def relative(self, attr: Attr) -> Who:
        rel, gender = self.rng.choice(relatives(attr))
        return person(rel, f"my {rel}", gender)

    # --- common shapes

    def change(
        self,
        attr: Attr,
        template: str | Callable[[Value, Value], str],
        *,
        direction: int = 0,
        mode: str | None = None,
        who: Who = USER,
        held_who: Who | None = None,
    ) -> Draft | None:
        """``who``'s held fact with an old value, and a candidate stating a new one (or the old one's end)."""
        ctx = self.ctx(attr)
        old = self.value(attr, ctx)
        new = old and self.other(attr, ctx, old, direction)
        if old is None or new is None:
            return None
        held = [self.entry(attr, held_who or who, ctx, old)]
        held += self.second_value(attr, ctx, (old.key, new.key))
        text = template(old, new) if callable(template) else template
        candidate = self.say(text, attr, who, ctx, new=new, old=old, mode=mode)
        return Draft(held, candidate, held[0], owner=who.owner, avoid=(old.key, new.key))

    def second_value(self, attr: Attr, ctx: dict[str, str], avoid: tuple[object, ...]) -> list[Entry]:
        """For attributes with several values at once, sometimes another held value of the same person."""
        if not attr.multi or self.chance(0.65):
            return []
        value = self.value(attr, ctx, avoid)
        return [self.entry(attr, USER, ctx, value)] if value else []

    def repeat(
        self, attr: Attr, candidate: Callable[[dict[str, str], Value, str], str | None], who: Who = USER
    ) -> Draft | None:
        """``who``'s held fact, and a candidate saying it again (built from the held template)."""
        ctx = self.ctx(attr)
        value = self.value(attr, ctx)
        if value is None:
            return None
        template = self.pick(attr.facts)
        text = candidate(ctx, value, template)
        if text is None:
            return None
        held = [self.entry(attr, who, ctx, value, template=template)]
        held += self.second_value(attr, ctx, (value.key,))
        return Draft(held, text, held[0], owner=who.owner, avoid=(value.key,))

    def held_now(self, attr: Attr, ctx: dict[str, str], p: float = 0.85) -> tuple[list[Entry], Value | None]:
        """Sometimes the user's own fact of the attribute (the look-alike an admitted candidate must not replace)."""
        if not self.chance(p):
            return [], None
        value = self.value(attr, ctx)
        assert value is not None
        held = [self.entry(attr, USER, ctx, value)]
        return held + self.second_value(attr, ctx, (value.key,)), value

    def fresh(
        self, attr: Attr, ctx: dict[str, str], held: list[Entry], current: Value | None, direction: int = 0
    ) -> Value | None:
        """A value none of the held facts has; beyond ``current`` in ``direction`` when both are given."""
        avoid = tuple(e.key for e in held)
        if current is not None and direction:
            return self.other(attr, ctx, current, direction, avoid)
        return self.value(attr, ctx, avoid)

    def admit(
        self,
        attr: Attr,
        template: str,
        *,
        direction: int = 0,
        who: Who = USER,
        mode: str | None = None,
        hold: float = 0.85,
        user: str | None = None,
    ) -> Draft | None:
        """The user's look-alike fact (usually), and a candidate about a value that replaces nothing."""
        ctx = self.ctx(attr)
        held, current = self.held_now(attr, ctx, hold)
        new = self.fresh(attr, ctx, held, current, direction)
        if new is None:
            return None
        candidate = self.say(template, attr, who, ctx, new=new, old=current or new, mode=mode)
        return Draft(held, candidate, None, user=user, owner=who.owner, avoid=(new.key,))


# ---------------------------------------------------------------------------------------------- families


@dataclass
class Family:
    name: str
    expected: str
    category: str
    applies: Callable[[Attr], bool]
    make: Callable[[Gen, Attr], Draft | None]
    split: str = ""


FAMILIES: list[Family] = []


def family(name: str, expected: str, category: str, applies: Callable[[Attr], bool]) -> Callable[..., object]:
    def register(make: Callable[[Gen, Attr], Draft | None]) -> Callable[[Gen, Attr], Draft | None]:
        FAMILIES.append(Family(name, expected, category, lambda a: name not in a.skip and applies(a), make))
        return make

    return register


def amount(a: Attr) -> bool:
    return a.kind == "amount"


def np_single(a: Attr) -> bool:
    return a.np is not None and not a.multi


def plain_single(a: Attr) -> bool:
    return not a.multi and a.implicit


def has(*keys: str) -> Callable[[Attr], bool]:
    return lambda a: any(k in a.say for k in keys)


def up_down(old: Value, new: Value) -> str:
    return "up" if new.rank > old.rank else "down"


def now_template(g: Gen, a: Attr) -> Callable[[Value, Value], str]:
    """A plain way to state a new value, for the families that vary the person rather than the phrasing."""

    def choose(old: Value, new: Value) -> str:
        options = []
        if np_single(a) and "is_now" not in a.skip:
            options.append("{my} {np} {BE} now {av}")
        if amount(a):
            options.append(f"{{my}} {{np}} went {up_down(old, new)} to {{v}}")
        if a.implicit and not a.multi:
            options.append(g.pick(a.facts) + " now")
        if "switch" in a.say:
            options.append(a.say["switch"])
        return g.pick(options)

    return choose


def can_restate(a: Attr) -> bool:
    return (np_single(a) and "is_now" not in a.skip) or amount(a) or plain_single(a) or "switch" in a.say


# --- updates: the candidate replaces the held value


@family("went_up_to", "supersede", "update", amount)
def went_up_to(g: Gen, a: Attr) -> Draft | None:
    template = g.pick(("{my} {np} went up to {v}", "{my} {np} just went up to {v}", "{my} {np} is up to {v} now"))
    return g.change(a, template, direction=1)


@family("dropped_to", "supersede", "update", amount)
def dropped_to(g: Gen, a: Attr) -> Draft | None:
    template = g.pick(("{my} {np} dropped to {v}", "{my} {np} went down to {v}", "{my} {np} is down to {v} now"))
    return g.change(a, template, direction=-1)


@family("by_delta", "supersede", "update", amount)
def by_delta(g: Gen, a: Attr) -> Draft | None:
    fmt = {
        "rent": money,
        "salary": money,
        "savings_goal": money,
        "weight": pounds,
        "dose": milligrams,
        "daily_steps": step_count,
        "sleep_hours": hours,
        "coffee_per_day": cups,
        "commute_time": minutes,
        "thermostat": degrees,
    }[a.name]

    def template(old: Value, new: Value) -> str:
        delta = abs(float(new.rank) - float(old.rank))
        size = g.pick(fmt(int(delta) if delta == int(delta) else delta))  # type: ignore[arg-type]
        return f"{{my}} {{np}} went {up_down(old, new)} by {size}"

    return g.change(a, template)


@family("went_from_to", "supersede", "update", lambda a: a.np is not None and a.kind != "choice")
def went_from_to(g: Gen, a: Attr) -> Draft | None:
    return g.change(a, g.pick(("{my} {np} went from {old} to {v}", "{my} {np} changed from {old} to {v}")))


@family("is_now", "supersede", "update", np_single)
def is_now(g: Gen, a: Attr) -> Draft | None:
    return g.change(a, g.pick(("{my} {np} {BE} now {av}", "{my} {np} {BE} {av} now")))


@family("switched_from_to", "supersede", "update", lambda a: "switch" in a.say or a.kind in ("time", "days"))
def switched_from_to(g: Gen, a: Attr) -> Draft | None:
    return g.change(a, a.say.get("switch", "{I} switched {my} {np} from {old} to {v}"))


@family("changed_to", "supersede", "update", lambda a: a.changeable)
def changed_to(g: Gen, a: Attr) -> Draft | None:
    return g.change(a, g.pick(("{I} changed {my} {np} to {nv}", "{I} just changed {my} {np} to {nv}")))


@family("authority", "supersede", "update", has("agent", "agent_up", "agent_down"))
def authority(g: Gen, a: Attr) -> Draft | None:
    keys = [k for k in ("agent", "agent_up", "agent_down") if k in a.say]
    key = g.pick(keys)
    return g.change(a, a.say[key], direction={"agent": 0, "agent_up": 1, "agent_down": -1}[key])


@family(
    "got_moved_to",
    "supersede",
    "update",
    lambda a: a.name in ("team_meeting", "class_time", "appointment_date", "lease_end"),
)
def got_moved_to(g: Gen, a: Attr) -> Draft | None:
    return g.change(
        a, g.pick(("{my} {np} got moved to {v}", "{my} {np} was moved to {v}", "{my} {np} has been moved to {v}"))
    )


@family("pushed_back", "supersede", "update", lambda a: a.kind in ("time", "meeting", "date"))
def pushed_back(g: Gen, a: Attr) -> Draft | None:
    return g.change(a, g.pick(("{my} {np} got pushed back to {v}", "{my} {np} got pushed to {v}")), direction=1)


@family("no_more", "supersede", "update", lambda a: a.kind == "choice")
def no_more(g: Gen, a: Attr) -> Draft | None:
    what = a.say.get("nomore", "{old}")
    return g.change(a, f"no more {what}, {g.pick(a.facts)} now")


@family("used_to", "supersede", "update", lambda a: "used_to" in a.say or np_single(a))
def used_to(g: Gen, a: Attr) -> Draft | None:
    return g.change(a, a.say.get("used_to", "{my} {np} used to be {aold}, but now {IT} {BE} {av}"))


@family("instead_of", "supersede", "update", lambda a: True)
def instead_of(g: Gen, a: Attr) -> Draft | None:
    return g.change(a, f"{g.pick(a.facts)} now instead of {a.say.get('oldref', '{nold}')}")


@family("finally", "supersede", "update", lambda a: a.goal != 0)
def finally_(g: Gen, a: Attr) -> Draft | None:
    way = "up" if a.goal > 0 else "down"
    template = g.pick((f"finally got {{my}} {{np}} {way} to {{v}}", f"{{I}} finally got {{my}} {{np}} {way} to {{v}}"))
    return g.change(a, template, direction=a.goal)


@family(
    "new_np",
    "supersede",
    "update",
    lambda a: (
        (np_single(a) and a.kind in ("choice", "time", "days")) or a.name in ("rent", "salary", "dose", "savings_goal")
    ),
)
def new_np(g: Gen, a: Attr) -> Draft | None:
    return g.change(
        a,
        g.pick(("{my} new {np} {BE} {av}", "{I} {have|has} a new {np}: {v}"))
        if a.kind == "choice"
        else "{my} new {np} {BE} {av}",
    )


@family("implicit", "supersede", "update", plain_single)
def implicit(g: Gen, a: Attr) -> Draft | None:
    return g.change(a, g.pick(a.facts))


@family("chat_btw", "supersede", "update", plain_single)
def chat_btw(g: Gen, a: Attr) -> Draft | None:
    template = g.pick(("btw ", "oh btw ", "fyi ")) + g.pick(a.facts) + g.pick((" now", " now lol", " lol", " now haha"))
    return g.change(a, template, mode="chat")


@family("correction", "supersede", "update", np_single)
def correction(g: Gen, a: Attr) -> Draft | None:
    template = g.pick(
        (
            "actually, {my} {np} {BE} {av}, not {aold}",
            "correction: {my} {np} {BE} {av}, not {aold}",
            "sorry, I got that wrong: {my} {np} {BE} {av}",
        )
    )
    return g.change(a, template)


@family("as_of", "supersede", "update", plain_single)
def as_of(g: Gen, a: Attr) -> Draft | None:
    when = g.pick(("as of this week", "as of last month", "starting today", "since Monday", "from this month on"))
    return g.change(a, f"{when}, {g.pick(a.facts)}")


@family("terse", "supersede", "update", np_single)
def terse(g: Gen, a: Attr) -> Draft | None:
    options = ["{np}: {v} now", "{np} {BE} {v} now fyi"] + (["new {np}, {v}"] if a.implicit else [])
    return g.change(a, g.pick(options), mode=g.pick(("chat", "plain")))


@family("by_name_update", "supersede", "update", can_restate)
def by_name_update(g: Gen, a: Attr) -> Draft | None:
    name, gender = g.rng.choice(USER_NAMES)
    who = person("user", name, gender)
    draft = g.change(a, now_template(g, a), who=who, held_who=who if g.chance(0.3) else USER)
    if draft:
        draft.user = name
    return draft


@family("other_person_update", "supersede", "update", lambda a: can_restate(a) and a.others)
def other_person_update(g: Gen, a: Attr) -> Draft | None:
    return g.change(a, now_template(g, a), who=g.relative(a))


@family(
    "pronoun_update",
    "supersede",
    "update",
    lambda a: can_restate(a) and a.others and (a.name == "kids_school" or a.name not in PERSON_VALUED),
)
def pronoun_update(g: Gen, a: Attr) -> Draft | None:
    rel = g.pick(("sister", "brother"))
    gender = "she" if rel == "sister" else "he"
    name = g.pick(SIBLING_NAMES[rel])
    draft = g.change(a, now_template(g, a), who=pronoun(rel, gender), held_who=person(rel, f"my {rel} {name}", gender))
    if draft:
        draft.people = False
    return draft


@family("upgraded_to", "supersede", "update", lambda a: a.name in ("phone", "laptop", "car"))
def upgraded_to(g: Gen, a: Attr) -> Draft | None:
    template = g.pick(("{I} upgraded to {nv}", "{I} upgraded from {nold} to {nv}", "just upgraded to {nv}"))
    return g.change(a, template, direction=1)


# --- retractions: the candidate ends the held fact

RETRACTIONS = (
    "dont_anymore",
    "quit",
    "cancelled",
    "no_longer",
    "stopped",
    "got_rid_of",
    "gave_up",
    "no_more_for_me",
    "ended",
    "dropped",
    "done_with",
)


def retraction(key: str) -> Callable[[Gen, Attr], Draft | None]:
    def make(g: Gen, a: Attr) -> Draft | None:
        return g.change(a, a.say[f"r:{key}"], mode="chat" if key == "no_more_for_me" else None)

    return make


for _key in RETRACTIONS:
    family(_key, "supersede", "retraction", has(f"r:{_key}"))(retraction(_key))


# --- duplicates: the candidate says a held fact again


@family("verbatim", "dedup", "dedup", lambda a: True)
def verbatim(g: Gen, a: Attr) -> Draft | None:
    ctx = g.ctx(a)
    value = g.value(a, ctx)
    assert value is not None
    template, form, short = g.pick(a.facts), g.form(value), g.chance(0.5)
    modes = ["plain", "cap"]
    g.rng.shuffle(modes)
    held = g.entry(a, USER, ctx, value, template=template, nf=form, short=short, mode=modes[0])
    text = g.fact(a, USER, ctx, value, template=template, nf=form, short=short, mode=modes[1])
    return Draft([held], text, held, avoid=(value.key,)) if text != held.text else None


def reformat(g: Gen, a: Attr) -> Draft | None:
    """The same statement with the value written another way."""
    ctx = g.ctx(a)
    value = g.value(a, ctx)
    assert value is not None
    if len(value.forms) < 2:
        return None
    first, second = g.rng.sample(range(len(value.forms)), 2)
    template = g.pick(a.facts)
    held = g.entry(a, USER, ctx, value, template=template, nf=first)
    return Draft([held], g.fact(a, USER, ctx, value, template=template, nf=second), held, avoid=(value.key,))


family("number_format", "dedup", "dedup", amount)(reformat)
family("time_format", "dedup", "dedup", lambda a: a.kind in ("time", "meeting"))(reformat)
family("date_format", "dedup", "dedup", lambda a: a.kind in ("date", "days"))(reformat)
family(
    "value_alias",
    "dedup",
    "dedup",
    lambda a: a.kind == "choice" and any(len(v.forms) > 1 for p in a.pools.values() for v in p),
)(reformat)


@family("other_template", "dedup", "dedup", lambda a: len(a.facts) > 1)
def other_template(g: Gen, a: Attr) -> Draft | None:
    def candidate(ctx: dict[str, str], value: Value, held: str) -> str:
        return g.fact(a, USER, ctx, value, template=g.pick([t for t in a.facts if t != held]))

    return g.repeat(a, candidate)


@family("pos_variant", "dedup", "dedup", has("pos"))
def pos_variant(g: Gen, a: Attr) -> Draft | None:
    ctx = g.ctx(a)
    value = g.value(a, ctx)
    assert value is not None
    texts = [g.pick(a.facts), a.say["pos"]]
    g.rng.shuffle(texts)
    held = g.entry(a, USER, ctx, value, template=texts[0])
    return Draft(
        [held, *g.second_value(a, ctx, (value.key,))],
        g.fact(a, USER, ctx, value, template=texts[1]),
        held,
        avoid=(value.key,),
    )


@family("contraction", "dedup", "dedup", lambda a: any("{am|is}" in t for t in a.facts))
def contraction(g: Gen, a: Attr) -> Draft | None:
    ctx = g.ctx(a)
    value = g.value(a, ctx)
    assert value is not None
    template, form = g.pick([t for t in a.facts if "{am|is}" in t]), g.form(value)
    styles = [True, False]
    g.rng.shuffle(styles)
    held = g.entry(a, USER, ctx, value, template=template, nf=form, short=styles[0])
    text = g.fact(a, USER, ctx, value, template=template, nf=form, short=styles[1], mode="plain")
    return Draft([held], text, held, avoid=(value.key,))


@family("by_name_repeat", "dedup", "dedup", lambda a: True)
def by_name_repeat(g: Gen, a: Attr) -> Draft | None:
    name, gender = g.rng.choice(USER_NAMES)
    who = person("user", name, gender)
    ctx = g.ctx(a)
    value = g.value(a, ctx)
    assert value is not None
    order = [USER, who]
    g.rng.shuffle(order)
    held = g.entry(a, order[0], ctx, value)
    return Draft([held], g.fact(a, order[1], ctx, value), held, user=name, avoid=(value.key,))


@family("pronoun_repeat", "dedup", "dedup", lambda a: a.others)
def pronoun_repeat(g: Gen, a: Attr) -> Draft | None:
    rel = g.pick(("sister", "brother"))
    gender = "she" if rel == "sister" else "he"
    ctx = g.ctx(a)
    value = g.value(a, ctx)
    assert value is not None
    held = g.entry(a, person(rel, f"my {rel} {g.pick(SIBLING_NAMES[rel])}", gender), ctx, value)
    text = g.fact(a, pronoun(rel, gender), ctx, value)
    return Draft([held], text, held, people=False, owner=rel, avoid=(value.key,))


@family("still", "dedup", "dedup", lambda a: "still" in a.say or np_single(a))
def still(g: Gen, a: Attr) -> Draft | None:
    default = g.pick(("{my} {np} {BE} still {av}", "still {nv}, {my} {np} {HASNT} changed"))
    return g.repeat(a, lambda ctx, value, _: g.say(a.say.get("still", default), a, USER, ctx, new=value))


@family("as_i_said", "dedup", "dedup", lambda a: True)
def as_i_said(g: Gen, a: Attr) -> Draft | None:
    lead = g.pick(("like I said, ", "as I mentioned, ", "just a reminder: ", "again, "))
    return g.repeat(a, lambda ctx, value, _: g.fact(a, USER, ctx, value, template=lead + g.pick(a.facts)))


@family("chat_repeat", "dedup", "dedup", lambda a: True)
def chat_repeat(g: Gen, a: Attr) -> Draft | None:
    def candidate(ctx: dict[str, str], value: Value, _: str) -> str:
        template = g.pick(("yeah ", "ya ", "yep ", "")) + g.pick(a.facts) + g.pick((" lol", " haha", "", " btw"))
        return g.fact(a, USER, ctx, value, template=template, mode="chat")

    return g.repeat(a, candidate)


@family("inverted", "dedup", "dedup", lambda a: np_single(a) and a.art != "a")
def inverted(g: Gen, a: Attr) -> Draft | None:
    return g.repeat(a, lambda ctx, value, _: g.say("{v} {BE} {my} {np}", a, USER, ctx, new=value))


@family("same_as_always", "dedup", "dedup", lambda a: True)
def same_as_always(g: Gen, a: Attr) -> Draft | None:
    tail = g.pick((", same as always", ", as usual", ", nothing new there", ", same as before"))
    return g.repeat(a, lambda ctx, value, _: g.fact(a, USER, ctx, value, template=g.pick(a.facts) + tail))


@family("other_person_repeat", "dedup", "dedup", lambda a: a.others and len(a.facts) > 1)
def other_person_repeat(g: Gen, a: Attr) -> Draft | None:
    who = g.relative(a)

    def candidate(ctx: dict[str, str], value: Value, held: str) -> str:
        return g.fact(a, who, ctx, value, template=g.pick([t for t in a.facts if t != held]))

    draft = g.repeat(a, candidate, who=who)
    return draft


# --- admits: new, replacing nothing


def plan_template(g: Gen, a: Attr) -> tuple[str, int]:
    key = g.pick([k for k in ("plan", "plan_up", "plan_down") if k in a.say])
    return a.say[key], {"plan": 0, "plan_up": 1, "plan_down": -1}[key]


def planning(frames: tuple[str, ...]) -> Callable[[Gen, Attr], Draft | None]:
    def make(g: Gen, a: Attr) -> Draft | None:
        plan, direction = plan_template(g, a)
        frame = g.pick(frames)
        return g.admit(a, frame.replace("PLAN", plan).replace("DOING", gerund(plan)), direction=direction)

    return make


is_plannable = has("plan", "plan_up", "plan_down")
family("thinking_of", "admit", "plan", is_plannable)(
    planning(("{I} {am|is} thinking of DOING", "thinking about DOING", "{I} {am|is} thinking about DOING"))
)
family("might", "admit", "plan", is_plannable)(
    planning(("{I} might PLAN", "{I} might PLAN, not sure yet", "might PLAN"))
)
family("planning_to", "admit", "plan", is_plannable)(
    planning(("{I} {am|is} planning to PLAN", "{I} {plan|plans} to PLAN", "{I} {am|is} going to try to PLAN"))
)
family("want_to", "admit", "plan", is_plannable)(
    planning(("{I} would like to PLAN", "{I} {want|wants} to PLAN at some point", "{I} would love to PLAN"))
)
family("question", "admit", "plan", is_plannable)(
    planning(("should I PLAN?", "do you think I should PLAN?", "would it be smart to PLAN?"))
)
family("advised_to", "admit", "plan", is_plannable)(
    planning(("my friend thinks {I} should PLAN", "my mom keeps telling {me} to PLAN", "everyone says {I} should PLAN"))
)


@family("goal_hope", "admit", "plan", lambda a: a.goal != 0)
def goal_hope(g: Gen, a: Attr) -> Draft | None:
    way = "up" if a.goal > 0 else "down"
    template = g.pick(
        (
            f"{{I}} {{am|is}} hoping to get {{my}} {{np}} {way} to {{v}}",
            f"{{my}} goal is to get {{my}} {{np}} {way} to {{v}}",
        )
    )
    return g.admit(a, template, direction=a.goal, hold=1.0)


@family("offer", "admit", "plan", has("offer"))
def offer(g: Gen, a: Attr) -> Draft | None:
    return g.admit(a, a.say["offer"])


@family("other_relative", "admit", "other_person", lambda a: a.others)
def other_relative(g: Gen, a: Attr) -> Draft | None:
    return g.admit(a, g.pick(a.facts), who=g.relative(a))


@family("other_named", "admit", "other_person", lambda a: a.others)
def other_named(g: Gen, a: Attr) -> Draft | None:
    name, gender = g.rng.choice(OTHER_NAMES)
    user = g.rng.choice(USER_NAMES)[0]
    return g.admit(a, g.pick(a.facts), who=person(f"name:{name}", name, gender), user=user)


@family("other_person_change", "admit", "other_person", lambda a: a.others and can_restate(a))
def other_person_change(g: Gen, a: Attr) -> Draft | None:
    who = g.relative(a)
    ctx = g.ctx(a)
    held, current = g.held_now(a, ctx, 0.9)
    new = g.fresh(a, ctx, held, None)
    old = current if current is not None and g.chance(0.5) else new and g.value(a, ctx, (new.key,))
    if new is None or old is None:
        return None
    candidate = g.say(now_template(g, a)(old, new), a, who, ctx, new=new, old=old)
    return Draft(held, candidate, None, owner=who.owner, avoid=(new.key, old.key))


def past(a: Attr) -> str:
    return a.say.get("past", "{my} {np} {WAS} {av}")


def has_past(a: Attr) -> bool:
    return ("past" in a.say or np_single(a)) and a.kind != "date"


@family("back_in_year", "admit", "past", has_past)
def back_in_year(g: Gen, a: Attr) -> Draft | None:
    year = g.rng.randrange(2008, 2020)
    return g.admit(a, g.pick((f"back in {year}, ", f"in {year} ", f"back in {year} ")) + past(a))


@family("used_to_be", "admit", "past", lambda a: ("used" in a.say or np_single(a)) and a.kind != "date")
def used_to_be(g: Gen, a: Attr) -> Draft | None:
    return g.admit(a, a.say.get("used", "{my} {np} used to be {av}"))


@family("long_ago", "admit", "past", has_past)
def long_ago(g: Gen, a: Attr) -> Draft | None:
    lead = g.pick(("years ago, ", "before the pandemic, ", "a while back, ", "in my twenties, ", "ten years ago "))
    return g.admit(a, lead + past(a))


@family("also", "admit", "additive", has("also"))
def also(g: Gen, a: Attr) -> Draft | None:
    return g.admit(a, a.say["also"], hold=1.0)


@family("as_well", "admit", "additive", has("as_well"))
def as_well(g: Gen, a: Attr) -> Draft | None:
    return g.admit(a, a.say["as_well"], hold=1.0)


@family(
    "hyp_if",
    "admit",
    "hypothetical",
    lambda a: has("hyp", "hyp_up", "hyp_down")(a) or (np_single(a) and a.kind in ("amount", "time")),
)
def hyp_if(g: Gen, a: Attr) -> Draft | None:
    keys = [k for k in ("hyp", "hyp_up", "hyp_down") if k in a.say]
    if not keys:
        return g.admit(a, g.pick(("in an ideal world, {my} {np} would be {av}", "ideally {my} {np} would be {av}")))
    key = g.pick(keys)
    return g.admit(a, a.say[key], direction={"hyp": 0, "hyp_up": 1, "hyp_down": -1}[key])


@family("wish", "admit", "hypothetical", lambda a: np_single(a) and a.kind != "date")
def wish(g: Gen, a: Attr) -> Draft | None:
    return g.admit(a, g.pick(("{I} wish {my} {np} were {av}", "{I} really wish {my} {np} were {av}")))


@family("new_attribute", "admit", "new", lambda a: True)
def new_attribute(g: Gen, a: Attr) -> Draft | None:
    ctx = g.ctx(a)
    value = g.value(a, ctx)
    assert value is not None
    return Draft([], g.fact(a, USER, ctx, value), None, avoid=(value.key,))


@family("new_chat", "admit", "new", lambda a: True)
def new_chat(g: Gen, a: Attr) -> Draft | None:
    ctx = g.ctx(a)
    value = g.value(a, ctx)
    assert value is not None
    template = g.pick(("oh and ", "random but ", "fun fact, ", "also ")) + g.pick(a.facts) + g.pick(("", " lol"))
    return Draft([], g.fact(a, USER, ctx, value, template=template, mode="chat"), None, avoid=(value.key,))


# ---------------------------------------------------------------------------------------------- assembling cases


def conflicts(a: Attr, b: Attr) -> bool:
    return bool(set(a.groups) & set(b.groups)) or a.name == b.name


def lookalike(g: Gen, a: Attr, draft: Draft) -> Entry | None:
    """Another person's fact of the candidate's attribute (with another value), to be told apart from it."""
    owners = {e.owner for e in draft.held if e.attr == a.name} | {draft.owner}
    choices: list[Who] = [] if "user" in owners or (not draft.people and a.name in PERSON_VALUED) else [USER]
    if draft.people and a.others and not draft.owner.startswith("name:"):
        choices += [person(rel, f"my {rel}", gender) for rel, gender in relatives(a) if rel not in owners]
    if not choices:
        return None
    ctx = g.ctx(a)
    value = g.value(a, ctx, draft.avoid + tuple(e.key for e in draft.held if e.attr == a.name))
    return g.entry(a, g.rng.choice(choices), ctx, value) if value else None


def distractor(g: Gen, used: list[Attr], draft: Draft) -> Entry | None:
    """A fact about another attribute, of the user or (where allowed) of a relative."""
    options = [
        b for b in ATTRS if not any(conflicts(b, u) for u in used) and (draft.people or b.name not in PERSON_VALUED)
    ]
    if not options:
        return None
    b = g.rng.choice(options)
    used.append(b)
    who = g.relative(b) if draft.people and b.others and g.chance(0.25) else USER
    ctx = g.ctx(b)
    value = g.value(b, ctx)
    assert value is not None
    return g.entry(b, who, ctx, value)


def existing_facts(g: Gen, a: Attr, draft: Draft) -> list[Entry] | None:
    size = max(len(draft.held), g.rng.choice((1, 2, 2, 3, 3, 4)))
    entries = list(draft.held)
    if len(entries) < size and draft.held and g.chance(0.35):
        extra = lookalike(g, a, draft)
        entries += [extra] if extra else []
    used = [a]
    while len(entries) < size:
        extra = distractor(g, used, draft)
        if extra is None:
            return None
        entries.append(extra)
    texts = [e.text.lower().rstrip(".") for e in entries]
    return entries if len(set(texts)) == len(texts) else None


def make_case(g: Gen, fam: Family, a: Attr) -> dict[str, object] | None:
    draft = fam.make(g, a)
    if draft is None:
        return None
    entries = existing_facts(g, a, draft)
    if entries is None:
        return None
    g.rng.shuffle(entries)
    case: dict[str, object] = {
        "category": fam.category,
        "attribute": a.name,
        "family": f"{a.name}/{fam.name}",
        "split": fam.split,
    }
    if draft.user:
        case["user"] = draft.user
    case |= {"existing": [e.text for e in entries], "candidate": draft.candidate, "expected": fam.expected}
    if draft.target is not None:
        case["target"] = entries.index(draft.target)
    return case


def assign_splits(rng: random.Random) -> None:
    """Half of each decision kind's families to train, half to test, alternating within each category."""
    for kind in ("supersede", "dedup", "admit"):
        turn = rng.randrange(2)
        for category in sorted({f.category for f in FAMILIES if f.expected == kind}):
            members = sorted((f for f in FAMILIES if f.category == category), key=lambda f: f.name)
            rng.shuffle(members)
            for f in members:
                f.split = ("train", "test")[turn]
                turn ^= 1


def generate(seed: int = SEED) -> list[dict[str, object]]:
    g = Gen(seed)
    assign_splits(g.rng)
    cases, seen = [], set()
    for fam in FAMILIES:
        attrs = [a for a in ATTRS if fam.applies(a)]
        assert attrs, fam.name
        g.rng.shuffle(attrs)
        made, tries = 0, 0
        while made < CASES_PER_FAMILY[fam.expected] and tries < 5000:
            tries += 1
            case = make_case(g, fam, attrs[(made + tries) % len(attrs)])
            fingerprint = case and (case["candidate"], tuple(case["existing"]))  # type: ignore[arg-type]
            if case is None or fingerprint in seen:
                continue
            seen.add(fingerprint)
            cases.append(case)
            made += 1
        assert made == CASES_PER_FAMILY[fam.expected], (fam.name, made)
    g.rng.shuffle(cases)
    return [{"id": f"stress-{i:04d}", **case} for i, case in enumerate(cases, 1)]


def summary(cases: list[dict[str, object]]) -> None:
    print(f"{len(cases)} cases -> {OUT.relative_to(OUT.parent.parent.parent)}")
    for split in ("train", "test"):
        part = [c for c in cases if c["split"] == split]
        kinds = Counter(str(c["expected"]) for c in part)
        fams = {kind: len({f.name for f in FAMILIES if f.expected == kind and f.split == split}) for kind in kinds}
        print(
            f"  {split}: {len(part)} cases; "
            + ", ".join(f"{kind} {kinds[kind]} ({fams[kind]} families)" for kind in ("supersede", "dedup", "admit"))
        )
    kinds = Counter(str(c["expected"]) for c in cases)
    print("  by kind: " + ", ".join(f"{k} {n} ({n / len(cases):.0%})" for k, n in kinds.most_common()))
    print("  by category: " + ", ".join(f"{k} {n}" for k, n in Counter(str(c["category"]) for c in cases).items()))
    attrs = Counter(str(c["attribute"]) for c in cases)
    print(f"  paraphrase families: {len(FAMILIES)}; attribute/family pairs: {len({c['family'] for c in cases})}")
    print(f"  attributes: {len(attrs)} (cases each: {min(attrs.values())}-{max(attrs.values())})")
    sizes = Counter(len(c["existing"]) for c in cases)  # type: ignore[arg-type]
    print("  existing facts per case: " + ", ".join(f"{k}: {sizes[k]}" for k in sorted(sizes)))
    print("  cases naming the user: " + str(sum("user" in c for c in cases)))


def main() -> None:
    cases = generate()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8", newline="\n") as out:
        for case in cases:
            out.write(json.dumps(case, ensure_ascii=False) + "\n")
    summary(cases)


if __name__ == "__main__":
    main()
