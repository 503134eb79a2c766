"""``Record.text``: of several items in one language the first is the value (a component's first
``unittitle`` labels it), on a real ANF finding aid and on plain records."""

from __future__ import annotations

from lxml import etree

from app.core.archive import Archive
from app.core.archive.importers import run_import
from app.core.archive.importers.base import external_keys
from app.core.archive.importers.ead_fields import TITLE
from app.core.archive.model import NEUTRAL_LANG, Record
from tests.conftest import shared_data


def test_a_component_with_four_unittitles_is_labelled_by_its_first(archive: Archive) -> None:
    path = shared_data("ead", "anf", "FRAN_IR_003500.xml")
    parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
    did = etree.parse(str(path), parser).getroot().xpath("//c[@id='d_1_2_1']/did")[0]
    titles = [" ".join("".join(t.itertext()).split()) for t in did.iterfind("unittitle")]
    assert len(titles) == 4 and titles[0] == "Copie de 157 lettres de Ludovic Vitet. 1830-1872."
    run_import(archive, "ead", path)
    record = archive.get_record(external_keys(archive, "ead")["FRAN_IR_003500#d_1_2_1"])
    assert [i["value"] for i in record.items(TITLE)] == titles
    assert record.text(TITLE, "lg-fra") == record.text(TITLE) == titles[0]
    assert archive.label_of(record, "lg-cat") == f"{did.findtext('unitid')} · {titles[0]}"


def test_the_first_non_empty_item_of_the_best_language_wins() -> None:
    values = {
        "t": [
            {"lang": "lg-cat", "value": ""},
            {"lang": "lg-cat", "value": "Primer"},
            {"lang": "lg-cat", "value": "Segon"},
            {"lang": "lg-eng", "value": "First"},
            {"lang": "lg-eng", "value": "Second"},
            {"lang": NEUTRAL_LANG, "value": "Neutral"},
            {"lang": NEUTRAL_LANG, "value": "Other"},
        ],
        "f": [{"lang": "lg-fra", "value": "Premier"}, {"lang": "lg-fra", "value": "Second"}],
        "e": [{"lang": "lg-spa", "value": ""}],
    }
    record = Record("s1", 1, values)
    assert record.text("t", "lg-cat") == "Primer"
    assert record.text("t", "lg-eng") == "First"
    assert record.text("t", "lg-spa") == "Neutral"  # then the neutral value, then en, ca, es
    assert record.text("f", "lg-eng") == "Premier"  # no preferred language: the first item
    assert record.text("e") == ""
    assert record.text("missing") is None
