"""``arxiu import KIND PATH``: import a dataset into an archive (filled in by the importers)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``import`` command."""
    sub.add_parser("import", help="import a dataset (nomisma, igch, tate, poilus, beir)")
