"""Bad archives give coded errors and are left untouched."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest

from app.core.archive import Archive, open_archive
from app.core.errors import ArchiveError


def test_missing_archive_is_not_created_without_create(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError) as info:
        open_archive(tmp_path / "nowhere")
    assert info.value.code == "archive.not_found"
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize(
    "content",
    [b"this is not a database at all" * 100, b"SQLite format 3\x00" + b"\xff" * 4000],
)
def test_corrupt_file_is_reported_and_left_as_is(tmp_path: Path, content: bytes) -> None:
    folder = tmp_path / "a"
    folder.mkdir()
    (folder / "archive.db").write_bytes(content)
    with pytest.raises(ArchiveError) as info:
        open_archive(folder)
    assert info.value.code == "archive.corrupt"
    assert info.value.hint
    assert (folder / "archive.db").read_bytes() == content
    assert sorted(p.name for p in folder.iterdir()) == ["archive.db"]


def test_read_only_location_is_reported(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        # root ignores permission bits; sysfs refuses new folders even to root
        target = Path("/sys/arxiu-test-archive")
    else:
        parent = tmp_path / "ro"
        parent.mkdir()
        parent.chmod(stat.S_IRUSR | stat.S_IXUSR)
        target = parent / "a"
    with pytest.raises(ArchiveError) as info:
        open_archive(target, create=True)
    assert info.value.code == "archive.read_only"
    assert not target.exists()


def test_read_only_open_refuses_writes(tmp_path: Path) -> None:
    open_archive(tmp_path / "a", create=True).close()
    archive = open_archive(tmp_path / "a", read_only=True)
    try:
        assert archive.sections() == []
        with pytest.raises(ArchiveError) as info:
            archive.set_meta("name", "x")
        assert info.value.code == "archive.read_only"
    finally:
        archive.close()


def test_locked_archive_gives_a_retryable_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import app.core.archive.database as database

    monkeypatch.setattr(database, "BUSY_TIMEOUT_MS", 50)
    archive = open_archive(tmp_path / "a", create=True)
    blocker = sqlite3.connect(tmp_path / "a" / "archive.db", isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(ArchiveError) as info:
            archive.set_meta("name", "x")
        assert info.value.code == "archive.locked"
        assert info.value.retryable
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
        archive.close()
    reopened = open_archive(tmp_path / "a")
    try:
        assert reopened.meta("name") is None
    finally:
        reopened.close()


def test_damage_deep_in_the_file_is_reported_when_read(tmp_path: Path) -> None:
    from app.core.archive import Field, Section
    from app.core.archive.bulk import NewRecord

    folder = tmp_path / "a"
    with open_archive(folder, create=True) as archive:
        archive.put_section(Section("s1", {"lg-eng": "S"}))
        archive.put_field(Field("f1", "s1", {"lg-eng": "F"}))
        archive.upsert_records(
            [NewRecord("s1", {"f1": [{"value": "x" * 500}]}) for _ in range(2000)]
        )
    db_file = folder / "archive.db"
    data = bytearray(db_file.read_bytes())
    middle = len(data) // 2 // 4096 * 4096
    data[middle : middle + 4096] = b"\xff" * 4096
    db_file.write_bytes(bytes(data))
    archive = open_archive(folder)  # header and schema are intact: it opens
    try:
        with pytest.raises(ArchiveError) as info:
            list(archive.iter_records("s1"))
        assert info.value.code == "archive.corrupt"
    finally:
        archive.close()


@pytest.mark.parametrize("create", [False, True])
def test_a_zero_byte_archive_is_corrupt_not_new(tmp_path: Path, create: bool) -> None:
    folder = tmp_path / "a"
    folder.mkdir()
    (folder / "archive.db").write_bytes(b"")
    with pytest.raises(ArchiveError) as info:
        open_archive(folder, create=create)
    assert info.value.code == "archive.corrupt"
    assert "empty (0 bytes)" in info.value.message
    assert (folder / "archive.db").stat().st_size == 0
    assert sorted(p.name for p in folder.iterdir()) == ["archive.db"]


def test_a_new_archive_is_created_complete_under_its_name(tmp_path: Path) -> None:
    with open_archive(tmp_path / "new", create=True) as archive:
        assert archive.sections() == []
    names = sorted(p.name for p in (tmp_path / "new").iterdir())
    assert "archive.db" in names and not any(n.endswith(".creating") for n in names)
    assert (tmp_path / "new" / "archive.db").stat().st_size > 0


def damaged_archive(folder: Path) -> bytes:
    """An archive of 2,000 records with one page in the middle overwritten; its bytes."""
    from app.core.archive import Field, Section
    from app.core.archive.bulk import NewRecord

    with open_archive(folder, create=True) as archive:
        archive.put_section(Section("s1", {"lg-eng": "S"}))
        archive.put_field(Field("f1", "s1", {"lg-eng": "F"}))
        archive.upsert_records(
            [NewRecord("s1", {"f1": [{"value": f"record {n} " + "x" * 500}]}) for n in range(2000)]
        )
    db_file = folder / "archive.db"
    data = bytearray(db_file.read_bytes())
    middle = len(data) // 2 // 4096 * 4096
    data[middle : middle + 4096] = b"\xff" * 4096
    db_file.write_bytes(bytes(data))
    return bytes(data)


def test_index_reports_deep_damage_before_writing_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app import cli

    folder = tmp_path / "a"
    before = damaged_archive(folder)

    code = cli.main(["index", "--model", "hashing", "--archive", str(folder)])

    err = capsys.readouterr().err
    assert code != 0
    assert "archive.corrupt" in err and "Traceback" not in err
    assert (folder / "archive.db").read_bytes() == before
    assert (
        not (folder / "archive.db-wal").exists() or (folder / "archive.db-wal").stat().st_size == 0
    )


@pytest.mark.sqlite_only("PRAGMA quick_check of archive.db")
def test_check_intact_passes_a_sound_archive(archive: Archive) -> None:
    archive.db.check_intact()
