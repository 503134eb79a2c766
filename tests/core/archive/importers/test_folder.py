"""A folder of files: real scans and photographs, PDFs, recordings with transcripts, notes."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.core.archive import Archive
from app.core.archive.importers import run_import
from app.core.archive.importers.folder import MEDIA_FIELD, SECTION, SOURCE_PREFIX, scan_folder
from app.core.archive.media import media_of
from app.core.archive.model import Record
from app.core.errors import ImportFailed
from app.core.importing import import_dataset
from app.core.tools.search import split_passages
from tests.conftest import shared_data
from tests.core.archive.importers.file_samples import (
    JAVASCRIPT,
    bomb_png,
    gps_jpeg,
    scanned_pdf,
    text_pdf,
    write_wav,
)
from tests.core.archive.importers.lookups import lexical_chunks

CORK = ["The harbour of Palamos in winter.", "The cork factory of Sant Feliu\nclosed in 1931."]
ROSA_VTT = (
    "WEBVTT\n\nNOTE recorded at home\n\n"
    "1\n00:00:01.000 --> 00:00:06.000\n"
    "<v Rosa>Vam haver de marxar de casa quan van fer el pantà.\n\n"
    "2\n00:01:10.500 --> 00:01:15.000\n<v Rosa>L'església del poble va quedar sota l'aigua.\n\n"
    "this block has no timing\n"
)
JOAN_SRT = (
    "1\n00:00:02,000 --> 00:00:05,000\nMy father worked at the cork factory.\n\n"
    "2\n00:02:30,250 --> 00:02:34,000\nWe sailed from the harbour every summer.\n"
)
OLD = 981_158_400  # 2001-02-03 00:00:00 UTC


@dataclass(frozen=True)
class Layout:
    """The folder the tests import and what was put in it, per kind."""

    root: Path
    kinds: Counter[str]
    refused: dict[str, str]
    """relative path -> the code it is refused with."""


@pytest.fixture
def papers(tmp_path: Path) -> Layout:
    """A family's papers: real scans and coin photos, PDFs, two interviews, notes and junk."""
    root = tmp_path / "papers"
    for sub in ("scans", "coins", "documents", "interviews", "notes", ".hidden"):
        (root / sub).mkdir(parents=True)
    kinds: Counter[str] = Counter()
    for page in sorted(shared_data("poilus", "pages").glob("*.jpg")):
        shutil.copy(page, root / "scans" / page.name)
        kinds["image"] += 1
    for coin in sorted(shared_data("coins").glob("*.jpg")):
        shutil.copy(coin, root / "coins" / coin.name)
        kinds["image"] += 1
    owl = shared_data("coins", "athens-owl-tetradrachm.jpg")
    gps_jpeg(
        owl,
        root / "coins" / "owl-girona.jpg",
        (41.0, 59.0, 0.0),
        (2.0, 49.0, 12.0),
        "Tetradrachm photographed at the museum",
    )
    kinds["image"] += 1
    docs = root / "documents"
    (docs / "cork.pdf").write_bytes(text_pdf(CORK))
    (docs / "active.pdf").write_bytes(text_pdf(["Minutes of the cooperative"], JAVASCRIPT))
    scanned_pdf(root / "scans" / "TestamentsDePoilus_will_AN_0155-0.jpg", docs / "scan.pdf")
    whole = text_pdf(CORK)
    (docs / "cut.pdf").write_bytes(whole[: len(whole) // 2])
    kinds["pdf"] += 3
    write_wav(root / "interviews" / "rosa.wav", 2.0)
    (root / "interviews" / "rosa.ca.vtt").write_text(ROSA_VTT, encoding="utf-8")
    write_wav(root / "interviews" / "joan.wav", 1.0)
    (root / "interviews" / "joan.srt").write_text(JOAN_SRT, encoding="utf-8")
    kinds["audio"] += 2
    (root / "notes" / "quaderns.md").write_text(
        "# Els quaderns de l'àvia\n\nAquí hi ha les notes que la nostra àvia escrivia cada "
        "vespre quan tornava del mas.",
        encoding="utf-8",
    )
    carta = root / "notes" / "carta.txt"
    carta.write_bytes("Carta de l'àvia, escrita a Girona l'any 1950.".encode("cp1252"))
    os.utime(carta, (OLD, OLD))
    (root / "notes" / "unicode.txt").write_text("Notes en UTF-16 de la família.", encoding="utf-16")
    kinds["text"] += 3
    (root / "bomb.png").write_bytes(bomb_png())
    (root / "letter.docx").write_bytes(b"PK\x03\x04 not imported")
    for junk in (".DS_Store", "Thumbs.db", "desktop.ini", "~$letter.docx", ".hidden/secret.txt"):
        (root / junk).write_bytes(b"junk")
    os.symlink("/etc", root / "outside")
    refused = {
        "bomb.png": "import.image_bomb",
        "documents/cut.pdf": "import.pdf_broken",
        "letter.docx": "import.file_kind_unknown",
        "outside": "import.symlink",
    }
    return Layout(root, kinds, refused)


def records(archive: Archive) -> dict[str, Record]:
    """The imported files' records by relative path."""
    return {str(r.text("files3")): r for r in archive.iter_records(SECTION)}


def chunk_hits(archive: Archive, query: str, lang: str | None = None) -> list[tuple]:
    """``(section_tipo, section_id, field_tipo, timecode, page, text)`` of the best chunks."""
    ids = lexical_chunks(archive, query, 10, lang)
    with archive.db.reading() as conn:
        return [
            tuple(
                conn.execute(
                    "SELECT section_tipo, section_id, field_tipo, timecode, page, text "
                    "FROM index_chunks WHERE id = ?",
                    (chunk_id,),
                ).fetchone()
            )
            for chunk_id in ids
        ]


def test_every_kind_of_file_is_imported_and_every_refusal_reported(
    archive: Archive, papers: Layout
) -> None:
    summary = import_dataset(archive, "folder", papers.root)

    found = records(archive)
    assert Counter(str(r.text("files4")) for r in found.values()) == papers.kinds
    assert summary.created == sum(papers.kinds.values()) == summary.sections[SECTION]
    assert summary.read == summary.created + len(papers.refused) - 2  # docx and link not read
    codes = {(s.file, s.code) for s in summary.skipped}
    assert set(papers.refused.items()) <= codes
    assert ("documents/scan.pdf", "import.pdf_no_text") in codes
    assert ("documents/active.pdf", "import.pdf_active_content") in codes
    assert ("interviews/rosa.ca.vtt", "import.transcript_cue") in codes
    assert not any(
        "junk" in s.file or "secret" in s.file or "DS_Store" in s.file for s in summary.skipped
    )
    assert summary.media == summary.created - papers.kinds["text"]
    scan = found["documents/scan.pdf"]
    assert scan.text("files17") == "scanned, no text layer" and scan.text("files14") == "1"
    assert archive.external_key(SOURCE_PREFIX + str(papers.root.resolve()), "documents/cork.pdf")


def test_images_carry_their_metadata_thumbnail_and_file(archive: Archive, papers: Layout) -> None:
    import_dataset(archive, "folder", papers.root)
    found = records(archive)

    scan = found["scans/TestamentsDePoilus_will_AN_0191-0.jpg"]
    assert scan.text("files9") == "12 mai 1915 Langlais testament"
    assert scan.text("files2") == "MC/ET/XXXI/1552"
    coin = found["coins/theophilus-solidus.jpg"]
    assert (coin.text("files5"), coin.text("files6")) == ("2009-05-17", "EXIF DateTimeOriginal")
    owl = found["coins/owl-girona.jpg"]
    assert owl.items("files7")[0]["value"] == {"lat": 41.983333, "lon": 2.82}
    media = media_of(archive, owl.key)
    assert len(media) == 1 and media[0].thumbnail and media[0].width == 800
    assert (archive.media_dir / media[0].thumbnail).is_file()
    carta = found["notes/carta.txt"]
    assert (carta.text("files5"), carta.text("files6")) == ("2001-02-03", "file modified (mtime)")
    assert carta.text("files10") == "Carta de l'àvia, escrita a Girona l'any 1950."
    assert carta.text("files19") == "cp1252"
    notes = found["notes/quaderns.md"].items("files10")[0]
    assert (notes["lang"], notes.get("lang_guessed")) == ("lg-cat", True)
    assert found["notes/quaderns.md"].text("files2") == "Els quaderns de l'àvia"


def test_a_word_only_on_page_two_is_cited_on_page_two(archive: Archive, papers: Layout) -> None:
    import_dataset(archive, "folder", papers.root)
    cork = records(archive)["documents/cork.pdf"]
    assert cork.text("files11") == f"[page-n-1]\n{CORK[0]}\n\n[page-n-2]\n{CORK[1]}"

    hits = chunk_hits(archive, "When did the cork factory close?", "lg-eng")

    top = hits[0]
    assert (top[0], top[1], top[2], top[4]) == (SECTION, cork.key.section_id, "files11", "2")
    assert "Sant Feliu" in top[5]


def test_transcripts_beside_recordings_are_timecoded(archive: Archive, papers: Layout) -> None:
    import_dataset(archive, "folder", papers.root)
    found = records(archive)
    rosa, joan = found["interviews/rosa.wav"], found["interviews/joan.wav"]

    item = rosa.items("files11")[0]
    assert (item["lang"], item.get("lang_guessed")) == ("lg-cat", None)  # from rosa.ca.vtt
    assert item["value"].splitlines() == [
        "[TC_00:00:01.000_TC] Rosa: Vam haver de marxar de casa quan van fer el pantà.",
        "[TC_00:01:10.500_TC] Rosa: L'església del poble va quedar sota l'aigua.",
    ]
    passages = split_passages("files11", "lg-cat", item["value"])
    assert [p.timecode for p in passages if "església" in p.text] == ["00:01:10.500"]
    assert joan.text("files11", "lg-eng").startswith("[TC_00:00:02.000_TC] My father")
    assert joan.items("files11")[0].get("lang_guessed") is True
    hits = chunk_hits(archive, "l'església sota l'aigua", "lg-cat")
    assert (hits[0][1], hits[0][3]) == (rosa.key.section_id, "00:00:01.000")  # the chunk's start
    media = media_of(archive, rosa.key)
    assert [m.duration_s for m in media] == [2.0] and media[0].mime.startswith("audio/")


def test_a_second_import_reads_only_what_changed(archive: Archive, papers: Layout) -> None:
    first = run_import(archive, "folder", papers.root)

    second = run_import(archive, "folder", papers.root)
    assert (second.created, second.updated, second.read) == (0, 0, 0)
    assert second.unchanged == first.created
    assert {s.code for s in second.skipped} >= set(papers.refused.values())

    carta = papers.root / "notes" / "carta.txt"
    os.utime(papers.root / "coins" / "corinth-pegasos-stater.jpg")  # touched, same bytes
    carta.write_bytes(carta.read_bytes() + " Postdata: records a tothom.".encode("cp1252"))
    (papers.root / "notes" / "unicode.txt").unlink()
    third = run_import(archive, "folder", papers.root)

    assert (third.created, third.updated, third.read) == (0, 1, 1)
    assert third.unchanged == first.created - 2
    removed = [s for s in third.skipped if s.code == "import.file_removed"]
    assert [s.file for s in removed] == ["notes/unicode.txt"]
    found = records(archive)
    assert "notes/unicode.txt" in found  # reported, not deleted
    assert found["notes/carta.txt"].text("files10").endswith("records a tothom.")
    assert archive.count_records(SECTION) == first.created


def test_a_changed_image_is_the_only_file_of_its_record(archive: Archive, papers: Layout) -> None:
    run_import(archive, "folder", papers.root)
    images = sorted((papers.root / "coins").glob("*.jpg"))
    target, other = images[0], images[1]
    rel = target.relative_to(papers.root).as_posix()
    before = media_of(archive, records(archive)[rel].key)
    target.write_bytes(other.read_bytes())  # the archivist replaced the photo

    again = run_import(archive, "folder", papers.root)

    assert again.updated == 1
    photo = records(archive)[rel]
    stored = media_of(archive, photo.key)
    assert len(stored) == 1 == len(photo.items(MEDIA_FIELD))
    assert stored[0].sha256 != before[0].sha256
    assert stored[0].id == photo.items(MEDIA_FIELD)[0]["value"]["media_id"]


def test_a_changed_transcript_updates_its_recording_and_keeps_its_file(
    archive: Archive, papers: Layout
) -> None:
    run_import(archive, "folder", papers.root)
    vtt = papers.root / "interviews" / "rosa.ca.vtt"
    vtt.write_text(ROSA_VTT.replace("sota l'aigua", "sota l'aigua del pantà"), encoding="utf-8")

    again = run_import(archive, "folder", papers.root)

    assert (again.updated, again.read, again.media) == (1, 1, 1)
    rosa = records(archive)["interviews/rosa.wav"]
    assert "del pantà" in str(rosa.text("files11", "lg-cat"))
    assert len(rosa.items(MEDIA_FIELD)) == 1 == len(media_of(archive, rosa.key))


def test_the_walk_never_leaves_the_folder(papers: Layout) -> None:
    scan = scan_folder(papers.root.resolve())

    inside = papers.root.resolve()
    assert all(f.path.resolve().is_relative_to(inside) for f in scan.files)
    assert [s.file for s in scan.skipped if s.code == "import.symlink"] == ["outside"]


def test_a_path_that_is_not_a_folder_is_refused(archive: Archive, tmp_path: Path) -> None:
    (tmp_path / "one.txt").write_text("x")
    for path, code in (
        (tmp_path / "one.txt", "import.not_a_folder"),
        (tmp_path / "none", "import.file_missing"),
    ):
        with pytest.raises(ImportFailed) as caught:
            run_import(archive, "folder", path)
        assert caught.value.code == code


def hostile_inputs(folder: Path) -> dict[str, str]:
    """Files built to break a reader, each with the code it must be refused with."""
    folder.mkdir()
    whole = text_pdf(CORK)
    nested = b"%PDF-1.4\n1 0 obj\n" + b"[" * 50_000 + b"]" * 50_000 + b"\nendobj\n%%EOF\n"
    files = {
        "bomb.png": (bomb_png(), "import.image_bomb"),
        "bomb-small.png": (bomb_png(10_000, 10_000), "import.image_bomb"),
        "broken.jpg": (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00 cut", "import.image_broken"),
        "header-only.png": (bomb_png()[:20], "import.image_broken"),
        "empty.pdf": (b"", "import.pdf_broken"),
        "html.pdf": (b"<html><script>alert(1)</script></html>", "import.pdf_broken"),
        "cut.pdf": (whole[: len(whole) // 2], "import.pdf_broken"),
        "head.pdf": (whole[:40], "import.pdf_broken"),
        "nested.pdf": (nested, "import.pdf_broken"),
    }
    for name, (data, _) in files.items():
        (folder / name).write_bytes(data)
    return {name: code for name, (_, code) in files.items()}


def test_hostile_files_are_each_refused_with_a_code_and_change_nothing(
    archive: Archive, papers: Layout, tmp_path: Path
) -> None:
    run_import(archive, "folder", papers.root)
    expected = hostile_inputs(papers.root / "hostile")

    def stored() -> list[tuple]:
        with archive.db.reading() as conn:
            return conn.execute(
                "SELECT section_tipo, section_id, data, version FROM records ORDER BY 1, 2"
            ).fetchall()

    before = [tuple(row) for row in stored()]
    summary = run_import(archive, "folder", papers.root)

    got = {
        s.file.removeprefix("hostile/"): s.code
        for s in summary.skipped
        if s.file.startswith("hostile/")
    }
    assert got == expected and len(expected) == 9
    assert (summary.created, summary.updated, summary.read) == (0, 0, len(expected))
    assert summary.seconds < 30
    assert [tuple(row) for row in stored()] == before


def test_a_file_broken_since_the_last_import_keeps_its_record(
    archive: Archive, papers: Layout
) -> None:
    run_import(archive, "folder", papers.root)
    cork = papers.root / "documents" / "cork.pdf"
    kept = records(archive)["documents/cork.pdf"]
    cork.write_bytes(cork.read_bytes()[:100])

    broken = run_import(archive, "folder", papers.root)
    again = run_import(archive, "folder", papers.root)

    assert (broken.read, broken.updated, again.read) == (1, 0, 0)
    for summary in (broken, again):
        assert ("documents/cork.pdf", "import.pdf_broken") in {
            (s.file, s.code) for s in summary.skipped
        }
    assert again.unchanged == broken.unchanged
    assert records(archive)["documents/cork.pdf"].values == kept.values


def test_json_export_imports_back_into_the_same_file_records(
    archive: Archive, papers: Layout, tmp_path: Path
) -> None:
    from app.core.archive.exporters import run_export
    from app.core.archive.exporters.base import ExportRequest
    from app.core.archive.store import open_archive

    run_import(archive, "folder", papers.root)
    run_export(archive, "json", ExportRequest(SECTION, tmp_path / "files.json"))
    again = open_archive(tmp_path / "again", create=True)

    run_import(again, "json", tmp_path / "files.json")

    originals = list(archive.iter_records(SECTION))
    assert again.count_records(SECTION) == len(originals)
    for record in originals:
        copy = again.get_record(record.key)
        without_media = {k: v for k, v in record.values.items() if k != MEDIA_FIELD}
        assert {k: v for k, v in copy.values.items() if k != MEDIA_FIELD} == without_media


def test_the_walk_is_bounded_in_depth_and_count(
    archive: Archive, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.core.archive.importers import folder

    root = tmp_path / "deep"
    (root / "a" / "b" / "c").mkdir(parents=True)
    for rel in ("one.txt", "two.txt", "a/three.txt", "a/b/four.txt", "a/b/c/five.txt"):
        (root / rel).write_text(f"Text of {rel}.")
    monkeypatch.setattr(folder, "MAX_DEPTH", 2)

    deep = run_import(archive, "folder", root)

    assert ("a/b", "import.too_deep") in {(s.file, s.code) for s in deep.skipped}
    assert deep.created == 3 and deep.error is None

    monkeypatch.setattr(folder, "MAX_FILES", 2)
    many = run_import(archive, "folder", root)

    assert many.error is not None and many.error.code == "import.too_many_files"
    assert not any(s.code == "import.file_removed" for s in many.skipped)  # not looked at
    assert many.unchanged == 2
