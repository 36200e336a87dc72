"""Where a host app's choice of backend comes from, and :func:`open_store`.

Precedence, first match wins:

1. an explicit store URL (``memcore.open("whitebox:./vault")``, CLI ``--store``);
2. the ``MEMCORE_STORE`` environment variable;
3. ``memcore.toml`` in the working directory or the nearest parent holding one (key ``store``,
   options in an ``[options]`` table); in the same folder, ``memcore.toml`` wins over
   ``pyproject.toml``'s ``[tool.memcore]`` table (same keys).

A store URL is ``<format>:<location>`` (``whitebox:./vault``, ``maka:./MEMORY.md``,
``box+cloud:123456``). A bare path is sniffed: every installed provider says whether the path
looks like its format; none or several is an error listing the candidates. Relative locations
in a config file are relative to that file's folder.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memcore.errors import ConfigError

if TYPE_CHECKING:
    from memcore.provider import MemoryProvider
    from memcore.registry import ProviderRegistry

__all__ = ["StoreSpec", "find_config", "open_store", "parse_store_url", "resolve_store"]

_URL = re.compile(r"^(?P<fmt>[a-z][a-z0-9_.-]*(?:\+[a-z0-9_.-]+)?):(?P<loc>.*)$", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class StoreSpec:
    """A resolved choice of store.

    Attributes:
        format_name: Format, e.g. ``"whitebox"``.
        location: Path or remote id, as the provider takes it.
        options: Provider options (from the config file, then from the caller).
        origin: Where the choice came from: ``"argument"``, ``"MEMCORE_STORE"``, a config
            file path, or ``"sniffed"`` appended when the format was guessed.
    """

    format_name: str
    location: str
    options: dict[str, Any] = field(default_factory=dict)
    origin: str = "argument"

    @property
    def url(self) -> str:
        """The store URL ``<format>:<location>``."""
        return f"{self.format_name}:{self.location}"


def parse_store_url(
    url: str,
    *,
    base: Path | None = None,
    registry: ProviderRegistry | None = None,
    origin: str = "argument",
    sniff: bool = True,
) -> StoreSpec:
    """Parse ``<format>:<location>`` or sniff a bare path.

    Args:
        url: The store URL or a bare path.
        base: Folder that relative file locations are relative to (default: the working dir).
        registry: Registry to sniff with (default: the process-wide one).
        origin: Recorded in the result.
        sniff: ``False`` refuses a bare path instead of asking every provider (which imports
            them all).

    Raises:
        ConfigError: Empty URL, or a bare path that no provider (or several) recognises (or,
            with ``sniff=False``, any bare path).
    """
    if not isinstance(url, str):
        raise ConfigError(f"a store URL must be a string like 'whitebox:./vault', not {type(url).__name__}")
    if "\x00" in url:
        shown = url.replace("\x00", "\\0")
        raise ConfigError(f"store URL {shown!r} contains a NUL character; remove it")
    url = url.strip()
    if not url:
        raise ConfigError("empty store URL; use <format>:<location>, e.g. whitebox:./vault")
    match = _URL.match(url)
    if match and len(match["fmt"]) > 1:
        fmt, loc = match["fmt"].lower(), match["loc"]
        if not loc:
            raise ConfigError(f"store URL {url!r} has no location after {fmt + ':'!r}")
        if base is not None and "+" not in fmt and not os.path.isabs(loc):
            loc = str(base / loc)
        return StoreSpec(fmt, loc, origin=origin)
    path = Path(url) if base is None or os.path.isabs(url) else base / url
    if not sniff:
        raise ConfigError(f"{path}: a bare path; name the format, e.g. 'whitebox:{url}'")
    from memcore.registry import get_registry

    reg = registry or get_registry()
    found = reg.sniff(path)
    if len(found) == 1:
        return StoreSpec(found[0], str(path), origin=f"{origin}, sniffed")
    if not found:
        raise ConfigError(
            f"{path}: no installed format recognises this path (installed: "
            f"{', '.join(reg.names()) or 'none'}); name the format explicitly, e.g. "
            f"'whitebox:{url}'"
        )
    raise ConfigError(
        f"{path}: several formats recognise this path ({', '.join(found)}); name one explicitly, "
        f"e.g. '{found[0]}:{url}'"
    )


def find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """Return the nearest config (``memcore.toml`` or ``[tool.memcore]``) at or above ``start``.

    Returns:
        ``(config file, table)`` or ``None`` when there is none.

    Raises:
        ConfigError: A config file is not valid TOML (names the file and the error).
    """
    for folder in [start, *start.parents]:
        for name in ("memcore.toml", "pyproject.toml"):
            candidate = folder / name
            if not candidate.is_file():
                continue
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{candidate}: not valid TOML: {exc}") from exc
            if name == "pyproject.toml":
                data = data.get("tool", {}).get("memcore")
                if data is None:
                    continue
            return candidate, data
    return None


def resolve_store(
    url: str | None = None,
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    registry: ProviderRegistry | None = None,
    sniff: bool = True,
) -> StoreSpec:
    """Decide which store to open, by the documented precedence.

    Args:
        url: Explicit store URL, or ``None`` to look in the environment and config files.
        cwd: Folder to start the config search from (default: the working directory).
        env: Environment to read ``MEMCORE_STORE`` from (default: ``os.environ``).
        registry: Registry for sniffing bare paths.
        sniff: ``False``: a bare path is a :class:`ConfigError` (see :func:`parse_store_url`).

    Raises:
        ConfigError: Nothing configured, or the configuration cannot be used.
    """
    env = dict(os.environ) if env is None else env
    if url:
        return parse_store_url(url, registry=registry, sniff=sniff)
    if env.get("MEMCORE_STORE"):
        return parse_store_url(env["MEMCORE_STORE"], registry=registry, origin="MEMCORE_STORE", sniff=sniff)
    start = (cwd or Path.cwd()).resolve()
    found = find_config(start)
    if found is None:
        raise ConfigError(
            "no store given: pass --store <format>:<location> (e.g. whitebox:./vault), set "
            'MEMCORE_STORE, or add `store = "..."` to a memcore.toml'
        )
    path, table = found
    store = table.get("store")
    if not isinstance(store, str):
        raise ConfigError(f'{path}: needs a `store = "<format>:<location>"` string key')
    options = table.get("options", {})
    if not isinstance(options, dict):
        raise ConfigError(f"{path}: `options` must be a table")
    spec = parse_store_url(store, base=path.parent, registry=registry, origin=str(path), sniff=sniff)
    return StoreSpec(spec.format_name, spec.location, dict(options), spec.origin)


def open_store(
    url: str | None = None,
    *,
    registry: ProviderRegistry | None = None,
    cwd: Path | None = None,
    **options: Any,
) -> MemoryProvider:
    """Open a store chosen by URL or configuration and return the opened provider.

    Use it as a context manager: ``with memcore.open("maka:./MEMORY.md") as store: ...``.

    Args:
        url: Store URL; ``None`` looks at ``MEMCORE_STORE`` then ``memcore.toml``.
        registry: Registry to find the provider in.
        cwd: Folder to start the config search from.
        **options: Provider options; override those from the config file.

    Raises:
        ConfigError: Nothing configured, or a bad URL.
        UnknownFormatError: The format is not installed (names the distribution to install).
    """
    from memcore.registry import get_registry

    reg = registry or get_registry()
    spec = resolve_store(url, cwd=cwd, registry=reg)
    cls = reg.get(spec.format_name)
    provider: MemoryProvider = cls(spec.location, **{**spec.options, **options})
    return provider.open()
