"""What one EAD unit (the ``archdesc`` or a component) says: the ``ead1`` values of
:mod:`.ead`'s table, its names to link, its restriction and its digital objects.

This is the importer's per-element work, run for every unit of every finding aid, so it reads
the tree the cheap way: children and descendants are found by lxml's own tag matching
(``{*}name``: any namespace or none, as EAD 2002 comes both ways), local names are looked up
once per tag, and text is collapsed with ``str.split`` (the same whitespace as ``\\s``). The
results are those of the :mod:`.safe_xml` helpers (``children``, ``descendants``, ``text_of``),
which the previous version used element by element: on the three EAD sets (13,182 units) the
extraction took 0.47 s CPU that way.

Items are added in their stored form (:mod:`.items`): the fields here are only ever appended to.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from app.core.archive.importers.access import closes_access
from app.core.archive.importers.authorities import AGENTS, PLACES, SUBJECTS, Mention, clean_name
from app.core.archive.importers.base import Skip, Values
from app.core.archive.importers.dates import format_point, is_day, written_point
from app.core.archive.importers.ead_fields import (
    ABSTRACT,
    AGENT_KINDS,
    CONTAINER,
    CREATORS,
    DAO,
    DATES,
    EXTENT,
    FROM,
    LEVEL,
    NAMES,
    NO_LEVEL,
    NOTES,
    PLACES_FIELD,
    SUBJECT_KINDS,
    SUBJECTS_FIELD,
    TITLE,
    TO,
    TYPED_UNITID,
    UNITID,
)
from app.core.archive.importers.items import put
from app.core.archive.importers.languages import archive_lang
from app.core.archive.importers.safe_xml import Element, attr
from app.core.archive.model import NEUTRAL_LANG

DATE_UNREADABLE = "import.date_unreadable"
"""A ``unitdate/@normal`` that is not an ISO 8601 date or range (the text is still kept)."""
_ISO = re.compile(r"^(\d{4})(?:-?(\d{2})(?:-?(\d{2}))?)?$")
_HYPHENED = re.compile(r"^(\d{4}|\d{8})-(\d{4}|\d{8})$")
"""Two years, or two basic-format days, joined by a hyphen (``1890-1975``,
``19950909-19951023``): a range written without ISO's ``/``, which no ISO date looks like."""
NO_DATE_WORDS = frozenset(
    ("undated", "n.d.", "nd", "s.d.", "sd", "s/d", "s.f.", "sin fecha", "sense data", "sans date")
)
"""An ``@normal`` that says there is no date, in English, Spanish, Catalan, French or Latin
(*sine die*): like the placeholders ``/``, ``0`` and ``0/0``, no date and nothing to report."""
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_MEDIA = frozenset(("dao", "daogrp", "daoset"))
_PHYSICAL = frozenset(("physdesc", "physdescstructured", "physdescset"))
_ACCESS_POINTS = tuple(f"{{*}}{name}" for name in (*AGENT_KINDS, "geogname", *SUBJECT_KINDS))
_AGENT_TAGS = tuple(f"{{*}}{name}" for name in AGENT_KINDS)
_LOCAL_CACHE = 4096
"""Distinct tags whose local names are remembered (a hostile file may invent millions)."""
_locals: dict[object, str] = {}


# -- reading the tree ---------------------------------------------------------------------------


def local(node: Element) -> str:
    """``safe_xml.local``, looked up once per tag."""
    tag = node.tag
    name = _locals.get(tag)
    if name is None:
        name = tag.rpartition("}")[2] if isinstance(tag, str) else ""
        if len(_locals) < _LOCAL_CACHE:
            _locals[tag] = name
    return name


def text(node: Element | None) -> str:
    """``safe_xml.text_of``: all the text inside ``node``, whitespace collapsed ("" for None)."""
    if node is None:
        return ""
    if len(node):
        return " ".join("".join(cast("Iterator[str]", node.itertext())).split())
    return " ".join(node.text.split()) if node.text else ""  # no child: its text is all of it


def first(node: Element, name: str) -> Element | None:
    """The first child element of ``node`` named ``name`` (any namespace), or ``None``."""
    return next(node.iterchildren(f"{{*}}{name}"), None)


