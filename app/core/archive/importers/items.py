"""Values built in their stored form, for the importers of large sets (EAD, Tate).

:func:`~app.core.archive.importers.base.put` adds ``{"lang", "value"}`` items, and every bulk
upsert then copies each of them into ``{"id", "lang", "value"}``
(:func:`~app.core.archive.records.normalize_values`). The functions here add the item in that
form at once, ``id`` its position in the field, which
:func:`~app.core.archive.bulk_plan.normal_values` keeps as it is: the stored record is the same
(``normalize_values`` numbers items by position), one copy of every item fewer. A field whose
items are later removed or reordered must not be built with them (its ids would no longer be
positions); the importers using them only ever append. A field they start is a
:class:`~app.core.archive.bulk_plan.NormalItems`, which the bulk upsert takes without walking
its items.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.core.archive.bulk_plan import NormalItems
from app.core.archive.model import NEUTRAL_LANG
from app.core.archive.records import Values


def put(values: Values, field_tipo: str, value: Any, lang: str = NEUTRAL_LANG) -> None:
    """Add one item to ``values[field_tipo]`` unless ``value`` is ``None`` (as ``base.put``)."""
    if value is None:
        return
    items = values.get(field_tipo)
    lang = lang or NEUTRAL_LANG
    if items is None:
        values[field_tipo] = NormalItems(({"id": 1, "lang": lang, "value": value},))
    else:
        items.append({"id": len(items) + 1, "lang": lang, "value": value})


def put_many(
    values: Values, field_tipo: str, items: Iterable[Any], lang: str = NEUTRAL_LANG
) -> None:
    """Add several items, ``None`` ones left out (as ``base.put_many``)."""
    found = values.get(field_tipo)
    start = len(found) if found is not None else 0
    new = [value for value in items if value is not None]
    if not new:
        return
    lang = lang or NEUTRAL_LANG
    numbered = [{"id": n, "lang": lang, "value": v} for n, v in enumerate(new, start + 1)]
    if found is None:
        values[field_tipo] = NormalItems(numbered)
    else:
        found.extend(numbered)
