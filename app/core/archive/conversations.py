"""Persisted chat sessions: title, model, text history, transcript summary.

Rows are JSON objects here (:data:`~app.core.json_types.JsonObject`, the stored form); the agent
reads and writes them as typed :class:`~app.core.agent.conversation_types.Conversation` values,
and never stores a plan with a conversation (the ``pending_plan`` column holds only what older
versions wrote; the plan book owns every plan and its status).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from app.core.json_types import JsonObject, JsonValue

OWN_CONVERSATIONS = "coalesce(owner, arxiu_archive_owner()) = current_user"
"""On a shared archive, the conversations that are the connected role's own (a row copied from
a folder archive has no owner and is the archive owner's); row-level security's rule too."""

if TYPE_CHECKING:
    from app.core.archive.engine import Connection, Engine, Row


class ConversationStore:
    """Conversation storage; mixed into :class:`~app.core.archive.store.Archive`.

    On a shared archive each archivist has their own conversations: a new row's ``owner`` is
    the server role, and every read and delete keeps to the role's own rows
    (:data:`OWN_CONVERSATIONS`; row-level security enforces
    the same for every role but the archive's owner). A folder archive is one person's.

    Every method reads on a read thread or writes on the writer thread (the JSON decoding and
    encoding too), so the event loop that awaits it goes on meanwhile.
    """

    db: Engine

    async def save_conversation(self, conversation: JsonObject) -> None:
        """Insert or update a conversation (``id``, ``title``, ``model``, ``history``...);
        ``conversation`` must not change until it returns."""
        await self.db.awrite(lambda conn: _upsert(conn, conversation))

    async def conversations(self) -> list[JsonObject]:
        """Every conversation, most recently updated first."""

        own = _own(self.db)

        def fetch(conn: Connection) -> list[JsonObject]:
            rows = conn.execute(
                f"SELECT * FROM conversations WHERE {own} ORDER BY updated_at DESC, id"
            ).fetchall()
            return [_row_to_conversation(r) for r in rows]

        return await self.db.aread(fetch)

    async def conversation(self, conversation_id: str) -> JsonObject | None:
        """One conversation or ``None``."""
        own = _own(self.db)
        return await self.db.aread(lambda conn: _fetch(conn, conversation_id, own))

    async def delete_conversation(self, conversation_id: str) -> None:
        """Delete a conversation."""
        own = _own(self.db)
        await self.db.awrite(
            lambda c: c.execute(
                f"DELETE FROM conversations WHERE id = ? AND {own}", (conversation_id,)
            )
        )


def _upsert(conn: Connection, conversation: JsonObject) -> None:
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    row = (
        conversation["id"],
        conversation.get("title", ""),
        conversation.get("model"),
        conversation.get("created_at") or stamp,
        stamp,
        json.dumps(conversation.get("history", []), ensure_ascii=False),
        json.dumps(conversation.get("transcript", []), ensure_ascii=False),
        _dumps_or_none(conversation.get("pending_plan")),
    )
    conn.execute(
        "INSERT INTO conversations(id, title, model, created_at, updated_at, history, "
        "transcript, pending_plan) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(id) DO UPDATE SET title = excluded.title, model = excluded.model, "
        "updated_at = excluded.updated_at, history = excluded.history, "
        "transcript = excluded.transcript, pending_plan = excluded.pending_plan",
        row,
    )


def _fetch(conn: Connection, conversation_id: str, own: str) -> JsonObject | None:
    row = conn.execute(
        f"SELECT * FROM conversations WHERE id = ? AND {own}", (conversation_id,)
    ).fetchone()
    return _row_to_conversation(row) if row else None


def _own(db: Engine) -> str:
    """The SQL condition of the connected archivist's own conversations."""
    return OWN_CONVERSATIONS if db.dialect == "postgresql" else "1 = 1"


def _dumps_or_none(value: JsonValue) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _row_to_conversation(row: Row) -> JsonObject:
    """A ``conversations`` row (text columns) with its JSON columns decoded."""
    item: JsonObject = dict(row)
    item["history"] = json.loads(row["history"])
    item["transcript"] = json.loads(row["transcript"])
    item["pending_plan"] = json.loads(row["pending_plan"]) if row["pending_plan"] else None
    return item
