"""The state interface behaves the same on its three backends (``mockllm._state``)."""

from __future__ import annotations

import threading
from collections.abc import ItemsView, Iterator
from pathlib import Path

import pytest

from mockllm._state import State, open_state
from tests.state.redis_support import RedisServer


@pytest.fixture(params=["memory", "sqlite", "redis"])
def state(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[State]:
    if request.param == "memory":
        opened = open_state("memory")
    elif request.param == "sqlite":
        opened = open_state(f"sqlite://{tmp_path}/state.db")
    else:
        server: RedisServer = request.getfixturevalue("redis_server")
        opened = open_state(server.url)
    try:
        yield opened
    finally:
        opened.close()


def test_key_values_keep_the_order_written_and_a_replaced_key_its_place(state: State) -> None:
    kv = state.map("things")
    kv.put("b", {"n": 1})
    kv.put("a", [1, 2])
    kv.put("b", {"n": 2})
    assert kv.items() == [("b", {"n": 2}), ("a", [1, 2])]
    assert kv.oldest() == ("b", {"n": 2})
    assert kv.put_new("a", 9) is False and kv.get("a") == [1, 2]
    assert kv.put_new("c", 3) is True
    assert kv.remove("b") == {"n": 2} and kv.get("b") is None and len(kv) == 2


def test_a_bounded_map_forgets_its_oldest_entries(state: State) -> None:
    kv = state.map("bounded", max_entries=2)
    for key in "xyz":
        kv.put(key, key)
    assert [k for k, _ in kv.items()] == ["y", "z"]


def test_counters_count_and_a_log_numbers_what_it_keeps(state: State) -> None:
    counters = state.counters("hits")
    assert counters.get("a") == 0
    assert [counters.incr("a") for _ in range(3)] == [1, 2, 3]
    assert counters.incr("b", 5) == 5
    assert dict(counters.items()) == {"a": 3, "b": 5}
    log = state.log("events", count=3)
    made = [log.append(lambda i: {"index": i}) for _ in range(5)]
    assert made[-1] == {"index": 4}
    assert log.items() == [{"index": 2}, {"index": 3}, {"index": 4}]
    log.clear()
    assert log.append(lambda i: i) == 0


def test_scopes_are_apart_and_clear_empties_only_its_own(state: State) -> None:
    session = state.scope("session-s1")
    state.map("m").put("k", 1)
    session.map("m").put("k", 2)
    assert state.map("m").get("k") == 1 and session.map("m").get("k") == 2
    state.clear()
    assert state.map("m").get("k") is None and session.map("m").get("k") == 2
    state.drop("session-s1")
    assert state.scope("session-s1").map("m").get("k") is None


def test_two_connections_to_one_sqlite_file_see_each_others_writes(tmp_path: Path) -> None:
    first, second = (open_state(f"sqlite://{tmp_path}/shared.db") for _ in range(2))
    try:
        first.map("scripts").put("script-1", {"chain": "…"})
        assert second.map("scripts").get("script-1") == {"chain": "…"}
        assert first.counters("c").incr("n") == 1 and second.counters("c").incr("n") == 2
    finally:
        first.close()
        second.close()


def test_of_two_callers_putting_one_new_key_at_once_one_sets_it() -> None:
    kv = open_state("memory").map("racing", max_bytes=1000)
    both_weighing = threading.Barrier(2, timeout=5)

    class Weighed(dict[str, int]):
        def items(self) -> ItemsView[str, int]:  # the JSON weighing waits until both callers are in it
            both_weighing.wait()
            return super().items()

    results: list[bool] = []
    callers = [threading.Thread(target=lambda n=n: results.append(kv.put_new("k", Weighed(n=n)))) for n in (1, 2)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert sorted(results) == [False, True]
    assert kv.get("k") in ({"n": 1}, {"n": 2}) and len(kv) == 1
