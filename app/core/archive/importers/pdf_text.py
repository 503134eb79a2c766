"""The text of a PDF, page by page, read with ``pypdf`` and nothing ever executed.

:func:`read_pdf` returns each page's text (``[page-n-N]`` markers are added by the importer, as
the Poilus wills have them, so a citation names the page), the document's title, author and
creation date, and what it found worth telling the archivist:

===========================  ================================================================
code                         when
===========================  ================================================================
``import.pdf_no_text``       no page has a text layer (a scan): the record says so
``import.pdf_encrypted``     encrypted with a password that is not empty: no text read
``import.pdf_active_content``  JavaScript, an open action, launch actions or embedded files:
                             read for text only (pypdf never runs anything)
``import.pdf_truncated``     the file ends early (no ``%%EOF``): the pages that could be read
``import.pdf_repaired``      pypdf had to repair the file (its warnings are in the note)
``import.pdf_broken``        not a PDF pypdf can read at all (raised)
``import.too_large``         over :data:`MAX_PDF_BYTES` (raised)
===========================  ================================================================

Reading is bounded: at most :data:`MAX_PAGES` pages and :data:`MAX_TEXT_CHARS` characters.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.archive.importers.text_files import read_limited
from app.core.errors import ImportFailed
from app.core.phrases import Phrase, PhraseParam

MAX_PDF_BYTES = 512 << 20
MAX_PAGES = 5000
MAX_TEXT_CHARS = 20_000_000
EOF_WINDOW = 2048
_ACTIVE = re.compile(rb"/(JavaScript|JS|OpenAction|Launch|EmbeddedFile|RichMedia|AA)\b")
_SPACE = re.compile(r"[ \t\f\v]+")

NO_TEXT = "import.pdf_no_text"
ENCRYPTED = "import.pdf_encrypted"
ACTIVE = "import.pdf_active_content"
TRUNCATED = "import.pdf_truncated"
BROKEN = "import.pdf_broken"
REPAIRED = "import.pdf_repaired"
ACTIVE_CONTENT = "active content ({names}): read for text only"


@dataclass(frozen=True)
class PdfNote:
    """Something about the PDF the archivist should know: a code and a sentence."""

    code: str
    reason: str
    """In English: a fixed sentence, or the phrase's words."""
    phrase: Phrase | None = None
    """The reason as a template and its values, where it names something (said in the person's
    language)."""

    @classmethod
    def said(cls, code: str, template: str, /, **params: PhraseParam) -> PdfNote:
        """The note ``code`` whose reason is ``template`` filled with ``params``."""
        phrase = Phrase.of(template, **params)
        return cls(code, phrase.english(), phrase)


@dataclass
class PdfContent:
    """What was read from a PDF."""

    pages: list[str] = field(default_factory=list)
    page_count: int = 0
    title: str = ""
    author: str = ""
    created: str = ""
    """ISO date (``YYYY-MM-DD``) of ``/CreationDate``, or ""."""
    notes: list[PdfNote] = field(default_factory=list)

    @property
    def has_text(self) -> bool:
        """Whether any page has text."""
        return any(page.strip() for page in self.pages)


def read_pdf(path: Path) -> PdfContent:
    """Read the PDF at ``path`` (see the module doc).

    Raises:
        ImportFailed: ``import.pdf_broken``, ``import.too_large``, ``import.unreadable``.
    """
    data = read_limited(path, MAX_PDF_BYTES, "PDF")
    content = PdfContent()
    content.notes.extend(_scan(data))
    with pypdf_messages() as messages:
        _read(data, path, content)
    if messages:
        said = "; ".join(dict.fromkeys(messages[:20]))[:300]
        repaired = PdfNote.said(REPAIRED, "damaged, read as far as possible ({said})", said=said)
        content.notes.append(repaired)
    return content


