"""Taint is the server's: a client's history is judged by what the server itself answered.

A stateless front end (the Dédalo and Dezfil dialects) sends its conversation's history back
with each message, in the seeds' ``{role, text}`` shape, without (or with any) ``tainted``
flags. :func:`judge` marks each entry from the archive's answer ledger
(:mod:`app.core.archive.answer_ledger`), never from the client:

* an entry whose normalised text (Unicode NFKC, case folded, words only: spacing and
  punctuation do not count) is one of the owner's tainted answers — or that shares a run of
  :data:`SHINGLE_WORDS` words with any tainted answer of any owner — is tainted;
* while the owner has any tainted answer, an entry the ledger does not hold (a text the server
  never answered nor was asked: edited, cut, made up) is tainted too;
* everything else is what the server said or was asked, and clean.

A tainted entry is then withheld from external models by the egress gate (the run's
``withhold_tainted``); a local model still sees it, and its answer is tainted in turn.
:func:`exchange_rows` gives what one finished run adds to the ledger.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.agent.history_entry import HistoryEntry, history_entry
from app.core.archive.answer_ledger import LedgerView

SHINGLE_WORDS = 6
"""Words per shingle: a copied run of this many words of a tainted answer is recognised."""
_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """The words of ``text``, normalised (NFKC, case folded)."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def _digest(parts: Sequence[str]) -> str:
    data = "\x1f".join(parts).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:32]


def text_digest(text: str) -> str:
    """The digest of a whole text (its normalised words)."""
    return _digest(words(text))


def shingles(text: str) -> set[str]:
    """The digests of every run of :data:`SHINGLE_WORDS` words of ``text`` (none if shorter)."""
    found = words(text)
    return {
        _digest(found[start : start + SHINGLE_WORDS])
        for start in range(len(found) - SHINGLE_WORDS + 1)
    }


@dataclass(frozen=True)
class Probe:
    """The digests a history asks the ledger about."""

    digests: list[str]
    """One per entry, in order."""
    shingles: list[set[str]]
    """Each entry's shingle digests, in order."""

    @property
    def all_shingles(self) -> set[str]:
        """Every entry's shingles together."""
        return set().union(*self.shingles) if self.shingles else set()


def probe(history: Sequence[HistoryEntry]) -> Probe:
    """The digests to look up for ``history``."""
    texts = [entry["text"] for entry in history]
    return Probe([text_digest(t) for t in texts], [shingles(t) for t in texts])


def judge(
    history: Sequence[HistoryEntry], found: Probe, view: LedgerView
) -> tuple[list[HistoryEntry], int]:
    """``history`` with ``tainted: true`` on each entry the ledger says may hold restricted
    text (see the module docstring), and how many entries were marked."""
    marked: list[HistoryEntry] = []
    count = 0
    for entry, digest, pieces in zip(history, found.digests, found.shingles, strict=True):
        clean = history_entry(entry["role"], entry["text"])
        if not words(entry["text"]):
            marked.append(clean)  # nothing in it to leak
            continue
        known = view.known.get(digest)
        tainted = (
            entry.get("tainted") is True  # a client may only add taint, never remove it
            or known is True
            or bool(pieces & view.tainted_shingles)
            or (known is None and view.owner_tainted)
        )
        if tainted:
            clean["tainted"] = True
            count += 1
        marked.append(clean)
    return marked, count


def exchange_rows(
    question: str, answer: str, tainted: bool
) -> tuple[list[tuple[str, bool]], set[str]]:
    """What one finished run adds to the ledger: ``(digest, tainted)`` of its question (clean:
    the person's own words) and of its answer, and the answer's shingles when it is tainted."""
    rows = [(text_digest(question), False), (text_digest(answer), tainted)]
    return rows, shingles(answer) if tainted else set()
