"""batch(): one write per touched file, same bytes as writing one by one; incremental re-parse.

The same scenario (headings, nodes, child headings, nodes placed before existing child
headings, edges, an F# heading with a detail file, Pursuits, a supersede pair, updates,
archive, delete, refused writes) runs into two copies of the authors' example store: once
inside ``batch()``, once write by write. Every file must be byte for byte the same, and
every entry a write returned must equal what a reopened store reads. A third run checks,
after every write of a batch, that the in-memory graph the fast path maintains equals a
full parse of the text it holds.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memcore.errors import InvalidEntryError
from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore_rightmemory import GraphInvariantError, RightMemoryProvider
from memcore_rightmemory._graph import Graph
from memcore_rightmemory._parse import Source, parse_doc

SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples" / "rightmemory"
MEMORY_EXAMPLE = SAMPLES / "MEMORY.example.at-0fad0d5.md"
PURSUITS_EXAMPLE = SAMPLES / "PURSUITS.example.at-23141ba.md"


def _store(root: Path) -> Path:
    root.mkdir()
    shutil.copyfile(MEMORY_EXAMPLE, root / "MEMORY.md")
    shutil.copyfile(PURSUITS_EXAMPLE, root / "PURSUITS.md")
    (root / "MEMORY_sample-release-runbook.md").write_text("### Rollout {#sample-rollout}\n\n- `step-1` Tag. → []\n")
    (root / "MEMORY_sample-backup-drill.md").write_text("")
    return root


def _tree(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file()}


def _e(title: str, body: str = "", **kw: Any) -> MemoryEntry:
    return MemoryEntry(title=title, body=body, kind=kw.pop("kind", Kind.FACT), **kw)


Step = Callable[[RightMemoryProvider], Any]


def _scenario() -> list[tuple[str, Step]]:
    """Named writes; each returns the stored entry (or None), or raises (compared too)."""
    steps: list[tuple[str, Step]] = []

    def add(name: str, entry: MemoryEntry) -> None:
        steps.append((name, lambda p: p.add(entry)))

    for i in range(6):
        add(f"heading {i}", _e(f"Batch heading {i}", f"Body line {i}.\n\nSecond paragraph `{i}`.\n", id=f"bh{i}"))
        add(f"node {i}", _e(f"Batch node {i}", id=f"bn{i}", relations=[Relation(type="dep", target=f"bh{i}")]))
    add("child heading", _e("Child", "Under bh1.\n", id="bh1-child", parent="bh1"))
    add("node under bh1 before its child", _e("Placed before the child", id="bh1-node", parent="bh1"))
    add("node under sample-app", _e("Node in the middle of the file", id="mid-node", parent="sample-deployable-units"))
    add(
        "heading under sample-app", _e("Heading in the middle", "Middle body.\n", id="mid-heading", parent="sample-app")
    )
    add(
        "edges to earlier items",
        _e(
            "Linked",
            id="linked",
            relations=[Relation(type="dep", target="bn0"), Relation(type="doc", target="mid-node")],
        ),
    )
    add("rel edge", _e("Related node", id="related", relations=[Relation(type="rel", target="sample-infra")]))
    add("F# heading", _e("Runbook two", "", id="runbook-two", extra={"rightmemory": {"marker": "F#"}}))
    add("into the detail file", _e("Step in detail", "Detail body.\n", id="detail-a", parent="runbook-two"))
    add("node into the detail file", _e("Detail node", id="detail-node", parent="runbook-two"))
    add("into an existing detail file", _e("Rollout two", "More.\n", id="rollout-two", parent="sample-release-runbook"))
    add("pursuit", _e("Ship it", "**State:** started\n", id="ship-it", kind=Kind.PURSUIT))
    add("pursuit child", _e("Ship sub-goal", "Sub.\n", id="ship-sub", parent="ship-it"))
    add("escaped body", _e("Tricky body", "# not a heading\n- `x` not a node → []\n```\n# in code\n```\n", id="tricky"))
    add("no id", _e("Derived id from the title"))
    add("no id twice", _e("Derived id from the title"))
    add("dangling edge refused", _e("Dangling", id="dangling", relations=[Relation(type="dep", target="nowhere")]))
    add("duplicate id refused", _e("Again", id="bh0"))
    add("bad parent refused", _e("Orphan", id="orphan", parent="nowhere"))

    def update_title(ident: str, title: str) -> Step:
        def run(p: RightMemoryProvider) -> MemoryEntry:
            current = p.get(ident)
            return p.update(current.model_copy(update={"title": title}), expected_version=current.version)

        return run

    def update_body(ident: str, body: str) -> Step:
        def run(p: RightMemoryProvider) -> MemoryEntry:
            current = p.get(ident)
            return p.update(current.model_copy(update={"body": body}), expected_version=current.version)

        return run

    def update_edges(ident: str, relations: list[Relation]) -> Step:
        def run(p: RightMemoryProvider) -> MemoryEntry:
            current = p.get(ident)
            return p.update(current.model_copy(update={"relations": relations}), expected_version=current.version)

        return run

    steps += [
        ("update node title", update_title("bn2", "Batch node 2, renamed")),
        ("update heading title", update_title("bh3", "Batch heading 3, renamed")),
        ("update heading body", update_body("bh1", "A new body for bh1.\n")),
        ("update heading body in the middle", update_body("mid-heading", "Longer\n\nmiddle body.\n")),
        (
            "update node edges",
            update_edges("bn4", [Relation(type="dep", target="bh0"), Relation(type="in", target="bh5")]),
        ),
        ("update heading edges", update_edges("bh5", [Relation(type="out", target="linked")])),
        ("update to a dangling edge refused", update_edges("bn5", [Relation(type="dep", target="gone")])),
        ("archive", lambda p: p.archive("bn1")),
        ("supersede", lambda p: p.supersede("bh2", _e("Batch heading 2, second take", "Newer.\n", id="bh2b"))),
        ("delete node", lambda p: p.delete("bn3")),
        ("add after delete", lambda p: p.add(_e("After delete", id="after-delete", parent="bh4"))),
    ]
    for i in range(6, 12):
        add(f"late heading {i}", _e(f"Late heading {i}", f"Late body {i}.\n", id=f"bh{i}", parent="bh1"))
        add(f"late node {i}", _e(f"Late node {i}", id=f"late-node-{i}", parent="bh1"))
    add("unclosed fence body", _e("Open fence", "```\nnever closed\n", id="open-fence"))
    add("after the open fence", _e("Swallowed", "Would be code.\n", id="swallowed"))
    return steps


def _run(p: RightMemoryProvider, steps: list[tuple[str, Step]], after: Callable[[], None] | None = None) -> list[Any]:
    results: list[Any] = []
    for name, step in steps:
        try:
            got = step(p)
        except (GraphInvariantError, InvalidEntryError) as exc:
            got = (name, type(exc).__name__)
        results.append(got)
        if after is not None:
            after()
    return results


def _key(result: Any) -> Any:
    if isinstance(result, MemoryEntry):
        dumped = result.model_dump()
        # timestamps differ between the two runs; everything else must not
        dumped.pop("created_at")
        dumped.pop("updated_at")
        dumped.pop("version")
        return dumped
    return result


def _normalize_times(root: Path) -> dict[str, bytes]:
    import re

    stamp = re.compile(rb'"(created_at|updated_at)":"[^"]*"')
    return {name: stamp.sub(rb'"\1":"T"', data) for name, data in _tree(root).items()}


@pytest.fixture
def frozen_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every write stamps the same instant, so two runs write the same bytes."""
    from datetime import UTC, datetime

    moment = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
    import memcore.provider as core_provider

    monkeypatch.setattr(core_provider, "utc_now", lambda: moment)