def named(node: Element, *names: str) -> Iterator[Element]:
    """The child elements of ``node`` named one of ``names`` (any namespace)."""
    return node.iterchildren(*(f"{{*}}{name}" for name in names))


def below(node: Element, *names: str) -> Iterator[Element]:
    """Every element under ``node`` (not ``node``) named one of ``names``, in document order."""
    for item in node.iter(*(f"{{*}}{name}" for name in names)):
        if item is not node:
            yield item


def line_of(node: Element) -> int:
    """The line ``node`` starts on (0 when lxml does not know)."""
    line = node.sourceline
    return line if isinstance(line, int) else 0


# -- languages ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lang:
    """The language of a value: an archive code, and whether it was guessed from the text."""

    code: str = NEUTRAL_LANG
    guessed: bool = False


def ead_lang(code: str) -> str:
    """The archive's code for an EAD language code (``fre`` → ``lg-fra``, ``en`` → ``lg-eng``)."""
    return archive_lang(code)


def own_lang(node: Element, inherited: Lang) -> Lang:
    """The language ``node`` declares itself (``xml:lang``, EAD3 ``@lang``), else ``inherited``."""
    code = node.get(_XML_LANG) or node.get("lang") or ""
    return Lang(ead_lang(code)) if code.strip() else inherited


def put_text(values: Values, tipo: str, value: str, lang: Lang) -> None:
    """Add ``value`` (when not empty) in ``lang``, marked ``lang_guessed`` when it was guessed."""
    if not value:
        return
    items = values.get(tipo)
    if items is None:
        items = values[tipo] = []
    item: dict[str, Any] = {"id": len(items) + 1, "lang": lang.code or NEUTRAL_LANG, "value": value}
    if lang.guessed:
        item["lang_guessed"] = True
    items.append(item)


# -- the finding aid and the unit ----------------------------------------------------------------


@dataclass
class Doc:
    """One ``<ead>`` being imported: its id, title, language and file."""

    eadid: str
    title: str
    file: str
    agency: str = ""
    base: str = ""
    """The EADID components are named after: ``eadid`` up to a ``#`` (an exported subtree's
    ``recordid`` is its root's identifier, ``FRAN_IR_003500#d_1_2``)."""
    lang: Lang = field(default_factory=Lang)
    skipped: list[Skip] = field(default_factory=list)


@dataclass
class Described:
    """What one unit says: its values (relations still to resolve) and its restriction."""

    values: Values
    mentions: list[tuple[str, Mention]] = field(default_factory=list)
    restricted: bool | None = None
    """``True``/``False`` from its own ``accessrestrict``; ``None`` without one."""
    media: int = 0
    part_of: tuple[str, int] | None = None
    """An exported subtree's archdesc: its parent's external id and its order there."""


def describe(node: Element, doc: Doc) -> Described:
    """The values of the archdesc or component ``node`` (relations not yet resolved)."""
    lang = own_lang(node, doc.lang)
    info = Described(values={})
    values = info.values
    level = node.get("level") or ""
    if level == "otherlevel" and node.get("otherlevel"):
        level = node.get("otherlevel") or level
    if level == NO_LEVEL:
        level = ""
    put(values, LEVEL, level.strip() or None)
    did = first(node, "did")
    if did is not None:
        _did(did, info, doc, own_lang(did, lang))
    for block in _note_blocks(node):
        name = local(block)
        if name in NOTES:
            note = blocks_text(block)
            put_text(values, NOTES[name], note, own_lang(block, lang))
            if name == "accessrestrict" and note:
                info.restricted = bool(info.restricted) or closes_access(note)
        elif name == "controlaccess":
            _access_points(block, info, own_lang(block, lang), doc)
        elif name in _MEDIA:
            _media(block, info)
        elif name == "relations":
            info.part_of = part_of(block) or info.part_of
    return info


def part_of(block: Element) -> tuple[str, int] | None:
    """The ``relation`` with ``@arcrole`` ``…isPartOf`` of an EAD3 ``relations``: the parent's
    external id (``@href``) and the order there (``relationentry localtype="order"``)."""
    for relation in named(block, "relation"):
        href = attr(relation, "href")
        if attr(relation, "arcrole").endswith("isPartOf") and href:
            order = next(
                (
                    text(e)
                    for e in named(relation, "relationentry")
                    if e.get("localtype") == "order"
                ),
                "1",
            )
            return href, int(order) if order.isdigit() else 1
    return None


