"""A record as HTML for the record view: fields by language, links, timecodes, thumbnails.

Links use two schemes the views understand: ``record:TIPO/ID`` opens a record (with
``#tc=HH:MM:SS.mmm`` for a passage) and ``media:ID`` plays a media file.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

from app.core.archive import Archive, Field, Media, Record, RecordKey
from app.core.archive.backlinks import linked_from
from app.core.archive.hierarchy import Hierarchy, Node, breadcrumbs, children_of, hierarchy_of
from app.core.archive.model import NEUTRAL_LANG
from app.core.archive.records import locators
from app.core.archive.shown_values import (
    by_language,
    language_tag,
    shown_value,
    shows_language,
)
from app.core.archive.vocabulary import LEVELS, Terms, field_terms, said
from app.core.errors import ArxiuError
from app.ui.i18n import language_name

TIMECODE = re.compile(r"\[TC_(\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?)_TC\]")
CHILDREN_SHOWN = 200
"""The most children listed in the record view (the rest are counted)."""
BACKLINKS_SHOWN = 50
"""The most records listed under "Linked from" (the rest are counted)."""
CRUMB = " › "


@dataclass(frozen=True)
class Palette:
    """Colours the HTML uses, taken from the widget's palette (light or dark)."""

    text: str = "#1f2328"
    muted: str = "#656d76"
    link: str = "#0b62c4"
    pill: str = "#eaeef2"
    danger: str = "#b42318"
    rule: str = "#d0d7de"


def record_link(key: RecordKey, timecode: str | None = None) -> str:
    """The ``record:`` URL of a record (optionally at a timecode)."""
    url = f"record:{key.section_tipo}/{key.section_id}"
    return f"{url}#tc={timecode}" if timecode else url


CONTENTS = "contents:"
"""The scheme of the link that lists all the contents of a record with many."""
WITHIN = "within:"
"""The scheme of the "search within this description" link of a record with contents."""


def key_link(scheme: str, key: RecordKey) -> str:
    """The URL of ``scheme`` (:data:`WITHIN`, :data:`CONTENTS`) that names ``key``."""
    return f"{scheme}{key.section_tipo}/{key.section_id}"


def parse_key_link(url: str, scheme: str) -> RecordKey | None:
    """The record a ``scheme`` URL names (:func:`key_link`), or ``None`` for any other URL."""
    if not url.startswith(scheme):
        return None
    try:
        return RecordKey.parse(url[len(scheme) :])
    except ValueError:
        return None


def parse_record_link(url: str) -> tuple[RecordKey, str | None] | None:
    """The key and timecode of a ``record:`` URL, or ``None`` for any other URL."""
    if not url.startswith("record:"):
        return None
    body, _, fragment = url[len("record:") :].partition("#")
    try:
        key = RecordKey.parse(body)
    except ValueError:
        return None
    timecode = fragment[3:] if fragment.startswith("tc=") else None
    return key, timecode or None


def record_html(
    archive: Archive,
    record: Record,
    media: list[Media],
    *,
    lang: str = "lg-eng",
    colors: Palette | None = None,
    labels: dict[str, str] | None = None,
    narrow: bool = False,
    every_child: bool = False,
) -> str:
    """The whole record view as one HTML document (``narrow``: each field's label above its
    value, for a narrow view; ``every_child``: all its contents listed, not the first
    :data:`CHILDREN_SHOWN`)."""
    c = colors or Palette()
    words = labels or {}
    section = archive.section(record.section_tipo)
    title = html.escape(archive.title_of(record, lang))  # the code is on its own line
    restricted = archive.is_restricted(record.key)
    badge = _pill(words.get("restricted", "restricted"), c.danger, "#ffffff") if restricted else ""
    shape = hierarchy_of(archive, record.section_tipo)
    parts = [
        _breadcrumbs(archive, record.key, shape, lang, c),
        f"<h2 style='margin:0 0 2px 0; color:{c.text}'>{title}</h2>",
        _reference_line(record, shape, lang, c),
        f"<p style='color:{c.muted}; margin:0 0 10px 0'>{html.escape(section.label(lang))}"
        f" · {record.key} · v{record.version} {badge}</p>",
        _thumbnails(archive, media, c),
        "<table cellspacing='0' cellpadding='5' width='100%'>",
    ]
    coded = field_terms(record.section_tipo, shape)
    for field in archive.fields(record.section_tipo):
        items = record.items(field.tipo)
        if items and field.kind != "media":
            terms = coded.get(field.tipo)
            parts.append(_field_row(archive, record.key, field, items, lang, c, narrow, terms))
    parts.append("</table>")
    if shape is not None:
        below = children_of(archive, record.key, lang, shape)
        parts.append(_children(below, c, words, lang, record.key, every_child))
        if below:
            parts.append(
                _within(record.key, c, words.get("search_within", "Search within this description"))
            )
    below_field = shape.parent_field if shape is not None else None
    title_from = words.get("linked_from", "Linked from")
    parts.append(_backlinks(archive, record.key, lang, c, title_from, below_field))
    return "".join(parts)