def test_batch_writes_the_same_bytes_as_one_by_one(tmp_path: Path, frozen_time: None) -> None:
    steps = _scenario()
    one, many = _store(tmp_path / "one"), _store(tmp_path / "many")
    with RightMemoryProvider(one) as p:
        singles = _run(p, steps)
    with RightMemoryProvider(many) as p, p.batch():
        batched = _run(p, steps)
    assert [_key(r) for r in batched] == [_key(r) for r in singles]
    refused = [r for r in singles if isinstance(r, tuple)]
    assert [name for name, _ in refused] == [
        "dangling edge refused",
        "duplicate id refused",
        "bad parent refused",
        "update to a dangling edge refused",
    ]
    assert _tree(many) == _tree(one)
    assert "MEMORY_runbook-two.md" in _tree(many)
    text = (many / "MEMORY.md").read_text()
    assert "- `bn0` Batch node 0 → [dep:bh0]" in text
    assert "→ [superseded_by:bh2b]" not in text  # superseded_by is not a graph edge type: kept in the comment
    with RightMemoryProvider(many) as reopened:
        assert [d for d in reopened.validate() if d.severity.value == "error"] == []
        last = {r.id: r for r in batched if isinstance(r, MemoryEntry)}
        del last["bn3"], last["bh2"]  # deleted; superseded (inside supersede, which returns bh2b)
        assert len(last) >= 40
        for ident, result in last.items():
            assert reopened.get(ident).model_dump() == result.model_dump(), ident
        assert reopened.get("bh2").status == Status.SUPERSEDED
        assert reopened.get("bh2b").relations[0].target == "bh2"
        assert reopened.get("bn1").status == Status.ARCHIVED
        assert reopened.get("detail-a").parent == "runbook-two"
        assert reopened.locate("detail-a")[0] == "MEMORY_runbook-two.md"
        assert reopened.get("bh1-node").parent == "bh1"


