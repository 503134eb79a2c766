"""In and out of a shared archive: each importer stores on PostgreSQL exactly what it stores on
SQLite (records, values, versions, restrictions, links, external ids, media, import state), says
the same in its summary, and a second import changes nothing on either; each exporter writes the
same bytes from either engine; media files kept in the server come back through
``archive.media_path`` on a workstation that never saw them."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive, open_archive
from app.core.archive.exporters import ExportRequest, run_export
from app.core.archive.importers import ImportSummary, run_import
from app.core.archive.media import media_of
from tests.conftest import shared_data
from tests.core.archive.importers.file_samples import text_pdf, write_wav

Snapshot = dict[str, list[tuple[Any, ...]]]
Prepare = Callable[[Path], Path]
"""Writes a case's input under the given folder; returns the path to import."""


def first_lines(relative: str, count: int, target: Path) -> Path:
    """The first ``count`` lines of a gzip JSON Lines set, as ``target/relative``."""
    out = target / relative
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(shared_data(*relative.split("/")), "rb") as source, gzip.open(out, "wb") as to:
        for number, line in enumerate(source):
            if number >= count:
                break
            to.write(line)
    return out


def ead_files(target: Path) -> Path:
    """Three ANF finding aids (the largest EAD set) and one UW Labor Archives one."""
    folder = target / "ead"
    folder.mkdir(parents=True)
    anf = sorted(shared_data("ead", "anf").glob("*.xml"))[:3]
    uw = sorted(shared_data("ead", "uw-labor-archives").glob("*.xml"))[:1]
    for path in (*anf, *uw):
        shutil.copy(path, folder / path.name)
    return folder


def tate(target: Path) -> Path:
    """The Tate artists and the first 300 artworks."""
    first_lines("tate/artists.jsonl.gz", 10_000, target)
    return first_lines("tate/artworks.jsonl.gz", 300, target).parent


def poilus(target: Path) -> Path:
    """The Poilus wills with their page images (media)."""
    folder = target / "poilus"
    shutil.copytree(shared_data("poilus"), folder)
    return folder


def files(target: Path) -> Path:
    """A folder of files of every kind the folder importer reads."""
    root = target / "papers"
    (root / "scans").mkdir(parents=True)
    for page in sorted(shared_data("poilus", "pages").glob("*.jpg"))[:3]:
        shutil.copy(page, root / "scans" / page.name)
    (root / "cork.pdf").write_bytes(text_pdf(["The harbour in winter.", "The factory closed."]))
    write_wav(root / "rosa.wav", 2.0)
    (root / "rosa.ca.vtt").write_text(
        "WEBVTT\n\n1\n00:00:01.000 --> 00:00:06.000\n<v Rosa>Vam marxar de casa.\n",
        encoding="utf-8",
    )
    (root / "notes.txt").write_text("Notes de la família, escrites a Girona.", encoding="utf-8")
    return root


def json_export(target: Path) -> Path:
    """An Arxiu JSON export of a Tate slice (restricted records too), made on SQLite."""
    source = open_archive(target / "source", create=True)
    try:
        run_import(source, "tate", tate(target))
        out = target / "tate.json"
        run_export(source, "json", ExportRequest("tate1", out, include_restricted=True))
    finally:
        source.close()
    return out


IMPORTS: dict[str, tuple[str, Prepare]] = {
    "ead": ("ead", ead_files),
    "eac-cpf": ("eac-cpf", lambda _: shared_data("eac-cpf", "anf")),
    "dc": ("dc", lambda _: shared_data("oai-dc", "caltech")),
    "ohms": ("ohms", lambda _: shared_data("oral-history-ohms")),
    "csv": (
        "csv",
        lambda _: shared_data("csv-archival", "nla-finding-aids", "finding-aids-totals.csv"),
    ),
    "tate": ("tate", tate),
    "poilus": ("poilus", poilus),
    "nomisma": ("nomisma", lambda t: first_lines("nomisma/concepts.jsonl.gz", 400, t)),
    "igch": ("igch", lambda t: first_lines("igch/hoards.jsonl.gz", 60, t)),
    "beir": ("beir", lambda t: first_lines("beir-dbpedia-5k/corpus.jsonl.gz", 200, t)),
    "folder": ("folder", files),
    "json": ("json", json_export),
}
"""Case → (importer kind, its input)."""


@pytest.fixture
def engines(tmp_path: Path, pg_database: str) -> Iterator[tuple[Archive, Archive]]:
    """A fresh archive on each engine: ``(SQLite, PostgreSQL)``."""
    local = open_archive(tmp_path / "local", create=True)
    shared = open_archive(pg_database, create=True)
    yield local, shared
    local.close()
    shared.close()


