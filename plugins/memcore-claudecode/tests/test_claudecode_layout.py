"""A topic's frontmatter layout (key orders, double quotes, ``metadata: ``) read and followed by ``add``.

Claude Code writes its topic files through the model's Write tool, so their frontmatter comes in
more than one layout (claude-code-memory.md B.4). The reader puts in ``extra.claudecode.layout``
how a topic's frontmatter differs from the layout memcore writes a new topic in; ``add`` follows
it, so a topic copied into a new store is the same file, byte for byte. The hint is never data:
it is not written into the ``memcore:`` key and not compared as content.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.models import Kind, MemoryEntry
from memcore_claudecode.codec import _native_meta, written_order
from memcore_claudecode.mapping import LOCATION_KEYS
from memcore_claudecode.provider import ClaudeCodeProvider

SAMPLES = Path(__file__).resolve().parents[3].parent / "shared" / "samples" / "claude-code-memory"
TOPICS = sorted(
    p.relative_to(SAMPLES).as_posix() for p in (SAMPLES / "auto-memory").glob("*/*.md") if p.name != "MEMORY.md"
)
_0WAQ = SAMPLES / "auto-memory" / "0WAQ-gsim-ops" / "feedback_reply_style.md"


def _read_one(root: Path, name: str, data: bytes) -> MemoryEntry:
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_bytes(data)
    with ClaudeCodeProvider(root, read_only=True) as store:
        entry = store.get(name)
    return entry.model_copy(update={"created_at": entry.created_at, "updated_at": entry.updated_at})  # as copied


def _new_store(root: Path) -> Path:
    ClaudeCodeProvider.init_store(str(root))
    return root


@pytest.mark.parametrize("rel", TOPICS)
def test_every_sample_topic_added_to_a_new_store_is_the_same_file(rel: str, tmp_path: Path) -> None:
    name = rel.rpartition("/")[2]
    entry = _read_one(tmp_path / "a", name, (SAMPLES / rel).read_bytes())
    with ClaudeCodeProvider(_new_store(tmp_path / "b")) as store:
        stored = store.add(entry)
    assert (tmp_path / "b" / name).read_bytes() == (SAMPLES / rel).read_bytes()
    assert stored.extra["claudecode"].get("layout") == entry.extra["claudecode"].get("layout")


@pytest.mark.parametrize("rel", TOPICS)
def test_the_writer_order_the_reader_compares_with_is_the_writers(rel: str, tmp_path: Path) -> None:
    entry = _read_one(tmp_path, rel.rpartition("/")[2], (SAMPLES / rel).read_bytes())
    for shape in ({}, {"shape": "top-level"}):
        cc = {k: v for k, v in entry.extra["claudecode"].items() if k not in LOCATION_KEYS | {"layout"}} | shape
        for updated in (entry.updated_at, None):
            probe = entry.model_copy(update={"updated_at": updated})
            meta = _native_meta(probe, cc, None, "topic") or {}
            nested = (
                {"metadata": list(meta["metadata"])} if isinstance(meta.get("metadata"), dict) and not shape else None
            )
            assert written_order(probe, cc) == (list(meta), nested)


def test_a_topic_laid_out_as_memcore_writes_carries_no_layout(tmp_path: Path) -> None:
    with ClaudeCodeProvider(_new_store(tmp_path)) as store:
        stored = store.add(MemoryEntry(title="tidy", kind=Kind.PREFERENCE, body="Body.\n"))
    assert "layout" not in stored.extra["claudecode"]


def test_the_0waq_layout_is_read(tmp_path: Path) -> None:
    entry = _read_one(tmp_path, "feedback_reply_style.md", _0WAQ.read_bytes())
    assert entry.extra["claudecode"]["layout"] == {
        "nested": {"metadata": ["node_type", "type", "originSessionId"]},
        "quoted": ["description"],
        "spaced": ["metadata"],
    }


def test_a_copied_topic_whose_values_changed_keeps_the_layout_and_the_new_values(tmp_path: Path) -> None:
    entry = _read_one(tmp_path / "a", "feedback_reply_style.md", _0WAQ.read_bytes())
    entry.extra["claudecode"]["description"] = 'Terse: "no emoji"'
    entry.extra["claudecode"]["frontmatter"]["metadata"]["added"] = "x"
    with ClaudeCodeProvider(_new_store(tmp_path / "b")) as store:
        stored = store.add(entry.model_copy(update={"title": "reply-style"}))
    head = (tmp_path / "b" / "feedback_reply_style.md").read_text("utf-8").split("---\n")[1]
    assert head == (
        "name: reply-style\n"
        'description: "Terse: \\"no emoji\\""\n'
        "metadata: \n"
        "  node_type: memory\n"
        "  type: feedback\n"
        "  originSessionId: a8aa7342-1004-49e0-b73c-995062472e90\n"
        "  added: x\n"
    )
    assert stored.title == "reply-style" and stored.extra["claudecode"]["description"] == 'Terse: "no emoji"'


def test_the_layout_is_never_written_as_data(tmp_path: Path) -> None:
    layout = {"keys": ["description", "name"], "quoted": ["name"], "spaced": ["metadata"], "bogus": 1}
    entry = MemoryEntry(title="n", kind=Kind.FACT, body="b\n", extra={"claudecode": {"layout": layout}})
    with ClaudeCodeProvider(_new_store(tmp_path)) as store:
        stored = store.add(entry.model_copy(update={"updated_at": None, "created_at": None}))
    text = (tmp_path / str(stored.id)).read_text("utf-8")
    assert text == '---\ndescription: b\nname: "n"\nmetadata: \n  type: user\n---\nb\n'
    assert "memcore" not in text and "bogus" not in text


def test_a_topic_keeps_its_layout_through_basic_memory_and_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcore.migrate import migrate

    monkeypatch.setenv("MEMCORE_STATE_DIR", str(tmp_path / "state"))
    _read_one(tmp_path / "a", "feedback_reply_style.md", _0WAQ.read_bytes())
    assert migrate(f"claudecode:{tmp_path / 'a'}", f"basicmemory:{tmp_path / 'bm'}").counts["failed"] == 0
    back = migrate(f"basicmemory:{tmp_path / 'bm'}", f"claudecode:{tmp_path / 'c'}")
    assert back.counts["written"] == 1 and back.counts["lossy"] == 0
    lines = (tmp_path / "c" / "feedback_reply_style.md").read_text("utf-8").split("\n")
    at = lines.index("memcore:")  # the migration's provenance stamp, in memcore's key, last
    stamp = lines[at : at + 4]
    assert stamp[2] == "    memcore:" and stamp[3].startswith("      migrated_from: ")
    assert "\n".join(lines[:at] + lines[at + 4 :]).encode() == _0WAQ.read_bytes()