def _breadcrumbs(
    archive: Archive, key: RecordKey, shape: Hierarchy | None, lang: str, c: Palette
) -> str:
    """ "Fonds › Series › File" above the title, each a link (empty for a top record)."""
    trail = breadcrumbs(archive, key, lang, shape) if shape is not None else []
    if not trail:
        return ""
    links = [
        f"<a href='{record_link(node.key)}' style='color:{c.link}; text-decoration:none'>"
        f"{html.escape(_short(node))}</a>"
        for node in trail
    ]
    separator = f"<span style='color:{c.muted}'>{CRUMB}</span>"
    return f"<p id='breadcrumbs' style='margin:0 0 4px 0'>{separator.join(links)}</p>"


def _short(node: Node) -> str:
    return node.label if len(node.label) <= 60 else node.label[:57] + "…"


def _reference_line(record: Record, shape: Hierarchy | None, lang: str, c: Palette) -> str:
    """The reference code and the level, near the title."""
    if shape is None:
        return ""
    code = record.text(shape.reference_field, lang) if shape.reference_field else None
    level = record.text(shape.level_field, lang) if shape.level_field else None
    bits = [
        f"<b>{html.escape(code)}</b>" if code else "",
        _pill(said(level, LEVELS, lang), c.pill, c.muted) if level else "",
    ]
    shown = " ".join(b for b in bits if b)
    return f"<p style='color:{c.text}; margin:0 0 2px 0'>{shown}</p>" if shown else ""


def _children(
    nodes: list[Node], c: Palette, words: dict[str, str], lang: str, key: RecordKey, every: bool
) -> str:
    """The records under ``key``, in order: reference code and title, each a link, the level
    in ``lang``, and the dates and container (what tells apart siblings that share a title,
    as a finding aid lists them); the first :data:`CHILDREN_SHOWN`, then a link that lists them
    all (``every``: all of them)."""
    if not nodes:
        return ""
    title = words.get("contents", "Contents")
    shown_nodes = nodes if every else nodes[:CHILDREN_SHOWN]
    rows = []
    for node in shown_nodes:
        code = f"<b>{html.escape(node.reference)}</b> " if node.reference else ""
        shown = html.escape(said(node.level, LEVELS, lang))
        level = f" <span style='color:{c.muted}; font-size:small'>{shown}</span>"
        where = " · ".join(html.escape(t) for t in (node.dates, node.container) if t)
        said_where = f" <span style='color:{c.muted}'>· {where}</span>" if where else ""
        rows.append(
            f"<li>{code}<a href='{record_link(node.key)}' style='color:{c.link}'>"
            f"{html.escape(node.label)}</a>{level if node.level else ''}{said_where}</li>"
        )
    more = len(nodes) - len(shown_nodes)
    said_more = words.get("show_every_child", "+{n}: show them all").format(n=more)
    extra = (
        f"<p id='more_contents'><a href='{key_link(CONTENTS, key)}' "
        f"style='color:{c.link}'>{html.escape(said_more)}</a></p>"
        if more > 0
        else ""
    )
    return (
        f"<h4 style='color:{c.muted}; margin-top:14px'>{html.escape(title)} ({len(nodes)})</h4>"
        f"<ol id='children' style='margin-top:0'>{''.join(rows)}</ol>{extra}"
    )


def _within(key: RecordKey, c: Palette, text: str) -> str:
    """The link that searches this record and everything under it."""
    return (
        f"<p id='within'><a href='{key_link(WITHIN, key)}' style='color:{c.link}'>"
        f"{html.escape(text)}</a></p>"
    )


def _pill(text: str, background: str, color: str) -> str:
    return (
        f"<span style='background:{background}; color:{color}; font-size:small'>"
        f"&nbsp;{html.escape(text)}&nbsp;</span>"
    )


