"""Fixtures of the importer tests: slices of the real datasets written to temporary files."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import shared_data

SliceFn = Callable[[str, int], Path]


def first_lines(source: Path, count: int) -> list[bytes]:
    """The first ``count`` lines of a gzip JSON Lines file."""
    lines: list[bytes] = []
    with gzip.open(source, "rb") as handle:
        for line in handle:
            if len(lines) >= count:
                break
            lines.append(line)
    return lines


def write_gz(target: Path, lines: list[bytes]) -> Path:
    """Write ``lines`` as a gzip file (creating its folder)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(target, "wb") as handle:
        handle.writelines(lines)
    return target


@pytest.fixture
def data_slice(tmp_path: Path) -> SliceFn:
    """``data_slice("tate/artworks.jsonl.gz", 200)``: the first lines of a dataset, in tmp.

    The slice keeps the dataset's folder and file name (``tmp/slices/tate/artworks.jsonl.gz``).
    """

    def make(relative: str, count: int) -> Path:
        source = shared_data(*relative.split("/"))
        return write_gz(tmp_path / "slices" / relative, first_lines(source, count))

    return make