def snapshot(archive: Archive) -> Snapshot:
    """What an import leaves in the archive, rows sorted in code point order (timestamps and
    generated media ids aside)."""
    with archive.db.reading() as conn:

        def rows(sql: str, params: tuple[str, ...] = ()) -> list[tuple[Any, ...]]:
            return sorted(tuple(row) for row in conn.execute(sql, params).fetchall())

        records = [
            (tipo, sid, json.loads(data), version, None if flag is None else bool(flag))
            for tipo, sid, data, version, flag in rows(
                "SELECT section_tipo, section_id, data, version, restricted FROM records"
            )
        ]
        return {
            "sections": sorted(
                (s.tipo, sorted(s.labels.items()), s.restricted, s.label_field)
                for s in archive.sections()
            ),
            "fields": rows("SELECT tipo, section_tipo, kind, target_section, position FROM fields"),
            "records": sorted(records, key=lambda r: (r[0], r[1])),
            "links": rows("SELECT * FROM links"),
            "external_ids": rows("SELECT * FROM external_ids"),
            "media": rows(
                "SELECT section_tipo, section_id, field_tipo, path, mime, size, sha256, width, "
                "height, duration_s, thumbnail FROM media"
            ),
            "meta": rows("SELECT key, value FROM meta WHERE key LIKE ?", ("import%",)),
            "id_marks": rows("SELECT section_tipo, high FROM id_marks"),
        }


def said(summary: ImportSummary) -> dict[str, Any]:
    """An import's summary, its timing and the paths it was given aside."""
    data = summary.to_dict()
    for varying in ("seconds", "path"):
        data.pop(varying, None)
    return data


def both(
    engines: tuple[Archive, Archive], kind: str, path: Path
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The summaries of importing ``path`` as ``kind`` into each engine's archive."""
    local, shared = engines
    return said(run_import(local, kind, path)), said(run_import(shared, kind, path))


@pytest.mark.parametrize("case", list(IMPORTS))
def test_each_importer_stores_the_same_on_both_engines(
    case: str, engines: tuple[Archive, Archive], tmp_path: Path
) -> None:
    kind, prepare = IMPORTS[case]
    path = prepare(tmp_path / "input")
    local, shared = engines
    first_local, first_shared = both(engines, kind, path)
    assert first_shared == first_local
    assert first_local["created"] > 0
    assert snapshot(shared) == snapshot(local)

    again_local, again_shared = both(engines, kind, path)
    assert again_shared == again_local
    assert again_local["created"] == 0
    assert snapshot(shared) == snapshot(local)


EXPORTS: list[tuple[str, str, str, str]] = [
    ("ead", "ead", "ead3", "ead1"),
    ("eac-cpf", "eac-cpf", "eac-cpf", "agent1"),
    ("dc", "dc", "dc", "dc1"),
    ("csv", "csv", "csv", ""),
    ("tate", "tate", "json", "tate1"),
    ("folder", "folder", "json", "files1"),
]
"""(import case, importer kind, export format, section: "" the one the import made)."""


@pytest.mark.parametrize(("case", "kind", "fmt", "section"), EXPORTS)
@pytest.mark.parametrize("restricted", [False, True], ids=["open", "with-restricted"])
def test_each_exporter_writes_the_same_bytes_from_both_engines(
    case: str,
    kind: str,
    fmt: str,
    section: str,
    restricted: bool,
    engines: tuple[Archive, Archive],
    tmp_path: Path,
) -> None:
    path = IMPORTS[case][1](tmp_path / "input")
    local, shared = engines
    both(engines, kind, path)
    if not section:
        made = {s.tipo for s in local.sections()} - {"agent1"}
        section = sorted(made)[0]
    outs = []
    for name, archive in (("local", local), ("shared", shared)):
        out = tmp_path / f"out-{name}" / f"export.{fmt}"
        out.parent.mkdir()
        summary = run_export(
            archive, fmt, ExportRequest(section, out, include_restricted=restricted)
        )
        outs.append((summary.records, summary.restricted_left_out, _read_all(out)))
    assert outs[0][0] > 0
    assert outs[1] == outs[0]


MOMENTS = [
    re.compile(rb'"exported_at": "[^"]*"'),
    re.compile(rb"<responseDate>[^<]*</responseDate>"),
    re.compile(rb'<eventdatetime standarddatetime="[^"]*">[^<]*</eventdatetime>', re.IGNORECASE),
]
"""Where an export says when it was made (the two engines' exports are a second apart)."""


def _read_all(out: Path) -> dict[str, bytes]:
    """The export's bytes, the moment it was made aside: the file, or every file of the folder
    it wrote."""
    paths = sorted(out.rglob("*")) if out.is_dir() else [out]
    found = {}
    for path in paths:
        content = path.read_bytes()
        for moment in MOMENTS:
            content = moment.sub(b"(when)", content)
        found[path.relative_to(out).as_posix() if out.is_dir() else out.name] = content
    return found


def test_media_kept_in_the_server_come_back_on_another_workstation(
    engines: tuple[Archive, Archive], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, shared = engines
    run_import(shared, "folder", files(tmp_path / "input"))
    stored = [m for r in shared.iter_records("files1") for m in media_of(shared, r.key)]
    kept = {m.path: m.sha256 for m in stored}
    thumbs = [m.thumbnail for m in stored if m.thumbnail]
    assert len(kept) == 5 and len(thumbs) == 3  # 3 scans, a PDF, a recording
    originals = {p: (shared.media_dir / p).read_bytes() for p in [*kept, *thumbs]}

    monkeypatch.setenv("ARXIU_HOME", str(tmp_path / "another-workstation"))
    elsewhere = open_archive(shared.location)
    try:
        assert elsewhere.media_dir != shared.media_dir
        for path, content in originals.items():
            assert not (elsewhere.media_dir / path).exists()
            assert elsewhere.media_path(path).read_bytes() == content
    finally:
        elsewhere.close()
