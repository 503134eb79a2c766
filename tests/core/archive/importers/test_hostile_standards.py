"""The hostile-input suite of the standards importers: every input a coded refusal, nothing lost.

Each family is a set of generated files that an attacker or a broken export could hand an
archivist: XXE, "billion laughs", an external DTD on the network, nesting 100,000 deep, a 30 MB
attribute, a wrong encoding, a file cut in half, binary garbage, an empty file; for spreadsheets
a zip bomb, a file that is not a zip, entities inside the parts; for folders a PDF with
JavaScript, a truncated PDF, a decompression-bomb image. Every input is imported into an archive
that already holds records: the import must end in a coded ``ImportFailed`` or in a summary
whose every skip has a code, never in a traceback; what was already stored must be unchanged
(a checksum of records, links and audit before and after), and no secret file's content may
appear in the archive. The bound on time is a guard against an expansion bomb (30 s for an
input that a sane parser refuses at once), not a speed test. Each family prints its counts.
"""

from __future__ import annotations

import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.archive import Archive
from app.core.archive.importers import ImportSummary
from app.core.errors import ArxiuError
from app.core.importing import import_dataset
from tests.conftest import shared_data
from tests.core.agent.conftest import build_archive
from tests.core.test_bad_input_suite import stored_digest

GUARD_SECONDS = 30.0
SECRET = "arxiu-secret-canary-7f3a"

XML_KINDS = ("ead", "eac-cpf", "dc", "ohms")


