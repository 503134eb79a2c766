"""What an import did, in words: counts from the real :class:`ImportSummary`, the first skips
with their reasons in the UI's language (:func:`~app.core.import_report.skip_reason`)."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import QCoreApplication, QLocale

from app.core.archive.importers import ImportSummary
from app.core.import_report import skip_reason
from app.ui.i18n import InstalledTranslations, error_text

SKIPS_LISTED = 10
"""Skips listed one by one (file:line and code); the rest are counted."""
CONTEXT = "ImportSummary"


def _t(text: str) -> str:
    return QCoreApplication.translate(CONTEXT, text)


def summary_text(summary: ImportSummary, section_names: Mapping[str, str] | None = None) -> str:
    """The summary: records created/updated/unchanged, links, media, skips with reasons.

    ``section_names`` maps a section's tipo to its name in the UI language, so the sections
    line names them as the section list does (a tipo missing from it is shown as is).
    """
    names = section_names or {}
    lines = [
        _t(
            "{records} records ({created} new, {updated} updated, {unchanged} unchanged), "
            "{links} links, {media} media, {skipped} skipped, in {seconds} s."
        ).format(
            records=summary.records,
            created=summary.created,
            updated=summary.updated,
            unchanged=summary.unchanged,
            links=summary.links,
            media=summary.media,
            skipped=len(summary.skipped),
            seconds=QLocale().toString(summary.seconds, "f", 1),
        )
    ]
    if summary.deleted:
        lines.append(
            _t("{n} records withdrawn by the source were removed.").format(n=summary.deleted)
        )
    if summary.sections:
        parts = [
            f"{names.get(tipo, tipo)}: {count}" for tipo, count in sorted(summary.sections.items())
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
        return _t("The import stopped: {n} records written.").format(n=summary.records)
    if summary.records == 1:
        return _t("1 record imported.")
    return _t("{n} records imported.").format(n=summary.records)


def _skip_lines(summary: ImportSummary) -> list[str]:
    if not summary.skipped:
        return []
    lines = [_t("Skipped:")]
    translations = InstalledTranslations()
    for skip in summary.skipped[:SKIPS_LISTED]:
        where = f"{skip.file}:{skip.line}" if skip.file else str(skip.line)
        lines.append(f"  {where} [{skip.code}] {skip_reason(skip, translations)}")
    more = len(summary.skipped) - SKIPS_LISTED
    if more > 0:
        lines.append(_t("  … and {n} more skipped.").format(n=more))
    return lines
