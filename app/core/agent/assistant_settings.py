"""The assistant's settings: write mode, privacy and the UI language the tools label in."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AssistantSettings:
    """The assistant's settings (privacy and write mode)."""

    write_allowed: bool = True
    """The app's write mode switch; writes also need the archive's own ``write_allowed``."""
    external_content: bool = False
    """Whether record content may reach external models at all (never restricted content)."""
    lang: str = "lg-eng"
    can_read_restricted: bool = True
    """Whether the person reading the answers may see restricted records (an API user without
    that permission: the egress gate then treats every run like one on an external model)."""

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> AssistantSettings:
        """Read the known keys of a settings mapping, ignoring the rest."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})
