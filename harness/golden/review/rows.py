"""A golden's table read back into rows, and two versions' rows paired side by side."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

__all__ = ["GoldenRow", "Pair", "pair_rows", "parse_golden"]

_ROW = re.compile(
    r"^(?P<seq>\S+)\s+(?P<type>.+?)\s+(?P<persistence>transient|pending|persisted|-)(?:\s+(?P<fields>.*))?$"
)
# An id field of any name (``toolUseId``, ``tool_call_id``, ``call_id``, ``id``…) and its
# value: an id the mock minted is stored as ``<label:n>``, a user's own id as it is, so a
# call and its result that carry the same id show the same value.
_LINK_ID = re.compile(r'(?:^|\s)(?:id|ID|[\w.]*(?:Id|_id|ID))="([^"]+)"')
_RESULT_TYPES = ("result", "output", "Result", "Output")


@dataclass(frozen=True)
class GoldenRow:
    """One table row; ``line`` is its text as stored, ``links`` the id values on it
    (a tool call and its result share one)."""

    line: str
    seq: str = ""
    type: str = ""
    persistence: str = ""
    fields: str = ""
    links: tuple[str, ...] = field(default=())

    @property
    def is_result(self) -> bool:
        return any(word in self.type for word in _RESULT_TYPES)


def parse_golden(text: str | None) -> tuple[list[str], list[GoldenRow]]:
    """(header lines, rows) of a golden's text; a line that is no table row is kept as a
    row with only its ``line``."""
    header: list[str] = []
    rows: list[GoldenRow] = []
    in_table = False
    for line in (text or "").splitlines():
        if not in_table:
            if line.startswith("───"):
                in_table = True
            elif not line.startswith("SEQ "):
                header.append(line)
            continue
        match = _ROW.match(line)
        if match is None:
            rows.append(GoldenRow(line))
            continue
        fields = match["fields"] or ""
        rows.append(
            GoldenRow(line, match["seq"], match["type"], match["persistence"], fields, tuple(_LINK_ID.findall(fields)))
        )
    return header, rows


@dataclass(frozen=True)
class Pair:
    """One line of the side-by-side view: the row before, the row after, and how they
    differ (``same``, ``changed``, ``removed``, ``added``)."""

    before: GoldenRow | None
    after: GoldenRow | None
    state: str


def pair_rows(before: list[GoldenRow], after: list[GoldenRow]) -> list[Pair]:
    """The rows of both versions aligned by a line diff."""
    pairs: list[Pair] = []
    matcher = difflib.SequenceMatcher(a=[r.line for r in before], b=[r.line for r in after], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pairs += [Pair(before[i], after[j], "same") for i, j in zip(range(i1, i2), range(j1, j2), strict=False)]
            continue
        old, new = before[i1:i2], after[j1:j2]
        for k in range(max(len(old), len(new))):
            left = old[k] if k < len(old) else None
            right = new[k] if k < len(new) else None
            state = "changed" if left and right else ("removed" if left else "added")
            pairs.append(Pair(left, right, state))
    return pairs
