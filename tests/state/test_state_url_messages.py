"""What `serve --state` says about a malformed SQLite URL and a Redis that went away."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mockllm._state import open_state, temporary_sqlite_url
from mockllm._state.base import StateConfigError, StateUnavailable
from tests.mockllm.server_support import launch


def test_a_sqlite_url_without_its_two_slashes_is_refused_naming_the_form(tmp_path: Path) -> None:
    # urlsplit reads sqlite:/tmp/x.db as a sqlite URL; cutting "sqlite://" off it opened
    # "mp/x.db", a path nobody gave, relative to the working directory.
    with pytest.raises(StateConfigError, match=r"sqlite:/x\.db: a SQLite state is sqlite:// and a path") as said:
        open_state("sqlite:/x.db")
    assert "sqlite:///tmp/s.db for /tmp/s.db" in str(said.value)


def test_a_directory_is_refused_with_a_url_that_names_a_file_in_it(tmp_path: Path) -> None:
    with pytest.raises(StateConfigError) as said:
        open_state(f"sqlite://{tmp_path}")
    suggested = str(said.value).rsplit("e.g. ", 1)[1].rstrip(".")
    assert suggested == f"sqlite://{tmp_path}/state.db"
    state = open_state(suggested)  # the suggestion works as given
    state.close()
    assert (tmp_path / "state.db").is_file()


def test_an_unavailable_store_is_named_in_one_sentence_per_full_stop() -> None:
    said = str(StateUnavailable("--state redis://r:6379/0", ConnectionError("Connection refused.")))
    assert "unavailable: Connection refused. The mock answers 503" in said and ".." not in said


def test_the_temporary_state_is_named_with_three_slashes_as_the_docs_write_it() -> None:
    # serve --workers prints this URL; it read sqlite:////tmp/… (a path starting "//").
    url = temporary_sqlite_url()
    path = url.removeprefix("sqlite://")
    assert url.startswith("sqlite:///") and not url.startswith("sqlite:////")
    assert path == os.path.normpath(path) and os.path.isabs(path)
    os.rmdir(os.path.dirname(path))


def test_one_process_on_a_shared_state_says_which_in_its_banner(tmp_path: Path) -> None:
    # A replica started without --workers printed nothing of its --state: nothing to tell
    # a replica on the shared Redis from one on its own memory (whose banner says nothing
    # of its state: test_server_http.py's banner test, on a server it shares).
    path = tmp_path / "shared.db"
    server = launch(tmp_path, "--port", "0", "--state", f"sqlite://{path}")
    try:
        assert f"  state: sqlite://{path}\n" in server.wait_ready().output
    finally:
        assert server.stop() == 0
