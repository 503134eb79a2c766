"""Media files: copied beside the database under ``media/``, described, thumbnailed.

Files are stored by content hash (``media/ab/abcdef....ext``) so the same file added twice is
stored once. Images get their dimensions and a 256-pixel JPEG thumbnail (Pillow, imported
lazily); other files get their size and mime type.
"""

from __future__ import annotations

import hashlib
import mimetypes
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from app.core.archive import records
from app.core.archive.model import AuditInfo, Media, RecordKey
from app.core.errors import ArchiveError
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.engine import Connection, Row
    from app.core.archive.store import Archive

THUMBNAIL_SIZE = 256
MAX_MEDIA_BYTES = 2 * 1024**3


class MediaRow(TypedDict):
    """A new ``media`` row (its id and creation time aside)."""

    section_tipo: str
    section_id: int
    field_tipo: str
    path: str
    mime: str
    size: int
    sha256: str
    width: int | None
    height: int | None
    duration_s: float | None
    thumbnail: str | None


class MediaValue(TypedDict):
    """The value of a media field's item: which media row, where the file is, its type."""

    media_id: int
    path: str
    mime: str


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def describe_image(path: Path) -> tuple[int | None, int | None]:
    """Width and height of an image, or ``(None, None)`` if Pillow cannot read it."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            return int(image.width), int(image.height)
    except (UnidentifiedImageError, OSError):
        return None, None


def make_thumbnail(source: Path, target: Path) -> bool:
    """Write a JPEG thumbnail of ``source``; ``False`` when it is not a readable image."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(source) as image:
            image.thumbnail((THUMBNAIL_SIZE, THUMBNAIL_SIZE))
            target.parent.mkdir(parents=True, exist_ok=True)
            image.convert("RGB").save(target, "JPEG", quality=85)
        return True
    except (UnidentifiedImageError, OSError):
        return False


def add_media(
    archive: Archive,
    key: RecordKey,
    field_tipo: str,
    source: Path,
    *,
    duration_s: float | None = None,
    audit: AuditInfo | None = None,
    replace: bool = False,
) -> Media:
    """Copy ``source`` into the archive and attach it to ``key``'s media field.

    The media row, the new item in the record's field (``{"media_id", "path", "mime"}``), the
    record's version bump and the optional audit row are one transaction. With ``replace``
    (a re-imported file that changed), the field's other media rows are removed in that
    transaction, so the record lists the new file only (stored files are kept: they are shared
    by content hash).

    Raises:
        ArchiveError: ``archive.media_missing``, ``archive.media_too_large``, or the record's
            ``archive.record_not_found``.
    """
    source = Path(source)
    size = _checked_size(source)
    archive.get_record(key)  # fails early for a missing record
    sha, relative = _store(archive, source)
    mime = mimetypes.guess_type(source.name)[0] or "application/octet-stream"
    width = height = None
    thumb: str | None = None
    if mime.startswith("image/"):
        width, height = describe_image(archive.media_dir / relative)
        thumb = _thumbnail(archive, relative, sha)
    row = MediaRow(
        section_tipo=key.section_tipo,
        section_id=key.section_id,
        field_tipo=field_tipo,
        path=relative.as_posix(),
        mime=mime,
        size=size,
        sha256=sha,
        width=width,
        height=height,
        duration_s=duration_s,
        thumbnail=thumb,
    )

    def write(conn: Connection) -> int:
        for kept in (row["path"], thumb):
            if kept is not None:
                archive.db.keep_file(conn, kept, archive.media_dir / kept)
        return _insert_media(conn, key, row, audit, replace)

    media_id = archive.db.write(write)
    archive.notify_changed([key])
    return _media(media_id, key, row)


def sql_now() -> str:
    """The current UTC time as SQLite's ``datetime('now')`` writes it (``media.created_at``),
    which PostgreSQL reads as the same instant."""
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _media(media_id: int, key: RecordKey, row: MediaRow | Row) -> Media:
    """The typed media of a ``media`` row, new or read back."""
    return Media(
        id=media_id,
        key=key,
        field_tipo=row["field_tipo"],
        path=row["path"],
        mime=row["mime"],
        size=row["size"],
        sha256=row["sha256"],
        width=row["width"],
        height=row["height"],
        duration_s=row["duration_s"],
        thumbnail=row["thumbnail"],
    )


