from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from memcore import UnsafePathError
from memcore.errors import ParseError
from memcore.storage import TextFile, append_record, atomic_write, check_component, file_lock, safe_join, scratch_writes

_APPENDER = textwrap.dedent(
    """
    import sys
    from memcore.storage import append_record
    path, worker = sys.argv[1], int(sys.argv[2])
    for i in range(200):
        append_record(path, f"worker={worker:02d} record={i:04d} {'x' * 200}\\n".encode())
    """
)


@pytest.mark.slow
def test_eight_processes_append_1600_whole_records(tmp_path: Path) -> None:
    target = tmp_path / "log.md"
    procs = [subprocess.Popen([sys.executable, "-c", _APPENDER, str(target), str(w)]) for w in range(8)]
    for p in procs:
        assert p.wait(120) == 0
    lines = target.read_text().splitlines()
    assert len(lines) == 1600
    assert all(len(line) == len("worker=00 record=0000 ") + 200 for line in lines)
    assert len(set(lines)) == 1600
    for w in range(8):
        mine = [int(line.split()[1][7:]) for line in lines if line.startswith(f"worker={w:02d}")]
        assert mine == list(range(200))


def test_append_repairs_missing_final_newline(tmp_path: Path) -> None:
    target = tmp_path / "log.md"
    target.write_bytes(b"first record without newline")
    offset = append_record(target, b"second\n")
    assert target.read_bytes() == b"first record without newline\nsecond\n"
    assert offset == len(b"first record without newline\n")
    append_record(tmp_path / "new.md", b"only\n")
    assert (tmp_path / "new.md").read_bytes() == b"only\n"


def test_atomic_write_keeps_permissions_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "f.md"
    target.write_bytes(b"old")
    os.chmod(target, 0o600)
    atomic_write(target, b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    atomic_write(tmp_path / "g.md", b"x", mode=0o640)
    assert stat.S_IMODE((tmp_path / "g.md").stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.md", "g.md"]


def test_atomic_write_failure_leaves_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "missing-folder" / "f.md"
    with pytest.raises(FileNotFoundError):
        atomic_write(target, b"x")


_WRITER = textwrap.dedent(
    """
    import sys
    from memcore.storage import atomic_write
    path = sys.argv[1]
    big = [bytes([65 + i % 26]) * (4 * 1024 * 1024) for i in range(2)]
    i = 0
    print("ready", flush=True)
    while True:
        atomic_write(path, big[i % 2])
        i += 1
    """
)


@pytest.mark.slow
def test_sigkill_during_atomic_writes_leaves_old_or_new_never_a_mix(tmp_path: Path) -> None:
    target = tmp_path / "f.bin"
    old = b"A" * (4 * 1024 * 1024)
    target.write_bytes(old)
    for delay in (0.05, 0.11, 0.23, 0.31, 0.47):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(target)], stdout=subprocess.PIPE)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"ready"
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        proc.stdout.close()
        data = target.read_bytes()
        assert data in (b"A" * len(old), b"B" * len(old)), f"torn file after kill at {delay}s"
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "f.bin"]
    # A killed writer may leave its temp file behind, never a changed target.
    assert all(name.startswith(".f.bin.") and name.endswith(".tmp") for name in leftovers)


ESCAPES = [
    "../outside.md",
    "a/../../outside.md",
    "/etc/passwd",
    "\\\\server\\share",
    "..\\outside.md",
    "C:\\Windows\\system32",
    "c:relative",
    "a\x00b",
    "CON",
    "con.md",
    "NUL.txt",
    "com1",
    "LPT9.log",
    "aux",
    ".",
    "..",
    "",
    "name.",
    "name ",
    "a/./b",
    "what?.md",
    "pipe|name",
    "tab\tname",
]


@pytest.mark.parametrize("bad", ESCAPES)
def test_safe_join_refuses_escaping_and_unportable_paths(tmp_path: Path, bad: str) -> None:
    store = tmp_path / "store"
    store.mkdir()
    with pytest.raises(UnsafePathError):
        safe_join(store, bad)


