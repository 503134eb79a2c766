"""One entry of a conversation's text-only history: ``{role, text, tainted?}``.

The same JSON object is what a request sends back, what a run's ``final`` frame returns and
what a stored conversation keeps, so an entry is typed as that JSON's own shape
(:class:`HistoryEntry`, a ``TypedDict``: the stored and sent bytes stay what they were). Earlier
tool traffic is never part of it. An assistant entry that drew on restricted records carries
``tainted: true`` (see :mod:`~app.core.agent.history_taint`).

:func:`entry_json` and :func:`read_entry` are its edges to and from
:data:`~app.core.json_types.JsonObject`.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from app.core.json_types import JsonObject, JsonShapeError, JsonValue, as_object, req_str

HistoryRole = Literal["user", "assistant"]


class HistoryEntry(TypedDict):
    """One question or answer of a history (``tainted`` only where it was marked)."""

    role: HistoryRole
    text: str
    tainted: NotRequired[bool]


def history_entry(role: HistoryRole, text: str, *, tainted: bool = False) -> HistoryEntry:
    """An entry; ``tainted: true`` is set only when ``tainted``."""
    entry: HistoryEntry = {"role": role, "text": text}
    if tainted:
        entry["tainted"] = True
    return entry


def entry_json(entry: HistoryEntry) -> JsonObject:
    """The entry as a JSON object, its keys in the stored order (``role, text, tainted?``)."""
    out: JsonObject = {"role": entry["role"], "text": entry["text"]}
    if "tainted" in entry:
        out["tainted"] = entry["tainted"]
    return out


def read_entry(value: JsonValue, what: str = "the history entry") -> HistoryEntry:
    """A JSON value as an entry.

    Raises:
        JsonShapeError: ``value`` is not ``{role: "user" | "assistant", text, tainted?}``.
    """
    data = as_object(value, what)
    role: HistoryRole
    if data.get("role") == "user":
        role = "user"
    elif data.get("role") == "assistant":
        role = "assistant"
    else:
        raise JsonShapeError(f"{what}: 'role' must be user or assistant")
    entry: HistoryEntry = {"role": role, "text": req_str(data, "text")}
    tainted = data.get("tainted")
    if tainted is not None:
        if not isinstance(tainted, bool):
            raise JsonShapeError(f"{what}: 'tainted' must be true or false")
        entry["tainted"] = tainted
    return entry
