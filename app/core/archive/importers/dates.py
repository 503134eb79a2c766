"""Reading the dates archival exports write: ISO 8601, or a date in words, in four languages.

Dublin Core ``dc:date`` (``1997 August 23``, ``ca. 1943-1983``, ``April 12-July 5, 1997``) and
EAD ``unitdate/@normal`` as MARC converters write it (``1989 October``) are read with the same
month names (English, French, Catalan, Spanish, with their common abbreviations).
"""

from __future__ import annotations

import datetime
import re

MONTHS = {
    name: number
    for number, names in enumerate(
        (
            "january jan gener enero janvier",
            "february feb febrer febrero fevrier février",
            "march mar març marzo mars",
            "april apr abril avril",
            "may maig mayo mai",
            "june jun juny junio juin",
            "july jul juliol julio juillet",
            "august aug agost agosto aout août",
            "september sep sept setembre septiembre septembre",
            "october oct octubre octobre",
            "november nov novembre noviembre",
            "december dec desembre diciembre decembre décembre",
        ),
        start=1,
    )
    for name in names.split()
}
_IGNORED = "ca c circa approximately about de of the spring summer fall autumn winter"
IGNORED_WORDS = frozenset(_IGNORED.split())
ISO = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?(?:T[\d:.]+Z?)?$")
RANGE = re.compile(r"\s*(?:[-–/]|\bto\b)\s*")

Point = tuple[int | None, int | None, int | None]


def iso_date(text: str) -> str | None:
    """``text`` as an ISO 8601 date or interval when it can be read, else ``None``.

    Example:
        >>> iso_date("1997 August 23"), iso_date("ca. 1943-1983"), iso_date("undated")
        ('1997-08-23', '1943/1983', None)
        >>> iso_date("April 12-July 5, 1997")
        '1997-04-12/1997-07-05'
    """
    text = text.strip()
    if match := ISO.match(text):
        year, month, day = match.groups()
        if not is_day(int(year), int(month or 1), int(day or 1)):
            return None
        return "-".join(p for p in match.groups() if p)
    sides = RANGE.split(text)
    if len(sides) > 2:
        return None
    points = [written_point(side) for side in sides]
    if any(p is None for p in points):
        return None
    if len(points) == 1:
        return format_point(points[0])
    start, end = points
    assert start is not None and end is not None
    end = (end[0] or start[0], end[1] or (start[1] if end[0] is None else None), end[2])
    start = (start[0] or end[0], start[1], start[2])
    if start[0] is None or (start[2] is not None and start[1] is None):
        return None
    return f"{format_point(start)}/{format_point(end)}"


def written_point(text: str, ignored: frozenset[str] = IGNORED_WORDS) -> Point | None:
    """``(year, month, day)`` of a date written in words (``1997 August 23``, ``août 1887``),
    ``ignored`` words passed over; ``None`` for anything else."""
    year = month = day = None
    for token in re.findall(r"[^\W\d_]+|\d+", text.casefold()):
        if token.isdigit() and len(token) == 4 and year is None:
            year = int(token)
        elif token.isdigit() and len(token) <= 2 and day is None and 1 <= int(token) <= 31:
            day = int(token)
        elif token in MONTHS and month is None:
            month = MONTHS[token]
        elif token not in ignored:
            return None
    if year is None and month is None and day is None:
        return None
    return year, month, day


def is_day(year: int, month: int, day: int) -> bool:
    """Whether ``year-month-day`` is a day of the calendar (year 0 read as 1)."""
    try:
        datetime.date(max(year, 1), month, day)
    except ValueError:
        return False
    return True


def format_point(point: Point | None) -> str | None:
    """``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``; ``None`` without a year."""
    if point is None or point[0] is None:
        return None
    year, month, day = point[0], point[1], point[2]
    if not is_day(year, month or 1, day or 1):
        return None  # 31 April
    if month is None:
        return f"{year:04d}"
    if day is None:
        return f"{year:04d}-{month:02d}"
    return f"{year:04d}-{month:02d}-{day:02d}"
