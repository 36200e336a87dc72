"""Box-memory on Box's cloud: :class:`CloudStorage`, the provider's storage on ``box_sdk_gen``.

The Box-memory provider does all its I/O through the :class:`~memcore.storage.Storage`
protocol; this module implements it on Box's API with the official SDK (``box-sdk-gen``,
module ``box_sdk_gen``; see docs/formats/box-cloud.md for why that distribution and not
``boxsdk>=10``). Store URL: ``box+cloud:<folder id>``; paths are relative to that folder.

Configuration only, never code (:meth:`CloudConfig.from_env`):

- credentials, from the environment: ``BOX_DEVELOPER_TOKEN`` (or ``BOX_DEVELOPER_TOKEN_FILE`` /
  option ``developer_token_file``: a file holding it, e.g. a mounted secret); or client credentials
  ``BOX_CLIENT_ID`` + ``BOX_CLIENT_SECRET`` + ``BOX_ENTERPRISE_ID`` or ``BOX_USER_ID``; or
  ``BOX_JWT_CONFIG`` (path of the app's JSON config file; also option ``jwt_config``);
- endpoints (tests, Box-compatible gateways): ``MEMCORE_BOX_API_URL`` (without ``/2.0``),
  ``MEMCORE_BOX_UPLOAD_URL``, ``MEMCORE_BOX_OAUTH_URL``, or options ``api_url``,
  ``upload_url``, ``oauth_url``;
- retry budget: ``MEMCORE_BOX_RETRY_ATTEMPTS`` (6), ``MEMCORE_BOX_RETRY_BASE_DELAY`` (0.5 s),
  ``MEMCORE_BOX_RETRY_MAX_DELAY`` (30 s), ``MEMCORE_BOX_CONFLICT_RETRIES`` (20), or options
  ``retry_attempts``, ``retry_base_delay``, ``retry_max_delay``, ``conflict_retries``;
- HTTP timeout: ``MEMCORE_BOX_TIMEOUT`` or option ``timeout`` (seconds to connect, and to wait
  for each answer; default :data:`DEFAULT_TIMEOUT`, 20 s; the SDK's own is 60 s per try).

Behaviour (issue 6):

- Proxy variables are ignored (``requests.Session.trust_env = False``).
- 429 and 5xx are retried with exponential backoff (``Retry-After`` honoured up to
  ``retry_max_delay``); a dropped connection is retried too and the operation then checks
  whether its first attempt already took effect (a 409 on create naming a file with our sha1,
  a 412 on a version whose bytes are ours, a 404 on delete), so no retry duplicates or loses
  a write. Every loop is bounded by the budget.
- Every write of an existing file uploads a new version with ``If-Match: <etag>``. A 412 on a
  memory file the caller read at a version raises :class:`~memcore.errors.ConflictError`; on
  ``_index.json`` (and other ``_*.json``) it re-reads and merges three-way
  (:mod:`memcore_box.cloud_merge`), then retries within ``conflict_retries``. A 409 name
  conflict while creating a ``_*.json`` file becomes a version upload on that file (merged);
  for a memory file created with :data:`~memcore.storage.CREATE` it is a conflict unless
  the existing bytes are ours.
- Version tokens are ``"<file id>:<etag>"``, so a file deleted and re-created under the same
  name never matches a stale token.
- When ``_box-memory.json`` names a ``metadata_template_key``, every memory file written gets
  that enterprise template's instance (created, or patched when it exists), and
  :meth:`CloudStorage.metadata_search` answers kind/status/tag filters with Box's metadata query.
- Tokens and secrets never appear in logs, errors, reprs or JSON: errors are rebuilt from the
  status, Box's error code and request id, and scrubbed of every configured secret.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import functools
import hashlib
import io
import json
import logging
import os
import random
import re
import threading
import time
import unicodedata
import urllib.parse
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from memcore.errors import ConfigError, ConflictError, MemcoreError, UnsafePathError
from memcore.frontmatter import parse_frontmatter
from memcore.storage import ANY_VERSION, Item, Storage, check_component, join
from memcore_box.cloud_merge import merge_json

__all__ = ["DEFAULT_TIMEOUT", "BoxCloudError", "CloudConfig", "CloudStorage", "RetryPolicy"]

log = logging.getLogger("memcore_box.cloud")
T = TypeVar("T")

DEFAULT_API_URL = "https://api.box.com"
DEFAULT_UPLOAD_URL = "https://upload.box.com/api"
DEFAULT_OAUTH_URL = "https://account.box.com/api/oauth2"
#: Seconds to connect and to wait for each answer (option ``timeout``, ``MEMCORE_BOX_TIMEOUT``).
DEFAULT_TIMEOUT = 20.0
_MAX_PAGES = 100_000
_FOLDER_ID = re.compile(r"^[0-9]{1,32}$")
_CONTENT_CACHE_BYTES = 64 << 20
_TEMPLATE_FIELDS = (
    "memory_id",
    "slug",
    "title",
    "kind",
    "status",
    "team",
    "agent",
    "tags",
    "companion_for_file_id",
    "sha256",
    "created_at",
    "updated_at",
)
_KINDS = {"decision", "fact", "task", "observation", "reference", "note", "companion"}
_STATUSES = {"active", "draft", "superseded", "archived", "held"}


class BoxCloudError(MemcoreError):
    """Box answered an error memcore cannot turn into a more specific one (or gave up retrying).

    Attributes:
        status: The HTTP status, or ``None`` when no answer came (connection failure).
        code: Box's error code (``"rate_limit_exceeded"``…), or ``None``.
        request_id: Box's request id, for Box support, or ``None``.
        step: The step that failed: ``"authenticate"`` (the token request), or the request's
            own name (``"upload"``, ``"list folder"``…), or ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        request_id: str | None = None,
        step: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.request_id, self.step = status, code, request_id, step


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to retry transient failures (429, 5xx, dropped connections).

    Attributes:
        attempts: Tries per request, the first included (>= 1).
        base_delay: Seconds before the first retry; doubles each time, with +-50 % jitter.
        max_delay: Cap on one wait in seconds, ``Retry-After`` included.
        conflict_retries: Re-read-merge-retry rounds after 412s on one ``_*.json`` write.
    """

    attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 30.0
    conflict_retries: int = 20

    def conflict_delay(self, round_no: int) -> float:
        """Seconds to wait before merge-and-retry round ``round_no`` after a 412 (full jitter).

        Losers of an ``If-Match`` race spread out instead of colliding again: uniform in
        ``[0, min(base_delay * 2**(round_no - 1), max_delay, 1 s)]``.
        """
        cap = min(self.base_delay * (2 ** min(round_no - 1, 16)), self.max_delay, 1.0)
        return float(random.uniform(0.0, cap))

    def delay(self, attempt: int, retry_after: str | None) -> float:
        """Return the seconds to wait before retry number ``attempt`` (1-based)."""
        if retry_after is not None:
            try:
                return min(max(float(retry_after), 0.0), self.max_delay)
            except ValueError:
                pass
        wait = float(self.base_delay * (2 ** (attempt - 1)) * random.uniform(0.5, 1.5))
        return min(wait, float(self.max_delay))


@dataclass(frozen=True)
class CloudConfig:
    """Where Box is and how to authenticate; secrets are kept out of ``repr``.

    Attributes:
        api_url: API base URL without ``/2.0`` (default ``https://api.box.com``).
        upload_url: Upload base URL (default ``https://upload.box.com/api``).
        oauth_url: OAuth2 base URL.
        auth_kind: ``"developer_token"``, ``"ccg"`` or ``"jwt"``.
        retry: The retry budget.
        page_size: Folder listing page size (1..1000).
        enterprise_id: Enterprise id (CCG subject, and metadata query scope), or ``None``.
        user_id: User id (CCG user subject), or ``None``.
        jwt_config: Path of a JWT app config file, or ``None``.
        timeout: Seconds to connect and to wait for each answer, per try (default
            :data:`DEFAULT_TIMEOUT`).
    """

    api_url: str = DEFAULT_API_URL
    upload_url: str = DEFAULT_UPLOAD_URL
    oauth_url: str = DEFAULT_OAUTH_URL
    auth_kind: str = "developer_token"
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    page_size: int = 1000
    enterprise_id: str | None = None
    user_id: str | None = None
    jwt_config: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    token: str | None = field(default=None, repr=False)
    client_id: str | None = field(default=None, repr=False)
    client_secret: str | None = field(default=None, repr=False)

    @property
    def secrets(self) -> builtins.list[str]:
        """The secret strings to scrub from every message (never logged themselves)."""
        return [s for s in (self.token, self.client_secret, self.client_id) if s and len(s) >= 4]

    @classmethod
    def from_env(cls, options: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None) -> CloudConfig:
        """Build the configuration from provider options and the environment.

        Secrets come only from the environment (``BOX_*``, module docstring), never from
        options; options may name files (``jwt_config``, ``developer_token_file``) and override
        endpoints, the retry budget and ``page_size``.

        Raises:
            ConfigError: No credentials, incomplete client credentials, or a bad number.
        """
        options = dict(options or {})
        env = os.environ if env is None else env

        def pick(opt: str, var: str, default: str) -> str:
            value = options.get(opt)
            if value in (None, ""):
                value = env.get(var) or default
            return str(value)

        def number(opt: str, var: str, default: float, kind: type[float] | type[int]) -> Any:
            text = pick(opt, var, str(default))
            try:
                value = kind(text)
            except ValueError as exc:
                raise ConfigError(f"box+cloud: {opt} / {var} must be a number, got {text!r}") from exc
            if value < 0:
                raise ConfigError(f"box+cloud: {opt} / {var} must be >= 0, got {text!r}")
            return value

        api = pick("api_url", "MEMCORE_BOX_API_URL", DEFAULT_API_URL).rstrip("/")
        # Trap: the SDK appends "/2.0/..." itself; a base URL ending in /2.0 doubles it.
        api = re.sub(r"/2\.0$", "", api)
        upload = pick("upload_url", "MEMCORE_BOX_UPLOAD_URL", DEFAULT_UPLOAD_URL).rstrip("/")
        upload = re.sub(r"/2\.0$", "", upload)
        oauth = pick("oauth_url", "MEMCORE_BOX_OAUTH_URL", DEFAULT_OAUTH_URL).rstrip("/")
        retry = RetryPolicy(
            attempts=max(1, number("retry_attempts", "MEMCORE_BOX_RETRY_ATTEMPTS", 6, int)),
            base_delay=number("retry_base_delay", "MEMCORE_BOX_RETRY_BASE_DELAY", 0.5, float),
            max_delay=number("retry_max_delay", "MEMCORE_BOX_RETRY_MAX_DELAY", 30.0, float),
            conflict_retries=max(1, number("conflict_retries", "MEMCORE_BOX_CONFLICT_RETRIES", 20, int)),
        )
        page_size = min(1000, max(1, number("page_size", "MEMCORE_BOX_PAGE_SIZE", 1000, int)))
        timeout = number("timeout", "MEMCORE_BOX_TIMEOUT", DEFAULT_TIMEOUT, float)
        if timeout <= 0:
            raise ConfigError(f"box+cloud: timeout / MEMCORE_BOX_TIMEOUT must be > 0 seconds, got {timeout!r}")
        common: dict[str, Any] = {
            "api_url": api,
            "upload_url": upload,
            "oauth_url": oauth,
            "retry": retry,
            "page_size": page_size,
            "timeout": timeout,
        }
        enterprise = env.get("BOX_ENTERPRISE_ID") or None
        user = env.get("BOX_USER_ID") or None
        token = env.get("BOX_DEVELOPER_TOKEN")
        token_file = options.get("developer_token_file") or env.get("BOX_DEVELOPER_TOKEN_FILE")
        if not token and token_file:
            try:
                token = Path(str(token_file)).read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ConfigError(
                    f"box+cloud: cannot read the developer token file {str(token_file)!r} ({exc.strerror})"
                ) from None
        if token:
            return cls(auth_kind="developer_token", token=token, enterprise_id=enterprise, **common)
        client_id, secret = env.get("BOX_CLIENT_ID"), env.get("BOX_CLIENT_SECRET")
        jwt = options.get("jwt_config") or env.get("BOX_JWT_CONFIG")
        if jwt:
            return cls(auth_kind="jwt", jwt_config=str(jwt), enterprise_id=enterprise, **common)
        if client_id or secret:
            if not (client_id and secret and (enterprise or user)):
                raise ConfigError(
                    "box+cloud: client credentials need BOX_CLIENT_ID, BOX_CLIENT_SECRET and one of "
                    "BOX_ENTERPRISE_ID or BOX_USER_ID in the environment"
                )
            return cls(
                auth_kind="ccg",
                client_id=client_id,
                client_secret=secret,
                enterprise_id=enterprise,
                user_id=user,
                **common,
            )
        raise ConfigError(
            "box+cloud: no Box credentials configured; set BOX_DEVELOPER_TOKEN, or BOX_CLIENT_ID + "
            "BOX_CLIENT_SECRET + BOX_ENTERPRISE_ID (or BOX_USER_ID), or BOX_JWT_CONFIG=<app config .json>"
        )


def _timeout_session(timeout: float) -> Any:
    """Return a ``requests.Session`` that puts memcore's timeout on every request.

    ``box_sdk_gen`` passes its own fixed ``timeout=(5, 60)`` on each request; a dropped upload
    would then hold a write for a minute per try. This session replaces it with
    ``(timeout, timeout)`` (connect, read) from the configuration.
    """
    import requests

    class TimeoutSession(requests.Session):
        def request(self, *args: Any, **kwargs: Any) -> Any:
            kwargs["timeout"] = (timeout, timeout)
            return super().request(*args, **kwargs)

    return TimeoutSession()


def _detach(exc: BaseException, storage: Any) -> BaseException:
    """Return ``exc`` cut loose from the SDK errors it was raised while handling.

    ``raise X from None`` only hides ``__context__``: the SDK's ``BoxAPIError`` (its request
    headers hold the bearer token) stays reachable there. memcore's errors carry everything a
    caller needs (status, code, request id, step), so the chain is dropped; an SDK error that
    escapes itself is replaced by a scrubbed :class:`BoxCloudError`.
    """
    if type(exc).__module__.startswith(("box_sdk_gen", "requests", "urllib3")):
        info = getattr(exc, "response_info", None)
        replaced = BoxCloudError(
            storage._scrub(
                f"{storage.description}: Box's SDK failed: {type(exc).__name__}"
                f"{' HTTP ' + str(_status(exc)) if _status(exc) else ''} {_code(exc) or ''}".rstrip()
            ),
            status=_status(exc),
            code=_code(exc),
            request_id=getattr(info, "request_id", None),
        )
        exc = replaced
    exc.__cause__ = None
    exc.__context__ = None
    exc.__suppress_context__ = False
    return exc


def _sealed(fn: Callable[..., T]) -> Callable[..., T]:
    """Decorate a public :class:`CloudStorage` method: no exception leaving it reaches the SDK's."""

    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> T:
        try:
            return fn(self, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - re-raised below, detached from the SDK's errors
            clean = _detach(exc, self)
        # raised outside the except block, so that Python does not chain the SDK error again
        raise clean

    return wrapper


@dataclass
class _Try:
    """What happened during one retried request: whether an earlier attempt may have landed."""

    uncertain: bool = False


@dataclass
class _Known:
    """What this process knows about one file: Box's etag and bytes, and the caller's view."""

    etag: str
    server: bytes
    view: bytes


def _split_version(token: str) -> tuple[str, str]:
    """``"<file id>:<etag>[+merged]"`` -> ``(file id, etag)``."""
    file_id, _, rest = token.partition(":")
    return file_id, rest.split("+", 1)[0]


def _sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def _raw(obj: Any) -> dict[str, Any]:
    raw = getattr(obj, "raw_data", None)
    return raw if isinstance(raw, dict) else {}


def _is_json_sidecar(name: str) -> bool:
    return name.startswith("_") and name.endswith(".json")


def _is_memory_file(name: str) -> bool:
    return name.endswith(".md") and not name.startswith(("_", ".")) and name.lower() != "readme.md"


def _box_date(text: Any) -> str | None:
    """Return ``text`` as Box's metadata date (``YYYY-MM-DDTHH:MM:SS.000Z``), or ``None``."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        dt = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def metadata_values(text: str) -> dict[str, Any] | None:
    """Return the ``boxMemory`` template values for a memory file's text, or ``None``.

    Shape: ``{"memory_id", "slug", "title", "kind", "status", "team", "agent", "tags" (list),
    "companion_for_file_id", "sha256", "created_at", "updated_at"}`` with absent or invalid
    values left out (box-memory-schema.md, "Metadata template"). ``None`` when the file has
    no parseable frontmatter or no ``id``.
    """
    try:
        meta = parse_frontmatter(text).metadata
    except MemcoreError:
        return None
    if not isinstance(meta.get("id"), str):
        return None
    out: dict[str, Any] = {"memory_id": str(meta["id"])}
    for key in ("slug", "title", "team", "agent"):
        if isinstance(meta.get(key), str) and meta[key]:
            out[key] = str(meta[key])
    if str(meta.get("kind")) in _KINDS:
        out["kind"] = str(meta["kind"])
    if str(meta.get("status")) in _STATUSES:
        out["status"] = str(meta["status"])
    tags = meta.get("tags")
    if isinstance(tags, list) and tags:
        out["tags"] = [str(t) for t in tags]
    companion = meta.get("companion_for")
    if isinstance(companion, Mapping):
        if companion.get("file_id") is not None:
            out["companion_for_file_id"] = str(companion["file_id"])
        if companion.get("sha256"):
            out["sha256"] = str(companion["sha256"])
    for key in ("created_at", "updated_at"):
        stamp = _box_date(meta.get(key))
        if stamp:
            out[key] = stamp
    return out


class CloudStorage:
    """:class:`~memcore.storage.Storage` on a Box folder, through ``box_sdk_gen``.

    Args:
        folder_id: The workspace's root folder id (digits; ``"0"`` is the user's root).
        config: Endpoints, credentials and retry budget (default: :meth:`CloudConfig.from_env`).

    Attributes:
        stats: Counters: ``requests``, ``retries``, ``merges``, ``conflicts``,
            ``metadata_writes``, ``metadata_failures``, ``metadata_queries``.

    Raises:
        ConfigError: ``folder_id`` is not a Box folder id, or no credentials are configured.
    """

    def __init__(self, folder_id: str, *, config: CloudConfig | None = None) -> None:
        folder_id = str(folder_id).strip()
        if not _FOLDER_ID.match(folder_id):
            raise ConfigError(f"box+cloud: {folder_id!r} is not a Box folder id (digits, e.g. box+cloud:123456)")
        self.folder_id = folder_id
        self.config = config or CloudConfig.from_env()
        self.description = f"box+cloud:{folder_id}"
        self.stats: dict[str, int] = dict.fromkeys(
            ("requests", "retries", "merges", "conflicts", "metadata_writes", "metadata_failures", "metadata_queries"),
            0,
        )
        self._client: Any = None
        self._session: Any = None
        self._lock = threading.RLock()
        self._folders: dict[str, str] = {"": folder_id}
        self._folder_paths: dict[str, str] = {folder_id: ""}
        self._files: dict[str, tuple[str, str]] = {}
        self._known: dict[str, _Known] = {}
        self._content: OrderedDict[tuple[str, str], bytes] = OrderedDict()
        self._content_bytes = 0
        self._template: str | None = None
        self._template_checked = False
        self._enterprise_scope: str | None = None

    def __repr__(self) -> str:
        return f"CloudStorage({self.description!r}, api={self.config.api_url!r}, auth={self.config.auth_kind!r})"

    # -- the client ---------------------------------------------------------------------
    @property
    def client(self) -> Any:
        """The ``box_sdk_gen.BoxClient``, built on first use from the configuration."""
        if self._client is None:
            self._client = self._build_client()
        return self._client

    def _build_client(self) -> Any:
        try:
            import box_sdk_gen  # type: ignore[import-untyped]  # noqa: F401
        except ImportError:
            raise ConfigError(
                "box+cloud needs Box's SDK (box-sdk-gen): from a memcore checkout "
                "`pip install -e 'plugins/memcore-box[cloud]'`; once published on PyPI "
                "`pip install 'memcore-unified-box[cloud]'`"
            ) from None
        from box_sdk_gen.client import BoxClient  # type: ignore[import-untyped]
        from box_sdk_gen.networking.base_urls import BaseUrls  # type: ignore[import-untyped]
        from box_sdk_gen.networking.box_network_client import BoxNetworkClient  # type: ignore[import-untyped]
        from box_sdk_gen.networking.network import NetworkSession  # type: ignore[import-untyped]

        cfg = self.config
        session = _timeout_session(cfg.timeout)
        session.trust_env = False  # ignore HTTP(S)_PROXY / NO_PROXY / .netrc: traffic goes where configured
        self._session = session
        network = NetworkSession(
            network_client=BoxNetworkClient(requests_session=session),
            retry_strategy=_auth_only_retry(),
            base_urls=BaseUrls(base_url=cfg.api_url, upload_url=cfg.upload_url, oauth_2_url=cfg.oauth_url),
        )
        return BoxClient(auth=self._build_auth(), network_session=network)

    def _build_auth(self) -> Any:
        cfg = self.config
        if cfg.auth_kind == "developer_token":
            from box_sdk_gen.box.developer_token_auth import BoxDeveloperTokenAuth  # type: ignore[import-untyped]

            return BoxDeveloperTokenAuth(token=cfg.token or "")
        if cfg.auth_kind == "ccg":
            from box_sdk_gen.box.ccg_auth import BoxCCGAuth, CCGConfig  # type: ignore[import-untyped]

            return BoxCCGAuth(
                CCGConfig(
                    client_id=cfg.client_id or "",
                    client_secret=cfg.client_secret or "",
                    enterprise_id=cfg.enterprise_id,
                    user_id=cfg.user_id,
                )
            )
        from box_sdk_gen.box.jwt_auth import BoxJWTAuth, JWTConfig  # type: ignore[import-untyped]

        try:
            return BoxJWTAuth(JWTConfig.from_config_file(cfg.jwt_config or ""))
        except Exception as exc:  # noqa: BLE001 - the SDK raises several kinds; never echo the file
            raise ConfigError(
                f"box+cloud: cannot use the JWT config file {cfg.jwt_config!r} ({type(exc).__name__}); "
                "check BOX_JWT_CONFIG points at the app's JSON config from the Box Developer Console"
            ) from None

    def close(self) -> None:
        """Close the HTTP session (idempotent)."""
        if self._session is not None:
            self._session.close()
        self._session = None
        self._client = None

    # -- requests, retries and errors ----------------------------------------------------
    def _scrub(self, text: str) -> str:
        for secret in self.config.secrets:
            text = text.replace(secret, "***")
        return re.sub(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+", r"\1***", text)

    def _call(self, what: str, fn: Callable[[], T], attempt: _Try | None = None) -> T:
        """Run one SDK request, retrying 429/5xx/connection failures within the budget.

        Raises:
            BoxAPIError: (from the SDK) a non-retryable answer; callers map it.
            BoxCloudError: The budget ran out.
            ConfigError: Authentication failed.
        """
        from box_sdk_gen.box.errors import BoxAPIError, BoxSDKError  # type: ignore[import-untyped]

        policy = self.config.retry
        last = ""
        step = what
        status: int | None = None
        unreachable: str | None = None  # the host of the last attempt when it could not connect
        for n in range(1, policy.attempts + 1):
            self.stats["requests"] += 1
            try:
                return fn()
            except BoxAPIError as exc:
                status = _status(exc)
                url = str(getattr(getattr(exc, "request_info", None), "url", ""))
                token_step = url.split("?", 1)[0].endswith("/token")
                if status == 401 or (token_step and status is not None and status < 500):
                    raise self._auth_error(what, token_step=token_step) from None
                if status != 429 and (status is None or status < 500):
                    raise
                if attempt is not None and status != 429 and not token_step:
                    attempt.uncertain = True  # a failed token request sent nothing to Box's API
                headers = getattr(exc.response_info, "headers", None) or {}
                retry_after = {k.lower(): v for k, v in headers.items()}.get("retry-after")
                step = "authenticate" if token_step else what
                last = f"HTTP {status} ({_code(exc) or 'no code'})"
                unreachable = None
            except BoxSDKError as exc:
                import requests

                if not isinstance(getattr(exc, "error", None), requests.RequestException):
                    # not a network failure: a token that cannot be refreshed, a bad JWT key...
                    if "token" in str(getattr(exc, "message", "")).lower():
                        raise self._auth_error(what, token_step=True) from None
                    detail = getattr(exc, "message", type(exc).__name__)
                    raise BoxCloudError(self._scrub(f"{self.description}: {what}: {detail}")) from None
                if attempt is not None:
                    attempt.uncertain = True
                status, retry_after, step = None, None, what
                timed_out = isinstance(exc.error, requests.Timeout)
                unreachable = None if timed_out else self._host_of(exc.error)
                last = (
                    f"no answer within {self.config.timeout:g} s (option timeout / MEMCORE_BOX_TIMEOUT)"
                    if timed_out
                    else f"connection failed ({type(exc.error).__name__})"
                )
            if n == policy.attempts:
                break
            self.stats["retries"] += 1
            wait = policy.delay(n, retry_after)
            log.info("box+cloud: %s: %s; retry %d/%d in %.2fs", what, last, n, policy.attempts - 1, wait)
            time.sleep(wait)
        if unreachable is not None:
            raise BoxCloudError(
                f"{self.description}: {what}: could not reach {unreachable} ({last}, {policy.attempts} "
                "attempt(s)); check the network connection (and MEMCORE_BOX_API_URL / MEMCORE_BOX_UPLOAD_URL / "
                "MEMCORE_BOX_OAUTH_URL if set)",
                status=None,
                step=what,
            )
        if step == "authenticate":
            raise BoxCloudError(
                f"{self.description}: authentication failed: Box's token endpoint "
                f"({self.config.oauth_url}/token) answered {last} on all {policy.attempts} attempt(s), "
                f"before {what}; nothing was sent to Box's API. Box's sign-in service may be down: retry later",
                status=status,
                step="authenticate",
            )
        raise BoxCloudError(
            f"{self.description}: {what} failed after {policy.attempts} attempt(s): {last}; Box may be "
            "rate-limiting or down, retry later or raise MEMCORE_BOX_RETRY_ATTEMPTS",
            status=status,
            step=what,
        )

    def _host_of(self, error: BaseException) -> str:
        """Return ``host[:port]`` of the request ``error`` (a ``requests`` exception) was raised for.

        Falls back to the API endpoint's when the exception carries no request.
        """
        request = getattr(error, "request", None)
        parts = urllib.parse.urlsplit(str(getattr(request, "url", "") or "") or self.config.api_url)
        host = parts.hostname or "Box's API"
        return f"{host}:{parts.port}" if parts.port else host

    def _auth_error(self, what: str, *, token_step: bool = False) -> ConfigError:
        """The error for credentials Box refused, naming the variables of the kind in use."""
        kind = self.config.auth_kind
        where = (
            "authentication failed: Box's token endpoint refused the credentials"
            if token_step
            else "Box refused the credentials"
        )
        fix = {
            "developer_token": "check BOX_DEVELOPER_TOKEN (or BOX_DEVELOPER_TOKEN_FILE); developer tokens "
            "expire after 60 minutes",
            "ccg": "check the client credentials BOX_CLIENT_ID and BOX_CLIENT_SECRET, and BOX_ENTERPRISE_ID "
            "or BOX_USER_ID (the app must be authorised in the Box Admin Console)",
        }.get(
            kind,
            "check the JWT app config that BOX_JWT_CONFIG (option jwt_config) names, and that the app is authorised",
        )
        return ConfigError(f"{self.description}: {where} ({kind}) during {what}; {fix}")

    def _api_error(self, exc: Any, what: str) -> BoxCloudError:
        status, code = _status(exc), _code(exc)
        body = getattr(exc.response_info, "body", None) or {}
        message = body.get("message") if isinstance(body, dict) else None
        request_id = body.get("request_id") if isinstance(body, dict) else None
        return BoxCloudError(
            self._scrub(
                f"{self.description}: {what}: Box answered {status} {code or ''}"
                f"{': ' + str(message) if message else ''}"
                f"{' (request id ' + str(request_id) + ')' if request_id else ''}"
            ),
            status=status,
            code=code,
            request_id=request_id,
        )

    # -- paths and ids -------------------------------------------------------------------
    @staticmethod
    def _parts(path: str) -> builtins.list[str]:
        if path.startswith(("/", "\\")) or "\x00" in path:
            raise UnsafePathError(f"box+cloud: unsafe path {path!r}: must be relative to the workspace")
        return [check_component(unicodedata.normalize("NFC", p)) for p in path.split("/") if p]

    @staticmethod
    def _key(path: str) -> str:
        return path.lower()  # Box names are case-insensitive

    def _list_raw(self, folder_id: str) -> builtins.list[dict[str, Any]]:
        from box_sdk_gen.box.errors import BoxAPIError

        out: builtins.list[dict[str, Any]] = []
        marker: str | None = None
        seen: set[str] = set()
        for _ in range(_MAX_PAGES):
            try:
                page = self._call(
                    "list folder",
                    lambda m=marker: self.client.folders.get_folder_items(  # type: ignore[misc]
                        folder_id,
                        fields=["type", "id", "name", "etag", "size", "sha1"],
                        usemarker=True,
                        marker=m,
                        limit=self.config.page_size,
                    ),
                )
            except BoxAPIError as exc:
                if _status(exc) == 404:
                    raise FileNotFoundError(f"{self.description}: folder {folder_id} not found") from None
                raise self._api_error(exc, "list folder") from None
            raw = _raw(page)
            out.extend(e for e in raw.get("entries") or [] if isinstance(e, dict))
            marker = raw.get("next_marker") or None
            if not marker:
                return out
            if marker in seen:
                raise BoxCloudError(f"{self.description}: folder {folder_id} listing repeats page marker {marker!r}")
            seen.add(marker)
        raise BoxCloudError(f"{self.description}: folder {folder_id} listing did not end after {_MAX_PAGES} pages")

    def _refresh_folder(self, folder_path: str, folder_id: str) -> builtins.list[dict[str, Any]]:
        entries = self._list_raw(folder_id)
        prefix = self._key(folder_path) + "/" if folder_path else ""
        for key in [k for k in self._files if k.startswith(prefix) and "/" not in k[len(prefix) :]]:
            del self._files[key]
        for e in entries:
            rel = join(folder_path, str(e.get("name")))
            if e.get("type") == "folder":
                self._folders[self._key(rel)] = str(e["id"])
                self._folder_paths[str(e["id"])] = rel
            elif e.get("type") == "file":
                self._files[self._key(rel)] = (str(e["id"]), str(e["name"]))
        return entries

    def _folder_id(self, path: str, *, create: bool = False) -> str:
        parts = self._parts(path)
        current, fid = "", self.folder_id
        for part in parts:
            current = join(current, part)
            known = self._folders.get(self._key(current))
            if known is None:
                parent_path = current.rpartition("/")[0] if "/" in current else ""
                self._refresh_folder(parent_path, fid)
                known = self._folders.get(self._key(current))
            if known is None:
                if not create:
                    raise FileNotFoundError(f"{self.description}/{current}: folder does not exist")
                known = self._create_folder(fid, part)
                self._folders[self._key(current)] = known
                self._folder_paths[known] = current
            fid = known
        return fid

    def _create_folder(self, parent_id: str, name: str) -> str:
        from box_sdk_gen.box.errors import BoxAPIError
        from box_sdk_gen.managers.folders import CreateFolderParent  # type: ignore[import-untyped]

        try:
            folder = self._call(
                "create folder", lambda: self.client.folders.create_folder(name, CreateFolderParent(id=parent_id))
            )
            return str(folder.id)
        except BoxAPIError as exc:
            if _status(exc) == 409:  # someone created it first: use theirs
                conflicts = _conflicts(exc)
                if conflicts and conflicts[0].get("type") == "folder":
                    return str(conflicts[0]["id"])
            raise self._api_error(exc, f"create folder {name!r}") from None

    def _file_id(self, path: str, *, refresh: bool = False) -> tuple[str, str] | None:
        parts = self._parts(path)
        if not parts:
            return None
        key = self._key(path)
        if not refresh and key in self._files:
            return self._files[key]
        parent = "/".join(parts[:-1])
        self._refresh_folder(parent, self._folder_id(parent))
        return self._files.get(key)

    def _file_info(self, file_id: str) -> dict[str, Any] | None:
        from box_sdk_gen.box.errors import BoxAPIError

        try:
            info = self._call(
                "file info",
                lambda: self.client.files.get_file_by_id(
                    file_id, fields=["id", "name", "etag", "sha1", "size", "file_version"]
                ),
            )
        except BoxAPIError as exc:
            if _status(exc) == 404:
                return None
            raise self._api_error(exc, "file info") from None
        return _raw(info)

    def _fresh_info(self, path: str) -> tuple[str, str, dict[str, Any]]:
        """Return ``(file id, name, info)`` of ``path``, re-listing once if the id went stale."""
        for refresh in (False, True):
            found = self._file_id(path, refresh=refresh)
            if found is None:
                continue
            info = self._file_info(found[0])
            if info is not None:
                return found[0], found[1], info
            self._forget(path)
        raise FileNotFoundError(f"{self.description}/{path}: no such file")

    def _forget(self, path: str) -> None:
        found = self._files.pop(self._key(path), None)
        if found is not None:
            self._known.pop(found[0], None)

    def _remember(self, path: str, raw: Mapping[str, Any]) -> Item:
        fid, name, etag = str(raw["id"]), str(raw["name"]), str(raw.get("etag"))
        self._files[self._key(path)] = (fid, name)
        return Item(name=name, is_folder=False, version=f"{fid}:{etag}", size=raw.get("size"), id=fid)

    # -- content cache ---------------------------------------------------------------------
    def _cache_get(self, file_id: str, version_id: str) -> bytes | None:
        data = self._content.get((file_id, version_id))
        if data is not None:
            self._content.move_to_end((file_id, version_id))
        return data

    def _cache_put(self, file_id: str, version_id: str | None, data: bytes) -> None:
        if not version_id or len(data) > _CONTENT_CACHE_BYTES // 8:
            return
        self._content[(file_id, version_id)] = data
        self._content_bytes += len(data)
        while self._content_bytes > _CONTENT_CACHE_BYTES and self._content:
            _, old = self._content.popitem(last=False)
            self._content_bytes -= len(old)

    def _download(self, file_id: str, version_id: str | None) -> bytes | None:
        from box_sdk_gen.box.errors import BoxAPIError

        if version_id:
            cached = self._cache_get(file_id, version_id)
            if cached is not None:
                return cached
        try:
            stream = self._call("download", lambda: self.client.downloads.download_file(file_id, version=version_id))
        except BoxAPIError as exc:
            if _status(exc) == 404:
                return None
            raise self._api_error(exc, "download") from None
        if stream is None:
            raise BoxCloudError(f"{self.description}: file {file_id} is not ready for download (202); retry later")
        data = bytes(stream.read())
        self._cache_put(file_id, version_id, data)
        return data

    # -- the Storage protocol ----------------------------------------------------------------
    @_sealed
    def list(self, folder: str = "") -> builtins.list[Item]:
        """Return the files and folders directly inside ``folder``, sorted by name.

        Files carry their version token, size and Box id; every page is fetched
        (``usemarker`` pagination, ``page_size`` per page).

        Raises:
            FileNotFoundError: ``folder`` does not exist.
        """
        with self._lock:
            fid = self._folder_id(folder)
            entries = self._refresh_folder(join(*self._parts(folder)), fid)
        out = [
            Item(
                name=str(e["name"]),
                is_folder=e.get("type") == "folder",
                version=None if e.get("type") == "folder" else f"{e['id']}:{e.get('etag')}",
                size=e.get("size") if e.get("type") == "file" else None,
                id=str(e["id"]),
            )
            for e in entries
            if e.get("type") in ("file", "folder")
        ]
        out.sort(key=lambda i: i.name)
        return out

    @_sealed
    def stat(self, path: str) -> Item:
        """Return the :class:`Item` at ``path`` (files: fresh version and size).

        Raises:
            FileNotFoundError: Nothing at ``path``.
        """
        with self._lock:
            parts = self._parts(path)
            if not parts:
                return Item(name="", is_folder=True, id=self.folder_id)
            key = self._key(join(*parts))
            if key not in self._files and key not in self._folders:
                parent = "/".join(parts[:-1])
                self._refresh_folder(parent, self._folder_id(parent))  # one listing tells which
            if key in self._folders:
                return Item(name=parts[-1], is_folder=True, id=self._folders[key])
            _fid, _name, info = self._fresh_info(path)
            return self._remember(path, info)

    @_sealed
    def exists(self, path: str) -> bool:
        """Return whether a file or folder exists at ``path``."""
        try:
            self.stat(path)
        except FileNotFoundError:
            return False
        return True

    @_sealed
    def read(self, path: str) -> tuple[bytes, str]:
        """Return ``(bytes, version)`` of the file at ``path``.

        The file's info (etag, current ``file_version``) is fetched first and exactly that
        version is downloaded (through Box's 302 to the content URL), so the bytes and the
        version token always agree; downloads are cached by version id.

        Raises:
            FileNotFoundError: No file at ``path``.
        """
        with self._lock:
            for _ in range(3):
                fid, _name, info = self._fresh_info(path)
                version_id = (info.get("file_version") or {}).get("id")
                data = self._download(fid, version_id)
                if data is None:  # deleted or versioned between the two requests
                    self._forget(path)
                    continue
                etag = str(info.get("etag"))
                self._known[fid] = _Known(etag=etag, server=data, view=data)
                return data, f"{fid}:{etag}"
            raise FileNotFoundError(f"{self.description}/{path}: kept changing while being read")

    @_sealed
    def write(self, path: str, data: bytes, *, expected_version: str | None) -> Item:
        """Write ``data`` as the content of ``path`` if the precondition holds (module docstring).

        Raises:
            ConflictError: The precondition failed, or concurrent writers kept winning past the
                budget.
            FileNotFoundError: The folder does not exist.
            BoxCloudError: Box kept failing past the retry budget.
        """
        with self._lock:
            parts = self._parts(path)
            if not parts:
                raise UnsafePathError("box+cloud: cannot write the workspace root")
            parent, name = "/".join(parts[:-1]), parts[-1]
            path = join(parent, name)
            parent_id = self._folder_id(parent)
            if expected_version is None:
                item = self._create(path, parent_id, name, data, sidecar=False)
            elif expected_version == ANY_VERSION:
                item = self._write_any(path, parent_id, name, data)
            else:
                item = self._write_version(path, name, data, expected_version)
            if name == "_box-memory.json" and not parent:
                self._template_checked = False
            if _is_memory_file(name):
                self._apply_metadata(path, item, data)
            return item

    def _create(self, path: str, parent_id: str, name: str, data: bytes, *, sidecar: bool) -> Item:
        """Upload a new file; a 409 whose file holds our bytes is success (a retried upload)."""
        from box_sdk_gen.box.errors import BoxAPIError
        from box_sdk_gen.managers.uploads import (  # type: ignore[import-untyped]
            UploadFileAttributes,
            UploadFileAttributesParentField,
        )

        attempt = _Try()
        try:
            files = self._call(
                "upload",
                lambda: self.client.uploads.upload_file(
                    UploadFileAttributes(name=name, parent=UploadFileAttributesParentField(id=parent_id)),
                    io.BytesIO(data),
                    file_file_name=name,
                    file_content_type="application/octet-stream",
                ),
                attempt,
            )
        except BoxAPIError as exc:
            if _status(exc) == 404:
                raise FileNotFoundError(f"{self.description}/{path}: folder does not exist") from None
            if _status(exc) != 409:
                raise self._api_error(exc, f"upload {path}") from None
            conflicts = _conflicts(exc)
            existing = conflicts[0] if conflicts else {}
            if existing.get("type") == "file" and existing.get("sha1") == _sha1(data):
                return self._remember(path, existing)  # ours already (an earlier attempt landed)
            if existing.get("type") == "file":
                self._files[self._key(path)] = (str(existing["id"]), str(existing.get("name", name)))
            self.stats["conflicts"] += 1
            raise ConflictError(
                f"{self.description}/{path} already exists (Box 409 item_name_in_use); "
                "re-read it and retry, or choose another name"
            ) from None
        raw = _raw(files)["entries"][0]
        item = self._remember(path, raw)
        self._known[str(raw["id"])] = _Known(etag=str(raw.get("etag")), server=data, view=data)
        self._cache_put(str(raw["id"]), (raw.get("file_version") or {}).get("id"), data)
        return item

    def _upload_version(
        self, path: str, name: str, file_id: str, etag: str, data: bytes, attempt: _Try
    ) -> dict[str, Any]:
        from box_sdk_gen.managers.uploads import UploadFileVersionAttributes

        files = self._call(
            "upload version",
            lambda: self.client.uploads.upload_file_version(
                file_id,
                UploadFileVersionAttributes(name=name),
                io.BytesIO(data),
                file_file_name=name,
                file_content_type="application/octet-stream",
                if_match=etag,
            ),
            attempt,
        )
        raw: dict[str, Any] = _raw(files)["entries"][0]
        self._remember(path, raw)
        self._cache_put(file_id, (raw.get("file_version") or {}).get("id"), data)
        return raw

    def _write_version(self, path: str, name: str, data: bytes, expected: str) -> Item:
        """``If-Match`` write of a file the caller read at ``expected``."""
        from box_sdk_gen.box.errors import BoxAPIError

        file_id, etag = _split_version(expected)
        found = self._file_id(path) or self._file_id(path, refresh=True)
        if not etag or found is None or found[0] != file_id:
            self.stats["conflicts"] += 1
            raise ConflictError(
                f"{self.description}/{path} was deleted or replaced since it was read "
                f"(expected version {expected}); re-read it and retry"
            )
        if _is_json_sidecar(name):
            known = self._known.get(file_id)
            if known is None or known.etag != etag:
                return self._merge_loop(path, name, file_id, etag, data, None)
            first = data
            if known.view != known.server:  # our last write was merged: the caller never saw theirs
                first = merge_json(
                    known.view, data, known.server, what=f"{self.description}/{path}", index=name == "_index.json"
                )
            return self._merge_loop(path, name, file_id, etag, data, known.view, first=first)
        attempt = _Try()
        try:
            raw = self._upload_version(path, name, file_id, etag, data, attempt)
        except BoxAPIError as exc:
            status = _status(exc)
            if status == 412 and attempt.uncertain and self._current_bytes(path) == data:
                return self.stat(path)  # an earlier attempt landed
            if status in (404, 412):
                self.stats["conflicts"] += 1
                raise ConflictError(
                    f"{self.description}/{path} changed since it was read (expected version {expected}, "
                    f"Box {status}); re-read it and retry"
                ) from None
            raise self._api_error(exc, f"upload version of {path}") from None
        self._known[file_id] = _Known(etag=str(raw.get("etag")), server=data, view=data)
        return Item(
            name=str(raw["name"]),
            is_folder=False,
            version=f"{file_id}:{raw.get('etag')}",
            size=raw.get("size"),
            id=file_id,
        )

    def _current_bytes(self, path: str) -> bytes | None:
        try:
            return self.read(path)[0]
        except FileNotFoundError:
            return None

    def _write_any(self, path: str, parent_id: str, name: str, data: bytes) -> Item:
        """Create or replace; ``_*.json`` files are merged with what concurrent writers wrote."""
        found = self._file_id(path)
        sidecar = _is_json_sidecar(name)
        if found is None:
            try:
                return self._create(path, parent_id, name, data, sidecar=True)
            except ConflictError:
                # 409: someone created it first; becomes a version upload on their file
                found = self._files.get(self._key(path)) or self._file_id(path, refresh=True)
                if found is None:
                    raise
                if sidecar:
                    theirs, version = self.read(path)
                    self.stats["merges"] += 1
                    candidate = merge_json(
                        None, data, theirs, what=f"{self.description}/{path}", index=name == "_index.json"
                    )
                    return self._merge_loop(
                        path, name, found[0], _split_version(version)[1], data, None, first=candidate
                    )
        file_id = found[0]
        known = self._known.get(file_id)
        if known is None:
            info = self._file_info(file_id)
            if info is None:  # deleted meanwhile: start over once
                self._forget(path)
                return self._create(path, parent_id, name, data, sidecar=True)
            etag, base, candidate = str(info.get("etag")), None, data
        else:
            etag, base = known.etag, known.view
            candidate = data
            if sidecar and known.view != known.server:
                candidate = merge_json(
                    known.view, data, known.server, what=f"{self.description}/{path}", index=name == "_index.json"
                )
        if sidecar:
            return self._merge_loop(path, name, file_id, etag, data, base, first=candidate)
        return self._overwrite_loop(path, name, file_id, etag, data)

    def _merge_loop(
        self,
        path: str,
        name: str,
        file_id: str,
        etag: str,
        ours: bytes,
        base: bytes | None,
        *,
        first: bytes | None = None,
    ) -> Item:
        """Upload ``ours`` (merged) with ``If-Match``; on 412 re-read, merge three-way, retry."""
        from box_sdk_gen.box.errors import BoxAPIError

        candidate = ours if first is None else first
        where = f"{self.description}/{path}"
        for round_no in range(1, self.config.retry.conflict_retries + 2):
            attempt = _Try()
            try:
                raw = self._upload_version(path, name, file_id, etag, candidate, attempt)
            except BoxAPIError as exc:
                if _status(exc) == 404:
                    self._forget(path)
                    raise ConflictError(f"{where} was deleted while being written; retry") from None
                if _status(exc) != 412:
                    raise self._api_error(exc, f"upload version of {path}") from None
                theirs, version = self.read(path)
                if attempt.uncertain and theirs == candidate:
                    self._known[file_id] = _Known(etag=_split_version(version)[1], server=candidate, view=ours)
                    item = self.stat(path)
                    if candidate != ours:
                        item = dataclasses.replace(item, version=f"{item.version}+merged")
                    return item
                self.stats["merges"] += 1
                log.info("box+cloud: %s changed concurrently; merging and retrying", where)
                time.sleep(self.config.retry.conflict_delay(round_no))
                candidate = merge_json(base, ours, theirs, what=where, index=name == "_index.json")
                etag = _split_version(version)[1]
                continue
            self._known[file_id] = _Known(etag=str(raw.get("etag")), server=candidate, view=ours)
            # "+merged": the bytes on Box are not the caller's; a caller comparing tokens re-reads
            suffix = "" if candidate == ours else "+merged"
            return Item(
                name=str(raw["name"]),
                is_folder=False,
                version=f"{file_id}:{raw.get('etag')}{suffix}",
                size=raw.get("size"),
                id=file_id,
            )
        self.stats["conflicts"] += 1
        raise ConflictError(
            f"{where}: concurrent writers kept changing it ({self.config.retry.conflict_retries} merges); retry later"
        )

    def _overwrite_loop(self, path: str, name: str, file_id: str, etag: str, data: bytes) -> Item:
        """Unconditional replace of a non-JSON file, still ``If-Match`` on the etag last seen."""
        from box_sdk_gen.box.errors import BoxAPIError

        for _ in range(self.config.retry.conflict_retries + 1):
            attempt = _Try()
            try:
                raw = self._upload_version(path, name, file_id, etag, data, attempt)
            except BoxAPIError as exc:
                if _status(exc) != 412:
                    raise self._api_error(exc, f"upload version of {path}") from None
                info = self._file_info(file_id)
                if info is None:
                    raise ConflictError(f"{self.description}/{path} was deleted while being written") from None
                etag = str(info.get("etag"))
                continue
            self._known[file_id] = _Known(etag=str(raw.get("etag")), server=data, view=data)
            return Item(
                name=str(raw["name"]),
                is_folder=False,
                version=f"{file_id}:{raw.get('etag')}",
                size=raw.get("size"),
                id=file_id,
            )
        raise ConflictError(f"{self.description}/{path}: concurrent writers kept changing it; retry later")

    @_sealed
    def delete(self, path: str, *, expected_version: str | None = None) -> None:
        """Delete the file at ``path`` (``If-Match`` when ``expected_version`` is given).

        Raises:
            FileNotFoundError: No file at ``path``.
            ConflictError: The file changed since ``expected_version``.
        """
        from box_sdk_gen.box.errors import BoxAPIError

        with self._lock:
            found = self._file_id(path) or self._file_id(path, refresh=True)
            if found is None:
                raise FileNotFoundError(f"{self.description}/{path}: no such file")
            file_id, etag = found[0], None
            if expected_version is not None:
                want_id, etag = _split_version(expected_version)
                if want_id != file_id:
                    raise ConflictError(f"{self.description}/{path} was replaced since it was read; re-read it")
            attempt = _Try()
            try:
                self._call("delete", lambda: self.client.files.delete_file_by_id(file_id, if_match=etag), attempt)
            except BoxAPIError as exc:
                status = _status(exc)
                if status == 404 and not attempt.uncertain:
                    self._forget(path)
                    raise FileNotFoundError(f"{self.description}/{path}: no such file") from None
                if status == 412:
                    self.stats["conflicts"] += 1
                    raise ConflictError(
                        f"{self.description}/{path} changed since it was read (expected version "
                        f"{expected_version}); re-read it and retry"
                    ) from None
                if status != 404:
                    raise self._api_error(exc, f"delete {path}") from None
            self._forget(path)

    @_sealed
    def make_folder(self, path: str) -> Item:
        """Create the folder ``path`` and missing parents (a 409 from a racing creator is fine)."""
        with self._lock:
            parts = self._parts(path)
            fid = self._folder_id(path, create=True)
            return Item(name=parts[-1] if parts else "", is_folder=True, id=fid)

    @_sealed
    def path_of(self, file_id: str) -> str | None:
        """Return the workspace path of the Box file ``file_id``, or ``None`` (gone, or elsewhere).

        Used for companions, whose ``companion_for.file_id`` is the binary's Box file id.
        """
        from box_sdk_gen.box.errors import BoxAPIError

        if not file_id.isdigit():
            return None
        with self._lock:
            try:
                info = _raw(
                    self._call(
                        "file info",
                        lambda: self.client.files.get_file_by_id(file_id, fields=["id", "name", "path_collection"]),
                    )
                )
            except BoxAPIError as exc:
                if _status(exc) in (403, 404):
                    return None
                raise self._api_error(exc, "file info") from None
            return self._path_of(info)

    @_sealed
    def checksum(self, path: str) -> tuple[str, str, int]:
        """Return ``("sha1", hex digest, size)`` from Box's file info (no download).

        Raises:
            FileNotFoundError: No file at ``path``.
        """
        with self._lock:
            _fid, _name, info = self._fresh_info(path)
            return "sha1", str(info.get("sha1")), int(info.get("size") or 0)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with self._lock:
            yield

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """Return an in-process lock only: across processes, ``If-Match`` catches races."""
        return self._locked()

    # -- metadata template -----------------------------------------------------------------
    @_sealed
    def template_key(self) -> str | None:
        """Return ``metadata_template_key`` from the workspace's ``_box-memory.json`` (cached)."""
        with self._lock:
            if not self._template_checked:
                self._template_checked = True
                self._template = None
                try:
                    raw = self.read("_box-memory.json")[0]
                    key = json.loads(raw.decode("utf-8-sig")).get("metadata_template_key")
                    valid = isinstance(key, str) and re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", key)
                    self._template = key if valid else None
                except (FileNotFoundError, ValueError, AttributeError):
                    self._template = None
            return self._template

    def _apply_metadata(self, path: str, item: Item, data: bytes) -> None:
        """Create or patch the template instance on a memory file; failures are logged, not raised.

        The memory file and ``_index.json`` are the source of truth; the instance only speeds
        up search, so a failure to apply it never fails the write (``stats`` counts it).
        """
        from box_sdk_gen.box.errors import BoxAPIError
        from box_sdk_gen.managers.file_metadata import (  # type: ignore[import-untyped]
            CreateFileMetadataByIdScope,
            UpdateFileMetadataByIdRequestBody,
            UpdateFileMetadataByIdRequestBodyOpField,
            UpdateFileMetadataByIdScope,
        )

        key = self.template_key()
        if key is None or item.id is None:
            return
        values = metadata_values(data.decode("utf-8-sig", errors="replace"))
        if values is None:
            return
        file_id = item.id
        try:
            self._call(
                "apply metadata",
                lambda: self.client.file_metadata.create_file_metadata_by_id(
                    file_id, CreateFileMetadataByIdScope.ENTERPRISE, key, values
                ),
            )
            self.stats["metadata_writes"] += 1
            return
        except BoxAPIError as exc:
            status = _status(exc)
            if status == 404:
                log.warning("box+cloud: metadata template enterprise.%s not found; search uses the indexes", key)
                self._template = None
                self.stats["metadata_failures"] += 1
                return
            if status != 409:
                log.warning(
                    "box+cloud: could not apply metadata to %s: %s", path, self._api_error(exc, "apply metadata")
                )
                self.stats["metadata_failures"] += 1
                return
        except BoxCloudError as exc:
            log.warning("box+cloud: could not apply metadata to %s: %s", path, exc)
            self.stats["metadata_failures"] += 1
            return
        try:
            current = _raw(
                self._call(
                    "read metadata",
                    lambda: self.client.file_metadata.get_file_metadata_by_id(
                        file_id, CreateFileMetadataByIdScope.ENTERPRISE, key
                    ),
                )
            )
            ops = []
            for name in _TEMPLATE_FIELDS:
                if name in values and name in current:
                    if values[name] != current[name]:
                        ops.append(
                            UpdateFileMetadataByIdRequestBody(
                                op=UpdateFileMetadataByIdRequestBodyOpField.REPLACE, path=f"/{name}", value=values[name]
                            )
                        )
                elif name in values:
                    ops.append(
                        UpdateFileMetadataByIdRequestBody(
                            op=UpdateFileMetadataByIdRequestBodyOpField.ADD, path=f"/{name}", value=values[name]
                        )
                    )
                elif name in current:
                    ops.append(
                        UpdateFileMetadataByIdRequestBody(
                            op=UpdateFileMetadataByIdRequestBodyOpField.REMOVE, path=f"/{name}"
                        )
                    )
            if ops:
                self._call(
                    "update metadata",
                    lambda: self.client.file_metadata.update_file_metadata_by_id(
                        file_id, UpdateFileMetadataByIdScope.ENTERPRISE, key, ops
                    ),
                )
            self.stats["metadata_writes"] += 1
        except (BoxAPIError, BoxCloudError) as exc:
            log.warning("box+cloud: could not update metadata on %s (%s)", path, type(exc).__name__)
            self.stats["metadata_failures"] += 1

    def _scope(self) -> str:
        """``enterprise_<id>``, the scope metadata queries name (from config or ``/users/me``)."""
        if self._enterprise_scope is None:
            eid = self.config.enterprise_id
            if not eid:
                me = _raw(self._call("who am I", lambda: self.client.users.get_user_me(fields=["enterprise"])))
                eid = str((me.get("enterprise") or {}).get("id") or "")
            self._enterprise_scope = f"enterprise_{eid}" if eid else "enterprise"
        return self._enterprise_scope

    @_sealed
    def metadata_search(
        self,
        *,
        kinds: builtins.list[str] | None = None,
        statuses: builtins.list[str] | None = None,
        tags_any: builtins.list[str] | None = None,
    ) -> builtins.list[str] | None:
        """Return the paths of memory files matching the filters, by Box metadata query.

        Box's metadata query is current (unlike full-text search, which lags by minutes).
        Returns ``None`` when the workspace has no template (the caller falls back to the
        folder indexes). Paths are relative to the workspace root.
        """
        from box_sdk_gen.box.errors import BoxAPIError

        key = self.template_key()
        if key is None:
            return None
        clauses: builtins.list[str] = []
        params: dict[str, Any] = {}
        for fname, values, op in (("kind", kinds, "IN"), ("status", statuses, "IN"), ("tags", tags_any, "HASANY")):
            if values:
                names = []
                for i, value in enumerate(values):
                    params[f"{fname}{i}"] = str(value)
                    names.append(f":{fname}{i}")
                clauses.append(f"{fname} {op} ({', '.join(names)})")
        scope = self._scope()
        out: builtins.list[str] = []
        marker: str | None = None
        seen: set[str] = set()
        with self._lock:
            for _ in range(_MAX_PAGES):
                try:
                    page = _raw(
                        self._call(
                            "metadata query",
                            lambda m=marker: (  # type: ignore[misc]
                                self.client.search.search_by_metadata_query
                            )(
                                f"{scope}.{key}",
                                self.folder_id,
                                query=" AND ".join(clauses) or None,
                                query_params=params or None,
                                limit=100,
                                marker=m,
                                fields=["name", "path_collection", "parent"],
                            ),
                        )
                    )
                except BoxAPIError as exc:
                    if _status(exc) in (400, 404):
                        log.warning("box+cloud: metadata query failed (%s); falling back to the indexes", _status(exc))
                        return None
                    raise self._api_error(exc, "metadata query") from None
                self.stats["metadata_queries"] += 1
                for entry in page.get("entries") or []:
                    rel = self._path_of(entry)
                    if rel is not None:
                        out.append(rel)
                marker = page.get("next_marker") or None
                if not marker:
                    return out
                if marker in seen:
                    raise BoxCloudError(f"{self.description}: metadata query repeats page marker {marker!r}")
                seen.add(marker)
        raise BoxCloudError(f"{self.description}: metadata query did not end after {_MAX_PAGES} pages")

    def _path_of(self, entry: Mapping[str, Any]) -> str | None:
        chain = [e for e in (entry.get("path_collection") or {}).get("entries") or [] if isinstance(e, dict)]
        ids = [str(e.get("id")) for e in chain]
        if self.folder_id not in ids:
            return None
        below = [str(e.get("name")) for e in chain[ids.index(self.folder_id) + 1 :]]
        rel = join(*below, str(entry.get("name")))
        self._files[self._key(rel)] = (str(entry.get("id")), str(entry.get("name")))
        return rel


def _status(exc: Any) -> int | None:
    info = getattr(exc, "response_info", None)
    status = getattr(info, "status_code", None)
    return int(status) if status is not None else None


def _code(exc: Any) -> str | None:
    info = getattr(exc, "response_info", None)
    code = getattr(info, "code", None)
    return str(code) if code else None


def _conflicts(exc: Any) -> builtins.list[dict[str, Any]]:
    info = getattr(exc, "response_info", None)
    context = getattr(info, "context_info", None) or {}
    conflicts = context.get("conflicts") if isinstance(context, dict) else None
    if isinstance(conflicts, dict):
        return [conflicts]
    return [c for c in conflicts or [] if isinstance(c, dict)]


def _auth_only_retry() -> Any:
    """The SDK-level retry strategy: only a 401 with a refreshable token (CCG, JWT), once.

    Every other retry (429, 5xx, connection failures) is memcore's own, in
    :meth:`CloudStorage._call`, so that it is bounded by the configured budget and so that a
    write knows when an earlier attempt may have landed.
    """
    from box_sdk_gen.networking.retries import RetryStrategy  # type: ignore[import-untyped]

    class AuthOnlyRetry(RetryStrategy):  # type: ignore[misc]
        def should_retry(self, fetch_options: Any, fetch_response: Any, attempt_number: int) -> bool:
            if fetch_response.status != 401 or attempt_number > 1 or fetch_options.auth is None:
                return False
            if type(fetch_options.auth).__name__ == "BoxDeveloperTokenAuth":
                return False  # cannot be refreshed; the SDK would raise BoxSDKError instead of the 401
            fetch_options.auth.refresh_token(network_session=fetch_options.network_session)
            return True

        def retry_after(self, fetch_options: Any, fetch_response: Any, attempt_number: int) -> float:
            return 0.0

    return AuthOnlyRetry()


def _conforms(storage: CloudStorage) -> Storage:  # pragma: no cover - mypy checks the protocol
    return storage
