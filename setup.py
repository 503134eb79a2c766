"""Package list for setuptools (the rest of the build configuration is in pyproject.toml).

pyproject.toml cannot add mapped packages next to discovered ones, so it is done here: every
``app`` package, plus ``app.resources`` and its folders, which ``[tool.setuptools.package-dir]``
maps onto the top-level ``resources/`` folder, so the wheel carries it as ``app/resources``
(demo archive, translations, icons). Listing each folder keeps setuptools from warning that data
folders are "absent from the packages configuration".
"""

from pathlib import Path

from setuptools import find_packages, setup

RESOURCES = Path(__file__).resolve().parent / "resources"
RESOURCE_FOLDERS = sorted(
    ".".join(("app.resources", *folder.relative_to(RESOURCES).parts))
    for folder in RESOURCES.rglob("*")
    if folder.is_dir() and "__pycache__" not in folder.parts
)

setup(packages=[*find_packages(include=["app", "app.*"]), "app.resources", *RESOURCE_FOLDERS])
