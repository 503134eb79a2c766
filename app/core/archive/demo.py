"""The demo archive: built from ``resources/demo/`` into the user's data folder on first run.

The sources are JSON: ``schema.json`` (sections and their fields) and ``records/<tipo>.json``
(records with explicit ids). A record's value is written compactly and expanded here by the
field's kind:

* a relation is ``"tipo/id"`` or a list of them, expanded to locators;
* a ``{"lg-cat": ..., "lg-eng": ...}`` mapping gives one item per language;
* any other value (text, number, date, ``{"lat", "lon"}``) is one language-neutral item;
* a media field names a file under ``resources/demo/media/``, attached with
  :func:`~app.core.archive.media.add_media` (so it gets a thumbnail and dimensions);
* ``"$template": NAME`` starts the record from the file's ``templates[NAME]``.

The archive is built in a hidden sibling folder and renamed into place only when complete, so a
crash mid-build never leaves a folder with an ``archive.db`` that looks finished.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core import paths
from app.core.archive.bulk import NewRecord
from app.core.archive.media import add_media
from app.core.archive.model import NEUTRAL_LANG, Field, RecordKey, Section
from app.core.archive.store import DB_NAME, Archive, open_archive
from app.core.errors import ArchiveError
from app.core.phrases import Phrase

DEMO_VERSION_KEY = "demo_version"
STAGING_MARK = ".building-"
STALE_STAGING_S = 3600.0

Items = list[dict[str, Any]]


@dataclass
class DemoSource:
    """The demo archive's sources, read and expanded, ready to write."""

    folder: Path
    version: str
    name: dict[str, str]
    sections: list[Section] = field(default_factory=list)
    fields: list[Field] = field(default_factory=list)
    records: dict[str, list[NewRecord]] = field(default_factory=dict)
    media: list[tuple[RecordKey, str, Path]] = field(default_factory=list)


def demo_source_dir() -> Path:
    """Where the demo archive's sources live (``resources/demo``)."""
    return paths.resources_dir() / "demo"


def ensure_demo_archive(folder: Path) -> Archive:
    """Open the archive in ``folder``, creating the demo archive there first if it has none."""
    folder = Path(folder).expanduser()
    if (folder / DB_NAME).exists():
        return open_archive(folder)
    return create_demo_archive(folder)


