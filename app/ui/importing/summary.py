"""What an import did, in words: counts from the real :class:`ImportSummary`, the first skips
with their reasons in the UI's language (:func:`~app.core.import_report.skip_reason`); numbers
written as the UI's locale writes them (``12.345`` and ``2,3`` in Catalan)."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import QCoreApplication, QLocale

from app.core.archive.importers import ImportSummary
from app.core.counted import Counted
from app.core.import_report import skip_place, skip_reason
from app.ui.i18n import InstalledTranslations, error_text

SKIPS_LISTED = 10
"""Skips listed one by one (file:line and code); the rest are counted."""
CONTEXT = "ImportSummary"

RECORDS = Counted("1 record", "{n} records")
CREATED = Counted("1 new", "{n} new")
UPDATED = Counted("1 updated", "{n} updated")
UNCHANGED = Counted("1 unchanged", "{n} unchanged")
LINKS = Counted("1 link", "{n} links")
MEDIA = Counted("1 media file", "{n} media files")
LINKED = Counted(
    "1 digital object linked by its address (nothing downloaded).",
    "{n} digital objects linked by their addresses (nothing downloaded).",
)
SKIPPED = Counted("1 skipped", "{n} skipped")
NAMED = Counted(
    "1 of them for a person, place or subject the records name.",
    "{n} of them for the persons, places and subjects the records name.",
)
WITHDRAWN = Counted(
    "1 record withdrawn by the source was removed.",
    "{n} records withdrawn by the source were removed.",
)
STOPPED = Counted(
    "The import stopped: 1 record written.", "The import stopped: {n} records written."
)
IMPORTED = Counted("1 record imported.", "{n} records imported.")
MORE_SKIPPED = Counted("  … and 1 more skipped.", "  … and {n} more skipped.")
"""The counts of the summary, each with its form for one (:class:`~app.core.counted.Counted`;
the translation tables hold both forms)."""


def _t(text: str) -> str:
    return QCoreApplication.translate(CONTEXT, text)


def _count(words: Counted, count: int) -> str:
    """``count`` in ``words`` (the form that agrees with it), in the UI's language, written with
    its locale's thousands separator."""
    return _t(words.template(count)).format(n=QLocale().toString(count))


def summary_text(summary: ImportSummary, section_names: Mapping[str, str] | None = None) -> str:
    """The summary: records created/updated/unchanged, links, media, skips with reasons.

    ``section_names`` maps a section's tipo to its name in the UI language, so the sections
    line names them as the section list does (a tipo missing from it is shown as is).
    """
    names = section_names or {}
    lines = [
        _t(
            "{records} ({created}, {updated}, {unchanged}), {links}, {media}, {skipped}, "
            "in {seconds} s."
        ).format(
            records=_count(RECORDS, summary.records),
            created=_count(CREATED, summary.created),
            updated=_count(UPDATED, summary.updated),
            unchanged=_count(UNCHANGED, summary.unchanged),
            links=_count(LINKS, summary.links),
            media=_count(MEDIA, summary.media),
            skipped=_count(SKIPPED, len(summary.skipped)),
            seconds=QLocale().toString(summary.seconds, "f", 1),
        )
    ]
    if summary.named:
        lines.append(_count(NAMED, summary.named))
    if summary.media_linked:
        lines.append(_count(LINKED, summary.media_linked))
    if summary.deleted:
        lines.append(_count(WITHDRAWN, summary.deleted))
    if summary.sections:
        locale = QLocale()
        parts = [
            f"{names.get(tipo, tipo)}: {locale.toString(count)}"
            for tipo, count in sorted(summary.sections.items())
        ]
        lines.append(_t("Sections: {list}").format(list=", ".join(parts)))
    lines += _skip_lines(summary)
    if summary.error is not None:
        lines.append(error_text(summary.error))
    return "\n".join(lines)


def summary_notice(summary: ImportSummary) -> str:
    """What an import did in a few words, short enough for the status bar beside the index's
    progress (the whole summary is in the window that follows)."""
    if summary.error is not None:
        return _count(STOPPED, summary.records)
    return _count(IMPORTED, summary.records)


def _skip_lines(summary: ImportSummary) -> list[str]:
    if not summary.skipped:
        return []
    lines = [_t("Skipped:")]
    translations = InstalledTranslations()
    for skip in summary.skipped[:SKIPS_LISTED]:
        where = skip_place(skip.file, skip.line)
        lines.append(f"  {where} [{skip.code}] {skip_reason(skip, translations)}")
    more = len(summary.skipped) - SKIPS_LISTED
    if more > 0:
        lines.append(_count(MORE_SKIPPED, more))
    return lines
