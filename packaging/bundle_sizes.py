"""Print a bundle's size unpacked and packed, and its ten largest parts.

Usage: ``python packaging/bundle_sizes.py BUNDLE_DIR [ARCHIVE ...]``. A *part* is a package
folder (``_internal/torch``, ``_internal/PySide6``, …) or a file directly in the bundle; the
ten largest files are listed as well, since one library often dominates a package.
"""

from __future__ import annotations

import sys
from pathlib import Path

MB = 1_000_000


def tree_size(path: Path) -> int:
    """Bytes under ``path`` (symlinks counted as links, not followed)."""
    if path.is_symlink() or path.is_file():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_symlink() or p.is_file())


def parts(bundle: Path) -> list[tuple[int, str]]:
    """Package folders and loose files of the bundle, largest first."""
    roots = [bundle / "_internal"] if (bundle / "_internal").is_dir() else []
    entries = [p for p in bundle.iterdir() if p.name != "_internal"]
    for root in roots:
        entries += list(root.iterdir())
    sized = [(tree_size(p), str(p.relative_to(bundle))) for p in entries]
    return sorted(sized, reverse=True)


def largest_files(bundle: Path, count: int = 10) -> list[tuple[int, str]]:
    """The ``count`` largest files anywhere in the bundle."""
    files = [p for p in bundle.rglob("*") if p.is_file() and not p.is_symlink()]
    sized = sorted(((p.stat().st_size, str(p.relative_to(bundle))) for p in files), reverse=True)
    return sized[:count]


def main(argv: list[str]) -> int:
    """Print the size report for ``argv[0]`` (a bundle folder) and any packed files after it."""
    bundle = Path(argv[0])
    total = tree_size(bundle)
    print(f"unpacked: {total / MB:8.1f} MB  {bundle}")
    for packed in map(Path, argv[1:]):
        print(f"packed:   {packed.stat().st_size / MB:8.1f} MB  {packed.name}")
    print("ten largest parts:")
    for size, name in parts(bundle)[:10]:
        print(f"  {size / MB:8.1f} MB  {100 * size / total:5.1f}%  {name}")
    print("ten largest files:")
    for size, name in largest_files(bundle):
        print(f"  {size / MB:8.1f} MB  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