def _checked_size(source: Path) -> int:
    """The size of ``source``, a file of at most 2 GiB."""
    if not source.is_file():
        raise ArchiveError(
            "archive.media_missing",
            Phrase.of("Media file {path} does not exist.", path=str(source)),
            category="input",
        )
    size = source.stat().st_size
    if size > MAX_MEDIA_BYTES:
        raise ArchiveError(
            "archive.media_too_large",
            Phrase.of(
                "{name} is {size:.1f} GiB; the limit is 2 GiB.",
                name=source.name,
                size=size / 1024**3,
            ),
            category="input",
        )
    return size


def _store(archive: Archive, source: Path) -> tuple[str, Path]:
    """``source`` copied under ``media/`` by content hash (once): its hash and stored path."""
    sha = file_sha256(source)
    relative = Path(sha[:2]) / f"{sha}{source.suffix.lower()}"
    stored = archive.media_dir / relative
    if not stored.exists():
        stored.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, stored)
    return sha, relative


def _thumbnail(archive: Archive, relative: Path, sha: str) -> str | None:
    """The stored image's thumbnail path under ``media/`` (made once), or ``None``."""
    thumb = Path("thumbs") / f"{sha}.jpg"
    target = archive.media_dir / thumb
    if target.exists() or make_thumbnail(archive.media_dir / relative, target):
        return thumb.as_posix()
    return None


def _insert_media(
    conn: Connection,
    key: RecordKey,
    row: MediaRow,
    audit: AuditInfo | None,
    replace: bool = False,
) -> int:
    """The media row's id: the existing one for the same file in the same field, or a new row
    attached to the record's field (the field's other rows removed first with ``replace``)."""
    field_tipo = row["field_tipo"]
    if replace:
        conn.execute(
            "DELETE FROM media WHERE section_tipo = ? AND section_id = ? AND field_tipo = ? "
            "AND sha256 != ?",
            (key.section_tipo, key.section_id, field_tipo, row["sha256"]),
        )
    existing = conn.execute(
        "SELECT id FROM media WHERE section_tipo = ? AND section_id = ? AND field_tipo = ? "
        "AND sha256 = ?",
        (key.section_tipo, key.section_id, field_tipo, row["sha256"]),
    ).fetchone()
    if existing:
        return int(existing[0])
    cursor = conn.execute(
        "INSERT INTO media(section_tipo, section_id, field_tipo, path, mime, size, sha256, "
        "width, height, duration_s, thumbnail, created_at) "
        "VALUES (:section_tipo, :section_id, :field_tipo, :path, :mime, :size, :sha256, "
        ":width, :height, :duration_s, :thumbnail, :created_at) RETURNING id",
        {**row, "created_at": sql_now()},
    )
    media_id = int(cursor.fetchone()[0])
    value = MediaValue(media_id=media_id, path=row["path"], mime=row["mime"])
    _attach(conn, key, field_tipo, value, audit)
    return media_id


def _attach(
    conn: Connection,
    key: RecordKey,
    field_tipo: str,
    value: MediaValue,
    audit: AuditInfo | None,
) -> None:
    before = records.read_record(conn, key)
    items = [*before.items(field_tipo), {"id": len(before.items(field_tipo)) + 1, "value": value}]
    data = {**before.values, field_tipo: records.normalize_values({field_tipo: items})[field_tipo]}
    records.store_values(conn, key, data, before.version + 1)
    if audit is not None:
        records.write_audit(
            conn,
            "upload_media",
            key,
            {field_tipo: before.values.get(field_tipo)},
            {field_tipo: data[field_tipo]},
            audit,
        )


def media_of(archive: Archive, key: RecordKey) -> list[Media]:
    """The media attached to a record."""
    with archive.db.reading() as conn:
        rows = conn.execute(
            "SELECT * FROM media WHERE section_tipo = ? AND section_id = ? ORDER BY id",
            (key.section_tipo, key.section_id),
        ).fetchall()
    return [_media(r["id"], key, r) for r in rows]
