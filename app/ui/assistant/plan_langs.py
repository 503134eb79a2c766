"""Languages on the confirm card by their names in the UI's language, not by their codes.

The core's previews (:mod:`app.core.agent.plan_preview`) write a value's language as a short
code before it (``ca: Mestra``, several values ``ca: Mestra · es: Maestra``), and a field that
holds a language holds its archive code (``lg-cat``). :func:`named_langs` turns both into the
language's name from :func:`app.ui.i18n.language_name` (``Catalan: Mestra``, ``Catalán``); any
other text is left as it is.
"""

from __future__ import annotations

import re

from app.core.agent.citations import SHORT_LANGS
from app.core.archive.shown_values import LANGUAGE_NAMES
from app.ui.i18n import language_name

SEPARATOR = " · "
"""What the previews put between the values of a field."""
ARCHIVE_CODE = re.compile(r"lg-[a-z]{3}")
LANG_PREFIX = re.compile(r"([a-z]{2,3}(?:/[a-z]{2,3})*): ")
CODES = {short: code for code, short in SHORT_LANGS.items()}
"""Short codes (``ca``) back to the archive's (``lg-cat``)."""


def named_langs(text: str) -> str:
    """``text`` (a preview's plain text) with each language code as the language's name."""
    return SEPARATOR.join(_named(part) for part in text.split(SEPARATOR))


def _named(part: str) -> str:
    if ARCHIVE_CODE.fullmatch(part):
        return language_name(part)
    found = LANG_PREFIX.match(part)
    if found is None:
        return part
    codes = [_archive_code(short) for short in found.group(1).split("/")]
    if not all(codes):
        return part
    names = "/".join(language_name(code) for code in codes if code)
    return f"{names}: {part[found.end() :]}"


def _archive_code(short: str) -> str | None:
    """The archive code a preview's short code stands for (``None``: not a language's)."""
    code = CODES.get(short) or f"lg-{short}"
    return code if code in SHORT_LANGS or code in LANGUAGE_NAMES else None
