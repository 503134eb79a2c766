"""How ``arxiu ask`` shows an answer's citations and claims after it has streamed (on stderr).

A verified citation — a record a tool in the run returned — is listed with its label, its
languages and the command that opens it, and the block says that its ✓ vouches for the record,
not for the sentence; an unverified one is listed behind a warning mark, never as a record to
open, and the count of unverified citations is said. A claim of the answer (a number, a date,
a name) that no record the run read holds is shown in its sentence with a ⚠ after it
(``…primer llenado en 1963⚠``), with the count of claims checked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.commands.cli_words import words
from app.core.agent.citations import Citation, langs_text
from app.core.agent.claims import MARK, Claim, marked

WARNING = "⚠"


def citation_lines(citations: Sequence[Citation]) -> list[str]:
    """The "Citations" block for a person (empty when the answer cites nothing)."""
    if not citations:
        return []
    w = words()
    lines = [w.citations]
    for item in citations:
        key = str(item.key)
        if item.verified:
            langs = langs_text(item.langs)
            shown = f"{item.label} ({key})" + (f" [{langs}]" if langs else "")
            lines.append(f"  ✓ {shown} — arxiu records show {key.replace('/', ' ')}")
        else:
            shown = f"{item.label} ({key})" if item.label else f"({key})"
            lines.append(f"  {WARNING} {shown} — {w.unverified_citation}")
    bad = sum(1 for item in citations if not item.verified)
    if bad:
        total = len(citations)
        said = (
            w.unverified_only
            if total == 1
            else w.unverified_count.template(bad).format(n=bad, total=total)
        )
        lines.append(f"{WARNING} {said}")
    if bad < len(citations):
        lines.append(f"  {w.vouches}")
    return lines


CONTEXT_CHARS = 80
"""At most this much of a marked claim's sentence is shown on either side of it."""
_SENTENCE_END = re.compile(r"[.!?…](?=\s)|\n")


def claim_lines(answer: str, claims: Sequence[Claim]) -> list[str]:
    """The "Claims" block: each claim no record the run read holds, marked in its sentence
    (empty when every claim was found, or there were none)."""
    bad = marked(claims)
    if not bad:
        return []
    w = words()
    checked, missing = w.claims_checked.said(len(claims)), w.claims_missing.said(len(bad))
    heading = w.claims.format(checked=checked, bad=missing, mark=MARK)
    lines = [heading]
    for claim in bad:
        lines.append(f"  {MARK} {_in_sentence(answer, claim)}")
    return lines


def _in_sentence(answer: str, claim: Claim) -> str:
    """The sentence of ``claim`` with the mark after it, cut to :data:`CONTEXT_CHARS` a side."""
    ends = [m.end() for m in _SENTENCE_END.finditer(answer, 0, claim.start)]
    start = max(ends[-1] if ends else 0, claim.start - CONTEXT_CHARS)
    after = _SENTENCE_END.search(answer, claim.end)
    end = min(after.end() if after else len(answer), claim.end + CONTEXT_CHARS)
    lead = "…" if start == claim.start - CONTEXT_CHARS and start > 0 else ""
    tail = "…" if end == claim.end + CONTEXT_CHARS and end < len(answer) else ""
    text = f"{lead}{answer[start : claim.start]}{claim.text}{MARK}{answer[claim.end : end]}{tail}"
    return " ".join(text.split())
