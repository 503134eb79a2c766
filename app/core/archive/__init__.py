"""The archive: a folder with ``archive.db`` (SQLite) and ``media/``."""

from app.core.archive.model import Field, Link, Media, Record, RecordKey, Section
from app.core.archive.store import Archive, open_archive

__all__ = ["Archive", "Field", "Link", "Media", "Record", "RecordKey", "Section", "open_archive"]
