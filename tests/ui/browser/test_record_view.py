"""The record view of an EAD component: "part of" breadcrumbs, reference code and level,
children in order, each one click from its record."""

from __future__ import annotations

from typing import Any

from lxml import etree
from PySide6.QtCore import QUrl

from app.core.archive.hierarchy import child_keys
from app.core.archive.importers import run_import
from app.core.archive.importers.base import external_keys
from app.ui.browser.record_html import CHILDREN_SHOWN, CONTENTS, record_link
from tests.conftest import shared_data
from tests.ui.conftest import run

VITET = ("ead", "anf", "FRAN_IR_003500.xml")


def _strings(path: str) -> list[str]:
    """Texts of the Vitet finding aid at ``path``, read with an XPath of our own."""
    found = etree.parse(str(shared_data(*VITET))).xpath(path)
    assert isinstance(found, list)
    return [
        " ".join("".join(str(t) for t in e.itertext()).split())
        for e in found
        if isinstance(e, etree._Element)
    ]


def test_a_component_shows_its_trail_and_its_children_in_order(make_window: Any) -> None:
    window = make_window()
    archive = window.services.archive
    run_import(archive, "ead", shared_data(*VITET))
    run(make_window.loop, window.reload_shown())
    keys = external_keys(archive, "ead")
    codes = _strings("//c[@id='d_1_2']/c/did/unitid[1]")
    titles = _strings("//c[@id='d_1_2']/c/did/unittitle[1]")
    dates = [  # each child's dates after its title, as a finding aid lists them
        f" · {' '.join(c.split())}" if c else ""
        for c in (
            str(e.xpath("string(did/unitdate[1])"))
            for e in etree.parse(str(shared_data(*VITET))).xpath("//c[@id='d_1_2']/c")
        )
    ]
    own_code = _strings("//c[@id='d_1_2']/did/unitid")[0]

    window.open_record(keys["FRAN_IR_003500#d_1_2"])
    lines = window.record_view.browser.toPlainText().splitlines()

    assert lines[0] == "Fonds Vitet › LUDOVIC VITET (1802-1873)"
    assert lines[1] == "Correspondance active" and lines[2] == own_code
    start = lines.index(f"Contents ({len(titles)})") + 1
    shown = lines[start : start + len(titles)]
    assert shown == [
        f"{code} {title}{when}" for code, title, when in zip(codes, titles, dates, strict=True)
    ]
    assert any(dates)
    assert "Linked from" not in lines  # the children are not listed twice

    html = window.record_view.browser.toHtml()
    first_child = keys["FRAN_IR_003500#d_1_2_1"]
    assert record_link(first_child) in html and record_link(keys["FRAN_IR_003500"]) in html
    window.record_view.browser.anchorClicked.emit(QUrl(record_link(first_child)))
    assert window.record_view.key == first_child
    trail = window.record_view.browser.toPlainText().splitlines()[0]
    assert trail == "Fonds Vitet › LUDOVIC VITET (1802-1873) › Correspondance active"
    window.record_view.browser.anchorClicked.emit(QUrl(record_link(keys["FRAN_IR_003500"])))
    assert window.record_view.key == keys["FRAN_IR_003500"]
    top = window.record_view.browser.toPlainText().splitlines()
    assert top[0] == "Fonds Vitet" and "fonds" in top[1]  # no trail; code and level shown


IBEW = ("ead", "uw-labor-archives", "IBEWLocal46_5739.xml_LinkedDataProject.xml")


def test_a_series_of_hundreds_lists_them_all_when_asked(make_window: Any) -> None:
    """The IBEW Local 46 papers' biggest series (hundreds of files): the first 200 are listed,
    then "+N: show them all", which lists every one, in order, and stays for that record."""
    window = make_window()
    archive = window.services.archive
    run_import(archive, "ead", shared_data(*IBEW))
    parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
    tree = etree.parse(str(shared_data(*IBEW)), parser)
    parts = {"c", *(f"c{n:02d}" for n in range(1, 13))}
    sizes = {e: [c for c in e if c.tag in parts] for e in tree.iter(*parts)}
    biggest = max(sizes, key=lambda e: len(sizes[e]))
    count = len(sizes[biggest])
    assert count > CHILDREN_SHOWN
    [series] = [
        key for key in archive.iter_records("ead1") if len(child_keys(archive, key.key)) == count
    ]

    window.open_record(series.key)
    before = window.record_view.browser.toPlainText()
    more = f"+{count - CHILDREN_SHOWN}: show them all"
    window.record_view.browser.anchorClicked.emit(QUrl(f"{CONTENTS}{series.key}"))
    after = window.record_view.browser.toPlainText()
    window.record_view.show_record(series.key)  # read again (the archive changed, a resize)
    again = window.record_view.browser.toPlainText()

    assert more in before.splitlines()
    assert more not in after and after == again
    start = after.splitlines().index(f"Contents ({count})") + 1
    listed = after.splitlines()[start : start + count]
    titles = [" ".join("".join(c.find("did/unittitle").itertext()).split()) for c in sizes[biggest]]
    assert all(line.startswith(title) for line, title in zip(listed, titles, strict=True))
