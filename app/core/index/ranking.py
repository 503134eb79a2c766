"""Language-aware reranking and record grouping of fused candidates.

An archivist who asks in Catalan wants the Catalan testimonies first; a summary in Catalan of a
Spanish interview is a fair hit, but less so than the interview told in Catalan. So, once the
query's language is known (given, or guessed by :mod:`app.core.archive.language`):

* a chunk written in another language keeps :data:`CROSS_LANGUAGE` of its score;
* a chunk of a record whose original language — the language most of its text is written in,
  normally that of its transcription or body — is another keeps :data:`FOREIGN_RECORD`;
* language-neutral chunks, records with no language, and queries of no known language are left
  alone, so an English archive searched in English ranks exactly as without this step;
* when no model of the index understands the query's language, BM25 gets more weight
  (:data:`app.core.index.fusion.FOREIGN_DENSE_WEIGHT`).

Grouped by record (``group_by_record=True``), a record scores the best chunk of each of its
fields weighted by :data:`AGREEMENT_WEIGHTS`: an interview whose summary and transcription both
match is more *about* the query than one with a single passage that mentions it in passing.
Chunks of one field never add up. A chunk shorter than :data:`PASSAGE_WORDS` agrees as its own
field only when it is catalogue text written in a language (an interview's keywords); every
short chunk headed by the record's title (a title alone, a title with a short value) is the
title again and counts once, as one field, whichever languages it comes in; short
language-neutral values (identifiers, corpus names) add nothing (:func:`agreement_slot`). So
on DBpedia-Entity (one abstract per record) the ranking is unchanged: hybrid nDCG@10 0.5136
either way (third session); on the demo archive the keywords and the translated titles of the
displacement interviews now agree with their summaries (``docs/search.md``, "Demo archive").

The language preference applies only to an index whose models all read a fixed set of
languages (MiniLM alone, see :func:`multilingual`); with USE in the index a Catalan question
must find the Spanish and English interviews too. The model and fusion weights per query
language are :func:`model_weight` and :func:`app.core.index.fusion.adaptive`; the figures
are in ``docs/search.md``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from app.core.archive.language import NEUTRAL
from app.core.archive.model import RecordKey
from app.core.index.storage import ChunkRow

CROSS_LANGUAGE = 0.8
FOREIGN_RECORD = 0.5
AGREEMENT_WEIGHTS: tuple[float, ...] = (1.0, 0.5, 0.25)
PASSAGE_WORDS = 30
"""Chunks shorter than this are catalogue metadata: they agree only as :func:`agreement_slot`
says."""
TITLE_SLOT = "<title>"
"""The one agreement slot shared by a record's short title-headed chunks."""
MAIN_SHARE = 0.5
"""A record is "written in" every language holding at least this share of its largest one."""

Ranked = list[tuple[int, float]]


GENERALIST_WEIGHT = 0.0
"""Weight of a model that reads every language (USE) beside one trained on the query's own
language (MiniLM on an English query): USE alone is weaker on English."""
UNKNOWN_GENERALIST_WEIGHT = 0.7
"""Weight of USE beside MiniLM for a query of no recognisable language (a name, one word:
``vacas``, ``La Corunya``): on such queries each model is right about as often."""
FOREIGN_MODEL_WEIGHT = 0.2
"""Weight of a model that does not read the query's language (MiniLM on a Catalan query)."""


def reads(embedder: object, query_lang: str | None) -> bool:
    """Whether ``embedder`` was trained on ``query_lang`` (an unknown language counts)."""
    langs: Sequence[str] | None = getattr(embedder, "languages", None)
    return langs is None or query_lang is None or query_lang in langs


def multilingual(embedders: Sequence[object]) -> bool:
    """Whether some model of the index reads every language (then no language preference
    is applied: measured on the demo archive with MiniLM + USE, demoting other languages
    put 52 of 81 displacement interviews in the top 9 of the nine demo queries, against
    61 without)."""
    return any(hasattr(e, "languages") and e.languages is None for e in embedders)


def understood(query_lang: str | None, embedders: Sequence[object]) -> bool:
    """Whether some model of the index reads the query's language."""
    return any(reads(e, query_lang) for e in embedders)


def model_weight(query_lang: str | None, embedder: object, embedders: Sequence[object]) -> float:
    """How much ``embedder``'s dense list counts among the index's models for this query."""
    specialists = [
        e for e in embedders if getattr(e, "languages", None) is not None and reads(e, query_lang)
    ]
    if getattr(embedder, "languages", None) is None:
        if query_lang is None and specialists:
            return UNKNOWN_GENERALIST_WEIGHT
        return GENERALIST_WEIGHT if specialists else 1.0
    return 1.0 if reads(embedder, query_lang) else FOREIGN_MODEL_WEIGHT


