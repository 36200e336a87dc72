"""Decode file bytes to text and back without losing the BOM or the line endings."""

from __future__ import annotations

from dataclasses import dataclass

from memcore.errors import InvalidEntryError, ParseError

__all__ = ["TextFile"]

_BOM = "\ufeff"


@dataclass(frozen=True)
class TextFile:
    """A decoded text file that remembers how to encode itself back.

    Attributes:
        text: The content with ``\\n`` line endings and no BOM.
        bom: Whether the file started with a UTF-8 BOM.
        newline: The file's dominant line ending (``"\\n"``, ``"\\r\\n"`` or ``"\\r"``).
        mixed: Whether the file mixed line endings (then only an untouched file is
            byte-identical; a rewrite uses ``newline`` throughout).
    """

    text: str
    bom: bool = False
    newline: str = "\n"
    mixed: bool = False

    @classmethod
    def decode(cls, data: bytes, *, path: str | None = None) -> TextFile:
        """Decode UTF-8 ``data``, recording BOM and line endings.

        Raises:
            ParseError: The bytes are not UTF-8 (the message names the byte offset).
        """
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise ParseError(
                f"not UTF-8 text (bad byte at offset {exc.start}); re-save the file as UTF-8",
                path=path,
                line=line,
            ) from exc
        bom = text.startswith(_BOM)
        if bom:
            text = text[1:]
        if "\r" not in text:  # LF only (or no line break): nothing to count or replace
            return cls(text=text, bom=bom)
        crlf = text.count("\r\n")
        lone_cr = text.count("\r") - crlf
        lf = text.count("\n") - crlf
        counts = {"\r\n": crlf, "\n": lf, "\r": lone_cr}
        newline = max(counts, key=lambda k: (counts[k], k == "\n"))
        if counts[newline] == 0:
            newline = "\n"
        mixed = sum(1 for v in counts.values() if v) > 1
        if crlf or lone_cr:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        return cls(text=text, bom=bom, newline=newline, mixed=mixed)

    def encode(self, text: str | None = None) -> bytes:
        """Encode ``text`` (default: this file's text) with this file's BOM and line ending.

        Raises:
            InvalidEntryError: The text holds a lone surrogate (U+D800-U+DFFF), which no UTF-8
                file can hold; nothing is written, since writers encode before writing.
        """
        out = self.text if text is None else text
        if self.newline != "\n":
            out = out.replace("\n", self.newline)
        try:
            return ((_BOM if self.bom else "") + out).encode("utf-8")
        except UnicodeEncodeError as exc:
            line = out.count("\n", 0, exc.start) + 1
            raise InvalidEntryError(
                f"text holds a lone surrogate U+{ord(out[exc.start]):04X} (line {line} of the file to write): "
                "not valid Unicode, so it cannot be written as UTF-8; nothing was written"
            ) from None
