"""Citations in an answer: only verified ones become links that open the record.

Answers are Markdown. The run's ``final`` frame lists the answer's citations, each marked
``verified`` when a tool in the run returned that record (see :mod:`app.core.agent.citations`).
A verified ``(section_tipo/section_id)`` becomes a ``record:`` link (with ``@HH:MM:SS`` kept as
the passage's timecode) showing the record's languages; an unverified one stays plain text
behind a warning mark, with a tooltip saying why. Until the list is known (while the answer
streams) no citation is a link.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.core.agent.citations import CITATION, Citation, langs_text
from app.core.archive import RecordKey
from app.ui.browser.record_html import record_link

CODE_SPAN = re.compile(r"(`[^`]*`)")
WARNING = "⚠"

__all__ = ["CITATION", "WARNING", "langs_text", "linkify", "unverified_marks"]


def linkify(markdown: str, citations: Sequence[Citation] | None = None) -> str:
    """``markdown`` with each verified citation made a ``record:`` link.

    ``citations`` is the ``final`` frame's list; ``None`` (not known yet) links nothing, and a
    citation missing from the list counts as unverified.
    """
    if citations is None:
        return markdown
    by_key = {c.key: c for c in citations}
    parts = CODE_SPAN.split(markdown)
    for number in range(0, len(parts), 2):  # odd parts are code spans: left alone
        parts[number] = CITATION.sub(lambda m: _render(m, by_key), parts[number])
    return "".join(parts)


def _render(match: re.Match[str], by_key: dict[RecordKey, Citation]) -> str:
    key = RecordKey(match["tipo"], int(match["id"]))
    found = by_key.get(key)
    if found is None or not found.verified:
        return f"({unverified_text(key)})"
    text = f"{key}" + (f" @{match['tc']}" if match["tc"] else "")
    langs = langs_text(found.langs)
    if langs:
        text += f" · {langs}"
    return f"([{text}]({record_link(key, match['tc'])}))"


def unverified_text(key: RecordKey) -> str:
    """How an unverified citation shows: the warning mark, then the key as written."""
    return f"{WARNING} {key}"


def unverified_marks(citations: Sequence[Citation] | None) -> list[str]:
    """The texts of the unverified citations as :func:`linkify` renders them."""
    return [unverified_text(c.key) for c in citations or [] if not c.verified]
