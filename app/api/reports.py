"""Apply reports and plan records as plain JSON, for the dialects' answers.

The plan owner's ``resolve`` returns an apply report and ``get`` a plan's record; both are
turned into their JSON form (``to_dict()``) here, so the dialects never reach into plan types.
"""

from __future__ import annotations

from typing import Any


def plain(value: Any) -> dict[str, Any] | None:
    """``value`` as a JSON object: its ``to_dict()``, a copy of a mapping, or ``None``."""
    if value is None:
        return None
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        found = to_dict()
        return dict(found) if isinstance(found, dict) else None
    return dict(value) if isinstance(value, dict) else None