def test_safe_join_refuses_symlink_leading_outside(tmp_path: Path) -> None:
    store = tmp_path / "store"
    (store / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (store / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafePathError, match="outside the store"):
        safe_join(store, "link/file.md")
    assert safe_join(store, "sub/ok.md") == store / "sub" / "ok.md"
    assert safe_join(store, "observations", "2026-04.md") == store / "observations" / "2026-04.md"


def test_check_component_accepts_unicode() -> None:
    assert check_component("fact__café-日本.md") == "fact__café-日本.md"


def test_file_lock_is_reentrant_and_outside_the_store(tmp_path: Path) -> None:
    with file_lock(tmp_path), file_lock(tmp_path):
        pass
    assert list(tmp_path.iterdir()) == []


def _free_for_another_thread(path: Path) -> bool:
    """Whether another thread can take ``path``'s lock right now (it gives up after 50 ms)."""
    import threading

    got: list[bool] = []

    def attempt() -> None:
        try:
            with file_lock(path, timeout=0.05):
                got.append(True)
        except TimeoutError:
            got.append(False)

    worker = threading.Thread(target=attempt)
    worker.start()
    worker.join()
    return got == [True]


def test_a_nested_lock_leaves_the_outer_one_held(tmp_path: Path) -> None:
    """Leaving a nested block of the same lock (an add in a batch) does not release the batch's."""
    with file_lock(tmp_path):
        for _ in range(3):
            with file_lock(tmp_path), file_lock(str(tmp_path)):
                pass
        assert not _free_for_another_thread(tmp_path)
    assert _free_for_another_thread(tmp_path)


def test_blocks_ending_out_of_order_keep_the_lock_until_the_last(tmp_path: Path) -> None:
    """Two blocks of one lock whose first ends first (generators, ExitStack): still held by the second."""
    first, second = file_lock(tmp_path), file_lock(tmp_path)
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert not _free_for_another_thread(tmp_path)
    second.__exit__(None, None, None)
    assert _free_for_another_thread(tmp_path)


def test_a_nested_block_locks_what_a_relative_path_names_now(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same relative name after a chdir, or a symlink pointed elsewhere, is another store: locked too."""
    for name in ("a", "b", "c", "d"):
        (tmp_path / name / "store").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "a")
    with file_lock("store"):
        monkeypatch.chdir(tmp_path / "b")
        with file_lock("store"):
            assert not _free_for_another_thread(tmp_path / "b" / "store")
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "c")
    with file_lock(link / "store"):
        link.unlink()
        link.symlink_to(tmp_path / "d")
        with file_lock(link / "store"):
            assert not _free_for_another_thread(tmp_path / "d" / "store")
        assert not _free_for_another_thread(tmp_path / "c" / "store")


@pytest.mark.parametrize(
    ("raw", "bom", "newline", "mixed"),
    [
        (b"a\nb\n", False, "\n", False),
        (b"\xef\xbb\xbfa\r\nb\r\n", True, "\r\n", False),
        (b"a\r\nb\nc\r\n", False, "\r\n", True),
        (b"a\rb\r", False, "\r", False),
        (b"", False, "\n", False),
    ],
)
def test_textfile_round_trips_bytes(raw: bytes, bom: bool, newline: str, mixed: bool) -> None:
    doc = TextFile.decode(raw)
    assert (doc.bom, doc.newline, doc.mixed) == (bom, newline, mixed)
    assert "\r" not in doc.text
    if not mixed:
        assert doc.encode() == raw


def test_textfile_rejects_non_utf8_with_line() -> None:
    with pytest.raises(ParseError, match=r"f\.md:2: not UTF-8"):
        TextFile.decode(b"ok\n\xff\xfe bad", path="f.md")


def test_append_repairs_missing_newline_with_the_files_line_ending(tmp_path: Path) -> None:
    target = tmp_path / "crlf.md"
    target.write_bytes(b"\xef\xbb\xbfline one\r\nlast without newline")
    append_record(target, b"record\r\n")
    assert target.read_bytes() == b"\xef\xbb\xbfline one\r\nlast without newline\r\nrecord\r\n"


def test_scratch_writes_skip_fsync_only_inside_the_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counting_fsync)
    target = tmp_path / "f.md"
    atomic_write(target, b"durable\n")
    append_record(target, b"record\n")
    durable = len(synced)
    assert durable >= 3  # file + folder for the write, file for the append

    seen_in_thread: list[int] = []
    with pytest.raises(RuntimeError), scratch_writes():
        atomic_write(target, b"scratch\n")
        append_record(target, b"more\n")
        assert len(synced) == durable
        # another thread keeps durable writes
        worker = threading.Thread(target=lambda: (atomic_write(tmp_path / "t.md", b"x"), seen_in_thread.append(1)))
        worker.start()
        worker.join()
        assert len(synced) > durable
        raise RuntimeError("leaving the block by an exception restores durability")
    assert target.read_bytes() == b"scratch\nmore\n"
    before = len(synced)
    atomic_write(target, b"durable again\n")
    assert len(synced) >= before + 2 and seen_in_thread == [1]


def test_encoding_a_lone_surrogate_is_an_invalid_entry_before_any_write() -> None:
    """Text that got past the model (a list mutated after validation) still never reaches a file."""
    from memcore.errors import InvalidEntryError

    crlf = TextFile.decode(b"a\r\nb\r\n")
    with pytest.raises(InvalidEntryError, match=r"lone surrogate U\+DC80 \(line 2 of the file to write\)"):
        crlf.encode("ok\nbad \udc80\n")
    assert crlf.encode("ok\n") == b"ok\r\n"


def test_a_lock_held_too_long_is_a_store_busy_error_naming_the_store(tmp_path: Path) -> None:
    from memcore.errors import MemcoreError, StoreBusyError

    store = tmp_path / "MEMORY.md"
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with file_lock(store):
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(10)
        with pytest.raises(StoreBusyError) as caught, file_lock(store, timeout=0.2):
            pass
    finally:
        release.set()
        holder.join()
    message = str(caught.value)
    assert message.startswith(f"{store}: another process") and "more than 0.2 s" in message
    assert isinstance(caught.value, MemcoreError) and isinstance(caught.value, TimeoutError)
    with file_lock(store, timeout=1):  # free again
        pass


def test_check_component_refuses_a_name_over_255_utf8_bytes_before_the_file_system_does() -> None:
    assert check_component("a" * 255) == "a" * 255
    assert check_component("é" * 127) == "é" * 127  # 254 bytes
    with pytest.raises(UnsafePathError, match="256 bytes in UTF-8, over the 255"):
        check_component("é" * 128)
    with pytest.raises(UnsafePathError, match="over the 255") as caught:
        check_component("t" * 5000)
    assert len(str(caught.value)) < 200  # the name is cut in the message
