"""Errors a user can fix. The CLI turns them into one message and exit status 2."""

from __future__ import annotations


class LabError(Exception):
    """A mistake in the user's input or setup: says what is wrong, where, and how to fix it."""

    def __init__(self, message: str, *, where: str | None = None, fix: str | None = None) -> None:
        self.where = where
        self.fix = fix
        parts = [f"{where}: {message}" if where else message]
        if fix:
            parts.append(f"fix: {fix}")
        super().__init__(" — ".join(parts))


class MissingPackageError(LabError):
    """An optional package the requested feature needs is not installed."""
