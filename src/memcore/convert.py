"""The former home of the migration API, kept so that ``from memcore.convert import …`` goes on working.

Every public name of :mod:`memcore.migrate` (the package the migration code lives in now) is
re-exported here; import from there in new code.
"""

from __future__ import annotations

from memcore import migrate as _migrate
from memcore.migrate import *  # noqa: F403

__all__ = list(_migrate.__all__)