def test_every_add_returns_what_a_reopen_reads(tmp_path: Path) -> None:
    root = _store(tmp_path / "s")
    with RightMemoryProvider(root) as p:
        with p.batch():
            stored = [r for r in _run(p, _scenario()[:20]) if isinstance(r, MemoryEntry)]
    with RightMemoryProvider(root) as reopened:
        for entry in stored:
            assert entry.id is not None
            assert reopened.get(entry.id).model_dump() == entry.model_dump(), entry.id


def _check_graph(p: RightMemoryProvider) -> None:
    """The batch's in-memory graph equals a full parse of the text it holds."""
    session = p._graphs.work  # the graph the provider keeps for the open write session
    assert session is not None and session.graph is not None
    graph = session.graph
    for rel, doc in graph.docs.items():
        full = parse_doc(Source.from_bytes(rel, doc.source.data), doc.family, p._md)
        assert doc.headings == full.headings, rel
        assert doc.nodes == full.nodes, rel
        assert doc.order == full.order, rel
        assert doc.focus == full.focus, rel
        assert doc.diags == full.diags, rel
    core_session = p.active_session()
    assert core_session is not None
    fresh = Graph.load(p.root, lambda rel: p._graphs.read(core_session, rel), p._md, {})
    assert graph.items == fresh.items
    assert graph.attach == fresh.attach
    assert graph.focus == fresh.focus


def test_incremental_graph_equals_a_full_parse_after_every_write(tmp_path: Path) -> None:
    root = _store(tmp_path / "s")
    with RightMemoryProvider(root) as p, p.batch():
        _run(p, _scenario(), after=lambda: _check_graph(p))


