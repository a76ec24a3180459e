"""English rule table: general constructions, one rule each (see ``_patterns`` for the machinery)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from langchain_lifecycle_memory.schema import normalize_value
from langchain_lifecycle_memory.vocabulary import AttributeSpec
from langchain_lifecycle_memory.write._dates import starts_ahead
from langchain_lifecycle_memory.write._lexicon import (
    CJK,
    EN_VERBS,
    NOT_OCCUPATION,
    ORG_SUFFIX,
    alternation,
    is_condition,
    is_medicine,
    is_term,
    lookup,
)
from langchain_lifecycle_memory.write._patterns import (
    ADV,
    CONJ,
    E_CLAUSE,
    E_PREP,
    EN_VERB,
    IAM,
    Candidate,
    Rule,
    V,
    acceptable,
    en_concept,
    en_rule,
    head_noun,
    verb_slot,
)
from langchain_lifecycle_memory.write._patterns import EN_I as I_
from langchain_lifecycle_memory.write._values import clean

__all__ = ["EN_APPOSITIVE", "EN_RULES", "occupation"]

EN_APPOSITIVE = re.compile(r"(?:a|an|the)\s+(?!.*\b(?:I|me|my|is|are|was|were|am|has|have|had)\b)", re.IGNORECASE)
"""A noun phrase right after a fact's value, which describes it: "a rental, a white Kia Niro EV" (no verb)."""

Specs = dict[str, AttributeSpec]


def _ing(verb: str) -> str:
    head, _, rest = verb.partition(" ")
    if head.endswith("ie"):
        head = head[:-2] + "ying"
    elif re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", head):  # one syllable ending consonant-vowel-consonant
        head += head[-1] + "ing"
    elif head.endswith("e") and not head.endswith("ee"):
        head = head[:-1] + "ing"
    else:
        head += "ing"
    return f"{head} {rest}".strip()


_EN_ING = "(?:" + "|".join(sorted({_ing(v) for v in EN_VERBS if " " not in v or v.startswith(("listen", "volunteer"))},
                                   key=len, reverse=True)) + ")"  # fmt: skip
_NUMBER = (
    r"\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    r"seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
)


# ---- handlers ---------------------------------------------------------------------------------


_TRADE = re.compile(r"(?:eer|ologist|grapher|ician)$", re.IGNORECASE)


def occupation(value: str) -> bool:
    """An occupation by its word, or by the ending of its last word (engineer, geologist, technician)."""
    if normalize_value(value) in NOT_OCCUPATION:
        return False
    return is_term("occupation", value, "<") or bool(_TRADE.search(value.split()[-1])) and len(value.split()) <= 3


_A_PLACE = re.compile(r"(?:an?|the)\s", re.IGNORECASE)
"""A workplace described, not named ("at a ski lodge", "at the boatyard")."""
_PATRON = re.compile(r"\b(?:regular|member|customer|client|guest|patient|fan|visitor|subscriber)s?$", re.IGNORECASE)
_INTENSIFIER = r"(?:big|huge|lifelong|die-hard|massive|loyal|total|true|real|great|firm|complete)"
_ROLE = re.compile(r"(?!(?:former|ex|old)\b|" + _INTENSIFIER + r"\b)(?:[\w-]+ ){1,2}[a-z-]+(?:er|or|ist|ian|ant|ent)")
"""A kind of worker: nouns and an agent noun ("copy editor", "extension agent"), not a "huge sucker"."""


