"""Dezfil runs (seed 004): reserved run ids, the model + effort choice, and its provenance.

``POST /api/assistant/runs`` reserves a run id; the first accepted submission on it binds the
model and effort for the whole run. A choice is checked completely before the run binds and
before anything else happens, with the seed's four codes (each HTTP 400), so a refused
submission leaves the reservation unbound and reusable:

* ``assistant_choice_invalid`` — not an object, other keys than ``model``/``effort``, or a value
  that is not a non-empty string;
* ``assistant_model_not_offered`` — a model this instance does not offer;
* ``assistant_effort_not_supported`` — a named level for a model that has no levels;
* ``assistant_effort_not_offered`` — a level the selected model does not offer.

``"default"`` is accepted for every model and resolves as an omitted effort does; the two
differ only in ``provenance.requested.defaulted``.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.core.errors import ArxiuError
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.models.catalog import Catalog

DEFAULT_EFFORT = "default"
CHOICE_KEYS = frozenset({"model", "effort"})
MAX_RUNS = 4096


class DezfilRefusal(ArxiuError):
    """A Dezfil request refused with one of the seed's codes and its HTTP status."""

    def __init__(
        self,
        code: str,
        message: str | Phrase,
        *,
        status: int = 400,
        hint: str | Phrase | None = None,
    ) -> None:
        super().__init__(code, message, hint=hint or "Check GET /api/assistant.", category="input")
        self.status = status


@dataclass(frozen=True)
class Choice:
    """A checked choice: what was asked and what it resolves to."""

    model: str
    effort: str | None
    """The effort level passed to the model (``None``: the provider's default)."""
    requested_model: str | None
    requested_effort: str | None

    def provenance(self) -> dict[str, Any]:
        """``{requested: {model, effort, defaulted: {model, effort}}, resolved: {...}}``."""
        return {
            "requested": {
                "model": self.requested_model,
                "effort": self.requested_effort,
                "defaulted": {
                    "model": self.requested_model is None,
                    "effort": self.requested_effort is None,
                },
            },
            "resolved": {"model": self.model, "effort": self.effort or DEFAULT_EFFORT},
        }


def check_choice(raw: Any, catalog: Catalog) -> Choice:
    """Resolve a submission's ``choice`` against the catalog.

    Raises:
        DezfilRefusal: one of the four codes of the module docstring.
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping) or set(raw) - CHOICE_KEYS:
        raise DezfilRefusal(
            "assistant_choice_invalid", "choice must be an object with model and effort only."
        )
    model, effort = raw.get("model"), raw.get("effort")
    for value in (model, effort):
        if value is not None and (not isinstance(value, str) or not value):
            raise DezfilRefusal(
                "assistant_choice_invalid", "choice.model and choice.effort must be strings."
            )
    if model is not None and model not in catalog.ids():
        raise DezfilRefusal(
            "assistant_model_not_offered",
            Phrase.of("This instance does not offer the model {model!r}.", model=model),
        )
    entry = catalog.get(model)
    if effort is None or effort == DEFAULT_EFFORT:
        return Choice(entry.id, None, model, effort)
    if not entry.efforts:
        raise DezfilRefusal(
            "assistant_effort_not_supported",
            Phrase.of(
                'The model {model!r} has no effort levels; only "default" is accepted.',
                model=entry.id,
            ),
        )
    if effort not in entry.efforts:
        raise DezfilRefusal(
            "assistant_effort_not_offered",
            Phrase.of(
                "The model {model!r} does not offer the effort {effort!r}.",
                model=entry.id,
                effort=effort,
            ),
        )
    return Choice(entry.id, effort, model, effort)


def offered(catalog: Catalog) -> list[dict[str, Any]]:
    """What this instance offers: each model with its efforts (``"default"`` first)."""
    return [{**entry.public(), "efforts": [DEFAULT_EFFORT, *entry.efforts]} for entry in catalog]


@dataclass
class Run:
    """A reserved run: whose it is, and the choice bound by its first accepted submission."""

    id: str
    user: str
    """The immutable id of the user who reserved it (never the name: see ``User.id``)."""
    choice: Choice | None = None
    pending: set[str] = field(default_factory=set)
    """The pending-action ids its ``confirm_required`` events carried."""


class RunBook:
    """The reserved runs, by id (oldest forgotten past :data:`MAX_RUNS`)."""

    def __init__(self) -> None:
        self._runs: dict[str, Run] = {}
        self._lock = threading.Lock()

    def reserve(self, user: str) -> Run:
        """A new, unbound run of ``user``."""
        run = Run("run_" + secrets.token_urlsafe(16), user)
        with self._lock:
            self._runs[run.id] = run
            while len(self._runs) > MAX_RUNS:
                del self._runs[next(iter(self._runs))]
        return run

    def get(self, user: str, run_id: Any) -> Run:
        """The run ``run_id`` of ``user``.

        Raises:
            DezfilRefusal: ``assistant_run_unknown`` (404) for another user's or no run.
        """
        found = self._runs.get(run_id) if isinstance(run_id, str) else None
        if found is None or found.user != user:
            raise DezfilRefusal(
                "assistant_run_unknown",
                "There is no run with that runId.",
                status=404,
                hint="Reserve one with POST /api/assistant/runs.",
            )
        return found

    def bind(self, run: Run, choice: Choice) -> bool:
        """Bind ``run`` to ``choice`` unless it is bound already; whether this call bound it."""
        with self._lock:
            if run.choice is not None:
                return False
            run.choice = choice
            return True

    def owner_of(self, pending_id: str) -> str | None:
        """The user whose run raised the confirmation ``pending_id`` (``None``: not known here)."""
        with self._lock:
            for run in self._runs.values():
                if pending_id in run.pending:
                    return run.user
        return None
