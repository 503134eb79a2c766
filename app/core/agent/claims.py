"""Claims in a model's prose, checked against the records the run read.

A citation's ✓ says that a tool in the run returned that record; it says nothing of the
sentence around it. A small model writes "primer llenado en 1963" next to a record that says
1962. So every *claim* of the model's prose — a number, a date, a proper name — is looked up
in the text of the tool results of that run (what the run read) and in the labels of its
verified citations; one found nowhere is marked (``found`` false), and front ends show it
behind a ⚠ ("not in the cited records").

What counts as a claim:

* a **date**: an ISO date (``1987-05-14``), ``14/05/1987``, a written one in Catalan, Spanish
  or English (``14 de maig de 1987``, ``14 de mayo de 1987``, ``May 14, 1987``, ``maig de
  1987``), or a year on its own (1000–2099);
* a **number**: digits with thousands separators or decimals in ca/es/en forms (``1.962``,
  ``1,962`` and ``1962`` are one number; ``3,5`` and ``3.5`` another);
* a **name**: capitalised words not at a sentence start, not in the question.

Both sides are normalised alike: numbers to their value (an ambiguous ``1.962`` reads both as
1962 and as 1.962), dates to ``(year, month, day)``, words accent-folded and case-folded.
Citations, code and links are not prose and are never claims; nor is text the core itself
wrote (the caller passes its spans as ``skip``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Literal

from app.core.agent.citations import CITATION, Citation, ReturnedRecords
from app.core.agent.wire_fields import req_bool
from app.core.json_types import JsonObject, JsonShapeError, int_or, req_str

ClaimKind = Literal["number", "date", "name"]
CLAIM_KINDS: tuple[ClaimKind, ...] = ("number", "date", "name")
MARK = "⚠"
"""How a claim found in no record is marked, right after its text."""


@dataclass(frozen=True)
class Claim:
    """One claim of an answer: ``answer[start:end] == text``; ``found`` in a record the run
    read (or not: shown behind a ⚠)."""

    text: str
    start: int
    end: int
    kind: ClaimKind
    found: bool

    def to_dict(self) -> JsonObject:
        """The wire form ``{text, start, end, kind, found}``."""
        return {
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "kind": self.kind,
            "found": self.found,
        }

    @classmethod
    def from_dict(cls, data: JsonObject) -> Claim:
        """Read the wire form back.

        Raises:
            JsonShapeError: no ``text``, an unknown ``kind`` or a field of the wrong type.
        """
        kind = req_str(data, "kind")
        for known in CLAIM_KINDS:
            if known == kind:
                return cls(
                    req_str(data, "text"),
                    int_or(data, "start"),
                    int_or(data, "end"),
                    known,
                    req_bool(data, "found"),
                )
        raise JsonShapeError(f"'kind' must be one of {', '.join(CLAIM_KINDS)}, not {kind!r}")


# -- normalising ---------------------------------------------------------------------------
_COMBINING = re.compile("[\u0300-\u036f]")
"""The combining accents of the Latin letters (what NFKD splits off ``à``, ``ç``, ``ñ``)."""


def fold(text: str) -> str:
    """``text`` without accents, case-folded (``Romà`` → ``roma``)."""
    if text.isascii():
        return text.casefold()
    return _COMBINING.sub("", unicodedata.normalize("NFKD", text)).casefold()


def number_values(token: str) -> set[str]:
    """Every value ``token`` may mean, canonical (``1.962`` → ``{"1962", "1.962"}``)."""
    seps = [c for c in token if c in ".,"]
    if not seps:
        return _canon(token)
    if len(set(seps)) == 2:  # 1.234,56 or 1,234.56: the last separator is the decimal one
        cut = max(token.rfind("."), token.rfind(","))
        whole = token[:cut].replace(".", "").replace(",", "")
        return _canon(f"{whole}.{token[cut + 1 :]}")
    groups = token.split(seps[0])
    out: set[str] = set()
    if len(groups[0]) <= 3 and all(len(group) == 3 for group in groups[1:]):
        out |= _canon("".join(groups))
    if len(groups) == 2:
        out |= _canon(f"{groups[0]}.{groups[1]}")
    return out


def _canon(text: str) -> set[str]:
    try:
        return {format(Decimal(text).normalize(), "f")}
    except InvalidOperation:
        return set()


MONTHS: dict[str, int] = {}
for _number, _month_names in enumerate(
    (
        "gener enero january jan",
        "febrer febrero february feb",
        "marc marzo march mar",
        "abril april apr",
        "maig mayo may",
        "juny junio june jun",
        "juliol julio july jul",
        "agost agosto august aug",
        "setembre septiembre setiembre september sep sept",
        "octubre october oct",
        "novembre noviembre november nov",
        "desembre diciembre december dec",
    ),
    start=1,
):
    MONTHS.update(dict.fromkeys(_month_names.split(), _number))
"""Month names (accent-folded) in Catalan, Spanish and English, to their number."""

_MONTH = "(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th|º|ª)?"
_YEAR = r"(?P<year>\d{4})"
_OF = r"(?:\s+(?:de|del|d['’])\s*|\s+)"
DATE_FORMS = tuple(
    re.compile(form)
    for form in (
        rf"\b{_YEAR}-(?P<month>\d{{1,2}})-(?P<day>\d{{1,2}})\b",
        rf"\b(?P<day>\d{{1,2}})[/.](?P<month>\d{{1,2}})[/.]{_YEAR}\b",
        rf"\b{_DAY}{_OF}{_MONTH}{_OF}{_YEAR}\b",
        rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b",
        rf"\b{_MONTH}{_OF}{_YEAR}\b",
    )
)
"""The date forms, on accent-folded text: ISO, day/month/year, written (day first or month
first), month and year."""
NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?![\w])")
YEAR_RANGE = range(1000, 2100)
WORD = re.compile(r"[^\W\d_]\w*(?:['’-]\w+)*")

Date = tuple[int, int | None, int | None]
"""``(year, month, day)``; ``None`` where the text did not say."""


def date_values(match: re.Match[str]) -> set[Date]:
    """The dates a match of one of :data:`DATE_FORMS` may mean (``05/04/1987`` is read both
    ways)."""
    year = int(match["year"])
    month_text = (match.groupdict().get("month") or "").lower()
    month = MONTHS.get(month_text) if not month_text.isdigit() else int(month_text)
    day_text = match.groupdict().get("day")
    day = int(day_text) if day_text else None
    out: set[Date] = set()
    if month is not None and 1 <= month <= 12 and (day is None or 1 <= day <= 31):
        out.add((year, month, day))
    numeric = match.re is DATE_FORMS[1]  # 04/05/1987 may be 4 May or April 5
    if numeric and day is not None and month is not None and day <= 12 and month <= 31:
        out.add((year, day, month))
    return out


# -- the records' side ---------------------------------------------------------------------
DATE_REACH = 30
"""How far before a year a written date may start (``14 de setembre de 1987``)."""


@dataclass
class Evidence:
    """What the records a run read hold, normalised: their text, numbers and words; the
    dates around a year are read when a claim asks for that year."""

    text: str
    numbers: frozenset[str]
    words: frozenset[str]
    _dates: dict[int, frozenset[Date]] = field(default_factory=dict)

    @classmethod
    def of(cls, texts: Iterable[str]) -> Evidence:
        """The evidence in ``texts`` (tool results as text, record labels)."""
        folded = "\n".join(fold(text) for text in texts)
        tokens = set(NUMBER.findall(folded))
        numbers = frozenset(value for token in tokens for value in number_values(token))
        return cls(folded, numbers, frozenset(WORD.findall(folded)))

    def dates_in(self, year: int) -> frozenset[Date]:
        """Every date the records write with ``year`` in it, in any of :data:`DATE_FORMS`."""
        if year not in self._dates:
            found: set[Date] = set()
            for match in re.finditer(rf"(?<!\d){year}(?!\d)", self.text):
                start = self.text.rfind(" ", 0, max(0, match.start() - DATE_REACH)) + 1
                window = self.text[start : match.end() + 12]
                for form in DATE_FORMS:
                    found.update(v for m in form.finditer(window) for v in date_values(m))
            self._dates[year] = frozenset(found)
        return self._dates[year]

    def holds_date(self, dates: set[Date]) -> bool:
        """Whether a record has one of ``dates`` (a month or a year matches any day in it)."""
        for year, month, day in dates:
            if month is None and str(year) in self.numbers:
                return True
            for held in self.dates_in(year):
                if held[1] == month and (day is None or held[2] == day):
                    return True
        return False

    def holds_words(self, text: str) -> bool:
        """Whether every word of ``text`` is in a record."""
        return all(word in self.words for word in WORD.findall(fold(text)))


# -- the answer's side ---------------------------------------------------------------------
NOT_PROSE = (
    re.compile(r"```.*?(?:```|\Z)", re.DOTALL),
    re.compile(r"`[^`\n]*`"),
    CITATION,
    re.compile(r"\]\([^)\s]*\)"),
    re.compile(r"\b(?:https?|record|file|mailto):\S+"),
    re.compile(r"^[ \t]*(?:[-*+>#]+[ \t]*)*\d{1,3}[.)](?=\s)", re.MULTILINE),
)
"""Spans that are not prose: code, citations, link targets, list numbers."""
STARTERS = '.!?:…«“"¿¡('
"""After one of these (and at a line's start) a capital is a sentence's, not a name's."""
_OPENERS = " \t*_#>-•+'’”»"
WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday"
ENGLISH_MONTHS = "january february march april may june july august september october"
NOT_NAMES = frozenset(["i", "november", "december", *WEEKDAYS.split(), *ENGLISH_MONTHS.split()])
"""Capitalised words that are not names: the English pronoun, weekdays and months."""

Span = tuple[int, int]
Found = tuple[int, int, ClaimKind, bool]
"""A claim as the answer's scan finds it: ``(start, end, kind, found)``."""


def prose_of(answer: str, skip: Sequence[Span] = ()) -> str:
    """``answer`` with everything that is not the model's prose blanked (same offsets)."""
    chars = list(answer)
    spans = [m.span() for form in NOT_PROSE for m in form.finditer(answer)]
    for start, end in [*spans, *skip]:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _overlaps(start: int, end: int, taken: Sequence[Span]) -> bool:
    return any(start < t_end and t_start < end for t_start, t_end in taken)


def _dates(folded: str, evidence: Evidence) -> list[Found]:
    """Every date of the prose (the form listed first where forms overlap)."""
    found: list[Found] = []
    for form in DATE_FORMS:
        for match in form.finditer(folded):
            start, end = match.span()
            values = date_values(match)
            if values and not _overlaps(start, end, [(s, e) for s, e, _, _ in found]):
                found.append((start, end, "date", evidence.holds_date(values)))
    return found


def _numbers(folded: str, taken: Sequence[Span], evidence: Evidence) -> list[Found]:
    """Every number of the prose outside the dates; a plain 1000–2099 is a year."""
    out: list[Found] = []
    for match in NUMBER.finditer(folded):
        start, end = match.span()
        if _overlaps(start, end, taken):
            continue
        token = match.group()
        if token.isdigit() and int(token) in YEAR_RANGE:
            out.append((start, end, "date", evidence.holds_date({(int(token), None, None)})))
        else:
            out.append((start, end, "number", bool(number_values(token) & evidence.numbers)))
    return out


def _sentence_start(prose: str, start: int) -> bool:
    """Whether the word at ``start`` begins a sentence, a line, a title or a quote."""
    line_start = prose.rfind("\n", 0, start) + 1
    before = prose[line_start:start].rstrip(_OPENERS)
    return not before.strip() or before.rstrip()[-1] in STARTERS


def _is_name(prose: str, match: re.Match[str], question_words: frozenset[str]) -> bool:
    word = match.group()
    folded = fold(word)
    return (
        word[0].isupper()
        and len(word) > 1
        and folded not in NOT_NAMES
        and folded not in question_words
        and not _sentence_start(prose, match.start())
    )


def _names(prose: str, question_words: frozenset[str]) -> list[Span]:
    """Runs of capitalised words (not at a sentence start, not in the question)."""
    runs: list[Span] = []
    last_end = -1
    for match in WORD.finditer(prose):
        if not _is_name(prose, match, question_words):
            last_end = -1
            continue
        if runs and last_end >= 0 and prose[last_end : match.start()] == " ":
            runs[-1] = (runs[-1][0], match.end())
        else:
            runs.append(match.span())
        last_end = match.end()
    return runs


def check_claims(
    answer: str, question: str, sources: Iterable[str], skip: Sequence[Span] = ()
) -> tuple[Claim, ...]:
    """Every claim of ``answer``'s prose, in order, each ``found`` in ``sources`` (the text of
    the records the run read) or not; ``skip`` spans (the core's own text) are not checked."""
    prose = prose_of(answer, skip)
    folded = "".join((fold(c) or " ")[0] for c in prose)  # one character for each
    evidence = Evidence.of(sources)
    found = _dates(folded, evidence)
    found += _numbers(folded, [(s, e) for s, e, _, _ in found], evidence)
    question_words = frozenset(m.group() for m in WORD.finditer(fold(question)))
    found += [
        (s, e, "name", evidence.holds_words(answer[s:e])) for s, e in _names(prose, question_words)
    ]
    return tuple(
        Claim(answer[s:e], s, e, kind, ok) for s, e, kind, ok in sorted(found, key=lambda f: f[0])
    )


def run_claims(
    answer: str,
    question: str,
    returned: ReturnedRecords,
    citations: Iterable[Citation],
    skip: Sequence[Span] = (),
) -> tuple[Claim, ...]:
    """The claims of a run's answer, checked against what its tools returned and the labels
    of its verified citations (the archive's own words for those records)."""
    labels = [citation.label for citation in citations if citation.verified]
    return check_claims(answer, question, [*returned.texts, *labels], skip)


def marked(claims: Iterable[Claim]) -> list[Claim]:
    """The claims found in no record the run read."""
    return [claim for claim in claims if not claim.found]


def mark_claims(text: str, claims: Iterable[Claim], mark: str = MARK) -> str:
    """``text`` (the answer the claims were checked in) with ``mark`` after each claim found
    in no record (a claim whose span no longer holds its text is left alone)."""
    out = text
    for claim in sorted(marked(claims), key=lambda c: c.end, reverse=True):
        if out[claim.start : claim.end] == claim.text:
            out = out[: claim.end] + mark + out[claim.end :]
    return out


def claims_note(claims: Sequence[Claim]) -> JsonObject | None:
    """The transcript entry counting a run's checked and marked claims (``None``: none)."""
    if not claims:
        return None
    bad = marked(claims)
    return {
        "claims_checked": len(claims),
        "claims_marked": len(bad),
        "marked_claims": [claim.text for claim in bad[:20]],
    }
