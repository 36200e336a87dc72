"""A stateful fake of the parts of Box's API that memcore's Box cloud storage uses.

Test-only (it lives in the test tree, never in the package). It binds 127.0.0.1 only, on a free
port, and serves from a thread; the real ``box_sdk_gen`` client talks to it through
``NetworkSession`` / ``BaseUrls``:

- API base ``http://127.0.0.1:<port>`` (``/2.0/...``), upload base ``<api>/upload`` (so
  ``<upload_url>/2.0/files/content``), OAuth2 ``<api>/oauth2``; the token endpoint is
  ``<api>/oauth2/token`` as the SDK builds it from ``base_url``.
- Folders and files with numeric string ids, per-file ``etag`` counters and file versions
  (``file_version.id``, ``sha1``), paginated folder listing (offset and marker), create folder
  (409 ``item_name_in_use`` with ``context_info.conflicts``), upload a new file (409 with the
  conflicting file), upload a version with ``If-Match`` (412 ``precondition_failed``), download
  as a 302 to an unauthenticated content URL, delete (``If-Match``), file info.
- Metadata instances on files (create: 409 ``tuple_already_exists``; update: JSON Patch) for the
  templates in :attr:`FakeBox.templates`, and ``POST /2.0/metadata_queries/execute_read`` with a
  small evaluator (``=``, ``!=``, ``IN``, ``HASANY``, ``HASALL``, ``AND``, ``OR``, ``NOT``,
  parentheses, ``:params``) restricted to ``ancestor_folder_id``.
- Auth: ``Authorization: Bearer <token>`` must be one of :attr:`FakeBox.tokens` (else 401 with
  an empty body, as Box does); client credentials at ``/oauth2/token`` issue new tokens.
- Failure injection: :meth:`FakeBox.inject` queues faults (a status with an error body, 429 with
  ``Retry-After``, a connection dropped before or after the request took effect, a hang before
  or after it took effect, or a callback that changes the state first, e.g. a concurrent
  writer). Faults match the token endpoint (``/oauth2/token``) like any other path.

Every loop is bounded: bodies are read by ``Content-Length`` (max 64 MiB), pages by ``limit``,
query parsing by the query's length.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import re
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_BODY = 64 << 20
BOX_MEMORY_FIELDS = {
    "memory_id": "string",
    "slug": "string",
    "title": "string",
    "kind": "enum",
    "status": "enum",
    "team": "string",
    "agent": "string",
    "tags": "multiSelect",
    "companion_for_file_id": "string",
    "sha256": "string",
    "created_at": "date",
    "updated_at": "date",
}
ENUMS = {
    "kind": {"decision", "fact", "task", "observation", "reference", "note", "companion"},
    "status": {"active", "draft", "superseded", "archived", "held"},
}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S-00:00")


@dataclass
class Version:
    id: str
    data: bytes
    sha1: str


@dataclass
class Node:
    id: str
    name: str
    parent_id: str | None
    is_folder: bool
    etag: int = 0
    versions: list[Version] = field(default_factory=list)
    metadata: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    created_at: str = field(default_factory=_now)
    modified_at: str = field(default_factory=_now)


@dataclass
class Fault:
    """One queued fault.

    Attributes:
        kind: ``"status"`` (answer ``status`` with an error body), ``"drop"`` (read part of the
            request, then close the connection: nothing happened), ``"drop_after"`` (handle the
            request, then close the connection without answering: it DID happen), or
            ``"callback"`` (run ``callback(fake)`` first, then handle the request normally),
            ``"hang"`` (read the request, answer nothing for ``seconds``, then close: nothing
            happened) or ``"hang_after"`` (handle the request, then the same silence: it DID
            happen; a silently dropped upload).
        method: Only requests with this method (``None``: any).
        path: Only requests whose path matches this regex (``None``: any).
        status: The status for ``kind="status"``.
        retry_after: ``Retry-After`` header value (seconds) for ``kind="status"``.
        times: How many matching requests this fault hits.
        callback: For ``kind="callback"``.
        seconds: How long ``"hang"`` / ``"hang_after"`` stay silent (bounded by the test).
    """

    kind: str
    method: str | None = None
    path: str | None = None
    status: int = 500
    retry_after: str | None = None
    times: int = 1
    callback: Callable[[FakeBox], None] | None = None
    seconds: float = 0.0
    hits: int = 0


class BoxError(Exception):
    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        context: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.context = status, code, message, context
        self.headers = headers or {}


class _DropConnection(Exception):
    pass


class FakeBox:
    """The fake Box API's state and server. Use as a context manager or ``start()``/``stop()``.

    Args:
        page_size_max: The largest page a folder listing returns (Box: 1000); tests make it
            small to exercise pagination.
        templates: Enterprise metadata template keys that exist (``()``: none, as on a
            personal account).
        tokens: Bearer tokens accepted.
        clients: ``{client_id: client_secret}`` accepted by the client-credentials grant.
    """

    def __init__(
        self,
        *,
        page_size_max: int = 1000,
        templates: tuple[str, ...] = ("boxMemory",),
        tokens: tuple[str, ...] = ("fake-dev-token-s3cr3t",),
        clients: dict[str, str] | None = None,
    ) -> None:
        self.page_size_max = page_size_max
        self.templates = set(templates)
        self.tokens = set(tokens)
        self.clients = dict(clients or {"fake-client-id": "fake-client-s3cr3t"})
        self.enterprise_id = "4242"
        self.lock = threading.RLock()
        self._ids = itertools.count(100001)
        self.nodes: dict[str, Node] = {"0": Node(id="0", name="All Files", parent_id=None, is_folder=True)}
        self.faults: list[Fault] = []
        #: A broken server whose listing pages never end (the client must notice).
        self.repeat_marker = False
        self.log: list[dict[str, Any]] = []
        self.token_grants: list[dict[str, str]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- life cycle -----------------------------------------------------------------------
    def start(self) -> FakeBox:
        handler = type("Handler", (_Handler,), {"fake": self})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            assert self._thread is not None
            self._thread.join(timeout=10)
            self._server = None

    def __enter__(self) -> FakeBox:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def upload_url(self) -> str:
        return f"{self.url}/upload"

    @property
    def oauth_url(self) -> str:
        return f"{self.url}/oauth2"

    def env(self, token: str | None = None) -> dict[str, str]:
        """Environment variables pointing memcore's Box cloud storage at this server."""
        return {
            "BOX_DEVELOPER_TOKEN": token or next(iter(sorted(self.tokens))),
            "MEMCORE_BOX_API_URL": self.url,
            "MEMCORE_BOX_UPLOAD_URL": self.upload_url,
            "MEMCORE_BOX_OAUTH_URL": self.oauth_url,
        }

    # -- faults ---------------------------------------------------------------------------
    def inject(self, kind: str, **kwargs: Any) -> Fault:
        """Queue a fault (see :class:`Fault`) and return it (its ``hits`` count is live)."""
        fault = Fault(kind=kind, **kwargs)
        with self.lock:
            self.faults.append(fault)
        return fault

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.hits >= fault.times:
                    continue
                if fault.method and fault.method != method:
                    continue
                if fault.path and not re.search(fault.path, path):
                    continue
                fault.hits += 1
                return fault
        return None

    # -- state helpers (also used by tests) ------------------------------------------------
    def new_id(self) -> str:
        return str(next(self._ids))

    def children(self, folder_id: str) -> list[Node]:
        with self.lock:
            kids = [n for n in self.nodes.values() if n.parent_id == folder_id]
        return sorted(kids, key=lambda n: (not n.is_folder, n.name.lower()))

    def child(self, folder_id: str, name: str) -> Node | None:
        for node in self.children(folder_id):
            if node.name.lower() == name.lower():
                return node
        return None

    def make_folder(self, name: str, parent_id: str = "0") -> str:
        """Create a folder directly in the state and return its id."""
        with self.lock:
            node = Node(id=self.new_id(), name=name, parent_id=parent_id, is_folder=True)
            self.nodes[node.id] = node
            return node.id

    def node_at(self, folder_id: str, path: str) -> Node | None:
        """Return the node at ``path`` (``a/b/c.md``) under ``folder_id``."""
        node: Node | None = self.nodes.get(folder_id)
        for part in [p for p in path.split("/") if p]:
            if node is None:
                return None
            node = self.child(node.id, part)
        return node

    def read(self, folder_id: str, path: str) -> bytes:
        """Return the latest bytes of the file at ``path`` under ``folder_id``."""
        node = self.node_at(folder_id, path)
        if node is None or node.is_folder:
            raise FileNotFoundError(path)
        return node.versions[-1].data

    def put(self, folder_id: str, path: str, data: bytes) -> Node:
        """Write a file directly in the state (a 'concurrent writer'), creating or versioning.

        Missing parent folders are created.
        """
        with self.lock:
            parent_path, _, name = path.rpartition("/")
            parent = self.nodes[folder_id]
            for part in [p for p in parent_path.split("/") if p]:
                child = self.child(parent.id, part)
                if child is None:
                    child = self.nodes[self.make_folder(part, parent.id)]
                parent = child
            assert parent.is_folder, parent_path
            node = self.child(parent.id, name)
            if node is None:
                node = Node(id=self.new_id(), name=name, parent_id=parent.id, is_folder=False)
                self.nodes[node.id] = node
            else:
                node.etag += 1
            node.versions.append(Version(self.new_id(), data, hashlib.sha1(data).hexdigest()))
            node.modified_at = _now()
            return node

    def remove(self, folder_id: str, path: str) -> None:
        """Delete the file or folder (with everything in it) at ``path`` directly in the state."""
        with self.lock:
            node = self.node_at(folder_id, path)
            if node is None:
                return
            doomed = [n.id for n in self.nodes.values() if n.id == node.id or self.is_ancestor(node.id, n)]
            for node_id in doomed:
                del self.nodes[node_id]

    def walk_files(self, folder_id: str) -> dict[str, bytes]:
        """Return ``{relative path: latest bytes}`` of every file under ``folder_id``."""
        out: dict[str, bytes] = {}
        stack = [(folder_id, "")]
        while stack:
            fid, prefix = stack.pop()
            for node in self.children(fid):
                rel = f"{prefix}{node.name}"
                if node.is_folder:
                    stack.append((node.id, rel + "/"))
                else:
                    out[rel] = node.versions[-1].data
        return out

    def requests(self, method: str | None = None, path: str | None = None) -> list[dict[str, Any]]:
        """Return the logged requests (method, path, query, if_match, status)."""
        with self.lock:
            return [
                r
                for r in self.log
                if (method is None or r["method"] == method) and (path is None or re.search(path, r["path"]))
            ]

    def chain(self, node: Node) -> list[dict[str, Any]]:
        """The folders from the root down to ``node``'s parent, as Box's ``path_collection``."""
        out: list[dict[str, Any]] = []
        cur = node.parent_id
        for _ in range(10_000):
            if cur is None or cur not in self.nodes:
                break
            folder = self.nodes[cur]
            out.append({"type": "folder", "id": folder.id, "name": folder.name})
            cur = folder.parent_id
        return out[::-1]

    def is_ancestor(self, folder_id: str, node: Node) -> bool:
        cur: str | None = node.parent_id
        for _ in range(10_000):
            if cur is None:
                return False
            if cur == folder_id:
                return True
            cur = self.nodes[cur].parent_id if cur in self.nodes else None
        return False

    # -- JSON shapes ----------------------------------------------------------------------
    def folder_json(self, node: Node, *, mini: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "folder",
            "id": node.id,
            "etag": str(node.etag),
            "sequence_id": str(node.etag),
            "name": node.name,
        }
        if not mini:
            out["parent"] = (
                {"type": "folder", "id": node.parent_id, "name": self.nodes[node.parent_id].name}
                if node.parent_id
                else None
            )
            out["created_at"] = node.created_at
            out["modified_at"] = node.modified_at
            out["item_status"] = "active"
        return out

    def file_json(self, node: Node, *, mini: bool = False) -> dict[str, Any]:
        ver = node.versions[-1]
        out: dict[str, Any] = {
            "type": "file",
            "id": node.id,
            "etag": str(node.etag),
            "sequence_id": str(node.etag),
            "name": node.name,
            "sha1": ver.sha1,
            "file_version": {"type": "file_version", "id": ver.id, "sha1": ver.sha1},
            "size": len(ver.data),
        }
        if not mini:
            assert node.parent_id is not None
            out["parent"] = {"type": "folder", "id": node.parent_id, "name": self.nodes[node.parent_id].name}
            out["path_collection"] = {"total_count": len(chain := self.chain(node)), "entries": chain}
            out["created_at"] = node.created_at
            out["modified_at"] = node.modified_at
            out["item_status"] = "active"
        return out

    def item_json(self, node: Node, *, mini: bool = False) -> dict[str, Any]:
        return self.folder_json(node, mini=mini) if node.is_folder else self.file_json(node, mini=mini)

    def metadata_json(self, node: Node, scope: str, key: str) -> dict[str, Any]:
        values = node.metadata[(scope, key)]
        return {
            "$parent": f"file_{node.id}",
            "$template": key,
            "$scope": f"enterprise_{self.enterprise_id}",
            "$version": 0,
            "$canEdit": True,
            **values,
        }


