"""Parsing XML from outside safely: no DTD, no entities, no network, bounded size and depth.

Every XML file an archivist brings in (EAD, EAC-CPF, ``oai_dc``, OHMS, an OAI-PMH response) is
read through :func:`parse_file` or :func:`parse_bytes`. The parser never loads a DTD (the real
EAD files declare a relative ``ead.dtd``), never fetches anything, never expands an entity that
a DTD declares (so neither XXE nor "billion laughs" can do anything), and refuses a document
that is larger than :data:`MAX_BYTES` or nested deeper than :data:`MAX_DEPTH`. Each refusal is a
coded :class:`~app.core.errors.ImportFailed`:

=========================  =========================================================
code                       why
=========================  =========================================================
``import.xml_malformed``   not well-formed XML (the message names the line)
``import.xml_entity``      the document declares entities (``<!ENTITY``): refused
``import.too_large``       the file is larger than :data:`MAX_BYTES`
``import.too_deep``        elements nested deeper than :data:`MAX_DEPTH`
``import.file_missing``    no such file
``import.unreadable``      the file cannot be read
=========================  =========================================================

A DOCTYPE without an internal subset (``<!DOCTYPE ead SYSTEM "ead.dtd">``) is accepted and
ignored. Helpers :func:`local`, :func:`text_of` and :func:`children` read namespaced and
un-namespaced documents alike (EAD 2002 comes both ways).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from lxml import etree

from app.core.archive.importers.text_files import unreadable
from app.core.errors import ImportFailed
from app.core.phrases import Phrase

MAX_BYTES = 200 << 20
"""The largest XML document read (200 MiB; the largest real finding aid here is 1.3 MB)."""
MAX_DEPTH = 256
"""The deepest element nesting accepted (EAD goes to ``c12`` inside about 10 wrappers): libxml2's
limit without ``huge_tree``, which the parser keeps (a test checks that the two agree)."""
HEAD_BYTES = 64 << 10
"""How much of the document's start is searched for an internal DTD subset."""

_ENTITY_DECL = re.compile(rb"<!ENTITY", re.IGNORECASE)
_SPACE = re.compile(r"\s+")

Element = etree._Element


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )


def parse_file(path: Path) -> Element:
    """The root element of the XML file at ``path``, parsed safely (see the module doc).

    Raises:
        ImportFailed: one of the codes in the module doc.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError as exc:
        raise ImportFailed(
            "import.file_missing",
            Phrase.of("There is no file at {path}.", path=str(path)),
            hint="Check the path.",
            details={"path": str(path)},
        ) from exc
    except OSError as exc:
        raise unreadable(path, exc) from exc
    if size > MAX_BYTES:
        raise too_large(str(path), size)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise unreadable(path, exc) from exc
    return parse_bytes(data, str(path))


def parse_bytes(data: bytes, where: str = "document") -> Element:
    """The root element of ``data``, parsed safely; ``where`` names it in errors.

    Raises:
        ImportFailed: ``import.xml_malformed``, ``import.xml_entity``, ``import.too_large``,
            ``import.too_deep``.
    """
    if len(data) > MAX_BYTES:
        raise too_large(where, len(data))
    declares = _ENTITY_DECL.search(data[:HEAD_BYTES]) is not None
    if declares or (b"<!DOCTYPE" in data and _ENTITY_DECL.search(data) is not None):
        raise ImportFailed(
            "import.xml_entity",
            Phrase.of("{where} declares XML entities, which Arxiu never expands.", where=where),
            hint="Export the file again without a DTD internal subset.",
            details={"where": where},
        )
    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as exc:
        line = exc.position[0] if exc.position else 0
        if "Excessive depth" in (exc.msg or ""):  # libxml2's own bound (no huge_tree)
            raise too_deep(where) from exc
        raise ImportFailed(
            "import.xml_malformed",
            Phrase.of(
                "{where} is not well-formed XML (line {line}): {why}",
                where=where,
                line=line,
                why=str(exc.msg),
            ),
            hint="Check that the file is complete and is XML.",
            details={"where": where, "line": line},
        ) from exc
    except ValueError as exc:  # e.g. a unicode string with an encoding declaration
        raise ImportFailed(
            "import.xml_malformed",
            Phrase.of("{where} cannot be parsed as XML: {why}", where=where, why=str(exc)),
            details={"where": where},
        ) from exc
    if root is None:
        raise ImportFailed(
            "import.xml_malformed", Phrase.of("{where} holds no XML element.", where=where)
        )
    return root


def too_deep(where: str) -> ImportFailed:
    """The ``import.too_deep`` error: elements nested deeper than :data:`MAX_DEPTH`.

    The bound is libxml2's own for a parser without ``huge_tree`` (256), enforced while it
    parses, so a deep document is refused before it is built.
    """
    return ImportFailed(
        "import.too_deep",
        Phrase.of("{where} nests elements more than {depth} deep.", where=where, depth=MAX_DEPTH),
        hint="This is not an archival description Arxiu can read.",
        details={"where": where, "max_depth": MAX_DEPTH},
    )


def too_large(where: str, size: int) -> ImportFailed:
    """The ``import.too_large`` error for a document of ``size`` bytes."""
    return ImportFailed(
        "import.too_large",
        Phrase.of(
            "{where} is {size:,} bytes; the largest XML document Arxiu reads is {most:,}.",
            where=where,
            size=size,
            most=MAX_BYTES,
        ),
        hint="Split the export into several files.",
        details={"where": where, "size": size},
    )


# -- reading helpers ---------------------------------------------------------------------------


def local(node: Element) -> str:
    """The element's name without its namespace (``{urn:isbn:1-931666-22-9}c01`` → ``c01``)."""
    tag = node.tag
    if not isinstance(tag, str):
        return ""
    return tag.rpartition("}")[2]


def children(node: Element, *names: str) -> Iterator[Element]:
    """The child elements of ``node`` whose local name is one of ``names`` (all when none)."""
    for child in node:
        if isinstance(child.tag, str) and (not names or local(child) in names):
            yield child


def child(node: Element, *names: str) -> Element | None:
    """The first child element named one of ``names``, or ``None``."""
    return next(children(node, *names), None)


def descendants(node: Element, *names: str) -> Iterator[Element]:
    """Every element below ``node`` whose local name is one of ``names``."""
    for item in node.iter():
        if item is not node and isinstance(item.tag, str) and local(item) in names:
            yield item


def text_of(node: Element | None) -> str:
    """All the text inside ``node``, whitespace collapsed to single spaces ("" for ``None``)."""
    if node is None:
        return ""
    return _SPACE.sub(" ", "".join(str(part) for part in node.itertext())).strip()


def paragraphs(node: Element | None) -> str:
    """The text of ``node`` with its ``p`` (and ``item``) children kept as separate lines."""
    if node is None:
        return ""
    parts = [text_of(p) for p in descendants(node, "p", "item")]
    parts = [p for p in parts if p]
    return "\n\n".join(parts) if parts else text_of(node)


def attr(node: Element | None, name: str) -> str:
    """The attribute ``name`` (any namespace, e.g. ``xlink:href``), stripped; "" when absent."""
    if node is None:
        return ""
    for key, value in node.attrib.items():
        if str(key).rpartition("}")[2] == name:
            return str(value).strip()
    return ""


def xml_lang(node: Element | None) -> str:
    """The ``xml:lang`` in force at ``node`` (inherited from its ancestors), or ""."""
    while node is not None:
        value = node.get("{http://www.w3.org/XML/1998/namespace}lang")
        if value:
            return value.strip()
        node = node.getparent()
    return ""
