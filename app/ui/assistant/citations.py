"""Citations in an answer: ``Label (tipo/id)`` becomes a link that opens the record.

Answers are Markdown. Every ``(section_tipo/section_id)`` the model writes is turned into a
``record:`` link (with ``@HH:MM:SS`` kept as the passage's timecode when present), so a
citation is one click from its record whatever words surround it.
"""

from __future__ import annotations

import re

from app.core.archive import RecordKey
from app.ui.browser.record_html import record_link

CITATION = re.compile(
    r"\((?P<tipo>[a-z][a-z0-9_]*)/(?P<id>\d+)(?:\s*@\s*(?P<tc>\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?))?\)"
)
CODE_SPAN = re.compile(r"(`[^`]*`)")


def linkify(markdown: str) -> str:
    """``markdown`` with each ``(tipo/id)`` citation made a ``record:`` link."""
    parts = CODE_SPAN.split(markdown)
    for number in range(0, len(parts), 2):  # odd parts are code spans: left alone
        parts[number] = CITATION.sub(_link, parts[number])
    return "".join(parts)


def _link(match: re.Match[str]) -> str:
    key = RecordKey(match["tipo"], int(match["id"]))
    text = f"{key}" + (f" @{match['tc']}" if match["tc"] else "")
    return f"([{text}]({record_link(key, match['tc'])}))"


def cited_keys(text: str) -> list[RecordKey]:
    """Every record cited in ``text``, in order, without repeats."""
    seen: list[RecordKey] = []
    for match in CITATION.finditer(text):
        key = RecordKey(match["tipo"], int(match["id"]))
        if key not in seen:
            seen.append(key)
    return seen
