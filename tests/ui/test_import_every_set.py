"""Every archival-standard set of ../shared/data imported through File → Import…'s own path
(the window's import with its progress dialog and summary), each count checked against one
computed from the files themselves."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from tests.conftest import shared_data
from tests.ui.conftest import run

PARSER = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
UNITS = (
    "count(//*[local-name()='archdesc' or local-name()='c' or "
    "(starts-with(local-name(), 'c') and string-length(local-name()) = 3 and "
    "translate(substring(local-name(), 2), '0123456789', '') = '')])"
)


def xpath_count(expression: str) -> Callable[[Path], int]:
    """Sum ``expression`` over every XML file below a folder (or the file itself)."""

    def count(path: Path) -> int:
        files = [path] if path.is_file() else sorted(path.glob("*.xml"))
        return sum(int(etree.parse(str(f), PARSER).xpath(expression)) for f in files)

    return count


def csv_rows(path: Path) -> int:
    with path.open(newline="", encoding="utf-8-sig") as handle:
        return sum(1 for _ in csv.reader(handle)) - 1


def xml_files(path: Path) -> int:
    return len(list(path.glob("*.xml")))


SETS = [
    ("ead", ("ead", "anf"), "ead1", xpath_count(UNITS)),
    ("ead", ("ead", "caltech-aspace-oai"), "ead1", xpath_count(UNITS)),
    ("eac-cpf", ("eac-cpf", "anf"), "agent1", xpath_count("count(//*[local-name()='eac-cpf'])")),
    ("dc", ("oai-dc", "caltech"), "dc1", xpath_count("count(//*[local-name()='dc'])")),
    ("ohms", ("oral-history-ohms",), "ohms1", xml_files),
    (
        "csv",
        ("csv-archival", "uw-archivesspace", "reconciledValuesWithQNumbers-2021-01-20-cec.csv"),
        "",
        csv_rows,
    ),
]


@pytest.mark.parametrize(
    ("kind", "parts", "section", "expected"), SETS, ids=[f"{s[0]}:{s[1][-1]}" for s in SETS]
)
def test_a_set_imported_from_the_window_has_the_counts_of_its_files(
    make_window: Any,
    kind: str,
    parts: tuple[str, ...],
    section: str,
    expected: Callable[[Path], int],
) -> None:
    path = shared_data(*parts)
    window = make_window()
    text = run(make_window.loop, window.import_dataset(kind, path), 180)
    summary = window.last_import
    assert summary is not None, text
    tipo = section or next(t for t in summary.sections if t.startswith("csv"))
    count = expected(path)
    assert summary.sections[tipo] == count == window.services.archive.count_records(tipo)
    assert f"{summary.records:,} records ({summary.created:,} new" in text
    assert all(skip.code.startswith("import.") for skip in summary.skipped)
    names = [window.sections.item(r).text() for r in range(window.sections.count())]
    assert any(window.services.archive.section(tipo).label("lg-eng") in n for n in names)
    assert window.import_report is not None
    window.import_report.close()
