"""A guard against PySide6 6.12's reference-count bug on Python 3.11 (``none_dealloc`` crashes).

PySide6/shiboken6 6.12.0 returns ``None`` from every void method and ``True`` from
``Signal.emit`` without taking a new reference. On Python 3.12+ those singletons are immortal
and nothing happens; on 3.11 each call lowers their count by one, and after some ten thousand
calls (a few minutes of streaming) the interpreter dies with ``Fatal Python error: none_dealloc``
or ``bool_dealloc``, usually at exit. Until a fixed PySide6 is installed, :func:`protect_singletons`
raises the counts of ``None``, ``True`` and ``False`` far out of reach, which is what Python 3.12
does by making them immortal. It touches nothing on an interpreter or a PySide6 without the bug.
"""

from __future__ import annotations

import ctypes
import logging
import sys

log = logging.getLogger(__name__)

BUGGY_SHIBOKEN = ("6.12.",)
"""shiboken6 versions with the bug (6.12.0 measured: one reference lost per call)."""
PAD = 1 << 40
"""References added to each singleton: more calls than a process can make."""

_protected = False


def needs_protection(python: tuple[int, int], shiboken_version: str) -> bool:
    """Whether this interpreter and shiboken6 version lose references to the singletons."""
    return python < (3, 12) and shiboken_version.startswith(BUGGY_SHIBOKEN)


def protect_singletons() -> bool:
    """Make ``None``, ``True`` and ``False`` effectively immortal if the bug is present.

    Returns:
        Whether the counts were raised (now or by an earlier call).
    """
    global _protected
    if _protected:
        return True
    import shiboken6

    version = str(getattr(shiboken6, "__version__", ""))
    if not needs_protection(sys.version_info[:2], version):
        return False
    for singleton in (None, True, False):
        count = ctypes.c_ssize_t.from_address(id(singleton))  # ob_refcnt is the first field
        count.value += PAD
    _protected = True
    log.info("shiboken6 %s on Python 3.11: None/True/False made immortal", version)
    return True
