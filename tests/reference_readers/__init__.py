"""Independent readers of the four formats, written from ../shared/specs/reference-notes/.

Each module reads files the way that format's own reference code does, as the notes describe
it, and never calls memcore's parsers: :mod:`.whitebox` (``observation-parser.ts``),
:mod:`.maka` (``local-memory.ts``), :mod:`.rightmemory` (``graph.py``), :mod:`.box` (the
Box-memory schema, ``references/schema.md``, which the authors' skills follow). Each returns
plain records (dicts of the fields that format holds), so tests can compare them with what
memcore reads back from the same files (:mod:`.compare`).
"""
