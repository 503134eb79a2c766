"""PDF text per page, and each PDF a folder may hold that is not a plain text document."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from app.core.archive.importers.pdf_text import (
    ACTIVE,
    BROKEN,
    ENCRYPTED,
    NO_TEXT,
    REPAIRED,
    read_pdf,
)
from app.core.errors import ImportFailed
from tests.conftest import shared_data
from tests.core.archive.importers.file_samples import JAVASCRIPT, scanned_pdf, text_pdf

PAGES = ["The harbour of Palamos in winter.", "The cork factory of Sant Feliu\nclosed in 1931."]
INFO = (
    b"<< /Title (Cork and harbours) /Author (Joan Vila) /CreationDate (D:19870514093000+01'00') >>"
)


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_each_page_is_read_with_the_document_metadata(tmp_path: Path) -> None:
    path = write(tmp_path, "cork.pdf", text_pdf(PAGES, info=INFO))

    content = read_pdf(path)

    assert content.pages == [PAGES[0], PAGES[1]]
    assert content.page_count == len(PdfReader(path).pages) == 2
    assert (content.title, content.author, content.created) == (
        "Cork and harbours",
        "Joan Vila",
        "1987-05-14",
    )
    assert content.notes == []


def test_a_scan_is_read_as_having_no_text_layer(tmp_path: Path) -> None:
    page = shared_data("poilus", "pages", "TestamentsDePoilus_will_AN_0191-0.jpg")
    path = scanned_pdf(page, tmp_path / "scan.pdf")

    content = read_pdf(path)

    assert content.page_count == 1 and not content.has_text
    assert [n.code for n in content.notes] == [NO_TEXT]
    assert content.notes[0].reason == "scanned, no text layer"


def test_javascript_is_noted_and_only_the_text_is_read(tmp_path: Path) -> None:
    path = write(tmp_path, "active.pdf", text_pdf(PAGES, catalog_extra=JAVASCRIPT))

    content = read_pdf(path)

    assert content.pages[1].startswith("The cork factory")
    assert [n.code for n in content.notes] == [ACTIVE]
    assert "JavaScript" in content.notes[0].reason and "OpenAction" in content.notes[0].reason


def test_a_password_protected_pdf_is_noted_and_an_owner_password_only_one_is_read(
    tmp_path: Path,
) -> None:
    plain = write(tmp_path, "plain.pdf", text_pdf(PAGES))
    for name, user in (("locked.pdf", "secret"), ("owner.pdf", "")):
        writer = PdfWriter(clone_from=PdfReader(plain))
        writer.encrypt(user_password=user, owner_password="owner", algorithm="RC4-128")
        writer.write(tmp_path / name)

    locked, owner = read_pdf(tmp_path / "locked.pdf"), read_pdf(tmp_path / "owner.pdf")

    assert ([n.code for n in locked.notes], locked.pages) == ([ENCRYPTED], [])
    assert owner.pages == [PAGES[0], PAGES[1]]


@pytest.mark.parametrize("keep", [0.5, 0.1])
def test_a_truncated_pdf_is_a_coded_error(tmp_path: Path, keep: float) -> None:
    data = text_pdf(PAGES)
    path = write(tmp_path, "cut.pdf", data[: int(len(data) * keep)])

    with pytest.raises(ImportFailed) as caught:
        read_pdf(path)

    assert caught.value.code == BROKEN


def test_a_file_that_is_not_a_pdf_is_refused_before_pypdf_sees_it(tmp_path: Path) -> None:
    path = write(tmp_path, "fake.pdf", b"<html>not a pdf</html>")

    with pytest.raises(ImportFailed) as caught:
        read_pdf(path)

    assert caught.value.code == BROKEN and "%PDF" in caught.value.message


def test_a_damaged_pdf_pypdf_repairs_is_read_and_noted_not_logged(tmp_path: Path) -> None:
    damaged = re.sub(rb"startxref\n\d+", b"startxref\n999", text_pdf(PAGES))  # wrong offset
    path = write(tmp_path, "damaged.pdf", damaged)

    content = read_pdf(path)  # the autouse check fails the test on any WARNING logged

    assert content.pages == [PAGES[0], PAGES[1]]
    assert [n.code for n in content.notes] == [REPAIRED]
    assert "startxref" in content.notes[0].reason
