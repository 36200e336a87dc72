"""The store's place on this machine, kept out of what an adapter tells an agent."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["location_spellings", "scrub_location"]


def location_spellings(location: object) -> list[str]:
    """Return the ways a message may spell the store's ``location``, longest first.

    The resolved path (links followed) and the absolute one always; the location as given too
    when it is absolute or holds a path separator. A bare relative name (``store``, ``m``) is
    left out: it would match ordinary words, and says nothing about the machine.

    Args:
        location: The provider's ``location``; anything but a non-empty ``str`` gives ``[]``.
    """
    if not isinstance(location, str) or not location:
        return []
    where = Path(location)
    spellings = {str(where.resolve()), str(where.absolute())}
    if where.is_absolute() or "/" in location or os.sep in location:
        spellings.add(location)
    return sorted(spellings, key=len, reverse=True)


def scrub_location(text: str, location: object, shown: str) -> str:
    """Return ``text`` with every spelling of ``location`` (:func:`location_spellings`) replaced by ``shown``.

    Longest first, so that a resolved path holding the given one as a suffix
    (``/private/tmp/x`` and ``/tmp/x``) is replaced whole, never left with a prefix.
    """
    for spelling in location_spellings(location):
        text = text.replace(spelling, shown)
    return text