def _note_blocks(node: Element) -> Iterator[Element]:
    """The unit's note elements, those inside ``descgrp`` included."""
    for item in node.iterchildren("{*}*"):
        if local(item) == "descgrp":
            yield from item.iterchildren("{*}*")
        else:
            yield item


def _did(did: Element, info: Described, doc: Doc, lang: Lang) -> None:
    values = info.values
    ranges: list[tuple[str, str]] = []
    containers: list[str] = []
    for item in did.iterchildren("{*}*"):
        name = local(item)
        if name == "unittitle":
            put_text(values, TITLE, text(item), own_lang(item, lang))
            for inner in below(item, "unitdate"):
                _unitdate(inner, values, ranges, doc)
        elif name == "unitid":
            _unitid(item, values)
        elif name == "unitdate":
            _unitdate(item, values, ranges, doc)
        elif name == "unitdatestructured":
            ranges.extend(_structured_range(item))
        elif name in _PHYSICAL:
            for extent in extents(item):
                put_text(values, EXTENT, extent, own_lang(item, lang))
        elif name == "container":
            containers.append(_container(item))
        elif name in _MEDIA:
            _media(item, info)
        elif name == "origination":
            _names(item, info, CREATORS, doc, own_lang(item, lang))
        elif name == "abstract":
            put_text(values, ABSTRACT, text(item), own_lang(item, lang))
    if any(containers):
        put(values, CONTAINER, ", ".join(c for c in containers if c))
    if ranges:
        put(values, FROM, min(start for start, _ in ranges))
        put(values, TO, max(end for _, end in ranges))


def _unitid(item: Element, values: Values) -> None:
    code = text(item)
    if not code:
        return
    put(values, UNITID, code)
    kind = (item.get("type") or item.get("localtype") or "").strip()
    if kind:
        put(values, TYPED_UNITID, f"{kind}: {code}")


def _unitdate(item: Element, values: Values, ranges: list[tuple[str, str]], doc: Doc) -> None:
    put(values, DATES, text(item) or None)
    normal = (item.get("normal") or "").strip()
    if not normal.strip("/0 ") or normal.casefold() in NO_DATE_WORDS:  # "/", "0", "undated"
        return
    parsed = iso_range(normal)
    if parsed is None:
        reason = "unitdate/@normal {normal!r} is not an ISO 8601 date or range"
        skip = Skip.said(line_of(item), doc.file, DATE_UNREADABLE, reason, normal=normal)
        doc.skipped.append(skip)
    else:
        ranges.append(parsed)


def iso_date(value: str) -> str | None:
    """``1914``, ``1914-08``, ``1914-08-23`` (also written ``19140823``), else ``None``.

    A year with a month name, as converters from MARC often write ``@normal`` (``1989
    October``, ``October 1989``, ``1990 Feb. 3``), is read too.
    """
    match = _ISO.match(value.strip())
    if match is not None:
        year, month, day = match.groups()
        if not is_day(int(year), int(month or 1), int(day or 1)):
            return None  # 1890-19-75: no month 19 (``1890-1975`` is a range, read before)
        return "-".join(part for part in match.groups() if part)
    return _written_date(value)


def _written_date(value: str) -> str | None:
    """A year with a month name and perhaps a day; no other word (``circa 1900`` is not
    an ``@normal``)."""
    point = written_point(value, ignored=frozenset())
    return format_point(point)


def iso_range(normal: str) -> tuple[str, str] | None:
    """The ``(from, to)`` of an EAD ``@normal``: ``1801-01-01/2000-12-31``, ``1914``, or
    several ranges separated by commas (``1846/1846,1898/1932`` → ``1846``–``1932``)."""
    dates: list[str] = []
    for part in normal.split(","):
        hyphened = _HYPHENED.match(part.strip())
        if hyphened and len(hyphened[1]) == len(hyphened[2]) and hyphened[1] <= hyphened[2]:
            start, end = hyphened[1], hyphened[2]
        else:
            start, _, end = part.partition("/")
        earliest = iso_date(start)
        latest = iso_date(end) if end else earliest
        if earliest is None or latest is None:
            return None
        dates.extend((earliest, latest))
    return min(dates), max(dates)


