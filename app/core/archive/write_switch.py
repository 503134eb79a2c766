"""Whether the assistant may write in an archive at all: opt-in, per archive, off by default.

The switch is the archive's ``write_allowed`` meta value (``true``/``false``); a new archive has
none, so its writes are off until the archivist turns them on (Settings, or ``arxiu archive set
write_allowed true``). With writes off, write mode is not offered and every apply is refused
with ``mcp.write_disabled``. Which sections a plan may change is a separate, per-section flag.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.errors import ArxiuError
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive

WRITE_ALLOWED_KEY = "write_allowed"
TRUE_WORDS = frozenset({"true", "1", "yes", "on"})
FALSE_WORDS = frozenset({"false", "0", "no", "off"})


def writes_allowed(archive: Archive) -> bool:
    """Whether the archive's writes are turned on."""
    return (archive.meta(WRITE_ALLOWED_KEY) or "").strip().lower() in TRUE_WORDS


def set_writes_allowed(archive: Archive, allowed: bool) -> None:
    """Turn the archive's writes on or off."""
    archive.set_meta(WRITE_ALLOWED_KEY, "true" if allowed else "false")


def parse_switch(text: str) -> bool:
    """``true``/``false`` (also ``yes``/``no``, ``on``/``off``, ``1``/``0``) as a bool.

    Raises:
        ArxiuError: ``request.invalid`` for any other word.
    """
    word = text.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ArxiuError(
        "request.invalid",
        Phrase.of("{text!r} is not true or false.", text=text),
        hint="Write true or false.",
        category="input",
    )


def write_disabled() -> ArxiuError:
    """The refusal of any write while the archive's writes (or the app's write mode) are off."""
    return ArxiuError(
        "mcp.write_disabled",
        "Write mode is turned off for this archive.",
        hint="Turn on write mode in the settings, or run `arxiu archive set write_allowed true`.",
        category="permission",
    )


def require_writes(archive: Archive) -> None:
    """Fail unless the archive's writes are on.

    Raises:
        ArxiuError: ``mcp.write_disabled``.
    """
    if not writes_allowed(archive):
        raise write_disabled()