def _field_row(
    archive: Archive,
    key: RecordKey,
    field: Field,
    items: list[dict[str, Any]],
    lang: str,
    c: Palette,
    narrow: bool = False,
    terms: Terms | None = None,
) -> str:
    label = html.escape(field.label(lang))
    if field.kind == "relation":
        body = _relation_links(archive, items, lang, c)
    else:
        shown = (_value_html(key, field, item, c, terms, lang) for item in by_language(items))
        body = "<br>".join(shown)
    if narrow:
        return (
            f"<tr><td style='color:{c.muted}; font-size:small; border-top:1px solid {c.rule}'>"
            f"{label}</td></tr><tr><td valign='top' style='color:{c.text}'>{body}</td></tr>"
        )
    return (
        f"<tr><td width='120' valign='top' style='color:{c.muted}; white-space:nowrap; "
        f"border-top:1px solid {c.rule}'>{label}</td>"
        f"<td valign='top' style='color:{c.text}; border-top:1px solid {c.rule}'>{body}</td></tr>"
    )


def _value_html(
    key: RecordKey,
    field: Field,
    item: dict[str, Any],
    c: Palette,
    terms: Terms | None = None,
    lang: str = "lg-eng",
) -> str:
    code = str(item.get("lang") or NEUTRAL_LANG)
    value = item.get("value", "")
    tagged = shows_language(field.multilingual, code, value, terms)
    prefix = _pill(language_tag(code), c.pill, c.muted) + "&nbsp;" if tagged else ""
    text = html.escape(shown_value(field.kind, value, terms, lang, language_name))
    if field.kind == "transcription":
        text = TIMECODE.sub(lambda m: _timecode_link(key, m.group(1), c), text)
        text = text.replace("\n", "<br>")
    elif field.kind == "iri":
        text = f"<a href='{text}' style='color:{c.link}'>{text}</a>"
    return prefix + text


def _timecode_link(key: RecordKey, timecode: str, c: Palette) -> str:
    return (
        f"<a href='{record_link(key, timecode)}' style='color:{c.link}; text-decoration:none'>"
        f"<span style='background:{c.pill}'>&nbsp;▶ {timecode[:8]}&nbsp;</span></a>"
    )


def _relation_links(archive: Archive, items: list[dict[str, Any]], lang: str, c: Palette) -> str:
    links = []
    for target in locators(items):
        label = html.escape(archive.record_label(target, lang))
        links.append(
            f"<a href='{record_link(target)}' style='color:{c.link}'>{label}</a>"
            f" <span style='color:{c.muted}; font-size:small'>({target})</span>"
        )
    return "<br>".join(links)


def _thumbnails(archive: Archive, media: list[Media], c: Palette) -> str:
    cells = []
    for item in media:
        if item.thumbnail:
            src = archive.media_path(item.thumbnail).as_uri()
            cells.append(f"<a href='media:{item.id}'><img src='{src}' height='140'></a>&nbsp;")
        elif item.mime.startswith(("audio/", "video/")):
            length = f" · {item.duration_s:.0f} s" if item.duration_s else ""
            cells.append(
                f"<a href='media:{item.id}' style='color:{c.link}'>▶ {html.escape(item.mime)}"
                f"{length}</a>&nbsp;"
            )
    return f"<p>{''.join(cells)}</p>" if cells else ""


def _backlinks(
    archive: Archive,
    key: RecordKey,
    lang: str,
    c: Palette,
    title: str,
    children_field: str | None = None,
) -> str:
    """The records linking here, each once with the fields it links through (the records the
    page shows already, in its fields or under Contents, left out)."""
    links = linked_from(archive, key, children_field)
    if not links:
        return ""
    rows = []
    for link in links[:BACKLINKS_SHOWN]:
        label = html.escape(archive.record_label(link.source, lang))
        section = archive.section(link.source.section_tipo).label(lang)
        through = ", ".join(_field_label(archive, tipo, lang) for tipo in link.field_tipos)
        rows.append(
            f"<a href='{record_link(link.source)}' style='color:{c.link}'>{label}</a>"
            f" <span style='color:{c.muted}; font-size:small'>{html.escape(section)} ·"
            f" {link.source} · {html.escape(through)}</span>"
        )
    more = len(links) - BACKLINKS_SHOWN
    extra = f"<br><span style='color:{c.muted}'>+{more}</span>" if more > 0 else ""
    return (
        f"<h4 style='color:{c.muted}; margin-top:14px'>{html.escape(title)}</h4>"
        f"<p id='linked-from' style='margin-top:0'>{'<br>'.join(rows)}{extra}</p>"
    )


def _field_label(archive: Archive, tipo: str, lang: str) -> str:
    """A field's label in ``lang`` (its tipo when the archive does not define it)."""
    try:
        return archive.field(tipo).label(lang)
    except ArxiuError:
        return tipo
