"""The English locale pack: change and retraction phrasings, plans, names, predicate families."""

from __future__ import annotations

from mnemonite.conflicts.pack import LocalePack, Normaliser, define_locale_pack

_SUBJ = r"(?P<subject>[\w' ]+?)"
_POSS = r"(?P<subject>(?:my |our )?[\w]+'s|my|our)"
# A subject is not a function word: "no longer have x" is a clause without one.
_NOT_SUBJECT = r"(?!\w+ed\b)(?!(?:no|not|have|has|had|got|to|and|but|so|then|is|am|are|was|were|will|would|a|an|the)\b)"
_ONE = rf"(?P<subject>{_NOT_SUBJECT}(?:(?:my|our|[\w]+'s) )?[\w']+)"
_OBJ = r"(?P<object>.+)"
_PARTNER = r"(?:wife|husband|partner|spouse|girlfriend|boyfriend|fiancee?)"
# "my all-time favourite band", "my absolute favourite"
_FAVOURITE = r"(?:(?:all[- ]time|absolute|very|total|most) )?(?:favourite|favorite)"
# Verbs in the past that open a chat statement without its subject ("quit smoking"), and the words after a
# sentence's first word that show it was its subject
_PAST = (
    r"(?:quit|left|gave|got|let|made|took|went|bought|sold|began|broke|found|kept|lost|met|paid|ran|spent|sent"
    r"|wrote|won|became|built|drove|grew|sat|slept|spoke|swam|taught|threw|moved|started|joined|cancell?ed"
    r"|canceled|switched|changed|retired|finished|graduated|adopted|divorced|stopped|dropped|traded|replaced"
    r"|decided|signed|booked|visited|tried|learned|learnt|picked|upgraded|downgraded|relocated|landed|launched"
    r"|opened|closed|completed|passed|failed|applied|ended|ditched|returned|rented|leased|hired|fired"
    r"|enrolled|registered|subscribed|unsubscribed|deleted|uninstalled|installed|donated|volunteered|turned|scored"
    r"|celebrated|watched|ate|drank)"
)
_SUBJECT_AFTER = r"(?:is|was|are|were|am|has|have|had|will|would|can|could|did|does|and|or|i|me|we|he|she|they|you|it)"
# fmt: off
ENGLISH = LocalePack(
    name="en",
    change_markers=[
        r"\bmoved (?:(?:back|out|away|over|down|up) )?(?:to|into|out)\b", r"\brelocat\w*\b", r"\bno longer\b",
        r"\bnot any ?more\b", r"\bany ?more\b",
        r"\b(?:got |was |been )?promoted to\b", r"\bgot promoted\b",
        r"\bnew (?:job|role|position|gig|home|place|address|number)\b",
        r"\bswitched (?:to|from)\b", r"\bchanged\b", r"\bquit\b", r"\bleft (?:my|the|his|her|their)\b",
        r"\bjust (?:moved|started|joined|bought|got|switched)\b", r"\bstarted (?:a|my|working|at)\b", r"\bjoined\b",
        r"(?<!get )(?<!got )(?<!getting )\bused to\b(?! being)", r"\bstopped\b", r"\bgave up\b", r"\bnowadays\b",
        r"\bthese days\b", r"\bfrom now on\b",
        r"^now\b", r"\bnow$", r"\b(?:am|is|are) now\b",
        r"\bnow (?:live|lives|work|works|prefer|prefers|like|likes|love|loves"
        r"|drive|drives|use|uses|go|goes|eat|eats|drink|drinks|am|is|are)\b",
        r"\bactually\b", r"\binstead\b", r"\bturned \d+\b",
    ],
    # Change markers that in chat mostly tell news: they replace only a held value of the statement's own predicate.
    news_markers=[r"just (?:moved|started|joined|bought|got|switched)", r"joined", r"actually", r"now",
                  r"(?:am|is|are) now", r"got promoted", r"new (?:place|home)"],
    negation_markers=[r"\bdo not\b", r"\bdoes not\b", r"\bdid not\b", r"\bno longer\b", r"\bnever\b",
                      r"\bnot any ?more\b", r"\bany ?more\b", r"\bno more\b", r"\bnot\b"],
    # Retractions said with a verb of their own are read as the negation of the statement they end.
    rewrites=[
        # Chat around a statement: an opening interjection, when it happened, a sign-off
        (r"^\s*(?:(?:oh|and|so|well|btw|by the way|honestly|sadly|unfortunately|fortunately|luckily|anyway|anyways|ok"
         r"|okay|fyi|hey|guess what|quick update|update|just so you know|heads up|ps|lol|haha|um|hmm|yeah|ah|oops"
         r"|ugh|omg|wow|yay|welp|lmao|phew|whew|argh)"
         r"(?:\s*[,:!.-]\s*|\s+))+", " "),
        (r"\b(?:about |around |like |almost |nearly )?(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few"
         r"|a couple of|a couple|couple of|several|\d+) (?:days?|weeks?|months?|years?|hours?) ago\b", ""),
        (r"\b(?:on|last|this) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", ""),
        (r"\b(?:this|last|yesterday|tonight) (?:morning|afternoon|evening|night|weekend)\b", ""),
        (r"\b(?:btw|lol|haha|fyi|tbh|tbf|ngl|honestly|literally|basically)\b", ""),
        # A chat statement that opens with a verb in the past leaves its subject out: it is the speaker's ("quit
        # smoking", "started at acme", "sold my car"). Only verbs of a closed list, followed by a word that is
        # neither a verb nor a pronoun, and never in a first clause with a verb "to be" of its own ("lost in
        # translation is my favourite film"): a name ("jared moved"), an adjective ("fried chicken") or a
        # title keeps its place.
        (rf"^\s*(?=(?:(?:just|finally|recently|also|already|officially|then) )*{_PAST} "
         rf"(?!(?:{_SUBJECT_AFTER}|{_PAST})\b)(?![^,;]*\b(?:is|are|was|were|am)\b))", "i "),
        # "been playing guitar for years": the speaker's, as "i have been playing"
        (r"^\s*(?=been \w+ing\b)", "i have "),
        # "i've gone", "she has quit": the perfect of a change is the change
        (r"\b(?:have|has|had) (?=(?:just |finally |recently |also |now |already |officially )*(?:gone|become|cut"
         r"|quit|left|sold|bought|switched|changed|stopped|decided|finished|given up|dropped|married|divorced"
         r"|adopted|lost|retired|graduated|traded|upgraded|downgraded|cancelled|canceled)\b)", ""),
        # "has been dreaming of it": the verb, not having; "got accepted": what happened, not a possession
        (r"\b(?:have|has|had) been (?=\w+ing\b)", "am "),
        (r"\bgot (?=(?!(?:married|engaged|divorced|promoted|separated)\b)\w+ed\b)", ""),
        # "went vegan", "became a nurse": being it now (not "went to", "became friends with" keeps its verb)
        (r"\b(?:gone|went|become|became)(?: fully| completely| totally| full)? (?!(?:to|for|back|out|on|off|through"
         r"|with|into|home|away|up|down|over|by|around|in|from|friends|\w+ing)\b)", "am "),
        # "my new boss is a woman named tanya", "someone called sam": the name is the value
        (r"\b(?:(?:a|an|this|some) (?:\w+ )?(?:woman|man|guy|girl|lady|person|dude|gal|fellow|boy|kid)|someone"
         r"|somebody) (?:named|called) (?=\w)", ""),
        # "my car's a corolla", "his name's tom": the 's of "is"
        (r"\b(\w+)'s (?=(?:a|an|the|not|now|still|called|named|in|at|from|my|our)\b)", r"\1 is "),
        (r"\bname's\b", "name is"),
        (r"\b(?:stopped|quit|gave up|given up|give up on|gave up on) (\w+ing)\b", r"no longer \1"),
        (r"\b(?:gave|given|give|giving) up on (?:my |the )?", "no longer doing "),
        (r"\b(?:quit|left) (?:my |his |her |their |the )?job (?:at|with) ", "no longer works at "),
        (r"\b(?:left|quit) (?!\w+ing\b)(?:my |his |her |their )?", "no longer works at "),
        (r"\bretired (?:from|at) (?!\d)(?:my |his |her |their |the )?", "no longer works at "),
        (r"\b(\w+) and (?:i|me) (?:got divorced|divorced)\b", r"i am no longer married to \1"),
        # a break-up ends whatever the relationship was: dating, engaged or married
        (r"\b(\w+) and (?:i|me) (?:broke up|split up|separated)\b", r"i am no longer partnered to \1"),
        (r"\b(\w+) and (?:i|me) got (married|engaged)\b", r"i got \2 to \1"),
        (r"\b(?:got divorced|divorced) (?:with|from) ", "am no longer married to "),
        (r"\b(?:broke up|split up|separated) (?:with|from) ", "am no longer partnered to "),
        (r"\b(i|we) divorced (?=\w)", r"\1 am no longer married to "),
        (r"\b(i|we) (?:just )?got divorced\b", r"\1 am divorced"),
        (r"\b(i|we) (?:just )?(?:broke up|split up|separated)\b", r"\1 am single"),
        (r"\b(?:sold|cancelled|canceled|ditched|got rid of|gave away) (?:my |the |our )?", "no longer have "),
        (r"\b(am|is|are) off (?:the |my |his |her )?", r"\1 not on "),
        (r"\b(?:i|we) (?:have|got) (?:a )?new (manager|boss),? (?:(?:his|her|their) name is |called |named )?(\w+)",
         r"my \1 is \2"),
        (r"\b(?:after all|turns out|it turns out)\b", ""),
        # "an engineer by profession" works as one; "a peanut allergy" is being allergic to peanuts
        (r"\b(am|is|are) ((?:a |an )?[\w ]+?) (?:by profession|by trade|for a living)\b", r"\1 working as \2"),
        (r"\b(have|has) (?:a |an )?([\w ]+?) allergy\b", r"is allergic to \2"),
    ],
    replace_markers=[r"\b(?:switched|changed|moved|converted|upgraded|downgraded) (?:over )?to\b", r"\bswitched from\b",
                     r"\b(?:swapped|traded|replaced) .+ (?:for|with)\b", r"\bto replace\b",
                     r"\binstead\b(?! of)"],
    # "may" of a plan, not the month ("in may", "since may", "may 3")
    plan_markers=[r"\bmight\b", r"(?<!\bin )(?<!\bsince )(?<!\buntil )(?<!\bof )(?<!\blast )(?<!\bnext )(?<!\bby )"
                  r"(?<!\bearly )(?<!\blate )(?<!\bmid )(?<!\bfrom )(?<!\bstarting )(?<!\bafter )(?<!\bbefore )(?<!-)"
                  r"\bmay\b(?! \d)", r"\bmaybe\b", r"\bperhaps\b",
                  r"\bthinking (?:about|of)\b",
                  r"\bconsider(?:ing)?\b", r"\bplan(?:ning)? (?:to|on)\b", r"\bwants? to\b", r"\bhop(?:e|ing) to\b",
                  r"\bwould like to\b", r"^if\b", r"\bsomeday\b", r"\bsome day\b", r"\bone day\b",
                  r"\btrying to\b",
                  r"(?<!stopped )(?<!stop )(?<!quit )(?<!started )(?<!keep )(?<!kept )(?<!been )(?<!longer )"
                  r"\bgoing to\b",
                  r"\bshould\b", r"\bwould\b(?! rather)"],
    name_patterns=[r"(?i:\bmy name is|\bi'm|\bi am|\bcall me)\s+(?P<name>[A-Z][\w-]+)\b"],
    # "My sister Ana", "our dog Rex", "Sam's brother Tom": the relation not capitalised, the name capitalised
    apposition=r"\b(?P<owner>[Mm]y|[Oo]ur|[A-Z][\w-]*'s) (?P<relation>[a-z][a-z-]*) (?P<name>[A-Z][a-z][\w-]*)\b"
               r"(?!['\u2019]s)",
    # "I'm German", "I'm Catholic", "I'm Vegan": capitalised, but nationalities, faiths and diets
    not_names=r"\w+(?:ish|ese|ic|ist)|American|Mexican|Canadian|German|Korean|Italian|Russian|Indian|Brazilian"
              r"|Australian|Asian|European|African|Muslim|Hindu|Vegan|Vegetarian|Fine|Good|Okay|Sorry|Back|Here|Not",
    contractions={
        " i'm ": " i am ", " i've ": " i have ", " i'd ": " i would ", " don't ": " do not ",
        " doesn't ": " does not ", " didn't ": " did not ", " isn't ": " is not ", " aren't ": " are not ",
        " can't ": " can not ", " won't ": " will not ", " he's ": " he is ", " she's ": " she is ",
        " we're ": " we are ", " they're ": " they are ", " it's ": " it is ", " i'll ": " i will ",
        " have been promoted ": " got promoted ", " has been promoted ": " got promoted ",
        " have moved ": " moved ", " has moved ": " moved ", " have joined ": " joined ", " has joined ": " joined ",
        " have started ": " started ", " has started ": " started ", " have got ": " got ", " has got ": " got ",
        " favorite ": " favourite ", " fav ": " favourite ", " fave ": " favourite ", " color ": " colour ",
        " colors ": " colours ", " i've got ": " i have ",
    },
    numbers={word: value for value, word in enumerate(
        "_ one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen"
        " eighteen nineteen".split()) if value} | {
        word: 10 * tens for tens, word in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split())
        if tens >= 2},
    values=[*"monday tuesday wednesday thursday friday saturday sunday".split(),
            *"january february march april may june july august september october november december".split()],
    fillers=["just", "recently", "finally", "actually", "now", "currently", "also", "still", "really", "officially",
             "already", "can", "new", "these days", "nowadays", "lately", "right now", "at the moment", "today",
             "as well", "too", "yesterday", "last week", "last month", "last year", "every day"],
    first_person=["i", "me", "my", "we", "our", "myself", "user"],
    possessives=["my", "our"],
    third_person=["he", "she", "they", "it", "him", "her", "them", "his", "their", "this", "that"],
    articles=["a", "an", "the", "my", "our", "his", "her"],
    relations=[*"mom mum mother dad father parent sister brother sibling son daughter kid child baby wife husband"
               " partner spouse fiance fiancee girlfriend boyfriend cousin aunt uncle niece nephew grandma grandmother"
               " grandpa grandfather grandparent friend roommate flatmate housemate neighbour neighbor colleague"
               " coworker boss manager doctor doc dentist therapist teacher coach landlord landlady trainer tutor"
               " mentor dog cat puppy kitten pet bird rabbit hamster horse in-law stepmom stepdad stepson stepdaughter"
               " twin bestie bff family team".split()],
    change_verbs=[*"switch change move raise lower increase decrease reduce cut drop rise grow bump up climb fall"
                  " reschedule replace trade swap upgrade downgrade become turn shift transfer convert relocate"
                  " adjust update renew extend shorten push postpone".split()],
    replacing_verbs=["replace", "trade", "swap", "ditch", "sell", "exchange", "leave", "quit"],
    ending_verbs=["stop", "quit", "cancel", "lose", "sell", "end", "drop", "ditch", "leave", "finish", "retire",
                  "pay off", "give up", "move out", "break up"],
    many_relations=[*"friend sibling sister brother cousin aunt uncle niece nephew kid child son daughter"
                    " grandparent grandchild neighbour neighbor colleague coworker roommate flatmate housemate"
                    " classmate pet dog cat bird".split()],
    genders={
        **dict.fromkeys("son brother dad father husband boyfriend uncle nephew grandpa grandfather stepdad stepson"
                        " fiance".split(), "m"),
        **dict.fromkeys("daughter sister mom mum mother wife girlfriend aunt niece grandma grandmother gran stepmom"
                        " stepdaughter fiancee landlady".split(), "f"),
    },
    relation_nouns={
        **dict.fromkeys("sister brother sibling twin sis bro".split(), "SIBLING_OF"),
        **dict.fromkeys("wife husband partner spouse fiance fiancee fiancé fiancée girlfriend boyfriend gf bf hubby"
                        " missus".split(), "PARTNER_OF"),
        **dict.fromkeys("mom mum mother dad father parent mama papa mommy mummy daddy stepmom stepdad stepmother"
                        " stepfather".split(), "PARENT_OF"),
        **dict.fromkeys("son daughter kid child baby stepson stepdaughter toddler boy girl".split(), ">PARENT_OF"),
        **dict.fromkeys("cousin aunt uncle niece nephew grandma grandmother grandpa grandfather grandparent gran granny"
                        " grandson granddaughter grandchild grandkid in-law".split(), "RELATIVE_OF"),
        **dict.fromkeys("friend bestie bff buddy pal mate roommate flatmate housemate".split(), "FRIEND_OF"),
        **dict.fromkeys("colleague coworker co-worker teammate".split(), "COLLEAGUE_OF"),
        **dict.fromkeys("boss manager supervisor lead".split(), "MANAGER_OF"),
        **dict.fromkeys("report intern".split(), ">MANAGER_OF"),
        **dict.fromkeys("dog cat puppy kitten pet rabbit bunny hamster parrot bird horse tortoise turtle guinea"
                        " ferret pup".split(), ">HAS_PET"),
    },
    relation_words={
        "live": {"in": "LIVES_IN", "at": "LIVES_IN"}, "move": {"to": "LIVES_IN", "into": "LIVES_IN"},
        "relocate": {"to": "LIVES_IN"}, "settle": {"in": "LIVES_IN"}, "stay": {"in": "LIVES_IN"},
        "base": {"in": "LIVES_IN"}, "be": {"from": "FROM", "in": "LIVES_IN"},
        "grow up": {"in": "FROM"}, "bear": {"in": "FROM"}, "raise": {"in": "FROM"},
        "work": {"at": "WORKS_AT", "for": "WORKS_AT", "with": "COLLEAGUE_OF"}, "intern": {"at": "WORKS_AT"},
        "teach": {"at": "WORKS_AT"}, "manage": {"": "MANAGER_OF"}, "join": {"": "WORKS_AT"},
        "start": {"at": "WORKS_AT"}, "hire": {"by": "WORKS_AT"},
        "employ": {"by": "WORKS_AT", "at": "WORKS_AT"},
        "job": {"at": "WORKS_AT", "with": "WORKS_AT", "for": "WORKS_AT"}, "position": {"at": "WORKS_AT"},
        "role": {"at": "WORKS_AT"}, "internship": {"at": "WORKS_AT", "with": "WORKS_AT"},
        "postdoc": {"at": "WORKS_AT"}, "placement": {"at": "WORKS_AT", "with": "WORKS_AT"},
        "residency": {"at": "WORKS_AT"}, "fellowship": {"at": "WORKS_AT"}, "shift": {"at": "WORKS_AT"},
        "study": {"at": "STUDIES_AT", "": "STUDIES_AT"}, "student": {"at": "STUDIES_AT"},
        "enrol": {"at": "STUDIES_AT", "in": "STUDIES_AT"}, "enroll": {"at": "STUDIES_AT", "in": "STUDIES_AT"},
        "attend": {"": "STUDIES_AT"}, "member": {"of": "MEMBER_OF"}, "play": {"for": "MEMBER_OF", "in": "MEMBER_OF"},
        "sing": {"in": "MEMBER_OF", "with": "MEMBER_OF"},
        "visit": {"": "VISITED"}, "travel": {"to": "VISITED"}, "fly": {"to": "VISITED"}, "go": {"to": "VISITED"},
        "trip": {"to": "VISITED"}, "holiday": {"in": "VISITED", "to": "VISITED"},
        "vacation": {"in": "VISITED", "to": "VISITED"}, "spend": {"in": "VISITED"},
        "marry": {"": "PARTNER_OF", "to": "PARTNER_OF"}, "date": {"": "PARTNER_OF"},
        "engage": {"to": "PARTNER_OF"},
        "own": {"": "OWNS"}, "drive": {"": "OWNS"}, "buy": {"": "OWNS"},
        "friend": {"with": "FRIEND_OF"},
        "leave": {"": "LIVES_IN WORKS_AT STUDIES_AT MEMBER_OF"}, "quit": {"": "WORKS_AT STUDIES_AT MEMBER_OF"},
        "break up": {"with": "PARTNER_OF"}, "split": {"from": "PARTNER_OF"}, "divorce": {"": "PARTNER_OF"},
    },
    common_places=[*"home town city country countryside abroad work school uni university college campus office bed"
                   " hospital church place house flat apartment village suburbs downtown uptown centre center"
                   " overseas there here mine yours theirs ours europe asia africa".split()],
    relation_phrases={
        "ROLE": ["{named} is {owner}'s {label}", "{named} is my {label}"],
        "LIVES_IN": ["{source} lives in {target}", "I live in {target}"],
        "FROM": ["{source} is from {target}", "I am from {target}"],
        "VISITED": ["{source} visited {target}", "I visited {target}"],
        "WORKS_AT": ["{source} works at {target}", "I work at {target}"],
        "STUDIES_AT": ["{source} studies at {target}", "I study at {target}"],
        "MEMBER_OF": ["{source} is a member of {target}", "I am a member of {target}"],
        "PARTNER_OF": ["{source} is {target}'s partner", "I am {target}'s partner"],
        "FRIEND_OF": ["{source} is friends with {target}", "I am friends with {target}"],
        "COLLEAGUE_OF": ["{source} works with {target}", "I work with {target}"],
        "OWNS": ["{source} owns {target}", "I own {target}"],
        "LOCATED_IN": ["{source} is in {target}", ""],
    },
    relation_cues=[*"live lives lived living move moves moved moving relocate relocated relocating settled based stay"
                   " staying from grew grow raised born work works worked working intern interning teach teaches"
                   " taught manage manages managed join joined joining start started starting hired employed job"
                   " position role internship study studies studied studying student enrolled attend attends attended"
                   " member play plays played playing sing sings sang visit visits visited visiting travel travelled"
                   " traveled trip fly flew flown went go going goes holiday vacation spent spend marry married"
                   " engaged dating date dated own owns owned drive drives drove bought buy friends leave left leaving"
                   " quit quitting broke split divorced".split()],
    chat_words=[*"lol lmao rofl btw tbh omg ngl imo imho fyi idk haha hahaha hehe xd xx xo smh tho fr ikr".split()],
    additive_words=["also", "too", "another", "second", "both", "additionally", "either"],
    plan_verbs=["plan", "consider", "think", "want", "hope", "wish", "dream", "intend", "aim", "debate", "wonder"],
    trailing=["now", "today", "again", "nowadays", "anymore", "currently", "these", "days", "lately", "too"],
    stopwords=["a", "an", "the", "my", "our", "to", "in", "at", "of", "on", "for", "with", "and", "is", "am", "are",
               "be", "every", "all", "after", "some", "any", "i", "me", "called", "named"],
    verb_suffixes=["ing", "ies", "es", "ed", "s"],
    # "make" is income only with an amount (a normaliser below): "she makes a difference" is not
    verb_predicates={"earn": "income", "weigh": "weight", "going": "go", "goes": "go", "doing": "do", "does": "do"},
    single_valued=["income", "weight"],
    normalisers=[
        Normaliser(pattern=rf"{_SUBJ} (?:live|lives|living|reside|resides|am living|is living|are living|am based"
                   rf"|is based|are based|stay|stays|am staying|is staying) (?:in|at) {_OBJ}", predicate="lives_in"),
        Normaliser(pattern=rf"{_SUBJ} (?:moved|relocated|am moving|is moving)(?: back| out| away| over| down| up)?"
                   rf" (?:to|into) {_OBJ}",
                   predicate="lives_in"),
        Normaliser(pattern=rf"{_OBJ} is where {_SUBJ} (?:live|lives|am living|is living)", predicate="lives_in"),
        Normaliser(pattern=rf"{_POSS} home is (?:in )?{_OBJ}", predicate="lives_in"),
        # "joined Stripe", "joined a startup": an employer; "joined a gym", "joined the book club": a membership
        Normaliser(pattern=rf"{_SUBJ} (?:joined(?! (?:[\w'-]+ ){{0,4}}?(?:club|group|gym|class|classes|course|choir"
                   r"|band|league|community|program|programme|circle|society|meetup|forum|network|movement|brigade|crew"
                   r"|squad|chat|mailing list|waitlist|waiting list)\b)"
                   rf"|started (?:a new job |a job |working )?(?:at|with)"
                   rf"|got (?:a |a new )?job (?:at|with)|am employed (?:at|by)|is employed (?:at|by)) {_OBJ}",
                   predicate="works_at"),
        Normaliser(pattern=rf"{_SUBJ} (?:work|works|working|am working|is working|are working) (?:at|for) {_OBJ}",
                   predicate="works_at"),
        Normaliser(pattern=rf"{_OBJ} is where {_SUBJ} (?:work|works)", predicate="works_at"),
        Normaliser(pattern=rf"{_POSS} employer is {_OBJ}", predicate="works_at"),
        Normaliser(pattern=rf"{_SUBJ} (?:got promoted|was promoted|am promoted|is promoted) to {_OBJ}",
                   predicate="job_title"),
        Normaliser(pattern=rf"{_SUBJ} (?:work|works|am working|is working|started working|started (?:a |my )?job"
                   rf"|got (?:a |the )?job|have (?:a )?job|took (?:a |the )?job) as {_OBJ}", predicate="job_title"),
        Normaliser(pattern=rf"{_POSS} (?:job title|job|role|position|profession) is {_OBJ}", predicate="job_title"),
        Normaliser(pattern=rf"{_POSS} {_FAVOURITE} (?P<what>[\w ]+?) is {_OBJ}",
                   predicate="favourite_{what}"),
        Normaliser(pattern=rf"{_OBJ} is {_POSS} {_FAVOURITE} (?P<what>[\w ]+)",
                   predicate="favourite_{what}"),
        Normaliser(pattern=rf"{_POSS} {_PARTNER}'s name is {_OBJ}", predicate="partner"),
        Normaliser(pattern=rf"{_POSS} {_PARTNER} is (?:called|named) {_OBJ}", predicate="partner"),
        # "my wife is Sarah" names her; "my wife is vegetarian" says something of her (another subject)
        Normaliser(pattern=rf"{_POSS} {_PARTNER} is {_OBJ}", predicate="partner", names_object=True),
        Normaliser(pattern=rf"(?P<object>[\w ]+) is {_POSS} {_PARTNER}", predicate="partner", names_object=True),
        Normaliser(pattern=rf"(?P<object>[\w ]+) is {_POSS} (?:manager|boss)", predicate="manager",
                   names_object=True),
        Normaliser(pattern=rf"{_POSS} name is {_OBJ}", predicate="name"),
        Normaliser(pattern=rf"{_POSS} (?:manager|boss) is (?:called|named) {_OBJ}", predicate="manager"),
        Normaliser(pattern=rf"{_SUBJ} (?:am|is|are) (?:called|named) {_OBJ}", predicate="name"),
        # One family for who a person's partner is and their relationship status: "married to x" keeps
        # "married", so "engaged to sam" then "married sam" is a change, and "single" meets "dating kim".
        Normaliser(pattern=rf"{_SUBJ} (?:am|is|are|got) (?P<what>married|engaged) to {_OBJ}", predicate="partner",
                   object_template="{what} {object}"),
        Normaliser(pattern=rf"{_SUBJ} (?:married|wed) {_OBJ}", predicate="partner", object_template="married {object}"),
        Normaliser(pattern=rf"{_SUBJ} (?:am|is|are) partnered to {_OBJ}", predicate="partner"),
        Normaliser(pattern=rf"{_SUBJ} (?:am|is|are|started) (?:dating|seeing|going out with)"
                   rf" (?:someone |a \w+ )?(?:called |named )?{_OBJ}", predicate="partner",
                   object_template="dating {object}"),
        Normaliser(pattern=rf"{_SUBJ} (?:am|is|are|got) (?P<object>single|married|divorced|widowed|(?:a )?widow(?:er)?"
                   r"|engaged|separated|in a relationship)(?: again| (?:in|on|since|last|this) .+)?",
                   predicate="partner"),
        Normaliser(pattern=rf"{_SUBJ} (?:have|has) (?:a|an) {_PARTNER} (?:named|called) {_OBJ}",
                   predicate="partner"),
        # "i have a girlfriend now" after "i am single": the relationship status, no name given
        Normaliser(pattern=rf"{_SUBJ} (?:have|has|got) (?:a|an) (?P<object>{_PARTNER})", predicate="partner"),
        # a diet is one regime at a time: "i am vegan" after "i am vegetarian" is a change
        Normaliser(pattern=rf"{_SUBJ} (?:am|is|are|eat|eats|stay|stays) (?:a |an )?(?:strict |strictly |fully |full "
                   r"|mostly |completely )?(?P<object>vegetarian|vegan|pescatarian|pescetarian|omnivore|omnivorous"
                   r"|carnivore|flexitarian|plant-based|plant based)(?: diet)?(?: (?:since|for) .+)?",
                   predicate="diet"),
        Normaliser(pattern=rf"{_SUBJ} (?:am|is|are|got|turned) (?P<object>\d+)(?: years old| years)?",
                   predicate="age"),
        Normaliser(pattern=rf"{_POSS} age is {_OBJ}", predicate="age"),
        Normaliser(pattern=rf"{_SUBJ} (?:have|has|have got|got) (?P<object>\w+) (?:kids|children|kid|child)",
                   predicate="children"),
        # "i'm a mom of 3", "a parent of two": how many children, said of the parent
        Normaliser(pattern=rf"{_SUBJ} (?:am|is|are) (?:a )?(?:proud )?(?:mom|mum|mother|dad|father|parent)"
                   r" of (?P<object>\d+)(?: (?:kids|children|boys|girls))?", predicate="children"),
        # "i have three cats now" after "i have two cats": how many is one value
        Normaliser(pattern=rf"{_SUBJ} (?:have|has|own|owns) (?P<object>\d+|two|three|four|five|six|seven|eight|nine"
                   r"|ten|a dozen) (?P<what>[a-z]+?)(?:es|s)?", predicate="count_{what}"),
        Normaliser(pattern=rf"{_SUBJ} (?:drive|drives|am driving|is driving) {_OBJ}", predicate="drives"),
        Normaliser(pattern=rf"{_POSS} car is {_OBJ}", predicate="drives"),
        Normaliser(pattern=rf"{_POSS} (?:phone number|number) is {_OBJ}", predicate="phone"),
        Normaliser(pattern=rf"{_POSS} (?:manager|boss) is {_OBJ}", predicate="manager", names_object=True),
        Normaliser(pattern=rf"{_POSS} (?:email|email address) is {_OBJ}", predicate="email"),
        Normaliser(pattern=rf"{_POSS} (?:birthday|date of birth) is (?:on )?{_OBJ}", predicate="birthday"),
        Normaliser(pattern=rf"{_SUBJ} (?:was|were) born in {_OBJ}", predicate="birthplace"),
        Normaliser(pattern=rf"{_SUBJ} (?:am|is|are|come|comes) originally from {_OBJ}", predicate="birthplace"),
        Normaliser(pattern=rf"{_OBJ} is where {_SUBJ} (?:was|were) born", predicate="birthplace"),
        Normaliser(pattern=rf"{_SUBJ} (?:make|makes|am making|is making|are making|earn|earns|am earning|is earning"
                   r"|are earning) (?P<object>(?:about |around |roughly |nearly |almost |over |under |just )?"
                   r"(?:[$€£]?\s?\d[\d,.]*\s?(?:k|m|grand|thousand|million|dollars|euros|pounds|bucks)?\b.*"
                   r"|(?:[\w-]+ )?(?:figures|thousand|grand|million|hundred)\b.*|(?:more|less|good|decent|great|better)"
                   r" money\b.*))", predicate="income"),
        Normaliser(pattern=rf"{_SUBJ} (?:would rather|prefer to|prefers to) (?:drink |eat |have |use |go )?"
                   r"(?P<object>.+?)(?: than .+| over .+| instead of .+)?", predicate="likes", single_valued=False),
        # "i like ramen best": a favourite whose kind is unsaid meets any held favourite close in meaning
        Normaliser(pattern=rf"{_SUBJ} (?:like|likes|love|loves|enjoy|enjoys) (?P<object>.+?) (?:best|most|the most)",
                   predicate="favourite"),
        Normaliser(pattern=rf"{_SUBJ} (?:like|likes|love|loves|enjoy|enjoys|prefer|prefers|adore|adores)"
                   r" (?P<object>.+?)(?: over .+| to .+| than .+)?", predicate="likes",
                   single_valued=False),
        Normaliser(pattern=rf"{_SUBJ} (?:dislike|dislikes|hate|hates) {_OBJ}", predicate="dislikes",
                   single_valued=False),
        Normaliser(pattern=rf"{_SUBJ} (?:have|has|own|owns|got) {_OBJ}", predicate="has", single_valued=False),
        # "i'm a junior designer at figma": a title at a place of work is a job, one at a time (not a member, a
        # regular, a volunteer or a student of a place, nor a pro or a beginner at something)
        Normaliser(pattern=rf"{_ONE} (?:am|is|are) (?:a|an) (?P<object>(?!(?:member|regular|volunteer|customer|client"
                   rf"|patient|guest|fan|student|resident|visitor|subscriber|participant|attendee|tourist|friend|pro"
                   rf"|expert|beginner|novice|amateur|natural|whiz|genius|newbie|champ|champion|wizard|ace|big"
                   rf"|total|complete|huge|real)\b)(?:[\w'-]+ ){{0,3}}?[\w'-]+ at .+)", predicate="job_title"),
        # Any other verb: its stem is the predicate, additive unless the pack says otherwise.
        Normaliser(pattern=rf"{_ONE} (?:am|is|are) (?P<what>\w+ing)(?: {_OBJ})?", predicate="{what}",
                   single_valued=False, fallback=True),
        Normaliser(pattern=rf"{_ONE} (?:am|is|are) (?:a|an) {_OBJ}", predicate="is_a", single_valued=False,
                   fallback=True),
        Normaliser(pattern=rf"{_ONE} (?:am|is|are) {_OBJ}", predicate="is", single_valued=False, fallback=True),
        # "every morning i go for a run": a phrase before a first-person subject
        Normaliser(pattern=rf"(?:[\w' ]+ )?(?P<subject>i|we) (?P<what>\w+)(?: {_OBJ})?", predicate="{what}",
                   single_valued=False, fallback=True),
        Normaliser(pattern=rf"{_ONE} (?P<what>\w+)(?: {_OBJ})?", predicate="{what}", single_valued=False,
                   fallback=True),
    ],
)
# fmt: on

define_locale_pack(ENGLISH)
