"""The fast tree readers of the EAD importer give what the safe_xml helpers give."""

from __future__ import annotations

import pytest

from app.core.archive.importers import ead_describe, safe_xml

DOCUMENT = (
    '<!DOCTYPE ead SYSTEM "ead.dtd"><ead xmlns:x="urn:x"><archdesc level="fonds">'
    "<did><unittitle> Lettres\u00a0de\u2003 <emph>guerre</emph>\n &amp; autres &undefined; "
    '<unitdate normal="1914/1918">1914-1918</unitdate></unittitle><x:unitid>A 1</x:unitid>'
    "<!-- a note --><container/><abstract>   </abstract></did>"
    "<descgrp><scopecontent><head>Scope</head><p>One</p> loose <p>Two\u2028 two</p></scopecontent>"
    "</descgrp><dsc><c01><did><unittitle>First</unittitle></did></c01><x:c02/></dsc>"
    "</archdesc></ead>"
)


@pytest.fixture(scope="module")
def root() -> safe_xml.Element:
    return safe_xml.parse_bytes(DOCUMENT.encode())


def test_text_is_text_of(root: safe_xml.Element) -> None:
    for node in root.iter("{*}*"):  # elements (an entity reference is no element)
        assert ead_describe.text(node) == safe_xml.text_of(node), node.tag
    assert ead_describe.text(None) == ""


def test_children_and_descendants_match_any_namespace_or_none(root: safe_xml.Element) -> None:
    for node in root.iter("{*}*"):
        for names in (("did",), ("unitid", "container"), ("c01", "c02"), ("p",)):
            assert list(ead_describe.named(node, *names)) == list(safe_xml.children(node, *names))
            assert list(ead_describe.below(node, *names)) == list(
                safe_xml.descendants(node, *names)
            )
        assert ead_describe.first(node, "did") == safe_xml.child(node, "did")
        assert ead_describe.local(node) == safe_xml.local(node)
