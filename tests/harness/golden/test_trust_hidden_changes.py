"""A change a golden holds is one a reviewer can see. Before, a trailing space in an
event's type or persistence vanished in the column's padding, a sequence number that
became a string ("1") looked like the integer, and an invisible character in a value (a
zero-width or no-break space) showed as two identical lines in the diff and in
``harness review``: the golden passed, or its change could only be accepted blind."""

from __future__ import annotations

import pytest

from harness.golden.extension import golden_text

BASE = {"type": "message", "seq": 1, "persistence": "persisted", "content": "Paid in full"}


@pytest.mark.parametrize(
    ("change", "shown"),
    [
        ({"type": "message "}, '"message "'),
        ({"persistence": "persisted "}, '"persisted "'),
        ({"seq": "1"}, '"1"'),
        ({"seq": "*"}, '"*"'),
        ({"type": "-"}, '"-"'),
    ],
)
def test_a_changed_column_value_fails_the_golden_and_shows_how(change: dict[str, object], shown: str) -> None:
    before, after = golden_text([BASE]), golden_text([{**BASE, **change}])
    assert before != after
    assert shown in after.splitlines()[-1]


@pytest.mark.parametrize("invisible", ["\u200b", "\u00a0", "\u202e", "\ufeff", "\u2028"])
def test_an_invisible_character_is_escaped_where_a_reviewer_reads_it(invisible: str) -> None:
    after = golden_text([{**BASE, "content": f"Paid{invisible}in full"}])
    assert after.replace("\n", "").isprintable()
    assert f"\\u{ord(invisible):04x}" in after


def test_plain_values_render_as_before() -> None:
    assert golden_text([BASE, {**BASE, "content": "19 °C — ok", "seq": 2}]).splitlines()[-2:] == [
        '1    message                  persisted    content="Paid in full"',
        '2    message                  persisted    content="19 °C — ok"',
    ]
