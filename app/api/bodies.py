"""Request bodies, parsed the same way by every dialect: JSON, bounded depth, clean text, ids.

:func:`parse_body` turns a body into JSON or a coded refusal (HTTP 400), before any handler
walks it:

* not JSON (or not UTF-8): ``request.invalid``;
* nested deeper than :data:`MAX_JSON_DEPTH` (a recursive walk further in would fail):
  ``request.json_too_deep``;
* a string (or key) holding a lone UTF-16 surrogate (``"\\ud800"`` is valid JSON but not text
  any model, file or log can take): ``request.invalid`` naming where;
* an id (``section_id``, ``id``...) SQLite's 64-bit INTEGER cannot hold:
  ``archive.id_out_of_range`` (:mod:`app.core.archive.ids`).
"""

from __future__ import annotations

import json
from typing import Any

from app.core.archive.ids import check_ids, lone_surrogate_at
from app.core.errors import ArxiuError
from app.core.phrases import Phrase

MAX_JSON_DEPTH = 64
"""The most objects and arrays a body may nest (a change plan needs about 10)."""


def too_deep() -> ArxiuError:
    """``request.json_too_deep``."""
    return ArxiuError(
        "request.json_too_deep",
        Phrase.of("The body is nested deeper than {depth} levels.", depth=MAX_JSON_DEPTH),
        hint="Send a flatter JSON body.",
        category="input",
        details={"max_depth": MAX_JSON_DEPTH},
    )


def not_json(message: str | Phrase = "The body is not JSON.") -> ArxiuError:
    """``request.invalid`` for a body that is not (UTF-8) JSON."""
    return ArxiuError(
        "request.invalid",
        message,
        hint="Send a JSON object, encoded as UTF-8.",
        category="input",
        details={"field": "body"},
    )


def lone_surrogate(where: str) -> ArxiuError:
    """``request.invalid`` for text that holds a lone surrogate."""
    return ArxiuError(
        "request.invalid",
        Phrase.of(
            "{where} holds a lone surrogate (\\ud800–\\udfff), which is not text.",
            where=where or Phrase.of("The body"),
        ),
        hint="Send the text as valid Unicode.",
        category="input",
        details={"field": where or "body"},
    )


def check_shape(value: Any) -> None:
    """Refuse ``value`` nested too deep or holding a lone surrogate (iteratively)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list) and depth >= MAX_JSON_DEPTH:
            raise too_deep()
        if isinstance(item, dict):
            stack.extend((inner, depth + 1) for inner in item.values())
        elif isinstance(item, list):
            stack.extend((inner, depth + 1) for inner in item)
    where = lone_surrogate_at(value)
    if where is not None:
        raise lone_surrogate(where)


def parse_body(raw: bytes, empty: Any = None) -> Any:
    """The body as JSON (``empty`` for an empty body), checked by :func:`check_shape` and for
    ids out of range.

    Raises:
        ArxiuError: ``request.invalid``, ``request.json_too_deep`` or
            ``archive.id_out_of_range``.
    """
    if not raw:
        return empty
    try:
        data = json.loads(raw)
    except RecursionError as error:
        raise too_deep() from error
    except (ValueError, UnicodeDecodeError) as error:
        raise not_json() from error
    check_shape(data)
    check_ids(data)
    return data