def record_languages(
    conn: sqlite3.Connection, keys: Iterable[RecordKey]
) -> dict[RecordKey, frozenset[str]]:
    """Each record's original languages, by the amount of indexed text in each."""
    sizes: dict[RecordKey, dict[str, int]] = {}
    for tipo, ids in _by_section(keys).items():
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            rows = conn.execute(
                "SELECT section_id, lang, sum(length(text)) FROM index_chunks "
                f"WHERE section_tipo = ? AND section_id IN ({','.join('?' * len(part))}) "
                "GROUP BY section_id, lang",
                (tipo, *part),
            ).fetchall()
            for sid, lang, size in rows:
                if lang != NEUTRAL:
                    sizes.setdefault(RecordKey(tipo, int(sid)), {})[str(lang)] = int(size)
    return {key: _main(langs) for key, langs in sizes.items()}


def _by_section(keys: Iterable[RecordKey]) -> dict[str, list[int]]:
    by_section: dict[str, list[int]] = {}
    for key in set(keys):
        by_section.setdefault(key.section_tipo, []).append(key.section_id)
    return by_section


def _main(sizes: dict[str, int]) -> frozenset[str]:
    top = max(sizes.values())
    return frozenset(lang for lang, size in sizes.items() if size >= MAIN_SHARE * top)


def prefer_language(
    ranked: Ranked,
    rows: dict[int, ChunkRow],
    originals: dict[RecordKey, frozenset[str]],
    query_lang: str | None,
) -> Ranked:
    """``ranked`` with chunks and records of other languages demoted, best first."""
    if query_lang is None:
        return ranked
    adjusted: Ranked = []
    for cid, score in ranked:
        row = rows.get(cid)
        if row is not None:
            if row.lang not in (query_lang, NEUTRAL):
                score = demote(score, CROSS_LANGUAGE)
            langs = originals.get(row.key)
            if langs and query_lang not in langs:
                score = demote(score, FOREIGN_RECORD)
        adjusted.append((cid, score))
    return sorted(adjusted, key=lambda item: (-item[1], item[0]))


def demote(score: float, factor: float) -> float:
    """``score`` scaled down by ``factor`` (a negative score moves further down)."""
    return score * factor if score >= 0 else score / factor


def by_record(
    ranked: Ranked, rows: dict[int, ChunkRow], weights: tuple[float, ...] = (1.0,)
) -> Ranked:
    """One entry per record (its best chunk), best first.

    A record scores the best chunk of each of its fields, sorted, weighted by ``weights``:
    with :data:`LEXICAL_FIELD_WEIGHTS`, an interview whose summary, keywords *and*
    transcription all contain the query's words outranks one with a single passage that
    mentions them in passing. Chunks of one field never add up, so a long document split into
    many chunks gains nothing. The default scores a record by its best chunk alone.
    """
    fields: dict[RecordKey, dict[str, float]] = {}
    best: dict[RecordKey, int] = {}
    for cid, score in ranked:
        row = rows.get(cid)
        if row is not None:
            best.setdefault(row.key, cid)
            slot = agreement_slot(row)
            if slot is not None or row.key not in fields:
                fields.setdefault(row.key, {}).setdefault(slot or row.field_tipo, score)
    grouped = [
        (best[key], _combine(sorted(s.values(), reverse=True), weights))
        for key, s in fields.items()
    ]
    return sorted(grouped, key=lambda item: (-item[1], item[0]))


def agreement_slot(row: ChunkRow) -> str | None:
    """Which of its record's fields a chunk agrees as (``None``: it adds no agreement).

    A passage agrees as its field; a short chunk headed by the record's title (the title alone
    in another language, or the title with one short value) is the title again, so all such
    chunks share :data:`TITLE_SLOT`; a short language-neutral value (a code, an identifier)
    agrees as nothing; short catalogue text in a language (keywords) agrees as its field.
    """
    if len(row.text.split()) >= PASSAGE_WORDS:
        return row.field_tipo
    if row.label:
        return TITLE_SLOT
    return None if row.lang == NEUTRAL else row.field_tipo


def _combine(scores: list[float], weights: tuple[float, ...]) -> float:
    """The best score plus the weighted (non-negative) runners-up."""
    extra = zip(weights[1:], scores[1:], strict=False)
    return scores[0] + sum(weight * max(score, 0.0) for weight, score in extra)
