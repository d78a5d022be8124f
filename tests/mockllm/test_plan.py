"""``ReplyPlan`` and ``Selection`` fill their fields at once (a hand-written ``__init__``
in place of the frozen dataclass's own): the same signature, defaults and behaviour."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import pytest

from mockllm._plan import ReplyPlan, TextPart, Usage
from mockllm._selection import Selection


@pytest.mark.parametrize("cls", [ReplyPlan, Selection])
def test_the_init_takes_the_fields_in_order_with_their_defaults(cls: type) -> None:
    parameters = list(inspect.signature(cls).parameters.values())
    fields = dataclasses.fields(cls)
    assert [p.name for p in parameters] == [f.name for f in fields]
    required = [f.name for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    assert [p.name for p in parameters if p.default is inspect.Parameter.empty] == required
    given = {name: object() for name in required}
    made = cls(**given)
    for f in fields:
        expected = given[f.name] if f.name in given else f.default
        if f.default_factory is not dataclasses.MISSING:
            expected = f.default_factory()
        assert getattr(made, f.name) == expected, f.name
    assert vars(made).keys() == {f.name for f in fields}


def test_a_plan_stays_frozen_comparable_and_replaceable() -> None:
    plan = ReplyPlan(None, (TextPart("hi"),), "end_turn", Usage(1, 1), "0f3a9c", 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.created = 2  # type: ignore[misc]
    again = ReplyPlan(None, (TextPart("hi"),), "end_turn", Usage(1, 1), "0f3a9c", 1)
    assert plan == again and plan.headers == {} and plan.headers is not again.headers
    later = dataclasses.replace(plan, created=5)
    assert later.created == 5 and later.parts == plan.parts and later != plan
    assert pickle.loads(pickle.dumps(plan)) == plan


def test_a_selection_stays_frozen_hashable_and_replaceable() -> None:
    selection = Selection("openai-chat", True, None, "why", turn_index=2, warnings=("w",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        selection.turn_index = 3  # type: ignore[misc]
    assert hash(selection) == hash(Selection("openai-chat", True, None, "why", turn_index=2, warnings=("w",)))
    assert dataclasses.replace(selection, fallback_reason=None).fallback_reason is None
    assert repr(selection).startswith("Selection(protocol='openai-chat', chain_found=True")
