"""Resource lookup for each kind of install: frozen bundle, wheel, source tree."""

from __future__ import annotations

from pathlib import Path

from app.core import paths


def _layout(root: Path, *folders: str) -> Path:
    """A fake install under ``root`` with ``app/core/paths.py`` and the given folders."""
    module = root / "app" / "core" / "paths.py"
    module.parent.mkdir(parents=True)
    module.write_text("")
    for folder in folders:
        (root / folder).mkdir(parents=True)
    return module


def test_source_tree_uses_top_level_resources(tmp_path: Path) -> None:
    module = _layout(tmp_path, "resources")
    assert paths.find_resources(module) == tmp_path / "resources"


def test_wheel_uses_package_resources_first(tmp_path: Path) -> None:
    module = _layout(tmp_path, "app/resources", "resources")
    assert paths.find_resources(module) == tmp_path / "app" / "resources"


def test_frozen_bundle_uses_bundle_root(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    (bundle / "app" / "resources").mkdir(parents=True)
    module = _layout(tmp_path / "elsewhere", "resources")
    assert paths.find_resources(module, str(bundle)) == bundle / "app" / "resources"


def test_frozen_bundle_without_resources_falls_back(tmp_path: Path) -> None:
    module = _layout(tmp_path, "app/resources")
    assert paths.find_resources(module, str(tmp_path / "empty")) == tmp_path / "app" / "resources"


def test_missing_everywhere_names_the_source_folder(tmp_path: Path) -> None:
    module = _layout(tmp_path)
    assert paths.find_resources(module) == tmp_path / "resources"


def test_this_checkout_finds_its_demo_and_translations() -> None:
    found = paths.resources_dir()
    assert (found / "demo" / "schema.json").is_file()
    assert (found / "i18n" / "ca.json").is_file()