def _write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def hostile_xml(folder: Path, real: Path) -> list[Path]:
    """Hostile XML documents (and a real one damaged) written into ``folder``."""
    secret = _write(folder, "secret.txt", SECRET.encode())
    real_bytes = real.read_bytes()
    laughs = b'<!ENTITY lol "lol">' + b"".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'.encode()
        for i in range(1, 10)
    )
    cases = {
        "xxe.xml": (
            f'<?xml version="1.0"?><!DOCTYPE ead [<!ENTITY x SYSTEM "file://{secret}">]>'
            "<ead><eadheader><eadid>&x;</eadid></eadheader></ead>"
        ).encode(),
        "laughs.xml": b"<?xml version='1.0'?><!DOCTYPE ead [" + laughs + b"]><ead>&lol9;</ead>",
        "net-dtd.xml": (
            b'<?xml version="1.0"?><!DOCTYPE ead SYSTEM "http://127.0.0.1:9/ead.dtd">'
            b"<ead><eadheader><eadid>x</eadid></eadheader></ead>"
        ),
        "param-entity.xml": (
            b'<?xml version="1.0"?><!DOCTYPE ead [<!ENTITY % p SYSTEM '
            b'"http://127.0.0.1:9/p.dtd"> %p;]><ead/>'
        ),
        "deep.xml": b"<ead>" + b"<c>" * 100_000 + b"</c>" * 100_000 + b"</ead>",
        "huge-attribute.xml": b'<ead><archdesc level="' + b"a" * (30 << 20) + b'"/></ead>',
        "wrong-encoding.xml": (
            '<?xml version="1.0" encoding="UTF-8"?><ead><eadheader><eadid>é</eadid>'
            "</eadheader></ead>"
        ).encode("latin-1"),
        "truncated.xml": real_bytes[: len(real_bytes) // 2],
        "binary.xml": bytes(range(256)) * 64,
        "empty.xml": b"",
        "not-xml.xml": b"title,date\nA,1900\n",
    }
    return [_write(folder, name, data) for name, data in cases.items()]


def zip_bomb_xlsx(folder: Path) -> Path:
    """An .xlsx whose sheet inflates from about 100 KB to 2 GB."""
    path = folder / "bomb.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        with zf.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as sheet:
            block = b"0" * (1 << 20)
            for _ in range(2048):
                sheet.write(block)
    return path


def hostile_tables(folder: Path) -> list[Path]:
    """Hostile spreadsheets and CSV files written into ``folder``."""
    entity_xlsx = folder / "entities.xlsx"
    with zipfile.ZipFile(entity_xlsx, "w") as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        zf.writestr(
            "xl/sharedStrings.xml",
            '<?xml version="1.0"?><!DOCTYPE s [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
            "<sst><si><t>&x;</t></si></sst>",
        )
    return [
        zip_bomb_xlsx(folder),
        entity_xlsx,
        _write(folder, "not-a-zip.xlsx", b"PK\x03\x04 this is not a zip archive"),
        _write(folder, "empty.csv", b""),
        _write(folder, "binary.csv", bytes(range(256)) * 64),
        _write(folder, "broken-utf16.csv", b"\xff\xfeT\x00i\x00\x00\xd8,\x00"),
    ]


def hostile_folder(folder: Path) -> Path:
    """A folder of hostile files: active PDF, truncated PDF, a decompression-bomb PNG."""
    folder.mkdir()
    js_pdf = (
        b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R/OpenAction 3 0 R>>endobj\n"
        b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n"
        b"3 0 obj<</S/JavaScript/JS(app.alert\\('x'\\))>>endobj\n"
        b"trailer<</Root 1 0 R>>\n%%EOF\n"
    )
    _write(folder, "active.pdf", js_pdf)
    _write(folder, "truncated.pdf", b"%PDF-1.7\n1 0 obj<</Type/Catalog/Pages 2 0 R>>en")
    _write(folder, "garbage.pdf", b"%PDF-" + bytes(range(256)) * 32)
    _write(folder, "bomb.png", _bomb_png())
    _write(folder, "truncated.jpg", b"\xff\xd8\xff\xe0\x00\x10JFIF")
    return folder


def _bomb_png() -> bytes:
    """A PNG that claims 100,000 × 100,000 pixels (Pillow refuses it as a decompression bomb)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 0, 0, 0, 0)
    rows = zlib.compress(b"\x00" * 4096)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")
    )


def attempt(archive: Archive, kind: str, path: Path) -> tuple[str, float]:
    """Import ``path`` as ``kind``: ``(outcome, seconds)``; the outcome names a failure."""
    began = time.perf_counter()
    try:
        summary = import_dataset(archive, kind, path)
    except ArxiuError as exc:
        outcome = "" if exc.code.startswith("import.") else f"uncoded family: {exc.code}"
    except Exception as exc:  # the failure this suite exists to catch
        outcome = f"traceback: {type(exc).__name__}: {exc}"[:300]
    else:
        outcome = _judge(summary)
    return outcome, time.perf_counter() - began


def _judge(summary: ImportSummary) -> str:
    if summary.created or summary.updated:
        return f"stored {summary.created + summary.updated} records from a hostile input"
    uncoded = [s for s in summary.skipped if not s.code.startswith("import.")]
    if uncoded:
        return f"skip without an import code: {uncoded[0]}"
    if not summary.skipped and summary.error is None:
        return "accepted silently (no skip, no error)"
    return ""


def run_family(
    capsys: pytest.CaptureFixture[str],
    family: str,
    archive: Archive,
    cases: list[tuple[str, Path]],
    check: Callable[[], None] = lambda: None,
) -> None:
    """Import every case, check the archive after each, print the counts, assert none failed."""
    before = stored_digest(archive)
    failures: list[str] = []
    slowest = 0.0
    for kind, path in cases:
        outcome, seconds = attempt(archive, kind, path)
        slowest = max(slowest, seconds)
        if not outcome and seconds > GUARD_SECONDS:
            outcome = f"took {seconds:.1f} s"
        if not outcome and stored_digest(archive) != before:
            outcome = "changed what was stored"
        if outcome:
            failures.append(f"{kind} {path.name}: {outcome}")
        check()
    with capsys.disabled():
        print(
            f"\nhostile inputs ({family}): {len(cases)} tried, {len(failures)} failed, "
            f"slowest {slowest:.2f} s, archive checksum unchanged: {not failures}"
        )
    assert cases
    assert failures == []


def no_secret(archive: Archive) -> None:
    """Fail when the canary file's text reached the archive."""
    with archive.db.reading() as conn:
        found = conn.execute(
            "SELECT count(*) FROM records WHERE data LIKE ?", (f"%{SECRET}%",)
        ).fetchone()[0]
    assert found == 0, "an external entity was resolved into the archive"


@pytest.fixture
def seeded(tmp_path: Path) -> Archive:
    """An archive that already holds records (the agent tests' small world)."""
    return build_archive(tmp_path / "seeded")


def test_hostile_xml_for_every_xml_kind(
    seeded: Archive, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = shared_data("ead", "anf", "FRAN_IR_003500.xml")
    folder = tmp_path / "xml"
    folder.mkdir()
    files = hostile_xml(folder, real)
    cases = [(kind, path) for kind in XML_KINDS for path in files]
    run_family(capsys, "XML × ead/eac-cpf/dc/ohms", seeded, cases, lambda: no_secret(seeded))
    seeded.close()


def test_hostile_spreadsheets(
    seeded: Archive, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "tables"
    folder.mkdir()
    cases = [("csv", path) for path in hostile_tables(folder)]
    run_family(capsys, "CSV/XLSX", seeded, cases, lambda: no_secret(seeded))
    seeded.close()


def test_hostile_folder_files(
    seeded: Archive, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = hostile_folder(tmp_path / "files")
    before = stored_digest(seeded)
    began = time.perf_counter()
    summary = import_dataset(seeded, "folder", folder)
    seconds = time.perf_counter() - began
    codes = sorted({skip.code for skip in summary.skipped})
    with capsys.disabled():
        print(
            f"\nhostile inputs (folder): 5 files, {len(summary.skipped)} skipped with codes "
            f"{codes}, {summary.created} stored, {seconds:.2f} s"
        )
    assert all(code.startswith("import.") for code in codes)
    refused = {Path(skip.file).name for skip in summary.skipped}
    assert {"truncated.pdf", "garbage.pdf", "bomb.png", "truncated.jpg"} <= refused
    assert seconds < GUARD_SECONDS
    assert summary.created <= 1  # the active PDF may be kept (its text only, never run)
    if summary.created == 0:
        assert stored_digest(seeded) == before
    seeded.close()
