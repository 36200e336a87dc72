"""The Box-memory provider on Box's cloud: format ``box+cloud``, store URL ``box+cloud:<folder id>``.

The same provider as ``box`` (:class:`~memcore_box.provider.BoxMemoryProvider`), with its
storage swapped for :class:`~memcore_box.cloud.CloudStorage` (configuration only: see
:mod:`memcore_box.cloud`), companions found by Box file id, and ``search`` answered by Box's
metadata query when the workspace has the ``boxMemory`` template (issue 6).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from memcore.errors import ParseError
from memcore.models import Kind, MemoryEntry, Query, Status
from memcore.provider import Capability
from memcore.storage import Storage
from memcore_box._json import dumps_json, loads_json
from memcore_box._parse import _File
from memcore_box.cloud import CloudConfig, CloudStorage
from memcore_box.mapping import box_kind, box_status
from memcore_box.provider import CONFIG_FILE, BoxMemoryProvider

__all__ = ["BoxCloudProvider"]


class BoxCloudProvider(BoxMemoryProvider):
    """Box-memory workspace in a Box folder, through ``box_sdk_gen``.

    Args:
        location: The workspace's Box folder id (``box+cloud:123456``).
        storage: A storage to use instead of one built from the configuration (tests).
        **options: Endpoint and retry options of :meth:`CloudConfig.from_env` (``api_url``,
            ``upload_url``, ``oauth_url``, ``retry_attempts``, ``retry_base_delay``,
            ``retry_max_delay``, ``conflict_retries``, ``page_size``, ``jwt_config``) plus the
            local provider's (``agent``). Credentials come from the environment only.

    Raises:
        ConfigError: No credentials, or ``location`` is not a folder id.
    """

    format_name: ClassVar[str] = "box+cloud"
    capabilities: ClassVar[frozenset[Capability]] = BoxMemoryProvider.capabilities | {Capability.REMOTE}
    #: endpoints, retries, credentials files and more (CloudConfig.from_env): not checked here
    option_names: ClassVar[frozenset[str] | None] = None

    @classmethod
    def storage_for(cls, location: str, **options: Any) -> Storage:
        """Return a :class:`CloudStorage` on the folder ``location``, configured from ``options`` + env."""
        return CloudStorage(location, config=CloudConfig.from_env(options))

    @classmethod
    def sniff(cls, path: Path) -> bool:
        """A Box folder is never a local path: always ``False``."""
        return False

    @classmethod
    def init_store(cls, location: str, **options: Any) -> None:
        """Create the workspace in the Box folder ``location`` (folders, config, indexes).

        Args:
            location: The Box folder id.
            **options: As :meth:`BoxMemoryProvider.init_store`, plus ``metadata_template_key``
                (e.g. ``boxMemory``): record that the enterprise has that metadata template, so
                every memory written gets an instance and search uses metadata queries.
        """
        given = options.pop("storage", None)
        storage = given if given is not None else cls.storage_for(location, **options)
        try:
            template = options.pop("metadata_template_key", None)
            cls.initialize(storage, location=location, **options)
            if template:
                data, version = storage.read(CONFIG_FILE)
                config = loads_json(data)
                if not isinstance(config, dict):
                    raise ParseError(f"box+cloud: {CONFIG_FILE} is not a JSON object", path=CONFIG_FILE)
                if config.get("metadata_template_key") != template:
                    config["metadata_template_key"] = str(template)
                    caps = config.get("capabilities")
                    if isinstance(caps, dict):
                        caps["custom_metadata_templates"] = True
                    storage.write(CONFIG_FILE, dumps_json(config), expected_version=version)
        finally:
            if given is None and isinstance(storage, CloudStorage):
                storage.close()

    def close(self) -> None:
        """Forget cached state and close the HTTP session (reopening builds a new one)."""
        super().close()
        if isinstance(self.storage, CloudStorage):
            self.storage.close()

    def binary_path(self, file_id: str, near: str) -> str | None:
        """Return the workspace path of the binary with Box file id ``file_id`` (``None`` if elsewhere)."""
        if isinstance(self.storage, CloudStorage) and file_id.isdigit():
            return self.storage.path_of(file_id)
        return super().binary_path(file_id, near)

    def add_companion(
        self,
        binary: str,
        entry: MemoryEntry | None = None,
        *,
        reviewed_by: str | None = None,
    ) -> MemoryEntry:
        """Write a companion for the binary at workspace path ``binary``, keyed by its Box file id.

        As :meth:`BoxMemoryProvider.add_companion` (hash from Box: ``sha1``, the schema's
        fallback algorithm; size; mime type), then ``companion_for.file_id`` is set to the
        binary's Box file id, as the schema wants on Box.

        Raises:
            FileNotFoundError: No file at ``binary``.
        """
        stored = super().add_companion(binary, entry, reviewed_by=reviewed_by)
        file_id = self.storage.stat(binary).id
        companion = stored.ns("box").get("companion_for")
        if not file_id or not isinstance(companion, dict) or companion.get("file_id") == file_id:
            return stored
        companion["file_id"] = file_id
        return self.update(stored, expected_version=stored.version)

    def search_candidates(self, query: Query) -> list[MemoryEntry] | None:
        """Return the memories Box's metadata query finds for ``query``'s kind/status/tag filters.

        The metadata query is current (Box's full-text search lags by minutes). It narrows the
        files to read; :func:`memcore.index.search_hits` then checks every candidate against the
        whole ``query`` (text, filters, ranking, snippets), so results equal a full scan's
        whenever every memory carries its template instance. ``None`` (read every file) when
        the workspace has no template, the query has no such filter, names ids, or asks for
        kinds/statuses that files with invalid values are read as (``note``, ``unknown``).

        Args:
            query: The search, with ``limit`` cleared.

        Returns:
            The candidate memories in creation order, one per id; or ``None``.
        """
        storage = self.storage
        structured = bool(query.kinds or query.statuses or query.tags_any)
        catch_all = Kind.NOTE in (query.kinds or []) or Status.UNKNOWN in (query.statuses or [])
        if not isinstance(storage, CloudStorage) or query.ids is not None or not structured or catch_all:
            return None
        self._ensure_open()
        paths = storage.metadata_search(
            kinds=sorted({box_kind(k) for k in query.kinds or []}) or None,
            statuses=sorted({box_status(s) for s in query.statuses or []}) or None,
            tags_any=list(query.tags_any or []) or None,
        )
        if paths is None:
            return None
        files: list[_File] = []
        for path in dict.fromkeys(paths):
            try:
                data, version = storage.read(path)
            except FileNotFoundError:
                continue  # deleted since the query
            parsed = self._parse(path, data, version)
            if isinstance(parsed, _File):
                files.append(parsed)
        entries = [self._entry_of(f)[0] for f in files]
        entries.sort(key=lambda e: (e.created_at is None, e.created_at, e.id or ""))
        unique: dict[str | None, MemoryEntry] = {}
        for entry in entries:
            unique.setdefault(entry.id, entry)
        return list(unique.values())
