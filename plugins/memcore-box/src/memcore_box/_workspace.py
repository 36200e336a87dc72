"""A new Box-memory workspace (box-init steps 4-6): config, folders, empty indexes, rollup."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memcore.errors import ConfigError
from memcore.models import utc_now
from memcore.storage import CREATE, Storage, join
from memcore_box._json import dumps_json
from memcore_box.index import INDEX_FILE, build_index, build_rollup
from memcore_box.mapping import format_timestamp
from memcore_box.validate import check_team

__all__ = ["CONFIG_FILE", "init_workspace"]

#: The workspace config at the root (every schema field; unknown fields kept).
CONFIG_FILE = "_box-memory.json"


def init_workspace(storage: Storage, *, location: str = "", **options: Any) -> None:
    """Create a workspace on ``storage``: config, folders, empty indexes, rollup (idempotent).

    See :meth:`memcore_box.provider.BoxMemoryProvider.init_store` for the options.
    """

    def as_list(value: Any, default: list[str]) -> list[str]:
        if value is None:
            return default
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return [str(v) for v in value]

    default_team = str(options.get("default_team") or "default")
    teams = as_list(options.get("teams"), [default_team])
    if default_team not in teams:
        teams.insert(0, default_team)
    for number, team in enumerate(teams):
        check_team(team, teams[:number])
    layout = str(options.get("companion_layout") or "sibling")
    if layout not in {"sibling", "folder"}:
        raise ConfigError(f"box: companion_layout must be 'sibling' or 'folder', not {layout!r}")
    root = storage.make_folder("")
    folder_ids: dict[str, Any] = {"root": root.id}
    for name in ("memories", "files", "companions", "teams"):
        folder_ids[name] = storage.make_folder(name).id
    for team in teams:
        for sub in ("root", "memories", "files", "companions"):
            path = join("teams", team) if sub == "root" else join("teams", team, sub)
            folder_ids[f"team_{team}_{sub}"] = storage.make_folder(path).id
    now = format_timestamp(utc_now())
    tier = str(options.get("tier") or "unknown")
    if not storage.exists(CONFIG_FILE):
        name = str(options.get("workspace_name") or Path(location).name or "box-memory")
        config: dict[str, Any] = {
            "version": 1,
            "schema_version": 1,
            "workspace_name": name,
            "workspace_root_id": root.id,
            "workspace_type": "folder",
            "created_at": now,
            "updated_at": now,
            "tier": tier,
            "tier_detected_at": now,
            "capabilities": {
                "custom_metadata_templates": False,
                "template_create_permission": False,
                "body_search": False,
                "max_file_size_mb": None,
                "storage_unlimited": False,
                "box_sign": False,
                "retention_policies": False,
                "legal_holds": False,
                "keysafe": False,
                "compliance": [],
            },
            "metadata_template_key": None,
            "metadata_template_created_at": None,
            "teams": teams,
            "agents": as_list(options.get("agents"), []),
            "settings": {
                "default_team": default_team,
                "companion_layout": layout,
                "include_superseded_in_recall": False,
                "rebuild_index_on_drift": True,
                "ai_recall_enabled": False,
                "ai_extract_enabled": False,
                "ai_studio_agent_enabled": False,
                "ai_model": None,
                "compliance_target": None,
            },
            "folder_ids": folder_ids,
        }
        storage.write(CONFIG_FILE, dumps_json(config), expected_version=CREATE)
    seeded: list[tuple[str, str | None, str | None, dict[str, Any]]] = []
    for path in ["memories", *(join("teams", t, "memories") for t in teams)]:
        index_path = join(path, INDEX_FILE)
        if storage.exists(index_path):
            continue
        data = build_index([], folder_id=storage.stat(path).id, folder_path=path + "/", updated_at=now, tier=tier)
        item = storage.write(index_path, dumps_json(data), expected_version=CREATE)
        seeded.append((path + "/", data["folder_id"], item.id, data))
    if not storage.exists(INDEX_FILE):
        rollup = build_rollup(seeded, folder_id=root.id, updated_at=now, tier=tier)
        storage.write(INDEX_FILE, dumps_json(rollup), expected_version=CREATE)


def init_workspace_like(storage: Storage, source: Storage, *, location: str = "", **options: Any) -> list[str]:
    """Create a workspace on ``storage`` whose ``_box-memory.json`` is the one of ``source``, byte for byte.

    The workspace config holds no memory: a same-format migration into a new workspace keeps
    the source's (its name, tier, teams, settings, unknown fields) instead of a new one. The
    folders and empty indexes are then made as :func:`init_workspace` makes them (box-init
    steps 4-6), for the teams the options name.

    Returns:
        One sentence when ``source`` has no config to copy (memcore's new one was written).

    Raises:
        ConfigError: A team or layout option is invalid.
        OSError: A file cannot be read or written.
    """
    notes: list[str] = []
    if source.exists(CONFIG_FILE):
        data, _version = source.read(CONFIG_FILE)
        storage.make_folder("")
        storage.write(CONFIG_FILE, data, expected_version=CREATE)
    else:
        notes.append(f"box: the source workspace has no {CONFIG_FILE}; memcore's new one was written")
    init_workspace(storage, location=location, **options)
    return notes
