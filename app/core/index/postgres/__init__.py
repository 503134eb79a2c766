"""Search inside a PostgreSQL archive: the chunks' ``tsvector`` column, pgvector, and the same
fusion and ranking as on SQLite (:class:`~app.core.index.postgres.engine.PgSearchEngine`)."""

from app.core.index.postgres.engine import PgSearchEngine, open_search

__all__ = ["PgSearchEngine", "open_search"]
