"""Errors a user can fix. The CLI turns them into one message and exit status 2."""

from __future__ import annotations


class LabError(Exception):
    """A mistake in the user's input or setup: says what is wrong, where, and how to fix it."""

    def __init__(self, message: str, *, where: str | None = None, fix: str | None = None) -> None:
        self.where = where
        self.fix = fix
        self.message = message  # what is wrong, without the place or the fix
        parts = [f"{where}: {message}" if where else message]
        if fix:
            parts.append(f"fix: {fix}")
        super().__init__(" — ".join(parts))


class LabErrors(LabError):
    """Every problem a check found, so that one run of the check tells them all: the CLI prints
    each on its own line (file, field, fix) and exits 2 once. A check appends to a Collector and
    raises this at its end, rather than raising its first problem."""

    def __init__(self, errors: list[LabError]) -> None:
        self.errors = tuple(flatten(errors))
        self.where, self.fix, self.message = None, None, "several problems"
        Exception.__init__(self, "\n".join(str(e) for e in self.errors))

    def lines(self) -> list[str]:
        return [str(e) for e in self.errors]


def flatten(errors: list[LabError]) -> list[LabError]:
    """The single errors of a list that may hold groups, each once, in order."""
    out: list[LabError] = []
    for error in errors:
        for one in error.errors if isinstance(error, LabErrors) else (error,):
            if str(one) not in {str(e) for e in out}:
                out.append(one)
    return out


class Collector:
    """Gathers the LabErrors of independent checks: `with collector.check():` runs one and keeps
    its error instead of stopping; `raise_any()` raises them together (one alone as itself)."""

    def __init__(self) -> None:
        self.errors: list[LabError] = []

    def add(self, error: LabError) -> None:
        self.errors.append(error)

    def check(self) -> _Keep:
        return _Keep(self)

    def raise_any(self) -> None:
        found = flatten(self.errors)
        if len(found) == 1:
            raise found[0]
        if found:
            raise LabErrors(found)


class _Keep:
    def __init__(self, collector: Collector) -> None:
        self.collector = collector

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> bool:
        if isinstance(exc, LabError):
            self.collector.add(exc)
            return True  # kept: the next check runs
        return False