class _Collect(logging.Handler):
    def __init__(self, messages: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.messages = messages

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def pypdf_messages() -> Iterator[list[str]]:
    """pypdf's warnings while the block runs, collected instead of logged: they become a note
    on the file (``import.pdf_repaired``) rather than lines on the console."""
    logger = logging.getLogger("pypdf")
    messages: list[str] = []
    handler = _Collect(messages)
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield messages
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _read(data: bytes, path: Path, content: PdfContent) -> None:
    reader = _reader(data, path)
    if reader.is_encrypted and not _decrypted(reader):
        content.notes.append(PdfNote(ENCRYPTED, "encrypted with a password: no text read"))
        return
    hidden = _catalog_active(reader)
    if hidden and not any(note.code == ACTIVE for note in content.notes):
        names = ", ".join(hidden)
        content.notes.append(PdfNote.said(ACTIVE, ACTIVE_CONTENT, names=names))
    _metadata(reader, content)
    _pages(reader, content, path)
    if not content.has_text:
        content.notes.append(PdfNote(NO_TEXT, "scanned, no text layer"))


def _scan(data: bytes) -> list[PdfNote]:
    """Notes found in the raw bytes: active content keys, a missing end of file."""
    notes = []
    found = sorted({m.group(1).decode() for m in _ACTIVE.finditer(data)})
    if found:
        names = ", ".join(found)
        notes.append(PdfNote.said(ACTIVE, ACTIVE_CONTENT, names=names))
    if b"%%EOF" not in data[-EOF_WINDOW:]:
        notes.append(PdfNote(TRUNCATED, "the file ends early (no %%EOF): pages read as found"))
    return notes


def _reader(data: bytes, path: Path) -> Any:
    import io

    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    if not data.lstrip()[:5].startswith(b"%PDF"):
        raise _broken(path, Phrase.of("it does not start with %PDF"))
    try:
        return PdfReader(io.BytesIO(data), strict=False)
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        raise _broken(path, str(exc) or type(exc).__name__) from exc
    except RecursionError as exc:
        raise _broken(path, Phrase.of("objects nested too deeply")) from exc


def _broken(path: Path, why: str | Phrase) -> ImportFailed:
    return ImportFailed(
        BROKEN,
        Phrase.of(
            "{name} cannot be read as a PDF: {why}.",
            name=path.name,
            why=why[:200] if isinstance(why, str) else why,
        ),
        hint="Open it in a PDF reader and save it again, or export it anew.",
        details={"path": str(path)},
    )


def _decrypted(reader: Any) -> bool:
    """Whether the document opens with the empty password (owner-password-only PDFs do)."""
    try:
        return bool(reader.decrypt(""))
    except Exception:  # pypdf raises many kinds for unsupported ciphers
        return False


def _catalog_active(reader: Any) -> list[str]:
    """Active entries of the document catalogue (found even inside compressed objects)."""
    try:
        root = reader.trailer["/Root"].get_object()
        found = [key[1:] for key in ("/OpenAction", "/AA") if key in root]
        names = root.get("/Names")
        if names is not None and "/JavaScript" in names.get_object():
            found.append("JavaScript")
    except Exception:  # a broken catalogue: the raw scan has already looked
        return []
    return found


def _metadata(reader: Any, content: PdfContent) -> None:
    try:
        info = reader.metadata
    except Exception:  # a broken /Info dictionary is only metadata lost
        return
    if info is None:
        return
    content.title = _clean(str(info.title or ""))
    content.author = _clean(str(info.author or ""))
    try:
        created = info.creation_date
    except Exception:  # a malformed date string
        created = None
    if isinstance(created, dt.datetime):
        content.created = created.date().isoformat()


def _pages(reader: Any, content: PdfContent, path: Path) -> None:
    try:
        pages = reader.pages
        content.page_count = len(pages)
    except Exception as exc:  # a broken page tree
        raise _broken(
            path, Phrase.of("its page tree cannot be read ({kind})", kind=type(exc).__name__)
        ) from exc
    total = 0
    for number in range(min(content.page_count, MAX_PAGES)):
        try:
            text = pages[number].extract_text() or ""
        except Exception:  # one unreadable page does not lose the others
            text = ""
        text = _clean(text)[: MAX_TEXT_CHARS - total]
        total += len(text)
        content.pages.append(text)
    if content.page_count > MAX_PAGES or total >= MAX_TEXT_CHARS:
        too_long = PdfNote.said(
            "import.pdf_too_long",
            "only the first {pages} pages or {chars:,} characters read",
            pages=len(content.pages),
            chars=MAX_TEXT_CHARS,
        )
        content.notes.append(too_long)


def _clean(text: str) -> str:
    lines = (_SPACE.sub(" ", line).strip() for line in text.replace("\x00", "").splitlines())
    return "\n".join(line for line in lines if line)
