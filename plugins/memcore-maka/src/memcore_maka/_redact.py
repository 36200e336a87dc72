"""Maka's secret redaction is memcore's own: :mod:`memcore.redact` (kept here for old imports)."""

from __future__ import annotations

from memcore.redact import REDACTED, _apply_patterns, may_hold_secret, redact_secrets

__all__ = ["REDACTED", "_apply_patterns", "may_hold_secret", "redact_secrets"]
