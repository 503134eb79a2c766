"""The app's settings file (``settings.json`` in the config folder; never holds secrets)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core import paths

if TYPE_CHECKING:
    from app.core.session import AssistantSettings

log = logging.getLogger(__name__)

DEFAULTS: dict[str, Any] = {
    "language": None,
    "write_mode": True,  # the app-wide switch; each archive's own write_allowed is off by default
    "external_content": False,
    "index_model": "all-MiniLM-L6-v2",
    "last_model": None,
}


class AppSettings:
    """Read and write ``settings.json``; unknown keys are kept as they are."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.settings_file()
        self._data: dict[str, Any] = dict(DEFAULTS)
        self._data.update(self._read())

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            log.warning("settings file %s unreadable, using defaults: %s", self.path, error)
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, key: str) -> Any:
        """A setting (its default when unset)."""
        return self._data.get(key, DEFAULTS.get(key))

    def set(self, key: str, value: Any) -> None:
        """Change a setting and save the file."""
        self._data[key] = value
        self.save()

    def save(self) -> None:
        """Write the file atomically."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self._data, indent=2, ensure_ascii=False), "utf-8")
        temporary.replace(self.path)

    def assistant_settings(
        self, lang: str, current: AssistantSettings | None = None
    ) -> AssistantSettings:
        """The assistant's settings this file holds, for a session whose tools label in
        ``lang``; what the file does not hold is kept from ``current``."""
        import dataclasses

        from app.core.session import AssistantSettings

        return dataclasses.replace(
            current or AssistantSettings(),
            write_allowed=bool(self.get("write_mode")),
            external_content=bool(self.get("external_content")),
            lang=lang,
        )
