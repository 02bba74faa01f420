"""Changing stored rows by hand, outside the cached-call door: what a test does to a store to
play a user who edited it, a texts file changed after it was locked, a run killed before its last
row, or calls made an hour ago. Nothing in the lab's run path calls these (a result, once stored,
is never changed there); names are checked against the store's schema and values are bound, as
in reads.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from diarylab.experiments.engine.store.reads import StoreReads


class StoreEdits(StoreReads):
    def update(
        self,
        table: str,
        values: Mapping[str, Any],
        *,
        where: Mapping[str, Any] | None = None,
        like: Mapping[str, str] | None = None,
    ) -> int:
        """Set `values` on the rows that match; how many rows changed."""
        table = self._table(table)
        names = self._columns(table, list(values))
        clause, params = self._where(table, where, like, (), ())
        sets = ", ".join(f"{n} = ?" for n in names)
        query = f"UPDATE {table} SET {sets}{clause}"
        return self._edit(query, [*values.values(), *params])

    def delete(
        self,
        table: str,
        *,
        where: Mapping[str, Any] | None = None,
        like: Mapping[str, str] | None = None,
    ) -> int:
        """Remove the rows that match; how many were removed."""
        table = self._table(table)
        clause, params = self._where(table, where, like, (), ())
        return self._edit(f"DELETE FROM {table}{clause}", params)

    def _edit(self, query: str, params: list[Any]) -> int:
        def run() -> int:
            cursor = self.db.execute(query, params)
            if self.db.in_transaction:
                self.db.commit()
            return int(cursor.rowcount)

        return self.on_writer(run)
