"""How ``arxiu ask`` shows an answer's citations after it has streamed (on stderr).

A verified citation — a record a tool in the run returned — is listed with its label, its
languages and the command that opens it; an unverified one is listed behind a warning mark,
never as a record to open, and the count of unverified citations is said.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.agent.citations import Citation, langs_text

WARNING = "⚠"


def citation_lines(citations: Sequence[Citation]) -> list[str]:
    """The "Citations" block for a person (empty when the answer cites nothing)."""
    if not citations:
        return []
    lines = ["Citations:"]
    for item in citations:
        key = str(item.key)
        if item.verified:
            langs = langs_text(item.langs)
            shown = f"{item.label} ({key})" + (f" [{langs}]" if langs else "")
            lines.append(f"  ✓ {shown} — arxiu records show {key.replace('/', ' ')}")
        else:
            shown = f"{item.label} ({key})" if item.label else f"({key})"
            lines.append(f"  {WARNING} {shown} — unverified: no tool in this run returned it")
    bad = sum(1 for item in citations if not item.verified)
    if bad:
        lines.append(f"{WARNING} {bad} of {len(citations)} citations are unverified.")
    return lines