def create_demo_archive(folder: Path, *, source: Path | None = None) -> Archive:
    """Build the demo archive into ``folder`` (which must not hold an archive) and open it.

    Raises:
        ArchiveError: ``archive.exists`` when ``folder`` already holds an archive,
            ``archive.folder_not_empty`` when it holds other files, ``archive.demo_missing`` or
            ``archive.demo_invalid`` for bad sources, ``archive.read_only`` when the parent
            folder cannot be written. Nothing is left behind on error.
    """
    folder = Path(folder).expanduser()
    _check_target(folder)
    demo = load_demo_source(source or demo_source_dir())
    staging = _make_staging(folder)
    try:
        archive = open_archive(staging, create=True)
        try:
            write_demo(archive, demo)
        finally:
            archive.close()
        published = _publish(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if not published:  # another process finished first: use its archive
        shutil.rmtree(staging, ignore_errors=True)
    return open_archive(folder)


# -- loading the sources ----------------------------------------------------------------------
def load_demo_source(folder: Path) -> DemoSource:
    """Read ``schema.json`` and ``records/*.json`` and check every reference resolves."""
    schema = _read_json(folder / "schema.json")
    name = _labels(schema.get("name", {}), "schema.json name")
    demo = DemoSource(folder, str(schema.get("demo_version", "1")), name)
    kinds: dict[str, dict[str, Field]] = {}
    for spec in _objects(schema.get("sections"), "schema.json sections"):
        section, fields = _parse_section(spec)
        demo.sections.append(section)
        demo.fields.extend(fields)
        kinds[section.tipo] = {f.tipo: f for f in fields}
    raw = {tipo: _read_records(folder, tipo) for tipo in kinds}
    known = {RecordKey(tipo, _record_id(rec)) for tipo, recs in raw.items() for rec in recs}
    for tipo, recs in raw.items():
        demo.records[tipo] = [
            _expand_record(tipo, rec, kinds[tipo], known, demo, folder) for rec in recs
        ]
    return demo


def _parse_section(spec: Mapping[str, object]) -> tuple[Section, list[Field]]:
    tipo = _text(spec, "tipo", Phrase.of("a section"))
    description = _optional_text(spec, "description", tipo)
    section = Section(
        tipo=tipo,
        labels=_labels(spec.get("labels"), Phrase.of("section {tipo} labels", tipo=tipo)),
        description="" if description is None else description,
        restricted=bool(spec.get("restricted", False)),
        writable=bool(spec.get("writable", False)),
        label_field=_optional_text(spec, "label_field", tipo),
    )
    fields = [
        _parse_field(section.tipo, f, position)
        for position, f in enumerate(_objects(spec.get("fields"), f"{tipo} fields"), start=1)
    ]
    return section, fields


def _parse_field(section_tipo: str, spec: Mapping[str, object], position: int) -> Field:
    where = Phrase.of("a field of {section}", section=section_tipo)
    kind = _optional_text(spec, "kind", where)
    return Field(
        tipo=_text(spec, "tipo", where),
        section_tipo=section_tipo,
        labels=_labels(spec.get("labels"), Phrase.of("{where}: labels", where=where)),
        kind="text" if kind is None else kind,
        multilingual=bool(spec.get("multilingual", False)),
        target_section=_optional_text(spec, "target_section", where),
        position=position,
    )


def _text(spec: Mapping[str, object], key: str, where: str | Phrase) -> str:
    """``spec[key]``, a string that must be there."""
    value = _optional_text(spec, key, where)
    if value is None:
        raise _invalid(Phrase.of("{where}: {key!r} is missing.", where=where, key=key))
    return value


def _optional_text(spec: Mapping[str, object], key: str, where: str | Phrase) -> str | None:
    """``spec[key]``, a string, or ``None`` when absent (or null)."""
    value = spec.get(key)
    if value is not None and not isinstance(value, str):
        raise _invalid(Phrase.of("{where}: {key!r} must be a text.", where=where, key=key))
    return value


def _labels(value: object, where: str | Phrase) -> dict[str, str]:
    """``{lang: label}``."""
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _invalid(Phrase.of("{where} must map languages to texts.", where=where))
    return {str(k): v for k, v in value.items()}


def _objects(value: object, where: str) -> list[Mapping[str, object]]:
    """A list of JSON objects."""
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise _invalid(Phrase.of("{where} must be a list of objects.", where=where))
    return value


def _record_id(rec: Mapping[str, object]) -> int:
    value = rec.get("id")
    if not isinstance(value, int | str) or not str(value).isdigit():
        raise _invalid(Phrase.of("a record's id must be a number, not {value}.", value=repr(value)))
    return int(value)


def _read_records(folder: Path, tipo: str) -> list[dict[str, object]]:
    data = _read_json(folder / "records" / f"{tipo}.json")
    if data.get("section") != tipo:
        raise _invalid(
            Phrase.of(
                "records/{tipo}.json is for section {section}.",
                tipo=tipo,
                section=repr(data.get("section")),
            )
        )
    templates = data.get("templates", {})
    if not isinstance(templates, dict):
        raise _invalid(Phrase.of("records/{tipo}.json: templates must be an object.", tipo=tipo))
    out = []
    for rec in _objects(data.get("records"), f"records/{tipo}.json records"):
        name = rec.get("$template")
        if name is not None and name not in templates:
            raise _invalid(
                Phrase.of(
                    "{record}: unknown template {name}.",
                    record=f"{tipo}/{rec.get('id')}",
                    name=repr(name),
                )
            )
        base = dict(templates[name]) if name is not None else {}
        out.append({**base, **{k: v for k, v in rec.items() if k != "$template"}})
    return out


def _expand_record(
    tipo: str,
    rec: Mapping[str, object],
    fields: dict[str, Field],
    known: set[RecordKey],
    demo: DemoSource,
    folder: Path,
) -> NewRecord:
    key = RecordKey(tipo, _record_id(rec))
    values: dict[str, Items] = {}
    for field_tipo, raw in rec.items():
        if field_tipo == "id":
            continue
        spec = fields.get(field_tipo)
        if spec is None:
            raise _invalid(
                Phrase.of(
                    "{key}: section {tipo} has no field {field!r}.",
                    key=str(key),
                    tipo=tipo,
                    field=field_tipo,
                )
            )
        if spec.kind == "media":
            demo.media.append((key, field_tipo, _media_file(folder, key, raw)))
        elif spec.kind == "relation":
            values[field_tipo] = _relation_items(key, spec, raw, known)
        else:
            values[field_tipo] = _value_items(raw)
    return NewRecord(section_tipo=tipo, values=values, section_id=key.section_id)


def _relation_items(key: RecordKey, spec: Field, raw: Any, known: set[RecordKey]) -> Items:
    items: Items = []
    for ref in raw if isinstance(raw, list) else [raw]:
        try:
            target = RecordKey.parse(str(ref))
        except ValueError as exc:
            raise _invalid(
                Phrase.of("{key} {field}: {why}", key=str(key), field=spec.tipo, why=str(exc))
            ) from exc
        if target not in known or target.section_tipo != spec.target_section:
            raise _invalid(
                Phrase.of(
                    "{key} {field}: {target} is not a {section} record.",
                    key=str(key),
                    field=spec.tipo,
                    target=str(target),
                    section=str(spec.target_section),
                )
            )
        items.append({"lang": NEUTRAL_LANG, "value": target.to_locator()})
    return items


def _value_items(raw: Any) -> Items:
    if isinstance(raw, dict) and raw and all(str(k).startswith("lg-") for k in raw):
        return [{"lang": lang, "value": value} for lang, value in raw.items()]
    return [{"lang": NEUTRAL_LANG, "value": raw}]


def _media_file(folder: Path, key: RecordKey, raw: Any) -> Path:
    path = folder / "media" / str(raw)
    if not path.is_file():
        raise _invalid(
            Phrase.of(
                "{key}: media file {raw} is missing from {folder}.",
                key=str(key),
                raw=repr(raw),
                folder=str(folder / "media"),
            )
        )
    return path


def _read_json(path: Path) -> dict[str, object]:
    try:
        with path.open(encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError as exc:
        raise ArchiveError(
            "archive.demo_missing",
            Phrase.of("The demo archive's sources are missing ({path}).", path=str(path)),
            hint="Reinstall Arxiu, or open an existing archive with --archive.",
        ) from exc
    except (OSError, json.JSONDecodeError) as exc:
        raise _invalid(
            Phrase.of("{name} cannot be read: {error}", name=path.name, error=str(exc))
        ) from exc
    if not isinstance(data, dict):
        raise _invalid(Phrase.of("{name} must hold a JSON object.", name=path.name))
    return data


def _invalid(message: str | Phrase) -> ArchiveError:
    return ArchiveError(
        "archive.demo_invalid",
        Phrase.of("The demo archive's sources are invalid: {why}", why=message),
        hint="This is a packaging bug; report it.",
        category="internal",
    )


# -- writing ----------------------------------------------------------------------------------
def write_demo(archive: Archive, demo: DemoSource) -> None:
    """Write the sections, fields, records, media and meta of ``demo`` into ``archive``."""
    for section in demo.sections:
        archive.put_section(section)
    for spec in demo.fields:
        archive.put_field(spec)
    for records in demo.records.values():
        archive.upsert_records(records, source="demo")
    for key, field_tipo, path in demo.media:
        add_media(archive, key, field_tipo, path)
    archive.set_meta("name", demo.name.get("lg-eng") or next(iter(demo.name.values()), "Demo"))
    archive.set_meta("name_i18n", json.dumps(demo.name, ensure_ascii=False))
    archive.set_meta(DEMO_VERSION_KEY, demo.version)  # written last: the build is complete


# -- the staging folder -----------------------------------------------------------------------
def _check_target(folder: Path) -> None:
    if (folder / DB_NAME).exists():
        raise ArchiveError(
            "archive.exists",
            Phrase.of(
                "There is already an archive in {folder}; the demo archive was not created.",
                folder=str(folder),
            ),
            hint="Open it instead, or choose an empty folder.",
            category="conflict",
        )
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ArchiveError(
            "archive.folder_not_empty",
            Phrase.of(
                "{folder} is not empty and holds no archive; the demo archive was not created.",
                folder=str(folder),
            ),
            hint="Choose an empty folder, or move its files elsewhere.",
            category="input",
        )


def _make_staging(folder: Path) -> Path:
    parent = folder.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        _sweep_stale_staging(parent, folder.name)
        staging = parent / f".{folder.name}{STAGING_MARK}{os.getpid()}-{secrets.token_hex(4)}"
        staging.mkdir()  # honours the umask, unlike tempfile.mkdtemp's 0o700
        return staging
    except OSError as exc:
        raise ArchiveError(
            "archive.read_only",
            Phrase.of(
                "Cannot create the demo archive in {folder}: {error}.",
                folder=str(parent),
                error=str(exc.strerror or exc),
            ),
            hint="Choose a folder you can write to (or set ARXIU_HOME).",
        ) from exc


def _sweep_stale_staging(parent: Path, name: str) -> None:
    """Remove half-built demo folders left by a crash (older than an hour)."""
    cutoff = time.time() - STALE_STAGING_S
    for leftover in parent.glob(f".{name}{STAGING_MARK}*"):
        with contextlib.suppress(OSError):
            if leftover.is_dir() and leftover.stat().st_mtime < cutoff:
                shutil.rmtree(leftover, ignore_errors=True)


def _publish(staging: Path, folder: Path) -> bool:
    """Rename the finished build into place; ``False`` when an archive appeared there first."""
    try:
        if folder.is_dir():
            folder.rmdir()  # only an empty folder (checked before building)
        os.replace(staging, folder)
        return True
    except OSError as exc:
        if (folder / DB_NAME).exists():
            return False
        raise ArchiveError(
            "archive.read_only",
            Phrase.of(
                "Cannot move the demo archive into {folder}: {error}.",
                folder=str(folder),
                error=str(exc.strerror or exc),
            ),
            hint="Check that the folder is writable and not in use.",
        ) from exc