def _identity(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """For "I am a/an <noun phrase> (at <Org>)": an occupation, a diet, a fan, a native speaker."""
    value = clean(m.group("v"), zh)
    org = (m.group("org") or "").strip()
    value = re.sub(r"^new\s+", "", value) if org else value  # "the new principal timpanist for the symphony"
    worker = bool(org and _ROLE.fullmatch(value)) and not _PATRON.search(value)  # "a copy editor for a journal"
    org = "" if _A_PLACE.match(org) and m.group("prep").casefold() != "at" else org  # "a sucker for a good book"
    if not acceptable(value, zh):
        return
    if native := re.fullmatch(r"native (\w+) speaker", value, re.IGNORECASE):
        yield Candidate("native_language", native.group(1), 80, m.start("v"))
    elif fan := re.fullmatch(r"(?:" + _INTENSIFIER + r" )*(.+?) (?:fan|supporter)", value):
        yield Candidate("fan_of", fan.group(1), 70, m.start("v"), "preference", cardinality="set")
    elif is_term("diet", value):
        yield Candidate("diet", value, 85, m.start("v"))
    elif occupation(value) or worker or ((org[:1].isupper() or _A_PLACE.match(org)) and not _PATRON.search(value)):
        # a role "at <Org>" or "at a ski lodge" is a job (the pattern ignores case: "a ski lodge" is matched as the org)
        student = re.search(r"\bstudent$", value, re.IGNORECASE)
        yield Candidate("job", value, 80, m.start("v"))  # "junior copywriter" too: a level is part of the job
        if org and org[:1].isupper():
            yield Candidate("school" if student else "employer", clean(org, zh), 75, m.start("org"))


_STATES = (
    (r"(?:lactose|gluten|fructose|dairy|histamine)[ -]intoleran(?:t|ce)|celiac|coeliac", "diet_restriction", "set"),
    (r"vegetarian|vegan|pescatarian|pescetarian", "diet", None),
    (r"(?:left|right)-handed|ambidextrous", "handedness", None),
    (r"married|divorced|single|engaged|widowed|separated", "marital_status", None),
    (r"(?:[\w-]+ )?(?:colou?r-?blind|(?:near|far|short|long)-sighted|diabetic|pregnant|retired|deaf|hard of hearing)",
     "trait", "set"),
)  # fmt: skip


def _state(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """For "I am <state>": a lasting condition, not a mood ("lactose intolerant", "left-handed", "retired")."""
    value = clean(m.group("v"), zh)
    if fear := re.fullmatch(r"(?:afraid|scared|terrified|frightened) of (.+)", value, re.IGNORECASE):
        yield Candidate("fear", fear.group(1), 75, m.start("v"), "profile", cardinality="set")
        return
    for pattern, attribute, cardinality in _STATES:
        if re.fullmatch(pattern, value, re.IGNORECASE):
            yield Candidate(attribute, value, 80, m.start("v"), "profile", cardinality=cardinality)
            return


def _work(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """Work as / at / for / in, joined / started at: the job, the employer (a company or a place) or the field."""
    verb, prep = m.group("verb").casefold(), (m.group("prep") or "").casefold()
    value = clean(m.group("v"), zh)
    if not acceptable(value, zh):
        return
    upper = value[:1].isupper()
    if verb in ("work", "am working", "am") and not prep:
        return
    if verb == "joined" and not upper:
        yield Candidate("member_of", value, 70, m.start("v"), "fact", cardinality="set")
    elif prep == "as":
        yield Candidate("job", value, 80, m.start("v"))
    elif verb == "am" and not (ORG_SUFFIX.search(value) or re.search(r"\bjob\b", m.string, re.IGNORECASE)):
        return
    elif prep == "in":
        yield Candidate("city" if upper and not ORG_SUFFIX.search(value) else "work_field", value, 70, m.start("v"))
    else:
        yield Candidate("employer", value, 80, m.start("v"), "profile")


_HOME = {"live": "city", "am living": "city", "am based": "city", "reside": "city", "moved": "city",
         "have moved": "city", "relocated": "city", "have relocated": "city", "was born": "birthplace",
         "grew up": "hometown", "am from": "hometown", "come from": "hometown", "am moving": "moving_to",
         "move": "moving_to", "will move": "moving_to", "am going to move": "moving_to"}  # fmt: skip


def _home(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    value = clean(m.group("v"), zh)
    attribute = _HOME.get(re.sub(r"\s+", " ", m.group("verb").casefold()))
    if not attribute or not acceptable(value, zh):
        return
    if not (value[:1].isupper() or CJK.match(value)):  # a name, capitalised or in a script without case ("深圳")
        if attribute == "city" and m.group("verb").casefold() in ("live", "am living"):
            yield Candidate("housing", value, 65, m.start("v"), "profile")
        return
    if attribute == "moving_to" and starts_ahead(m.string):  # "I'm moving to Oslo next month": the city from then
        attribute = "city"
    kind = "event" if attribute == "moving_to" else "profile"
    yield Candidate(attribute, value.split(",")[0], 75, m.start("v"), kind)


_NEGATED = re.compile(r"\b(?:not|never|no longer)(?:\s+\w+){0,2}\s*$", re.IGNORECASE)
"""A negation just before the match, an adverb or two apart ("not actually allergic to…")."""


def _condition(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """A health condition: whatever a diagnosis names, or what one has, lives with or suffers from if it is one."""
    value = clean(m.group("v"), zh)
    if acceptable(value, zh) and (m.group("dx") or is_condition(value)) and not _NEGATED.search(m.string[: m.start()]):
        yield Candidate("medical_condition", value, 80, m.start("v"), "profile", cardinality="set")


def _medicine(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """On or taking X, said of anyone, if X is a medicine by its name's form (:func:`is_medicine`); off it: its end."""
    value = clean(m.group("v"), zh)
    if not (acceptable(value, zh) and is_medicine(value)):
        return
    if m.group("off"):  # "I'm no longer on lisinopril": the slot that holds it ends
        yield Candidate(None, value, 90, m.start("v"), confidence=0.8, operation="retract")
    elif not _NEGATED.search(m.string[: m.start()]):
        yield Candidate("takes", value, 80, m.start("v"), "profile", cardinality="set")


def _allergic(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """Allergic to X, said of anyone; not when negated (``_verb`` reads "I'm not allergic to X" as its end)."""
    value = clean(m.group("v"), zh)
    if acceptable(value, zh) and not _NEGATED.search(m.string[: m.start()]):
        yield Candidate("allergy", value, 85, m.start("v"))


def _verb(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """I (no longer / stopped / don't ... anymore / never) <verb of habit> X: assert, retract or a standing habit."""
    neg = (m.group("neg") or "").casefold()
    verb = (m.group("verb") or "").strip()
    value = clean(m.group("v"), zh)
    concept = en_concept(verb) if verb and not verb.casefold().startswith("allergic") else None
    if neg in ("not", "do not", "never") and verb.casefold().startswith("allergic"):
        if acceptable(value, zh):  # "I'm not allergic to rye after all": the slot that holds it ends
            yield Candidate(None, value, 90, m.start("v"), confidence=0.8, operation="retract")
        return
    if neg in ("not", "do not", "never") and not m.group("more"):
        yield from _avoid(m, concept or en_concept(value), value if concept else "", zh)
        return
    if not acceptable(value, zh) or not (neg or concept):
        return
    if verb.casefold().startswith("allergic"):
        attribute: str | None = "allergy"
    elif concept:
        concept = _play_kind(concept, m, value)
        attribute, value, cardinality = verb_slot(concept, value, specs)
        if not neg:
            yield Candidate(attribute, value, 65, m.start("v"), None, 0.75, "assert", False,
                            None if attribute in specs else cardinality, concept)  # fmt: skip
            return
    else:
        found = head_noun(value, specs) or lookup(value)
        attribute, value = found if found else (None, value)
    yield Candidate(attribute, value, 90, m.start("v"), confidence=0.8, operation="retract", concept=concept)


def _play_kind(concept: str, m: re.Match[str], value: str) -> str:
    """The kind of "play": "play the cello" is music, "play tennis" (a bare noun) a sport, a title a game."""
    if concept != "play" or lookup(value, ("instrument", "sport", "hobby")):
        return concept
    if re.search(r"\bplay(?:s|ing)?\s+the\s", m.group(0), re.IGNORECASE):
        return "play_music"
    return "play" if value[:1].isupper() else "play_sport"


def _avoid(m: re.Match[str], concept: str | None, value: str, zh: bool) -> Iterator[Candidate]:
    """A standing habit of not doing something: "I don't eat meat", "I never drink"."""
    if concept not in ("eat", "drink", "smoke", "use") or m.group("neg").casefold() == "not":
        return
    if value and (not acceptable(value, zh) or value.casefold() in ("much", "often")):
        return
    value = value or {"drink": "alcohol", "smoke": "smoking"}.get(concept, "")
    if value:
        yield Candidate("avoids", value, 80, m.start("neg"), "profile", cardinality="set")


_ANYMORE = re.compile(r"^[^,;.!?]*?\bany ?more\b", re.IGNORECASE)


def _like(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """Like / love / enjoy / prefer X (or hate / can't stand X): the slot of X's verb, its lexicon, prefers or likes."""
    raw = m.group("v").strip()
    value = clean(raw, zh)
    if not acceptable(value, zh) or re.match(r"(?:my|our|his|her|their|when|how)\b", raw, re.IGNORECASE):
        return
    if m.group("neg") and _ANYMORE.search(raw + m.string[m.end("v") :]):
        # "I don't like horror films anymore": the liking ended, whatever slot holds it (as "no longer like")
        yield Candidate(None, value, 90, m.start("v"), confidence=0.8, operation="retract")
        return
    if m.group("neg"):
        yield Candidate("dislikes", value, 60, m.start("v"), "preference", cardinality="set")
        return
    if concept := en_concept(m.group("verb") or ""):
        attribute, value, cardinality = verb_slot(concept, value, specs)
    elif found := head_noun(value, specs) or lookup(value):
        (attribute, value), cardinality = found, None
    elif m.group("pref") and len(value.split()) <= 3:
        attribute, cardinality = "prefers", "set"  # a choice: a new one replaces one of its kind (update.py)
    elif re.fullmatch(r"[a-z]+ing(?: [\w'-]+){0,3}", value):
        attribute, cardinality = "hobby", None
    elif len(value.split()) <= 3 and not re.match(r"the\b", raw, re.IGNORECASE):
        attribute, cardinality = "likes", "set"
    else:
        return  # "I love the energy of this city": a remark about something at hand, not a taste
    yield Candidate(attribute, value, 60, m.start("v"), "preference", cardinality=cardinality, concept=concept)


_ONGOING = {"reading": "current_book", "training for": "training_for", "saving for": "saving_for",
            "saving up for": "saving_for", "preparing for": "preparing_for", "working on": "project",
            "working from": "work_location", "staying at": "staying_at", "staying in": "staying_at",
            "staying with": "staying_at", "craving": "craving",
            "in the mood for": "craving"}  # fmt: skip


def _ongoing(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """For "I'm reading / training for / working from X": what the speaker is doing these days."""
    value = clean(m.group("v"), zh)
    if named := re.search(r"\b(?:called|named|titled) (.+)$", value):
        value = named.group(1).strip("\"'“” ")
    verb = re.sub(r"\s+", " ", m.group("verb").casefold())
    if not acceptable(value, zh) or re.fullmatch(r"(?:new |cool |great |big )*(?:project|book|novel)s?", value, re.I):
        return
    if verb in ("learning", "studying"):
        language = is_term("language", value)
        yield Candidate("learning_language" if language else "learning", value, 75, m.start("v"), "profile")
    elif verb.startswith(("planning", "going")):
        yield Candidate("travel_plan", value, 75, m.start("v"), "event")
    elif attribute := _ONGOING.get(verb):
        yield Candidate(attribute, value, 70, m.start("v"), "preference" if verb == "reading" else "fact")
    elif concept := en_concept(verb):
        attribute, value, cardinality = verb_slot(concept, value, specs)
        yield Candidate(attribute, value, 65, m.start("v"), None, cardinality=cardinality, concept=concept)


def _named(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """For "I have a <pet / child> named X", "my dog Pixel (is a border collie)", "I have two hamsters"."""
    desc = m.group("desc").strip().casefold()
    name = (m.groupdict().get("name") or "").strip()
    one = desc[:-1] if desc.endswith("s") and not desc.endswith("ss") else desc
    if re.fullmatch(r"(?:son|daughter|kid|child|boy|girl|baby)", one):
        if name:
            yield Candidate("child", name, 80, m.start("name"), "profile")
        return
    naming = m.groupdict().get("naming")  # None: "a dog named X"; "": "my dog X" (a name only after a pet word)
    explicit = bool(name) and (naming is None or naming.strip(" ,") != "")
    if not explicit and not (is_term("pet", one, "<") or is_term("dog_breed", one, "<")):
        return  # "my favourite band Queen": only what one says one named is a pet without knowing the word
    if name and re.fullmatch(r"(?:friend|sister|brother|mom|dad|mother|father|wife|husband|partner|boss|colleague|"
                             r"name|neighbou?r|teacher|coach|doctor|cousin|uncle|aunt)\w*", one):  # fmt: skip
        return
    yield Candidate("pet", name or one, 85 if name else 70, m.start(), "profile")
    breed = (m.groupdict().get("breed") or "").strip()
    if breed and one in ("dog", "puppy"):
        yield Candidate("dog_breed", clean(breed, zh), 80, m.start("breed"), "profile")
    elif is_term("dog_breed", one, "<"):
        yield Candidate("dog_breed", one, 75, m.start(), "profile")


def _change(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """For "I've switched to X": X replaces what the speaker used before (named by X's head noun or lexicon)."""
    value = clean(m.group("v"), zh)
    if not acceptable(value, zh):
        return
    found = head_noun(value, specs) or lookup(value)
    attribute, value = found if found else ("uses", value)
    yield Candidate(attribute, value, 90, m.start("v"), None if found else "preference", concept="use", change=True)


def _study(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    value = clean(m.group("v"), zh)
    if acceptable(value, zh):
        learning = is_term("language", value)
        yield Candidate("learning_language" if learning else "major", value, 75, m.start("v"), "profile")
    if org := m.group("org"):
        yield Candidate("school", clean(org, zh), 75, m.start("org"), "profile")


_COMMUTE_VERBS = ("bike", "cycle", "walk", "drive", "run", "skate", "carpool")
_COMMUTE_ING = {_ing(v): v for v in (*_COMMUTE_VERBS, "ride")}


def _forms(*verbs: str) -> str:
    """A verb's base and -ing forms, the -ing one after any auxiliary: "take", "am taking", "started taking"."""
    ings = "|".join(_ing(v) for v in verbs)
    return f"(?:(?:am |have been |started |began |keep )?(?:{ings})|{'|'.join(verbs)})"


def _commute(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """For "I bike / am riding my scooter / started taking the bus to work", "I commute by e-scooter"."""
    verb = m.group("verb") or ""
    ing = verb.rsplit(" ", 1)[-1].lower()
    said = m.groupdict()
    value = clean(said.get("v") or said.get("by") or _COMMUTE_ING.get(ing, ing), zh)
    if acceptable(value, zh):
        yield Candidate("commute", value, 75, m.start(), "fact")


# ---- the rules --------------------------------------------------------------------------------
# Higher priority wins a slot within one sentence; the later mention wins a tie.

_NOT_NOUN = (
    r"(?!(?:question|problem|point|guess|plan|goal|bad|fault|pleasure|day|week|life|head|back|mind|turn|idea|"
    r"opinion|concern|issue|hope|dream|wish|bet|excuse|own|way|god|favou?rites?|passions?|heart|love|family|"
    r"friends?|kids?|children|parents?|fam|soul|body|job|work|style|time|thing|stuff|goals?|dreams) (?:is|are)\b)"
)
_MAIN_CLAUSE = r"(?:^|[,;:]\s*|\b(?:and|but|so|also|now|because|since|plus)\s+)"
_CHANGE = r"(?:have )?(?:switched|changed|converted|moved over|upgraded|downgraded|gone back)(?: over)?"
_STOP = r"no longer|(?:have\s+)?(?:stopped|quit|given up|gave up|cancell?ed)|not|do not|never"
_HABIT = alternation(v for v in EN_VERBS if v != "take")

EN_RULES: tuple[Rule, ...] = (
    # change and retraction
    en_rule(I_ + _CHANGE + r" (?:from \S+(?: \S+)? )?to (?:using |an? |the )?" + V + E_PREP, handler=_change),
    # copula and possession
    en_rule(_MAIN_CLAUSE + r"my " + _NOT_NOUN + r"(?:(?:all-time|absolute|very|personal|current|new|top|own|usual) )*"
            r"(?P<f>favou?rite|go-to|preferred|main)?\s*(?P<n>[a-z][\w -]{1,30}?) (?:is|are) (?:called |named )?"
            r"(?:(?:in|at|near|on) )?(?:an? |the )?" + V + E_CLAUSE, "?n", priority=75),
    en_rule(r"^(?:(?:[\w ]+), )?(?P<v>[^,;]+?) (?:is|are) my (?:(?:all-time|absolute|very|personal|current|new|top) )*"
            r"(?P<f>favou?rite|go-to|preferred|main) (?P<n>[a-z][\w -]{1,30}?)" + E_CLAUSE, "?fn", priority=80),
    en_rule(I_ + r"(?:use|am using|have been using|rely on) (?P<v>[^,;!?]+?) as (?:my|an?|the|our) "
            r"(?P<n>[a-z][\w -]{1,30}?)" + E_PREP, "?n", priority=80),
    en_rule(IAM + r"(?:an?|the) " + ADV + V + r"(?: (?P<prep>at|for|with) (?P<org>[A-Z][^,;!?]*?))?" + E_PREP,
            handler=_identity),
    en_rule(IAM + r"(?P<v>(?:[\w-]+ )?[\w-]+(?: of [\w -]+?)?)" + E_CLAUSE, handler=_state),
    en_rule(IAM + r"(?P<v>" + _NUMBER + r")(?: years old| yrs old| years of age)?" + E_CLAUSE, "age", priority=80,
            kind="profile"),
    en_rule(r"\ballergic to " + V + E_CLAUSE, handler=_allergic),
    en_rule(I_ + r"(?:(?P<dx>(?:was |have been |got |am )?diagnosed with)|have got|have|got|suffer from|live with"
            r"|am living with|deal with) (?:a |an |mild |severe |chronic |bad )?" + V + E_PREP, handler=_condition),
    en_rule(I_ + r"have an? " + V + r" allergy", "allergy", priority=85),
    en_rule(I_ + r"(?:(?P<off>am (?:no longer|not) on|am off|(?:came|went|got) off)|(?:am |have been |was )?" + ADV
            + r"(?:(?:started|began) (?:taking |on )|taking |take |on ))(?:a |an |some )?" + V + E_PREP,
            handler=_medicine),
    en_rule(r"\b(?P<off>took|(?:has|have|had) taken) me off (?:the |my )?" + V + E_PREP, handler=_medicine),
    # pets and children with names
    en_rule(I_ + r"(?:have|have got|got|own|adopted) (?:an?|two|three|\d+) "
            r"(?P<desc>[a-z][a-z -]{1,40}?),? (?:named|called) (?P<name>(?-i:[A-Z])[\w'-]+(?: (?-i:[A-Z])[\w'-]+)?)",
            handler=_named),
    en_rule(r"\bmy (?P<desc>(?:(?!\b(?:is|are|was|were)\b)[a-z -]){1,30}?)"
            r"(?P<naming>'s name is| is (?:named|called)|,?) "
            r"(?P<name>(?-i:[A-Z])[\w'-]+)"
            r"(?: is an? (?P<breed>[a-z][a-z -]+?))?" + E_CLAUSE, handler=_named),
    en_rule(I_ + r"(?:have|own|got) (?:an?|two|three|\d+) (?P<desc>[a-z][a-z -]{1,30}?)" + E_CLAUSE, handler=_named),
    # work, study, home
    en_rule(I_ + r"(?P<verb>work|am working|joined|started at|started working at|started a new job at|got a job at|"
            r"am)(?: (?:nights|days|part-time|full-time|remotely))*(?: (?P<prep>as|at|for|in))? (?:an? |the )?" + V
            + E_PREP, handler=_work),
    en_rule(I_ + r"(?:study|am studying|major in|am majoring in|am doing a (?:degree|masters|master's|phd) in) "
            r"(?!for\b|hard\b)" + V + r"(?: at (?P<org>[A-Z][^,;!?]*?))?" + E_PREP, handler=_study),
    en_rule(I_ + r"(?P<verb>live|am living|am based|reside|(?:have )?moved|(?:have )?relocated|was born|grew up|"
            r"am from|come from|am moving|(?:will |am going to )?move) "
            r"(?:back |here |there |down |up |out |alone |together |by (?:my|him|her|them|our)sel(?:f|ves) "
            r"|on (?:my|his|her|their|our) own )?"
            r"(?:in|to|near|at|from|on) (?:a |an |the )?" + V
            + E_PREP, handler=_home),
    en_rule(I_ + r"teach (?:at (?P<org>[A-Z][^,;!?]*?) )?" + V + E_PREP, "teaching", priority=75, kind="profile"),
    en_rule(I_ + r"(?:(?P<verb>" + _forms(*_COMMUTE_VERBS) + ")|" + _forms("ride", "take") + r" (?:my |a |an |the )?"
            + V + r") to (?:work|the office|school|campus)|" + I_ + r"commute (?:by|on|via|with) (?P<by>[^,;!?]+?)"
            + E_PREP, handler=_commute),
    # the way to work as what it takes: "Cycling to the office takes 20 minutes", "Riding my scooter to work takes…"
    en_rule(r"^(?P<verb>" + "|".join(_COMMUTE_ING) + r")(?: (?:my|a|an|the) "
            r"(?P<v>[^,;!?]+?))?(?: (?:along|through|across|past|over|via|down|up) [^,;!?]+?)? to (?:work|the office|"
            r"school|campus)(?: now)? (?:only |now |usually )?takes\b", handler=_commute),
    # verbs of use and habit, likes and dislikes, ongoing activities
    en_rule(I_ + r"(?:am\s+)?(?:(?P<neg>" + _STOP + r")\s+" + ADV + r")?(?:can |still )?(?:(?P<verb>allergic to|"
            + _HABIT + "|" + _EN_ING + r")\s+)?(?!(?:" + CONJ + r")\b)(?:an?\s+|the\s+|some\s+|my\s+|any\s+)?" + V
            + r"(?P<more>\s+any ?more)?" + E_PREP, handler=_verb),
    en_rule(I_ + r"take (?P<v>[\w-]+(?: \d+ ?mg)?) (?=every|each|daily|before|after|at night|in the morning|twice|"
            r"once|for my)", "takes", priority=70, kind="profile", cardinality="set"),
    en_rule(I_ + r"(?:(?P<neg>hate|dislike|detest|cannot stand|do not like|do not enjoy|am not a fan of)|like|love|"
            r"enjoy|(?P<pref>prefer)|adore|am\s+" + ADV
            + r"(?:into|obsessed with|passionate about|a (?:big |huge )?fan of)) "
            r"(?:(?:to )?(?P<verb>" + EN_VERB + "|" + _EN_ING + r") )?" + V + E_PREP, handler=_like),
    en_rule(I_ + r"(?:(?:code|program|develop|script)|(?:write|build|make|develop|ship)(?: [\w-]+){0,2}? "
            r"(?:apps?|software|code|programs?|games?|websites?|sites|tools?|scripts?|services?|backends?|apis?))"
            r" in " + V + E_PREP, fallback="programming_language", priority=55, cap=True),
    en_rule(IAM + r"(?P<verb>reading|learning|studying|training for|craving|in the mood for|saving (?:up )?for|"
            r"preparing for|working on|"
            r"working from|staying (?:at|in|with)|planning (?:an? |my )?(?:[\w-]+ ){0,3}?(?:trip|vacation|"
            r"holiday|getaway) to|(?:planning|going) to (?:go to|visit|travel to|fly to)|playing|reading|watching|"
            r"listening to|using|writing|learning) (?:an? |the )?"
            + V + E_PREP, handler=_ongoing),
    # taking something up: what it is, the lexicon says ("picked up the harmonica", "took up pottery")
    en_rule(I_ + r"(?:picked up|took up|got into|started) (?:playing |learning |doing )?(?:an? |the )?" + V + E_PREP,
            cats=("instrument", "sport", "hobby"), priority=65, kind="profile"),
)  # fmt: skip