def test_batch_adds_parse_only_the_window(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside a batch, adds and updates re-parse a few lines, never a whole file again."""
    import memcore_rightmemory._incremental as incremental

    root = _store(tmp_path / "s")
    loads: list[int] = []
    original = Graph.load.__func__  # type: ignore[attr-defined]

    def counting_load(cls: type[Graph], *args: Any, **kwargs: Any) -> Graph:
        loads.append(1)
        return original(cls, *args, **kwargs)  # type: ignore[no-any-return]

    sizes: list[int] = []
    window_parse = incremental.parse_doc

    def counting_parse(source: Source, family: str, md: Any) -> Any:
        sizes.append(len(source.lines))
        return window_parse(source, family, md)

    monkeypatch.setattr(Graph, "load", classmethod(counting_load))
    monkeypatch.setattr(incremental, "parse_doc", counting_parse)
    with RightMemoryProvider(root) as p, p.batch():
        prev = None
        for i in range(60):
            relations = [Relation(type="dep", target=prev)] if prev else []
            prev = p.add(_e(f"Entry {i}", "Body.\n" if i % 2 else "", relations=relations)).id
    assert len(loads) == 1  # the batch's first load; nothing re-parsed the whole graph
    assert len(sizes) == 60 and max(sizes) < 20


def test_batch_that_raises_writes_what_was_acknowledged(tmp_path: Path) -> None:
    root = _store(tmp_path / "s")
    before = _tree(root)
    with RightMemoryProvider(root) as p:
        with pytest.raises(RuntimeError), p.batch():
            p.add(_e("Kept one", id="kept-1"))
            p.add(_e("Kept two", "Body.\n", id="kept-2"))
            with pytest.raises(GraphInvariantError):
                p.add(_e("Refused", id="refused", relations=[Relation(type="dep", target="nowhere")]))
            assert (root / "MEMORY.md").read_bytes() == before["MEMORY.md"]  # nothing written yet
            raise RuntimeError("caller failed")
    with RightMemoryProvider(root) as reopened:
        assert reopened.get("kept-1").title == "Kept one"
        assert reopened.get("kept-2").body == "Body.\n"
        ids = {e.id for e in reopened.iter_entries()}
        assert "refused" not in ids
        assert [d for d in reopened.validate() if d.severity.value == "error"] == []


def test_reads_inside_a_batch_see_its_writes(tmp_path: Path) -> None:
    root = _store(tmp_path / "s")
    with RightMemoryProvider(root) as p, p.batch():
        stored = p.add(_e("Seen", "Body.\n", id="seen"))
        assert p.get("seen").model_dump() == stored.model_dump()
        assert "seen" in {e.id for e in p.iter_entries()}
        assert [d for d in p.validate() if d.severity.value == "error"] == []
        with RightMemoryProvider(root) as other:  # another provider reads the disk
            assert "seen" not in {e.id for e in other.iter_entries()}


def test_update_with_stale_version_in_batch_is_refused(tmp_path: Path) -> None:
    from memcore.errors import ConflictError

    root = _store(tmp_path / "s")
    with RightMemoryProvider(root) as p, p.batch():
        first = p.add(_e("Versioned", "One.\n", id="versioned"))
        p.update(first.model_copy(update={"body": "Two.\n"}), expected_version=first.version)
        with pytest.raises(ConflictError):
            p.update(first.model_copy(update={"body": "Three.\n"}), expected_version=first.version)
    with RightMemoryProvider(root) as reopened:
        assert reopened.get("versioned").body == "Two.\n"


def test_single_write_outside_a_batch_parses_no_whole_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write outside a batch is a batch of one: parsed files come from the cache, only the window is parsed."""
    import memcore_rightmemory._graph as graph_module

    root = _store(tmp_path / "s")
    with RightMemoryProvider(root) as p:
        p.add(_e("Warm", "Loads and caches every file.\n", id="warm"))
        whole: list[str] = []
        parse = graph_module.parse_doc

        def counting(source: Source, family: str, md: Any, **kw: Any) -> Any:
            whole.append(source.rel)
            return parse(source, family, md, **kw)

        monkeypatch.setattr(graph_module, "parse_doc", counting)
        second = p.add(_e("Second", "Body.\n", id="second", relations=[Relation(type="dep", target="warm")]))
        node = p.add(_e("A node", id="a-node", parent="warm"))
        updated = p.update(second.model_copy(update={"title": "Second, renamed"}), expected_version=second.version)
        assert whole == []
    with RightMemoryProvider(root) as reopened:
        assert reopened.get("a-node").model_dump() == node.model_dump()
        assert reopened.get("second").model_dump() == updated.model_dump()


def test_next_write_reuses_the_graph_only_while_the_files_are_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _store(tmp_path / "s")
    loads: list[int] = []
    original = Graph.load.__func__  # type: ignore[attr-defined]

    def counting_load(cls: type[Graph], *args: Any, **kwargs: Any) -> Graph:
        loads.append(1)
        return original(cls, *args, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(Graph, "load", classmethod(counting_load))
    with RightMemoryProvider(root) as p:
        p.add(_e("First", "One.\n", id="first"))
        assert len(loads) == 1
        p.add(_e("Second", id="second", relations=[Relation(type="dep", target="first")]))
        assert len(loads) == 1  # same bytes on disk: the graph the last write left is reused
        # another writer adds a node: the next write sees it
        memory = root / "MEMORY.md"
        memory.write_text(memory.read_text() + "\n- `external` Added by hand → []\n")
        linked = p.add(_e("Third", id="third", relations=[Relation(type="dep", target="external")]))
        assert len(loads) == 2
        assert [r.target for r in linked.relations] == ["external"]
        with pytest.raises(GraphInvariantError):
            p.add(_e("Fourth", id="fourth", relations=[Relation(type="dep", target="never-written")]))
    with RightMemoryProvider(root) as reopened:
        assert reopened.get("third").model_dump() == linked.model_dump()
        assert [d for d in reopened.validate() if d.severity.value == "error"] == []


def test_add_and_update_leave_the_callers_entry_alone(tmp_path: Path) -> None:
    root = _store(tmp_path / "s")
    entry = _e(
        "Caller's",
        "Body.\n",
        tags=["a"],
        relations=[Relation(type="dep", target="sample-app"), Relation(type="related", target="sample-infra")],
        extra={"other": {"k": [1]}, "rightmemory": {"depth": 2}},
    )
    before = entry.model_dump()
    with RightMemoryProvider(root) as p:
        stored = p.add(entry)
        assert entry.model_dump() == before
        assert stored.id == "caller-s" and entry.id is None
        changed = stored.model_copy(update={"title": "Changed"})
        dumped = changed.model_dump()
        p.update(changed, expected_version=stored.version)
        assert changed.model_dump() == dumped


TRICKY_BODIES = [
    "<div>\nan HTML block\n</div>\n",
    "<!-- a comment that\nspans lines -->\n",
    "> quoted\n> - `q` not a node → []\n",
    "Setext title\n===\n\nand a rule\n\n---\n",
    "    indented code\n    # not a heading\n",
    "- a list\n  - nested `code` item\n- `x` escaped node → []\n",
    "~~~\nfenced ~\n# in code\n~~~\n",
    "Trailing paragraph without newline",
    "\n\nLeading and trailing blanks\n\n\n",
    "**State:** open\n**Next:**\n- `do` something\n",
]


def test_incremental_graph_with_tricky_bodies_and_nested_nodes(tmp_path: Path) -> None:
    root = _store(tmp_path / "s")
    memory = root / "MEMORY.md"
    # nested node items and a lazy continuation line in the file already
    memory.write_text(
        memory.read_text()
        + "\n# Nested {#nested}\n\n- `outer` Outer → []\n  - `inner` Inner → []\n  continued text\n\n## Child {#nested-child}\n"
    )
    with RightMemoryProvider(root) as p, p.batch():
        p.graph()
        _check_graph(p)
        for i, body in enumerate(TRICKY_BODIES):
            p.add(_e(f"Tricky {i}", body, id=f"tricky-{i}"))
            _check_graph(p)
            p.add(_e(f"After tricky {i}", id=f"after-{i}", parent=f"tricky-{i}"))
            _check_graph(p)
            p.add(_e(f"Pursuit {i}", body, id=f"pursuit-{i}", kind=Kind.PURSUIT))
            _check_graph(p)
            p.add(_e(f"Under pursuit {i}", id=f"under-pursuit-{i}", parent=f"pursuit-{i}"))
            _check_graph(p)
        p.add(_e("Beside outer", id="beside", parent="nested"))
        _check_graph(p)
        p.add(_e("Second child", "Text.\n", id="nested-child-2", parent="nested"))
        _check_graph(p)
        for i, body in enumerate(reversed(TRICKY_BODIES)):
            current = p.get(f"tricky-{i}")
            p.update(current.model_copy(update={"body": body}), expected_version=current.version)
            _check_graph(p)
    with RightMemoryProvider(root) as reopened:
        for i, body in enumerate(reversed(TRICKY_BODIES)):
            assert reopened.get(f"tricky-{i}").body == body
            assert reopened.get(f"after-{i}").parent == f"tricky-{i}"
        assert reopened.get("beside").parent == "nested"
        assert [d for d in reopened.validate() if d.severity.value == "error"] == []


def test_batch_holds_the_store_lock_so_no_write_is_lost(tmp_path: Path) -> None:
    """Another writer waits for the batch to end, then sees its writes (nothing overwritten)."""
    import threading

    root = _store(tmp_path / "s")
    done = threading.Event()
    errors: list[BaseException] = []

    def other_writer() -> None:
        try:
            with RightMemoryProvider(root) as other:
                other.add(_e("From the other writer", id="other-writer"))
        except Exception as exc:  # noqa: BLE001 - any failure in the thread is reported below
            errors.append(exc)
        finally:
            done.set()

    with RightMemoryProvider(root) as p:
        with p.batch():
            p.add(_e("From the batch", id="from-batch"))
            thread = threading.Thread(target=other_writer)
            thread.start()
            assert not done.wait(0.3)  # blocked on the store lock while the batch is open
            p.add(_e("Also from the batch", id="from-batch-2"))
        thread.join(timeout=60)
    assert errors == []
    with RightMemoryProvider(root) as reopened:
        ids = {e.id for e in reopened.iter_entries()}
        assert {"from-batch", "from-batch-2", "other-writer"} <= ids


def _fresh(root: Path) -> RightMemoryProvider:
    RightMemoryProvider.init_store(str(root))
    return RightMemoryProvider(root).open()


def test_external_append_during_a_batch_is_kept_and_the_batch_refused(tmp_path: Path) -> None:
    from memcore.errors import ConflictError

    root = tmp_path / "rm"
    provider = _fresh(root)
    outside = "\n# External heading {#ext1}\n\nEXTERNAL TEXT\n"
    with pytest.raises(ConflictError, match=r"MEMORY\.md changed on disk during the batch.*2 writes were not saved"):
        with provider.batch():
            provider.add(_e("A1", "a1"))
            with open(root / "MEMORY.md", "a", encoding="utf-8") as fh:
                fh.write(outside)  # a tool that does not take memcore's lock
            provider.add(_e("A2", "a2"))
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert text.endswith(outside)
    assert "A1" not in text and "A2" not in text
    assert [e.title for e in RightMemoryProvider(root).open().iter_entries()] == ["External heading"]


def test_second_provider_in_the_same_thread_keeps_its_write(tmp_path: Path) -> None:
    from memcore.errors import ConflictError

    root = tmp_path / "rm"
    a = _fresh(root)
    b = RightMemoryProvider(root).open()
    with pytest.raises(ConflictError, match=r"MEMORY\.md"):
        with a.batch():
            a.add(_e("A1", "a1"))
            b.add(_e("B1", "b1"))  # the lock is re-entrant in this thread: b writes at once
            a.add(_e("A2", "a2"))
    assert [e.title for e in RightMemoryProvider(root).open().iter_entries()] == ["B1"]
    a.add(_e("A3", "a3"))  # a plain write after the refused batch reads the file afresh
    assert sorted(e.title for e in RightMemoryProvider(root).open().iter_entries()) == ["A3", "B1"]
