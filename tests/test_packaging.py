"""Packaging metadata that must agree across the distributions of this checkout."""

from __future__ import annotations

import re
import tomllib

from tests.conftest import REPO

from memcore.registry import BUILTIN_DISTRIBUTIONS

PROJECTS = [REPO, *sorted((REPO / "plugins").glob("memcore-*")), REPO / "conformance"]


def _project(folder):  # type: ignore[no-untyped-def]
    return tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _name(req: str) -> str:
    return re.split(r"[\s\[<>=~!;]", req, maxsplit=1)[0].lower().replace("_", "-").replace(".", "-")


def test_every_distribution_is_in_the_memcore_unified_family_with_its_own_license_and_readme() -> None:
    license_text = (REPO / "LICENSE").read_bytes()
    for folder in PROJECTS:
        project = _project(folder)
        assert project["name"].startswith("memcore-unified"), folder
        assert project["license-files"] == ["LICENSE"] and project["readme"] == "README.md", folder
        assert (folder / "LICENSE").read_bytes() == license_text, f"{folder}/LICENSE differs from the root LICENSE"
        assert (folder / "README.md").is_file(), folder


def test_internal_dependencies_are_compatible_release_bounded() -> None:
    for folder in PROJECTS:
        project = _project(folder)
        reqs = list(project["dependencies"]) + [
            r for extra in project.get("optional-dependencies", {}).values() for r in extra
        ]
        for req in reqs:
            if _name(req).startswith("memcore"):
                assert "~=" in req and _name(req).startswith("memcore-unified"), f"{folder.name}: {req}"


def test_constraints_lowest_pins_every_floor_and_only_floors() -> None:
    pins = {}
    for line in (REPO / "constraints-lowest.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[_name(name)] = version.strip()
    floors: dict[str, set[str]] = {}
    for folder in PROJECTS:
        project = _project(folder)
        reqs = list(project["dependencies"]) + [
            r for extra in project.get("optional-dependencies", {}).values() for r in extra
        ]
        for req in reqs:
            m = re.search(r">=\s*([\w.]+)", req)
            if m and not _name(req).startswith("memcore"):
                floors.setdefault(_name(req), set()).add(m.group(1))
    assert all(len(v) == 1 for v in floors.values()), f"one floor per dependency across distributions: {floors}"
    assert set(pins) == set(floors)
    for name, (floor,) in floors.items():
        pinned = pins[name].split(".")
        assert pinned[: len(floor.split("."))] == floor.split(".") or pins[name] == floor, (name, floor, pins[name])


def test_registry_install_hints_name_the_plugin_distributions() -> None:
    names = {_project(folder)["name"] for folder in PROJECTS}
    for dist, extra in BUILTIN_DISTRIBUTIONS.values():
        assert dist.removesuffix("[cloud]") in names
        assert (REPO / "plugins" / f"memcore-{extra}").is_dir()
