"""PII detection and redaction for memory text (zh and en), with no model and no I/O.

Kinds: see :data:`PII_KINDS` (validated by prefix, checksum, Luhn, octets). Masks replace the whole match
(``[PHONE]``); an ID failing its checksum is still reported after an ID keyword, ``validated=False``.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from langchain_lifecycle_memory.write._lexicon import EN_FUNCTION_WORDS

__all__ = ["PII_KINDS", "PIIMatch", "RedactionResult", "Redactor", "contains_pii", "redact"]

PII_KINDS: tuple[str, ...] = ("email", "cn_id", "cn_mobile", "phone", "bank_card", "ipv6", "ipv4", "secret")
"""Every kind the detector knows, in the order that breaks ties between equal overlapping spans."""

DEFAULT_LABELS: dict[str, str] = {"email": "EMAIL", "cn_id": "ID_NUMBER", "cn_mobile": "PHONE", "phone": "PHONE",
                                  "bank_card": "BANK_CARD", "ipv6": "IP_ADDRESS", "ipv4": "IP_ADDRESS",
                                  "secret": "SECRET"}  # fmt: skip

RedactionMode = Literal["keep", "mask", "drop"]

# Python's \b and \w treat CJK characters as word characters ("号13761245093" has no
# boundary), so every pattern uses explicit ASCII look-arounds instead.
_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9](?:[A-Za-z0-9._%+\-]*[A-Za-z0-9_%+\-])?"
    r"@[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*"
    r"\.[A-Za-z]{2,24}(?![A-Za-z0-9\-])"
)
_CN_MOBILE = re.compile(
    r"(?<![0-9A-Za-z+])(?:(?:\+86|0086|86)[ \-]?|\(\+86\)[ \-]?)?"
    r"1[3-9]\d(?:[ \-]?\d{4}){2}(?![0-9A-Za-z])"
)
# "+" must touch the country code, and "4 +12345678" is arithmetic, not a number.
_E164 = re.compile(r"(?<![0-9A-Za-z+])(?<!\d )\+\d(?:[ \-]?\(?\d\)?){7,14}(?![0-9A-Za-z])")
_CN_ID = re.compile(r"(?<![0-9A-Za-z])[1-8]\d{5}(?:18|19|20)\d{2}[01]\d[0-3]\d\d{3}[\dXx](?![0-9A-Za-z])")
_CARD = re.compile(
    r"(?<![0-9A-Za-z.,\-])(?:\d{13,19}|\d{4}(?:[ \-]\d{4}){2,3}(?:[ \-]\d{1,4})?|\d{4}[ \-]\d{6}[ \-]\d{4,5})"
    r"(?![0-9A-Za-z]|[.,\-]\d)"
)
_IPV4 = re.compile(r"(?<![0-9A-Za-z.])(?:\d{1,3}\.){3}\d{1,3}(?![0-9A-Za-z]|\.\d)")
_IPV6 = re.compile(
    r"(?<![0-9A-Za-z:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?![0-9A-Za-z:])"
)
_ID_CONTEXT = re.compile(
    r"(身份证|证件|身份号码|公民身份|ID\s*(?:card|number|no\.?|#)|identity|national\s+id)", re.IGNORECASE
)
# A credential is the value a credential noun is said to be: "the Wi-Fi password is tulip-42", "PIN for the debit
# card: 4821", "changed the gate code to 5521#", "门禁密码改成了 0715#". The noun is a closed class (what unlocks
# something); the value is what follows its verb, "is"/":"/"to"/是/为/改成, in either language after either noun
# ("VPN 的密码 is Lantern#2207", "alarm code 是 4417#"). A bare lowercase word is not taken
# ("the password is written down", "the code is on GitHub"): a secret has a digit or a symbol, mixed case, or quotes.
_SECRET_NOUN = (
    r"pass(?:word|code|phrase)s?|PINs?(?:\s+(?:code|number))?"
    r"|(?:api|access|secret|private|license|licence|recovery|encryption|activation)\s+keys?|(?:backup|recovery)\s+codes?"
    r"|(?:auth|access|api|bearer)\s+tokens?|(?:security|verification|one[- ]time|door|gate|alarm|lock|garage|entry"
    r"|unlock)\s+codes?|OTP|CVV|CVC|(?:safe|lock|locker)\s+combination"
    r"|(?:codes?|combination)(?=\s+(?:for|to|of|on)\s+(?:(?:the|my|our|his|her|their)\s+)?(?:[\w-]+\s+)?"
    r"(?:lock|padlock|door|gate|safe|alarm|garage|locker)s?\b)"  # "the code on my shed padlock is 3381"
)
_SECRET_EN = re.compile(
    r"\b(?:" + _SECRET_NOUN + r")\b(?:\s+(?:for|to|of|on|at|into)\s+[^.!?;:\n\"'`“”]{1,40}?)?"
    r"(?:\s*[:=：是为]|\s+(?:is|was|are|is now|now|became|changed to|set to|to))\s*(?P<q>[\"'`“‘]?)"
    r"(?P<value>[^\s\"'`”’，。；]+)",
    re.IGNORECASE,
)
_SECRET_ZH = re.compile(
    r"(?:密码|口令|密钥|验证码|校验码|安全码|门禁码|开锁码|PIN码?)[^，。！？；,.!?;\n]{0,10}?"
    r"(?:是|为|：|:|=|改成了?|换成了?|设成了?|设为|改为|\s+is\b)\s*(?P<q>[\"'`“‘「]?)(?P<value>[\x21-\x7e]{3,})",
    re.IGNORECASE,
)
_SECRET_SHAPE = re.compile(r"\d|[^\w\s]|[a-z][A-Z]|[A-Z]{2,}[a-z]")
# An identity document's or an account's number is the number after its noun (a closed class: what names a person
# to a state, an insurer or a bank), in either language and mixed: "My passport no. is K88231904", "A-number 是
# A204117839", "社保卡号：3301 0619 8802". It has five digits or more: "my passport number is in the drawer" has none.
_ID_NOUN = (
    r"(?:(?:passport|social security|alien registration|A|driver'?s?\s+licen[cs]e|licen[cs]e|national insurance|NI"
    r"|medicare|medicaid|health insurance|insurance member|member ID|policy|tax(?:payer)?\s+ID|bank account|account"
    r"|routing|card|known traveler|frequent flyer|loyalty|membership)[-\s]*(?:number|no\.?|#)|SSN|ITIN|IBAN|NINO"
    r"|PASSID|KTN|(?-i:[A-Z]{2,5})[-\s]*(?:number|no\.?|#)"  # an acronym's number: "TFN number", "TFN no."
    r"|(?:visa|mastercard|master card|amex|discover|credit card|debit card)(?:[-\s]*(?:number|no\.?|#|号码?))?)"
    r"|(?:护照|社保|社会保障|医保|驾照|驾驶证|签证|绿卡|居留证|银行账户?|账户|税|纳税人识别|保单|会员)卡?(?:号码?|编号)"
    r"|(?:信用卡|银行卡|储蓄卡)(?:号码?)?"
)
_ID_NUMBER = re.compile(
    r"(?<![A-Za-z])(?:" + _ID_NOUN + r")(?:\s*[:=：]|\s+(?:is|was|is now)|\s*(?:是|为))?\s*"
    r"(?P<value>[A-Z0-9](?:[A-Z0-9-]| (?=\d)){3,28}[A-Z0-9])(?![0-9A-Za-z])",
    re.IGNORECASE,
)
# A wallet's recovery phrase is a run of a dozen or more plain words (BIP-39: 12 to 24) in a text that names one;
# a run that holds a function word is talk about it ("the seed phrase is written on paper in my safe").
_PHRASE_NOUN = re.compile(r"\b(?:recovery|seed|backup|wallet|secret)\s+(?:phrase|words)\b|\bmnemonic\b|助记词", re.I)
_PLAIN_WORDS = re.compile(r"(?<![A-Za-z'])[a-z]{3,8}(?:\s+[a-z]{3,8}){11,23}(?![A-Za-z'])")
_FUNCTION_WORDS = EN_FUNCTION_WORDS | frozenset(
    "you your from into then than they them she her his its out off all any when what where which who how why".split()
)


def _find_secret(text: str) -> Iterator[tuple[int, int, bool]]:
    for pattern in (_SECRET_EN, _SECRET_ZH):
        for m in pattern.finditer(text):
            value = m.group("value")
            trimmed = value.rstrip(".,;!?)，。；！？") or value
            if m.group("q") or _SECRET_SHAPE.search(trimmed) or pattern is _SECRET_ZH:
                yield m.start("value"), m.start("value") + len(trimmed), True
    for m in _ID_NUMBER.finditer(text):
        if sum(ch.isdigit() for ch in m.group("value")) >= 5:
            yield m.start("value"), m.end("value"), True
    if _PHRASE_NOUN.search(text):
        for m in _PLAIN_WORDS.finditer(text):
            if not _FUNCTION_WORDS.intersection(m.group().split()):
                yield m.start(), m.end(), True
    for m in _TOKEN.finditer(text):
        if _random_looking(m.group()):
            yield m.start(), m.end(), True


# A key or token said with no noun before it ("export OPENAI_API_KEY=sk-proj-…", "here's my token ghp_…"): a run of
# twenty or more letters, digits, "_" and "-", with letters and digits, as random as generated keys are: at least
# 4 bits per character (such keys have about 5; "quarterly-report-2024-final" 3.9, a UUID 3.7, hex digests under 4).
_TOKEN = re.compile(r"(?<![\w-])[A-Za-z0-9][A-Za-z0-9_-]{19,}(?![\w-])")
_KEY_ENTROPY = 4.0


def _random_looking(token: str) -> bool:
    if not (any(c.isdigit() for c in token) and any(c.isalpha() for c in token)):
        return False
    counts = Counter(token)
    return -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values()) >= _KEY_ENTROPY


_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"


class PIIMatch(BaseModel):
    """One piece of PII found in a text; offsets refer to the *original* text."""

    model_config = ConfigDict(frozen=True)

    kind: str
    """One of :data:`PII_KINDS`."""
    start: int
    end: int
    original: str | None = None
    """The matched text; ``None`` unless the redactor was told to ``keep_originals``."""
    validated: bool = True
    """``False`` for an ID number accepted because of a nearby keyword although its checksum fails."""


class RedactionResult(BaseModel):
    """The redacted text and what was found in it."""

    text: str
    found: list[PIIMatch] = Field(default_factory=list)
    mode: RedactionMode = "mask"

    @property
    def has_pii(self) -> bool:
        """Whether anything was found (in ``drop`` mode: whether text was removed)."""
        return bool(self.found)

    @property
    def kinds(self) -> set[str]:
        """The kinds that were found."""
        return {m.kind for m in self.found}


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def _luhn_ok(digits: str) -> bool:
    return sum((d, d * 2 - 9 * (d > 4))[i % 2] for i, d in enumerate(map(int, reversed(digits)))) % 10 == 0


def id_checksum_ok(number: str) -> bool:
    """Whether an 18-character CN resident ID number has a valid check character (GB 11643)."""
    if len(number) != 18 or not number[:17].isdigit():
        return False
    expected = _ID_CHECK[sum(int(c) * w for c, w in zip(number[:17], _ID_WEIGHTS, strict=True)) % 11]
    return number[17].upper() == expected


def _birth_date_ok(number: str) -> bool:
    try:
        born = date(int(number[6:10]), int(number[10:12]), int(number[12:14]))
    except ValueError:
        return False
    return date(1900, 1, 1) <= born <= date.today()


def _find_cn_id(text: str) -> Iterator[tuple[int, int, bool]]:
    for m in _CN_ID.finditer(text):
        number = m.group()
        if not _birth_date_ok(number):
            continue
        if id_checksum_ok(number):
            yield m.start(), m.end(), True
        elif _ID_CONTEXT.search(text[max(0, m.start() - 20) : m.start()]):
            yield m.start(), m.end(), False


def _card_ok(raw: str) -> bool:
    # Issuers start with 3-6 or 2221-2720: this rules out years, timestamps and order numbers passing Luhn.
    d = _digits(raw)
    return 13 <= len(d) <= 19 and (d[0] in "3456" or 2221 <= int(d[:4]) <= 2720) and _luhn_ok(d)


def _ipv6_ok(raw: str) -> bool:
    # "a::b" or "dead::beef" in code is valid IPv6 syntax but almost never an address.
    if not any(ch.isdigit() for ch in raw):
        return False
    try:
        ipaddress.IPv6Address(raw)
    except ValueError:
        return False
    return True


_Finder = Callable[[str], Iterator[tuple[int, int, bool]]]


def _matches(pattern: re.Pattern[str], ok: Callable[[str], bool] = lambda _: True) -> _Finder:
    return lambda text: ((m.start(), m.end(), True) for m in pattern.finditer(text) if ok(m.group()))


_FINDERS: dict[str, _Finder] = {
    "email": _matches(_EMAIL),
    "cn_id": _find_cn_id,
    "cn_mobile": _matches(_CN_MOBILE),
    "phone": _matches(_E164, lambda raw: _digits(raw)[0] != "0" and raw.count("(") == raw.count(")") <= 1),
    "bank_card": _matches(_CARD, _card_ok),
    "ipv6": _matches(_IPV6, _ipv6_ok),
    "ipv4": _matches(_IPV4, lambda ip: all(int(o) <= 255 and (o == "0" or o[0] != "0") for o in ip.split("."))),
    "secret": _find_secret,
}


def _detect(text: str, kinds: frozenset[str], keep_originals: bool) -> list[PIIMatch]:
    candidates = sorted(
        (start, -(end - start), priority, kind, validated)
        for priority, kind in enumerate(PII_KINDS)
        for start, end, validated in _FINDERS[kind](text)
    )
    chosen: list[PIIMatch] = []
    last_end = -1
    # Overlaps are resolved over *all* kinds before filtering, so disabling "email" keeps
    # "13761245093@163.com" whole instead of masking the phone-shaped part of it.
    for start, neg_len, _, kind, validated in candidates:
        end = start - neg_len
        if start < last_end:
            continue
        last_end = end
        if kind in kinds:
            original = text[start:end] if keep_originals else None
            chosen.append(PIIMatch(kind=kind, start=start, end=end, original=original, validated=validated))
    return chosen


def _check_kinds(kinds: set[str] | frozenset[str] | None) -> frozenset[str]:
    if kinds is None:
        return frozenset(PII_KINDS)
    if unknown := set(kinds) - set(PII_KINDS):
        msg = f"Unknown PII kinds {sorted(unknown)}; choose from {list(PII_KINDS)}."
        raise ValueError(msg)
    return frozenset(kinds)


class Redactor(BaseModel):
    """Reusable redaction settings.

    Example:
        >>> r = Redactor(mode="mask", kinds={"email"})
        >>> r.redact("mail dana@example.com or call 13761245093").text
        'mail [EMAIL] or call 13761245093'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: RedactionMode = "mask"
    """``mask``: replace with a label; ``drop``: remove the text; ``keep``: only report."""
    kinds: frozenset[str] = frozenset(PII_KINDS)
    """Kinds to act on; see :data:`PII_KINDS`."""
    mask_format: str = "[{label}]"
    """Template for masks; ``{label}`` (e.g. ``PHONE``) and ``{kind}`` (e.g. ``cn_mobile``)."""
    labels: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_LABELS))
    """Label per kind; entries you pass override the defaults."""
    keep_originals: bool = False
    """Store the matched text in :attr:`PIIMatch.original` (keep such results out of logs)."""

    @field_validator("kinds", mode="before")
    @classmethod
    def _kinds_ok(cls, v: set[str] | frozenset[str] | list[str] | None) -> frozenset[str]:
        return _check_kinds(None if v is None else frozenset(v))

    @field_validator("labels")
    @classmethod
    def _labels_ok(cls, v: dict[str, str]) -> dict[str, str]:
        _check_kinds(frozenset(v))
        return {**DEFAULT_LABELS, **v}

    @field_validator("mask_format")
    @classmethod
    def _format_ok(cls, v: str) -> str:
        try:
            v.format(label="PHONE", kind="cn_mobile")
        except (KeyError, IndexError, ValueError) as e:
            msg = (
                f"`mask_format` {v!r} is not a valid template; "
                "use fields {label} and/or {kind}, e.g. '[{label}]'."
            )
            raise ValueError(msg) from e
        return v

    def mask_for(self, kind: str) -> str:
        """The replacement text for ``kind`` in ``mask`` mode."""
        return self.mask_format.format(label=self.labels[kind], kind=kind)

    def find(self, text: str) -> list[PIIMatch]:
        """All enabled PII in ``text``, left to right, non-overlapping."""
        return _detect(text, self.kinds, self.keep_originals)

    def redact(self, text: str) -> RedactionResult:
        """Apply :attr:`mode` to every enabled match in ``text``.

        Example:
            >>> Redactor(mode="drop").redact("手机 13761245093 可联系").text
            '手机 可联系'
        """
        found = self.find(text)
        if self.mode == "keep" or not found:
            return RedactionResult(text=text, found=found, mode=self.mode)
        parts: list[str] = []
        cursor = 0
        for m in found:
            before = text[cursor : m.start]
            if self.mode == "mask":
                parts.extend((before, self.mask_for(m.kind)))
            else:
                # Dropping "a 13761245093 b" should read "a b", not "a  b".
                if before.endswith(" ") and text[m.end : m.end + 1] == " ":
                    before = before[:-1]
                parts.append(before)
            cursor = m.end
        parts.append(text[cursor:])
        return RedactionResult(text="".join(parts), found=found, mode=self.mode)

    def leaves_only_masks(self, text: str | None) -> bool:
        """Whether redacting ``text`` leaves nothing of it but masks (or nothing at all); ``keep`` mode: no.

        Example:
            >>> Redactor(mode="mask").leaves_only_masks("13761245093"), Redactor().leaves_only_masks("手机 13761245093")
            (True, False)
        """
        if not text or self.mode == "keep":
            return False
        result = self.redact(text)
        rest = result.text
        for m in result.found:
            rest = rest.replace(self.mask_for(m.kind), " ") if self.mode == "mask" else rest
        return result.has_pii and not any(ch.isalnum() for ch in rest)

    def redact_together(self, texts: Sequence[str | None], *, secret: str | None = None) -> list[str | None]:
        """Redact texts that say one thing (a fact's statement, value, evidence): what is found in one goes in all.

        ``secret``: a string known to be secret whatever its shape (the value of a fact its extractor marked
        ``sensitive``: "医保卡号 3301 0619 8802 1147" fits no pattern), masked as a ``secret`` everywhere.

        Example:
            >>> Redactor().redact_together(["The Wi-Fi password is tulip-42.", "tulip-42"])
            ['The Wi-Fi password is [SECRET].', '[SECRET]']
            >>> Redactor().redact_together(["Locker combo: left 12, right 30."], secret="left 12, right 30")
            ['Locker combo: [SECRET].']
        """
        if self.mode == "keep":
            return list(texts)
        found = {
            m.original: m.kind for t in texts if t for m in _detect(t, self.kinds, keep_originals=True) if m.original
        }
        if secret and len(secret.strip()) >= 3 and "secret" in self.kinds:
            found.setdefault(secret.strip(), "secret")
        out: list[str | None] = []
        for text in texts:
            if text:
                text = self.redact(text).text
                for original, kind in sorted(found.items(), key=lambda pair: -len(pair[0])):
                    text = text.replace(original, self.mask_for(kind) if self.mode == "mask" else "")
            out.append(text)
        return out


def redact(
    text: str, *, mode: RedactionMode = "mask", kinds: set[str] | None = None, keep_originals: bool = False
) -> RedactionResult:
    """Find PII of ``kinds`` (default: all) in ``text`` and ``mask`` it with a label, ``drop`` it or ``keep`` it.

    Example:
        >>> redact("我的手机号是 13761245093").text
        '我的手机号是 [PHONE]'
        >>> [m.kind for m in redact("dana.whitfield@example.com", mode="keep").found]
        ['email']
    """
    return Redactor(mode=mode, kinds=_check_kinds(kinds), keep_originals=keep_originals).redact(text)


def contains_pii(text: str, *, kinds: set[str] | None = None) -> bool:
    """Whether ``text`` contains any PII of the given kinds (all by default).

    Example:
        >>> contains_pii("call +44 20 7946 0958"), contains_pii("v1.2.3 costs ¥1999")
        (True, False)
    """
    return bool(_detect(text, _check_kinds(kinds), keep_originals=False))