# -- the metadata query evaluator -----------------------------------------------------------
_TOKEN = re.compile(
    r"\s*(?:(?P<param>:[A-Za-z_][A-Za-z0-9_]*)|(?P<op>!=|>=|<=|=|<|>|\(|\)|,)|(?P<word>[A-Za-z_][A-Za-z0-9_.]*))"
)


class QueryError(ValueError):
    pass


def _tokens(query: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    for _ in range(len(query) + 1):
        if pos >= len(query) or not query[pos:].strip():
            return out
        m = _TOKEN.match(query, pos)
        if not m or m.end() == pos:
            raise QueryError(f"unexpected text at {pos}: {query[pos : pos + 20]!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class _Query:
    """Recursive-descent evaluator over one file's metadata values (bounded by token count)."""

    def __init__(self, query: str, params: dict[str, Any]) -> None:
        self.toks = _tokens(query)
        self.params = params

    def matches(self, values: dict[str, Any]) -> bool:
        self.i = 0
        self.values = values
        result = self._or()
        if self.i != len(self.toks):
            raise QueryError(f"trailing tokens: {self.toks[self.i :]}")
        return result

    def _peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def _next(self) -> tuple[str, str]:
        tok = self._peek()
        if tok is None:
            raise QueryError("query ends early")
        self.i += 1
        return tok

    def _kw(self, word: str) -> bool:
        tok = self._peek()
        if tok and tok[0] == "word" and tok[1].upper() == word:
            self.i += 1
            return True
        return False

    def _or(self) -> bool:
        result = self._and()
        while self._kw("OR"):
            right = self._and()
            result = result or right
        return result

    def _and(self) -> bool:
        result = self._not()
        while self._kw("AND"):
            right = self._not()
            result = result and right
        return result

    def _not(self) -> bool:
        if self._kw("NOT"):
            return not self._not()
        tok = self._peek()
        if tok == ("op", "("):
            self.i += 1
            result = self._or()
            if self._next() != ("op", ")"):
                raise QueryError("missing )")
            return result
        return self._cmp()

    def _param(self) -> Any:
        kind, text = self._next()
        if kind != "param":
            raise QueryError(f"expected a :param, got {text!r}")
        if text[1:] not in self.params:
            raise QueryError(f"missing query_params value for {text}")
        return self.params[text[1:]]

    def _list(self) -> list[Any]:
        if self._next() != ("op", "("):
            raise QueryError("expected (")
        items = [self._param()]
        while self._peek() == ("op", ","):
            self.i += 1
            items.append(self._param())
        if self._next() != ("op", ")"):
            raise QueryError("expected )")
        return items

    def _cmp(self) -> bool:
        kind, name = self._next()
        if kind != "word":
            raise QueryError(f"expected a field name, got {name!r}")
        if name not in BOX_MEMORY_FIELDS:
            raise QueryError(f"unknown field {name!r}")
        value = self.values.get(name)
        if self._kw("IN"):
            return value in self._list()
        if self._kw("HASANY"):
            have = set(value or [])
            return bool(have & set(self._list()))
        if self._kw("HASALL"):
            have = set(value or [])
            return set(self._list()) <= have
        kind, op = self._next()
        if kind != "op" or op not in {"=", "!=", "<", ">", "<=", ">="}:
            raise QueryError(f"expected an operator after {name}")
        arg = self._param()
        if op == "=":
            return bool(value == arg)
        if op == "!=":
            return bool(value != arg)
        if value is None:
            return False
        return bool({"<": value < arg, ">": value > arg, "<=": value <= arg, ">=": value >= arg}[op])


# -- the HTTP side ----------------------------------------------------------------------------
class _Handler(BaseHTTPRequestHandler):
    fake: FakeBox
    protocol_version = "HTTP/1.1"  # keep-alive, as Box; every body is read whole before answering
    timeout = 30
    wbufsize = -1  # headers and body leave in one write (flushed after each request)

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle stalls on keep-alive

    def log_message(self, format: str, *args: Any) -> None:
        return

    # one entry point for every method
    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def do_OPTIONS(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        fake = self.fake
        url = urllib.parse.urlsplit(self.path)
        path = url.path
        query = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
        record: dict[str, Any] = {
            "method": self.command,
            "path": path,
            "query": query,
            "if_match": self.headers.get("If-Match"),
            "status": None,
        }
        with fake.lock:
            fake.log.append(record)
        fault = fake._take_fault(self.command, path)
        self._body: bytes | None = None
        try:
            if fault is not None and fault.kind == "drop":
                self._read_body(partial=True)
                raise _DropConnection
            self._read_body()
            if fault is not None and fault.kind == "hang":
                time.sleep(fault.seconds)
                raise _DropConnection
            if fault is not None and fault.kind == "status":
                headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
                code = {412: "precondition_failed", 409: "item_name_in_use", 429: "rate_limit_exceeded"}.get(
                    fault.status, "internal_server_error"
                )
                raise BoxError(fault.status, code, f"injected {fault.status}", headers=headers)
            if fault is not None and fault.kind == "callback":
                assert fault.callback is not None
                fault.callback(fake)
            status, payload, headers = self._route(path, query)
            if fault is not None and fault.kind == "drop_after":
                raise _DropConnection
            if fault is not None and fault.kind == "hang_after":
                time.sleep(fault.seconds)
                raise _DropConnection
        except _DropConnection:
            record["status"] = "dropped"
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        except BoxError as err:
            status = err.status
            headers = dict(err.headers)
            payload = {
                "type": "error",
                "status": err.status,
                "code": err.code,
                "message": err.message,
                "request_id": fake.new_id(),
            }
            if err.context:
                payload["context_info"] = err.context
            if status == 401:
                payload = None
                headers = {"WWW-Authenticate": 'Bearer realm="Service", error="invalid_token"'}
        record["status"] = status
        self._send(status, payload, headers)

    def _send(self, status: int, payload: Any, headers: dict[str, str]) -> None:
        if isinstance(payload, bytes):
            body = payload
            ctype = "application/octet-stream"
        elif payload is None:
            body = b""
            ctype = "application/json"
        else:
            body = json.dumps(payload).encode()
            ctype = "application/json"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers.items():
            self.send_header(k, v)
        if status in (411, 413):  # the body was not read: this connection cannot be reused
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _read_body(self, *, partial: bool = False) -> bytes:
        if self._body is not None:
            return self._body
        self._body = b""
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            if self.headers.get("Transfer-Encoding"):
                raise BoxError(411, "length_required", "send Content-Length")
            return b""
        length = int(length_text)
        if length > MAX_BODY:
            raise BoxError(413, "file_size_limit_exceeded", "too big")
        if partial:
            return self.rfile.read(length // 2)
        self._body = self.rfile.read(length)
        return self._body

    def _json_body(self) -> Any:
        raw = self._read_body()
        try:
            return json.loads(raw or b"null")
        except ValueError as exc:
            raise BoxError(400, "bad_request", f"invalid JSON: {exc}") from exc

    def _auth(self) -> None:
        header = self.headers.get("Authorization", "")
        token = header[7:] if header.startswith("Bearer ") else ""
        if token not in self.fake.tokens:
            raise BoxError(401, "unauthorized", "")

    # routes
    def _route(self, path: str, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        fake = self.fake
        m = re.fullmatch(r"/_content/(\d+)/(\d+)", path)
        if m and self.command == "GET":
            return self._content(m[1], m[2])
        if path == "/oauth2/token" and self.command == "POST":
            return self._token()
        self._auth()
        if path.startswith("/2.0/files/content") or re.fullmatch(r"/2.0/files/\d+/content", path):
            if self.command == "POST":
                # the SDK trap: uploads must go to upload_url, never to the API host
                raise BoxError(404, "not_found", "uploads go to the upload host")
        routes: list[tuple[str, str, Callable[..., tuple[int, Any, dict[str, str]]]]] = [
            ("GET", r"/2.0/users/me", self._me),
            ("GET", r"/2.0/folders/(\d+)", self._get_folder),
            ("GET", r"/2.0/folders/(\d+)/items", self._folder_items),
            ("POST", r"/2.0/folders", self._create_folder),
            ("GET", r"/2.0/files/(\d+)", self._get_file),
            ("DELETE", r"/2.0/files/(\d+)", self._delete_file),
            ("GET", r"/2.0/files/(\d+)/content", self._download),
            ("POST", r"/upload/2.0/files/content", self._upload),
            ("POST", r"/upload/2.0/files/(\d+)/content", self._upload_version),
            ("GET", r"/2.0/files/(\d+)/metadata/(\w+)/(\w+)", self._get_metadata),
            ("POST", r"/2.0/files/(\d+)/metadata/(\w+)/(\w+)", self._create_metadata),
            ("PUT", r"/2.0/files/(\d+)/metadata/(\w+)/(\w+)", self._update_metadata),
            ("POST", r"/2.0/metadata_queries/execute_read", self._metadata_query),
        ]
        for method, pattern, fn in routes:
            m = re.fullmatch(pattern, path)
            if m and method == self.command:
                with fake.lock:
                    return fn(query, *m.groups())
        raise BoxError(404, "not_found", f"no route {self.command} {path}")

    def _token(self) -> tuple[int, Any, dict[str, str]]:
        form = dict(urllib.parse.parse_qsl(self._read_body().decode()))
        if form.get("grant_type") != "client_credentials":
            raise BoxError(400, "unsupported_grant_type", "only client_credentials here")
        if self.fake.clients.get(form.get("client_id", "")) != form.get("client_secret"):
            raise BoxError(400, "invalid_client", "The client credentials are invalid")
        token = "fake-ccg-" + base64.b32encode(self.fake.new_id().encode()).decode().strip("=").lower()
        with self.fake.lock:
            self.fake.tokens.add(token)
            self.fake.token_grants.append(
                {"subject_type": form.get("box_subject_type", ""), "subject_id": form.get("box_subject_id", "")}
            )
        return 200, {"access_token": token, "expires_in": 3600, "token_type": "bearer", "restricted_to": []}, {}

    def _me(self, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        return (
            200,
            {
                "type": "user",
                "id": "7",
                "name": "Fake",
                "enterprise": {"type": "enterprise", "id": self.fake.enterprise_id},
            },
            {},
        )

    def _node(self, node_id: str, *, folder: bool) -> Node:
        node = self.fake.nodes.get(node_id)
        if node is None or node.is_folder != folder:
            raise BoxError(404, "not_found", f"Could not find the specified resource ({node_id})")
        return node

    def _get_folder(self, query: dict[str, str], folder_id: str) -> tuple[int, Any, dict[str, str]]:
        return 200, self.fake.folder_json(self._node(folder_id, folder=True)), {}

    def _folder_items(self, query: dict[str, str], folder_id: str) -> tuple[int, Any, dict[str, str]]:
        self._node(folder_id, folder=True)
        limit = min(int(query.get("limit") or 100), self.fake.page_size_max)
        if limit < 1:
            raise BoxError(400, "bad_request", "limit must be >= 1")
        kids = self.fake.children(folder_id)
        if query.get("usemarker", "").lower() == "true":
            start = int(base64.b64decode(query["marker"]).decode()) if query.get("marker") else 0
            page = kids[start : start + limit]
            nxt = start + limit
            if self.fake.repeat_marker:  # a broken server: always "the next page is page 2"
                nxt = min(limit, len(kids) - 1)
            payload: dict[str, Any] = {
                "limit": limit,
                "entries": [self.fake.item_json(n, mini=True) for n in page],
                "next_marker": base64.b64encode(str(nxt).encode()).decode() if nxt < len(kids) else None,
            }
            return 200, payload, {}
        offset = int(query.get("offset") or 0)
        page = kids[offset : offset + limit]
        return (
            200,
            {
                "total_count": len(kids),
                "offset": offset,
                "limit": limit,
                "entries": [self.fake.item_json(n, mini=True) for n in page],
                "order": [{"by": "type", "direction": "ASC"}, {"by": "name", "direction": "ASC"}],
            },
            {},
        )

    def _check_name(self, name: Any) -> str:
        if not isinstance(name, str) or not name or "/" in name or "\\" in name or name in (".", ".."):
            raise BoxError(400, "bad_request", f"invalid name {name!r}")
        if name != name.rstrip():
            raise BoxError(400, "bad_request", "names may not end with spaces")
        return name

    def _create_folder(self, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        body = self._json_body()
        name = self._check_name(body.get("name"))
        parent = self._node(str((body.get("parent") or {}).get("id")), folder=True)
        existing = self.fake.child(parent.id, name)
        if existing is not None:
            raise BoxError(
                409,
                "item_name_in_use",
                "Item with the same name already exists",
                {"conflicts": [self.fake.item_json(existing, mini=True)]},
            )
        node = Node(id=self.fake.new_id(), name=name, parent_id=parent.id, is_folder=True)
        self.fake.nodes[node.id] = node
        return 201, self.fake.folder_json(node), {}

    def _get_file(self, query: dict[str, str], file_id: str) -> tuple[int, Any, dict[str, str]]:
        return 200, self.fake.file_json(self._node(file_id, folder=False)), {}

    def _check_if_match(self, node: Node) -> None:
        wanted = self.headers.get("If-Match")
        if wanted is not None and wanted != str(node.etag):
            raise BoxError(
                412,
                "precondition_failed",
                "The resource has been modified. Please retrieve the resource again and retry",
            )

    def _delete_file(self, query: dict[str, str], file_id: str) -> tuple[int, Any, dict[str, str]]:
        node = self._node(file_id, folder=False)
        self._check_if_match(node)
        del self.fake.nodes[file_id]
        return 204, None, {}

    def _download(self, query: dict[str, str], file_id: str) -> tuple[int, Any, dict[str, str]]:
        node = self._node(file_id, folder=False)
        version = query.get("version") or node.versions[-1].id
        if not any(v.id == version for v in node.versions):
            raise BoxError(404, "not_found", f"no version {version}")
        return 302, None, {"Location": f"{self.fake.url}/_content/{file_id}/{version}"}

    def _content(self, file_id: str, version_id: str) -> tuple[int, Any, dict[str, str]]:
        with self.fake.lock:
            node = self.fake.nodes.get(file_id)
            found = [v for v in (node.versions if node else []) if v.id == version_id]
        if not found:
            raise BoxError(404, "not_found", "content gone")
        return 200, found[0].data, {}

    def _multipart(self) -> tuple[dict[str, Any], bytes]:
        ctype = self.headers.get("Content-Type", "")
        m = re.search(r'boundary="?([^";]+)"?', ctype)
        if not ctype.startswith("multipart/form-data") or not m:
            raise BoxError(400, "bad_request", "expected multipart/form-data")
        body = self._read_body()
        delim = b"--" + m[1].encode()
        parts: list[tuple[str, bytes]] = []
        for chunk in body.split(delim)[1:]:
            if chunk.startswith(b"--"):
                break
            chunk = chunk.removeprefix(b"\r\n")
            head, _, content = chunk.partition(b"\r\n\r\n")
            name_m = re.search(rb'name="([^"]*)"', head)
            parts.append((name_m[1].decode() if name_m else "", content.removesuffix(b"\r\n")))
        names = [n for n, _ in parts]
        if names[:2] != ["attributes", "file"]:
            raise BoxError(400, "metadata_after_file_contents", f"parts in the wrong order: {names}")
        try:
            attributes = json.loads(parts[0][1])
        except ValueError as exc:
            raise BoxError(400, "bad_request", "attributes are not JSON") from exc
        return attributes, parts[1][1]

    def _upload(self, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        attributes, data = self._multipart()
        name = self._check_name(attributes.get("name"))
        parent = self._node(str((attributes.get("parent") or {}).get("id")), folder=True)
        existing = self.fake.child(parent.id, name)
        if existing is not None:
            raise BoxError(
                409,
                "item_name_in_use",
                "Item with the same name already exists",
                {"conflicts": self.fake.item_json(existing, mini=True)},
            )
        node = Node(id=self.fake.new_id(), name=name, parent_id=parent.id, is_folder=False)
        node.versions.append(Version(self.fake.new_id(), data, hashlib.sha1(data).hexdigest()))
        self.fake.nodes[node.id] = node
        return 201, {"total_count": 1, "entries": [self.fake.file_json(node)]}, {}

    def _upload_version(self, query: dict[str, str], file_id: str) -> tuple[int, Any, dict[str, str]]:
        attributes, data = self._multipart()
        node = self._node(file_id, folder=False)
        self._check_if_match(node)
        if attributes.get("name") and attributes["name"] != node.name:
            node.name = self._check_name(attributes["name"])
        node.etag += 1
        node.versions.append(Version(self.fake.new_id(), data, hashlib.sha1(data).hexdigest()))
        node.modified_at = _now()
        return 201, {"total_count": 1, "entries": [self.fake.file_json(node)]}, {}

    def _template(self, scope: str, key: str) -> None:
        if scope != "enterprise" or key not in self.fake.templates:
            raise BoxError(404, "instance_tuple_not_found", f"template {scope}.{key} not found")

    def _check_values(self, values: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in values.items():
            kind = BOX_MEMORY_FIELDS.get(key)
            if kind is None:
                raise BoxError(400, "bad_request", f"unknown field {key!r}")
            if kind == "multiSelect":
                if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                    raise BoxError(400, "bad_request", f"{key} must be a list of strings")
            elif kind == "enum":
                if value not in ENUMS[key]:
                    raise BoxError(400, "bad_request", f"{key}: {value!r} is not an option")
            elif kind == "date":
                if not (
                    isinstance(value, str)
                    and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", value)
                ):
                    raise BoxError(400, "bad_request", f"{key}: {value!r} is not an RFC 3339 date")
            elif not isinstance(value, str):
                raise BoxError(400, "bad_request", f"{key} must be a string")
            out[key] = value
        return out

    def _get_metadata(
        self, query: dict[str, str], file_id: str, scope: str, key: str
    ) -> tuple[int, Any, dict[str, str]]:
        node = self._node(file_id, folder=False)
        self._template(scope, key)
        if (scope, key) not in node.metadata:
            raise BoxError(404, "instance_not_found", "no such instance")
        return 200, self.fake.metadata_json(node, scope, key), {}

    def _create_metadata(
        self, query: dict[str, str], file_id: str, scope: str, key: str
    ) -> tuple[int, Any, dict[str, str]]:
        node = self._node(file_id, folder=False)
        self._template(scope, key)
        body = self._json_body()
        if not isinstance(body, dict):
            raise BoxError(400, "bad_request", "body must be an object")
        if (scope, key) in node.metadata:
            raise BoxError(409, "tuple_already_exists", "instance already exists")
        node.metadata[(scope, key)] = self._check_values(body)
        return 201, self.fake.metadata_json(node, scope, key), {}

    def _update_metadata(
        self, query: dict[str, str], file_id: str, scope: str, key: str
    ) -> tuple[int, Any, dict[str, str]]:
        node = self._node(file_id, folder=False)
        self._template(scope, key)
        if self.headers.get("Content-Type", "").split(";")[0] != "application/json-patch+json":
            raise BoxError(400, "bad_request", "use application/json-patch+json")
        ops = self._json_body()
        if (scope, key) not in node.metadata:
            raise BoxError(404, "instance_not_found", "no such instance")
        values = dict(node.metadata[(scope, key)])
        for op in ops if isinstance(ops, list) else []:
            field_name = str(op.get("path", "")).lstrip("/")
            if op.get("op") in ("add", "replace"):
                if op["op"] == "replace" and field_name not in values:
                    raise BoxError(400, "bad_request", f"replace of missing {field_name}")
                values[field_name] = op.get("value")
            elif op.get("op") == "remove":
                if field_name not in values:
                    raise BoxError(400, "bad_request", f"remove of missing {field_name}")
                del values[field_name]
            elif op.get("op") == "test":
                if values.get(field_name) != op.get("value"):
                    raise BoxError(409, "conflict", "test failed")
            else:
                raise BoxError(400, "bad_request", f"unsupported op {op!r}")
        node.metadata[(scope, key)] = self._check_values(values)
        return 200, self.fake.metadata_json(node, scope, key), {}

    def _metadata_query(self, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        body = self._json_body()
        source = str(body.get("from", ""))
        scope, _, key = source.partition(".")
        if not scope.startswith("enterprise"):
            raise BoxError(400, "bad_request", f"bad from {source!r}")
        self._template("enterprise", key)
        ancestor = str(body.get("ancestor_folder_id", ""))
        if ancestor != "0":
            self._node(ancestor, folder=True)
        try:
            q = _Query(body.get("query") or "", body.get("query_params") or {}) if body.get("query") else None
            hits = [
                n
                for n in sorted(self.fake.nodes.values(), key=lambda n: int(n.id))
                if not n.is_folder
                and ("enterprise", key) in n.metadata
                and (ancestor == "0" or self.fake.is_ancestor(ancestor, n))
                and (q is None or q.matches(n.metadata[("enterprise", key)]))
            ]
        except QueryError as exc:
            raise BoxError(400, "bad_request", f"invalid query: {exc}") from exc
        limit = min(int(body.get("limit") or 100), 100)
        start = int(base64.b64decode(body["marker"]).decode()) if body.get("marker") else 0
        page = hits[start : start + limit]
        want_md = any(str(f).startswith(f"metadata.{scope}.{key}") for f in body.get("fields") or [])
        entries = []
        for node in page:
            item = self.fake.file_json(node)
            if want_md:
                item["metadata"] = {scope: {key: self.fake.metadata_json(node, "enterprise", key)}}
            entries.append(item)
        nxt = start + limit
        return (
            200,
            {
                "entries": entries,
                "limit": limit,
                "next_marker": base64.b64encode(str(nxt).encode()).decode() if nxt < len(hits) else None,
            },
            {},
        )
