"""A handler for Anthropic's memory tool (``memory_20250818``) over any memcore store.

:class:`MemcoreMemoryTool` is an ``anthropic.lib.tools.BetaAbstractMemoryTool``: give it to the
SDK's tool runner and Claude's ``view`` / ``create`` / ``str_replace`` / ``insert`` / ``delete``
/ ``rename`` commands run against an open store::

    import anthropic
    import memcore
    from memcore.adapters.anthropic import MemcoreMemoryTool

    with memcore.open("maka:./MEMORY.md") as store:
        runner = anthropic.Anthropic().beta.messages.tool_runner(
            model="claude-sonnet-4-5", max_tokens=1024, tools=[MemcoreMemoryTool(store)],
            messages=[{"role": "user", "content": "Remember that I take my coffee black."}],
        )
        final = runner.until_done()

Every command goes through the store's provider API and :mod:`memcore.ops` (no file is opened
by the handler), so the format's rules and the session's gates hold: an append-only WhiteBox
observation refuses ``str_replace`` naming the rule, a Maka entry another agent may not read
is not in the tree. Results use the SDK handler's strings (spec §3 of
``anthropic-memory-tool.md``); failures raise ``ToolError``, which the runner sends back with
``is_error: true``. Where each entry sits in ``/memories`` is decided per format by
:data:`memcore.adapters._memory_tree.SCHEMES` (see docs/adapters.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from pydantic import ValidationError

try:
    from anthropic.lib.tools import BetaAbstractMemoryTool, BetaFunctionToolResultType, ToolError
    from anthropic.types.beta import (
        BetaMemoryTool20250818Command,
        BetaMemoryTool20250818CreateCommand,
        BetaMemoryTool20250818DeleteCommand,
        BetaMemoryTool20250818InsertCommand,
        BetaMemoryTool20250818RenameCommand,
        BetaMemoryTool20250818StrReplaceCommand,
        BetaMemoryTool20250818ViewCommand,
    )
except ImportError as exc:  # pragma: no cover - exercised by a test that hides the SDK
    raise ImportError(
        'memcore.adapters.anthropic needs the Anthropic SDK: pip install "memcore-unified[anthropic]"'
    ) from exc

from memcore import ops
from memcore.adapters._memory_tree import (
    MAX_LINES,
    ROOT,
    PathScheme,
    Tree,
    TreeError,
    listing,
    numbered,
    relative_path,
    scheme_for,
)
from memcore.adapters._paths import scrub_location
from memcore.contract import Capability, MemoryProvider
from memcore.errors import MemcoreError, UnsafePathError
from memcore.models import MemoryEntry, Status

__all__ = ["MemcoreMemoryTool"]


#: command → the arguments it needs and their JSON types (spec §2); ``view_range`` is checked apart.
_ARGUMENTS: dict[str, dict[str, type]] = {
    "view": {"path": str},
    "create": {"path": str, "file_text": str},
    "str_replace": {"path": str, "old_str": str, "new_str": str},
    "insert": {"path": str, "insert_line": int, "insert_text": str},
    "delete": {"path": str},
    "rename": {"old_path": str, "new_path": str},
}


def _check_arguments(command: object) -> None:
    """Refuse a command whose arguments are missing or of another type.

    The SDK's runner builds the command from the model's JSON without validating it, so a
    missing ``file_text`` arrives as ``None`` and a ``view_range`` of strings as strings.

    Raises:
        TreeError: Naming the command or the argument and the type it needs.
    """
    name = getattr(command, "command", None)
    if not isinstance(name, str) or name not in _ARGUMENTS:
        raise TreeError(f"Unknown command {name!r}: the memory tool's commands are {', '.join(_ARGUMENTS)}")
    for argument, kind in _ARGUMENTS[name].items():
        value = getattr(command, argument, None)
        if not isinstance(value, kind) or isinstance(value, bool):
            needed = "a string" if kind is str else "an integer"
            raise TreeError(f"The {name} command needs `{argument}` as {needed}, got {type(value).__name__}")
    view_range = getattr(command, "view_range", None) if name == "view" else None
    if view_range is not None and not (
        isinstance(view_range, list) and all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)
    ):
        raise TreeError(f"The view command needs `view_range` as two integers [first, last], got {view_range!r}")


def _validation_text(exc: ValidationError) -> str:
    """The rules a new entry broke, without pydantic's echo of the input or its links."""
    return "; ".join(str(error["msg"]).removeprefix("Value error, ") for error in exc.errors())