def _structured_range(item: Element) -> list[tuple[str, str]]:
    """The range of an EAD3 ``unitdatestructured`` from its ``@standarddate`` values."""
    found = [
        iso_date(node.get("standarddate") or "")
        for node in below(item, "datesingle", "fromdate", "todate")
    ]
    dates = [d for d in found if d]
    return [(min(dates), max(dates))] if dates else []


def extents(item: Element) -> list[str]:
    """The extents of a ``physdesc`` (its ``extent`` children, else its text), or of an EAD3
    ``physdescstructured`` (``quantity unittype``) or ``physdescset``."""
    name = local(item)
    if name == "physdescset":
        return [e for node in named(item, "physdescstructured") for e in extents(node)]
    if name == "physdescstructured":
        both = f"{text(first(item, 'quantity'))} {text(first(item, 'unittype'))}".strip()
        return [both] if both else []
    found = [e for e in (text(e) for e in named(item, "extent")) if e]
    if found:
        return found
    whole = text(item)
    return [whole] if whole else []


def _container(item: Element) -> str:
    """``Box 3`` for ``<container type="box">3</container>`` (EAD3 ``@localtype``); nothing
    for a container with no number (a template's left-over placeholder, UW's
    ``<container type="box-folder"><?xm-replace_text …?></container>``)."""
    value = text(item)
    kind = (item.get("type") or item.get("localtype") or "").strip()
    return f"{kind[:1].upper()}{kind[1:].lower()} {value}" if kind and value else value


def _media(item: Element, info: Described) -> None:
    """Every ``dao``/``daoloc`` href under ``item`` (links only: nothing is downloaded)."""
    for node in item.iter("{*}dao", "{*}daoloc"):  # ``item`` itself first when it is a dao
        href = attr(node, "href")
        if href:
            put(info.values, DAO, href)
            info.media += 1


def _access_points(block: Element, info: Described, lang: Lang, doc: Doc) -> None:
    """Names, places and subjects of a ``controlaccess`` (nested ones included)."""
    for item in block.iter(*_ACCESS_POINTS):
        if item is block:
            continue
        name = local(item)
        if name in AGENT_KINDS:
            _add_mention(item, info, NAMES, AGENTS, AGENT_KINDS[name], doc, lang)
        elif name == "geogname":
            _add_mention(item, info, PLACES_FIELD, PLACES, "place", doc, lang)
        else:
            _add_mention(item, info, SUBJECTS_FIELD, SUBJECTS, name, doc, lang)


def _names(block: Element, info: Described, tipo: str, doc: Doc, lang: Lang) -> None:
    for item in block.iterchildren(*_AGENT_TAGS):
        _add_mention(item, info, tipo, AGENTS, AGENT_KINDS[local(item)], doc, lang)


def _add_mention(
    item: Element, info: Described, tipo: str, section: str, kind: str, doc: Doc, lang: Lang
) -> None:
    name = clean_name(name_text(item))
    if not name:
        return
    number = (item.get("authfilenumber") or item.get("identifier") or "").strip()
    if number.isdigit() and doc.agency:
        number = f"{doc.agency}:{number}"
    mention = Mention(section, kind, name, number, own_lang(item, lang).code)
    info.mentions.append((tipo, mention))


def name_text(item: Element) -> str:
    """A name's text; EAD3 ``<part>``s joined with spaces."""
    parts = [text(p) for p in named(item, "part")]
    return " ".join(p for p in parts if p) if parts else text(item)


def blocks_text(node: Element) -> str:
    """The text of a note: each paragraph, list item or nested note a line of its own (its
    ``head`` left out)."""
    lines: list[str] = []
    own = local(node)
    for item in node.iterchildren("{*}*"):
        name = local(item)
        if name == "head":
            continue
        if name == "list":
            lines.extend(text(entry) for entry in named(item, "item"))
        elif name == own:
            lines.append(blocks_text(item))
        else:  # a p, note or blockquote, or anything else: its text
            lines.append(text(item))
    lines = [line for line in lines if line]
    if not lines:  # bare text, perhaps after a head
        loose = [node.text or "", *(item.tail or "" for item in node)]
        return " ".join(" ".join(loose).split())
    return "\n\n".join(lines)
