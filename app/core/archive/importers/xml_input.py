"""The XML files of an import: one file or a folder of ``*.xml``, each parsed safely or skipped.

Shared by the EAC-CPF and Dublin Core importers. A file that cannot be parsed (not well-formed,
declaring entities, too large, too deep) becomes a :class:`~.base.Skip` with the refusal's code
and line; the other files of the folder import as if it were not there.
"""

from __future__ import annotations

from pathlib import Path

from app.core.archive.importers.base import ImportSummary, Skip
from app.core.archive.importers.safe_xml import Element, parse_file
from app.core.errors import ImportFailed
from app.core.phrases import Phrase


def xml_files(path: Path, what: str) -> list[Path]:
    """``path`` itself, or the ``*.xml`` files of the folder ``path`` (sorted, not recursive).

    ``what`` names the kind of file in the hint ("an EAC-CPF" file), a fixed English text that
    the translation tables hold too.

    Raises:
        ImportFailed: ``import.file_missing`` when there is no such file or no XML file in the
            folder.
    """
    path = Path(path).expanduser()
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() == ".xml" and p.is_file())
        if not files:
            raise ImportFailed(
                "import.file_missing",
                Phrase.of("The folder {path} holds no .xml file.", path=str(path)),
                hint=Phrase.of("Give {what} file or a folder of them.", what=Phrase.of(what)),
                details={"path": str(path)},
            )
        return files
    if not path.exists():
        raise ImportFailed(
            "import.file_missing",
            Phrase.of("There is no file or folder at {path}.", path=str(path)),
            hint="Check the path.",
            details={"path": str(path)},
        )
    return [path]


def read_xml(file: Path, summary: ImportSummary) -> Element | None:
    """The root element of ``file``, or ``None`` with the refusal added to ``summary.skipped``."""
    try:
        return parse_file(file)
    except ImportFailed as exc:
        line = exc.line
        summary.skipped.append(Skip.of_error(line, file.name, exc))
        return None
