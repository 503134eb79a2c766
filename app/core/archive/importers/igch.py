"""Importer of the Inventory of Greek Coin Hoards (``igch/hoards.jsonl.gz``) into ``igch1``.

IGCH is licensed for non-commercial use: import it for tests and benchmarks, never ship it.
Source ``igch``, external id = the hoard id (``igch0052``).

Fields of section ``igch1`` "Greek coin hoards (IGCH)":

======  ====================  ========  ==========================================================
tipo    label                 kind      value
======  ====================  ========  ==========================================================
igch2   IGCH number           text      ``IGCH 0052``
igch3   title                 text      heading: number, find-spot, date found (English)
igch4   entry                 text      the whole free-text entry (English)
igch5   find spot             geo       ``{"lat", "lon"}``
igch6   burial                text      burial date as written (``c. 264 B.C. (Franke)``)
igch7   closing date (start)  number    year, negative = BC
igch8   closing date (end)    number    year, negative = BC
igch9   mints                 relation  nomisma concepts (section ``nomisma1``)
igch10  mint URIs             iri       every mint as a nomisma URI, resolved or not
igch11  URI                   iri       ``http://coinhoards.org/id/igch0052``
======  ====================  ========  ==========================================================

Mints are linked to the records the nomisma importer made (source ``nomisma``). A mint slug that
is not in the archive (nomisma not imported yet, or one of the 38 slugs IGCH spells but nomisma
lacks) is **left unresolved and counted** in the summary; its URI is still kept in ``igch10``.
No placeholder mint records are created, so the archive never holds concepts that nomisma does
not define. Import nomisma first, or import IGCH again after it: the second run adds the links.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.archive.bulk import NewRecord
from app.core.archive.importers.base import (
    Built,
    ImportSummary,
    ProgressFn,
    Values,
    ensure_schema,
    external_keys,
    geo,
    import_file,
    put,
    schema_field,
    section_schema,
)
from app.core.archive.importers.nomisma import SECTION as NOMISMA_SECTION
from app.core.archive.importers.nomisma import SOURCE as NOMISMA_SOURCE
from app.core.archive.importers.nomisma import URI_PREFIX as NOMISMA_URI
from app.core.archive.importers.reading import (
    dataset_file,
    opt_int,
    opt_num,
    opt_str,
    require_id,
    str_list,
)
from app.core.archive.model import RecordKey
from app.core.json_types import JsonObject

if TYPE_CHECKING:
    from app.core.archive.store import Archive

SOURCE = "igch"
SECTION = "igch1"
FILE_NAME = "hoards.jsonl.gz"
URI_PREFIX = "http://coinhoards.org/id/"


_f = functools.partial(schema_field, SECTION)


SCHEMA = section_schema(
    SECTION,
    (
        "Greek coin hoards (IGCH)",
        "Tresors de monedes gregues (IGCH)",
        "Tesoros de monedas griegas (IGCH)",
    ),
    "Inventory of Greek Coin Hoards (IGCH), American Numismatic Society, "
    "coinhoards.org, CC BY-NC 3.0: internal tests and benchmarks only.",
    label_field="igch3",
    fields=(
        _f("igch2", ("IGCH number", "Número IGCH", "Número IGCH")),
        _f("igch3", ("Title", "Títol", "Título"), multilingual=True),
        _f("igch4", ("Entry", "Entrada", "Entrada"), multilingual=True),
        _f("igch5", ("Find spot", "Lloc de la troballa", "Lugar del hallazgo"), "geo"),
        _f("igch6", ("Burial", "Ocultació", "Ocultación"), multilingual=True),
        _f(
            "igch7",
            ("Closing date (start)", "Data de tancament (inici)", "Fecha de cierre (inicio)"),
            "number",
        ),
        _f(
            "igch8",
            ("Closing date (end)", "Data de tancament (fi)", "Fecha de cierre (fin)"),
            "number",
        ),
        _f("igch9", ("Mints", "Seques", "Cecas"), "relation", target_section=NOMISMA_SECTION),
        _f("igch10", ("Mint URIs", "URI de les seques", "URI de las cecas"), "iri"),
        _f("igch11", ("URI", "URI", "URI"), "iri"),
    ),
)


def import_igch(archive: Archive, path: Path, progress: ProgressFn | None = None) -> ImportSummary:
    """Import IGCH hoards from ``path`` (the file or the ``igch`` folder)."""
    path = dataset_file(path, FILE_NAME)
    ensure_schema(archive, SCHEMA)
    mints = external_keys(archive, NOMISMA_SOURCE)
    summary = ImportSummary(kind="igch", path=str(path))
    build = functools.partial(build_hoard, mints=mints)
    return import_file(archive, summary, path, SOURCE, build, progress=progress)


def build_hoard(row: JsonObject, mints: dict[str, RecordKey]) -> Built:
    """One hoard row as a record (raises ``BadRow`` on a malformed row)."""
    hoard_id = require_id(row)
    values: Values = {}
    put(values, "igch2", opt_str(row, "label"))
    put(values, "igch3", opt_str(row, "title") or opt_str(row, "label") or hoard_id, "lg-eng")
    put(values, "igch4", opt_str(row, "text"), "lg-eng")
    put(values, "igch5", geo(opt_num(row, "lat"), opt_num(row, "long")))
    put(values, "igch6", opt_str(row, "burial"), "lg-eng")
    put(values, "igch7", opt_int(row, "closing_start"))
    put(values, "igch8", opt_int(row, "closing_end"))
    resolved, unresolved = 0, []
    for slug in dict.fromkeys(str_list(row, "mints")):
        put(values, "igch10", NOMISMA_URI + slug)
        key = mints.get(slug)
        if key is None:
            unresolved.append(slug)
        else:
            put(values, "igch9", key.to_locator())
            resolved += 1
    put(values, "igch11", opt_str(row, "uri") or URI_PREFIX + hoard_id)
    return Built(NewRecord(SECTION, values, external_id=hoard_id), resolved, tuple(unresolved))
