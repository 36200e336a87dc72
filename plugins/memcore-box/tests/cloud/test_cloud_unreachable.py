"""A Box cloud store whose host cannot be reached says so, not "raise the retry count" (issue 21).

A closed port on 127.0.0.1 stands for a machine without network: nothing listens there, so every
connection is refused at once.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys


def _closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_host_that_cannot_be_reached_is_named_and_no_retry_count_is_suggested() -> None:
    base = f"http://127.0.0.1:{_closed_port()}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOX_", "MEMCORE_BOX_"))}
    env.update(
        BOX_DEVELOPER_TOKEN="fake-dev-token",
        MEMCORE_BOX_API_URL=base,
        MEMCORE_BOX_UPLOAD_URL=base,
        MEMCORE_BOX_OAUTH_URL=base,
        MEMCORE_BOX_RETRY_ATTEMPTS="2",
        MEMCORE_BOX_RETRY_BASE_DELAY="0.001",
        MEMCORE_BOX_RETRY_MAX_DELAY="0.002",
    )
    env.pop("MEMCORE_LOAD_PLUGINS", None)
    proc = subprocess.run(
        [sys.executable, "-m", "memcore", "ls", "--store", "box+cloud:12345"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    [line] = proc.stderr.splitlines()
    port = base.rsplit(":", 1)[1]
    assert f"could not reach 127.0.0.1:{port} (connection failed (ConnectionError), 2 attempt(s))" in line
    assert "check the network connection" in line
    assert "RETRY" not in line and "fake-dev-token" not in line