class MemcoreMemoryTool(BetaAbstractMemoryTool):
    """The memory tool over an open memcore store.

    Args:
        store: An open store (any :class:`~memcore.contract.MemoryProvider`); the handler never
            opens or closes it. Gates and scopes are the store's: open it with the options the
            session should have (``agent=``, ``as_user=``…).
        scheme: Where entries sit in ``/memories``; default: the format's entry of
            :data:`~memcore.adapters._memory_tree.SCHEMES`.
    """

    def __init__(self, store: MemoryProvider, *, scheme: PathScheme | None = None) -> None:
        super().__init__()
        self.store = store
        self.scheme = scheme or scheme_for(store)

    def execute(self, command: BetaMemoryTool20250818Command) -> BetaFunctionToolResultType:
        """Run one command; a refusal raises ``ToolError`` with the result text (``is_error``).

        Raises:
            ToolError: The path is refused, the file is missing, or the store refused the
                operation (the message is the store's, naming the format rule).
        """
        with self._as_tool_errors():
            _check_arguments(command)
            return super().execute(command)

    @contextmanager
    def _as_tool_errors(self) -> Iterator[None]:
        """Turn a refused command into the ``ToolError`` the runner reports with ``is_error``.

        The text never names the store's place on this machine: the store's location reads as
        ``/memories`` (a folder store) or as the store file's own name (a one-file store).
        """
        try:
            yield
        except TreeError as exc:
            raise ToolError(self._scrub(str(exc))) from None
        except UnsafePathError as exc:
            if str(exc).startswith("unsafe path component"):  # the name itself breaks a rule
                raise ToolError(self._scrub(f"{self.store.format_name}: {exc}")) from None
            raise ToolError(self._scrub(f"Path would escape /memories directory via symlink ({exc})")) from None
        except MemcoreError as exc:
            raise ToolError(self._scrub(str(exc))) from None
        except ValidationError as exc:
            raise ToolError(self._scrub(_validation_text(exc))) from None
        except OSError as exc:  # a name the file system will not take (longer than 255 bytes…)
            where = f" ({exc.filename})" if exc.filename else ""
            raise ToolError(
                self._scrub(
                    f"{self.store.format_name}: the file system refused this command: {exc.strerror or exc}{where}"
                )
            ) from None

    def _scrub(self, text: str) -> str:
        """``text`` with the store's location replaced by what the session sees of it."""
        location = getattr(self.store, "location", "")
        if not isinstance(location, str) or not location:
            return text
        return scrub_location(text, location, ROOT if Path(location).is_dir() else Path(location).name)

    def tree(self) -> Tree:
        """Return the store as the tree the session sees (one read of ``iter_entries``).

        Raises:
            TreeError: The store's gate keeps the agent from reading it (Maka with
                ``agent_read_enabled`` off: Maka's ``agentReadEnabled``).
        """
        if getattr(self.store, "agent_read_enabled", True) is False:
            raise TreeError(
                f"{self.store.format_name}: agentReadEnabled is off, so the agent may not read this memory "
                "(open the store with agent_read_enabled=true to let it)"
            )
        return Tree.read(self.store, self.scheme, self.store.iter_entries())

    def _file(self, path: str) -> tuple[Tree, str, MemoryEntry]:
        """Return the tree, the relative path and the entry of the file ``path`` names."""
        tree, rel = self.tree(), relative_path(path)
        if rel not in tree.entries:
            if rel in tree.folders:
                raise TreeError(f"The path {path} is not a file.")
            raise TreeError(f"The path {path} does not exist. Please provide a valid path.")
        return tree, rel, tree.entries[rel]

    def _proposed(self, path: str, stored: MemoryEntry) -> str:
        """Say where an edit went when the store kept the file and wrote a proposal instead.

        A WhiteBox stable file opened without ``as_user`` is changed only by the user: the
        provider writes the edit as a proposal for review (spec whitebox-v1, proposals).
        """
        where = Tree.read(self.store, self.scheme, [stored]).entries
        proposal = f"{ROOT}/{next(iter(where))}" if where else str(stored.id)
        return (
            f"{path} is unchanged: {self.store.format_name} keeps this file for the user to edit, so the "
            f"change was written as a proposal for review at {proposal}."
        )

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        """List a folder two levels deep, or show a file with line numbers (``view_range``)."""
        tree, rel = self.tree(), relative_path(command.path)
        if rel in tree.folders:
            return listing(command.path, rel, tree.sizes())
        if rel not in tree.entries:
            raise TreeError(f"The path {command.path} does not exist. Please provide a valid path.")
        lines = tree.entries[rel].body.split("\n")
        if len(lines) > MAX_LINES:
            raise TreeError(f"File {command.path} exceeds maximum line limit of 999,999 lines.")
        start = 1
        if command.view_range and len(command.view_range) == 2:
            first, last = command.view_range
            start = max(1, first)
            lines = lines[start - 1 : len(lines) if last == -1 else last]
        return f"Here's the content of {command.path} with line numbers:\n" + numbered(lines, start)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        """Add an entry for a new file; refuse a path that exists or breaks the format's naming."""
        tree, rel = self.tree(), relative_path(command.path)
        if rel in tree.entries or rel in tree.folders:
            raise TreeError(f"File {command.path} already exists")
        entry = self.scheme.new_entry(rel, command.file_text)
        if self.scheme.kind == "title":  # a title gets ``.md``: ``notes`` is shown as ``notes.md``
            landing = self.scheme.path_of(self.store, entry)
            if landing in tree.entries or landing in tree.folders:
                raise TreeError(f"File {ROOT}/{landing} already exists")
        stored = self.store.add(entry)
        where = Tree.read(self.store, self.scheme, [stored]).entries
        landed = next(iter(where), rel)
        return f"File created successfully at: {ROOT}/{landed}"

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        """Replace the one occurrence of ``old_str`` in a file through :func:`memcore.ops.edit`."""
        _, _, entry = self._file(command.path)
        body, old = entry.body, command.old_str
        if not old:
            raise TreeError(
                f"No replacement was performed, old_str is empty: give the text to replace in {command.path}."
            )
        count = body.count(old)
        if count == 0:
            raise TreeError(f"No replacement was performed, old_str `{old}` did not appear verbatim in {command.path}.")
        if count > 1:  # one pass over the body: the line of each match, as the SDK lists them
            starts, at, line, seen = [], body.find(old), 1, 0
            while at != -1:
                line += body.count("\n", seen, at)
                seen = at
                starts.append(str(line))
                at = body.find(old, at + 1)
            raise TreeError(
                f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: "
                f"{', '.join(starts)}. Please ensure it is unique"
            )
        changed = body[: body.find(old)].count("\n")
        stored = ops.edit(self.store, entry.id or "", old, command.new_str)
        if stored.id != entry.id:
            return self._proposed(command.path, stored)
        lines = stored.body.split("\n")
        first = max(0, changed - 2)
        snippet = numbered(lines[first : min(len(lines), changed + 3)], first + 1)
        return (
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" + snippet
        )

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        """Insert ``insert_text`` before line ``insert_line`` through :func:`memcore.ops.insert`."""
        _, _, entry = self._file(command.path)
        lines = entry.body.split("\n")
        if lines[-1] == "":
            lines.pop()
        if not 0 <= command.insert_line <= len(lines):
            raise TreeError(
                f"Invalid `insert_line` parameter: {command.insert_line}. "
                f"It should be within the range [0, {len(lines)}]."
            )
        text = command.insert_text.removesuffix("\n")
        stored = ops.insert(self.store, entry.id or "", text, line=command.insert_line)
        if stored.id != entry.id:
            return self._proposed(command.path, stored)
        return f"The file {command.path} has been edited."

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        """Delete a file's entry, or every entry below a folder."""
        tree, rel = self.tree(), relative_path(command.path)
        if not rel:
            raise TreeError("Cannot delete the /memories directory itself")
        doomed = tree.under(rel)
        if not doomed:
            raise TreeError(f"The path {command.path} does not exist")
        held = [path for path in doomed if tree.entries[path].status == Status.HELD]
        if held and len(doomed) > 1:  # one file: the store's own refusal names the hold
            raise TreeError(
                f"{self.store.format_name}: {ROOT}/{held[0]} is on hold (status: held) and cannot be deleted; "
                f"delete of {command.path} refused, nothing deleted (release the hold first)"
            )
        for path in doomed:
            self.store.delete(tree.entries[path].id or "")
        return f"Successfully deleted {command.path}"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        """Move a file (or a folder's files) to a new path.

        A ``title`` scheme renames the entry through :func:`memcore.ops.rename`; where the path is
        the entry's file (``file`` schemes) the entry is added at the new path, then the old one
        deleted (refused up front in a format without delete, or when a file is ``held``: a Box
        memory on legal hold); when the store refuses to delete an old file, its new copy is
        deleted again and the refusal says how many files of a folder were moved before it.
        """
        tree, old = self.tree(), relative_path(command.old_path)
        new = relative_path(command.new_path)
        if not old:
            raise TreeError("Cannot rename the /memories directory itself")
        if new in tree.entries or new in tree.folders:
            raise TreeError(f"The destination {command.new_path} already exists")
        moves = [(p, new + p[len(old) :]) for p in tree.under(old)]
        if not moves:
            raise TreeError(f"The path {command.old_path} does not exist")
        if self.scheme.kind == "title":  # ``notes`` is shown as ``notes.md``: never onto another file
            leaving = {src for src, _ in moves}
            for _, dst in moves:
                landing = self.scheme.path_of(self.store, self.scheme.new_entry(dst, ""))
                if landing not in leaving and (landing in tree.entries or landing in tree.folders):
                    raise TreeError(f"The destination {ROOT}/{landing} already exists")
        if self.scheme.kind == "file":
            if Capability.DELETE not in self.store.capabilities:
                raise TreeError(
                    f"{self.store.format_name}: a file cannot be renamed: the path is the entry's file and "
                    "this format never deletes one (create a new file instead)"
                )
            held = [src for src, _ in moves if tree.entries[src].status == Status.HELD]
            if held:  # the copy would be held too: neither file could then be deleted
                raise TreeError(
                    f"{self.store.format_name}: {ROOT}/{held[0]} is on hold (status: held) and cannot be moved or "
                    "deleted; rename refused, nothing moved (release the hold first)"
                )
        for src, dst in moves:
            entry = tree.entries[src]
            moved = self.scheme.new_entry(dst, entry.body)
            if self.scheme.kind == "title":
                ops.rename(self.store, entry.id or "", moved.title)
                continue
            extra = {**entry.extra, **{k: {**entry.ns(k), **v} for k, v in moved.extra.items()}}
            copy = entry.model_copy(
                update={"id": moved.id, "title": moved.title, "version": None, "extra": extra, "scope": moved.scope}
            )
            added = self.store.add(copy)
            try:
                self.store.delete(entry.id or "")
            except MemcoreError as exc:  # the original stays: take the copy back
                with suppress(MemcoreError):
                    self.store.delete(added.id or "")
                done = moves.index((src, dst))
                raise TreeError(
                    f"{exc} ({ROOT}/{src} is unchanged; {done} of {len(moves)} files were moved before it)"
                ) from None
        return f"Successfully renamed {command.old_path} to {command.new_path}"
