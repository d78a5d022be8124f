"""The review page served on loopback: accept or reject each golden and each changed row.

``python -m harness review`` binds 127.0.0.1 (a free port) and prints a URL holding a
random token; every route sits under ``/review/<token>/``, anything else is a 404. A
decision is written at once (``decisions.GoldenDecisions.write``), so closing the page
loses nothing; "Finish the review" (or Ctrl+C) stops the server.

    GET  /review/<token>/           the page (``page.render_review_page`` with buttons)
    GET  /review/<token>/review.js  its script
    GET  /review/<token>/state      every golden's decisions so far, as JSON
    POST /review/<token>/decide     {"path", "key", "decision": "accept"|"reject"}
    POST /review/<token>/finish     stop the server
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from harness.golden.refusal import FallbackRefused
from harness.golden.review.decisions import ACCEPT, WHOLE, GoldenDecisions, ReviewConflict
from harness.golden.review.page import render_review_page
from harness.golden.review.wording import count
from mockllm.testing import PromptServer, bind_socket, run_until_signalled

__all__ = ["ReviewServer"]

_SCRIPT = Path(__file__).with_name("review.js")


def _state(review: GoldenDecisions, written: bool = False) -> dict[str, Any]:
    decided = {review.decisions.get(h.key) for h in review.hunks}
    return {
        "path": review.path,
        "decisions": dict(review.decisions),
        "whole": decided.pop() if len(decided) == 1 else None,
        "written": written,
    }


class ReviewServer:
    """One review on ``127.0.0.1``; ``url`` holds the token. ``run()`` serves until
    finished or signalled; ``start()``/``stop()`` serve from a thread (tests)."""

    def __init__(self, reviews: Sequence[GoldenDecisions], *, port: int = 0, against: str = "") -> None:
        self.reviews = {review.path: review for review in reviews}
        self.token = secrets.token_urlsafe(18)
        self.against = against
        self._sock = bind_socket("127.0.0.1", port)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/review/{self.token}/"
        prefix = "/review/{token}/"
        app = Starlette(
            routes=[
                Route(prefix, self._page, methods=["GET"]),
                Route(prefix + "review.js", self._script, methods=["GET"]),
                Route(prefix + "state", self._state, methods=["GET"]),
                Route(prefix + "decide", self._decide, methods=["POST"]),
                Route(prefix + "finish", self._finish, methods=["POST"]),
            ]
        )
        # Stops as soon as it is asked ("Finish the review", a signal, ``stop``).
        self.server = PromptServer(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
        self._thread: threading.Thread | None = None

    def _allowed(self, request: Request) -> bool:
        return secrets.compare_digest(str(request.path_params.get("token", "")), self.token)

    @staticmethod
    def _denied() -> Response:
        return JSONResponse({"message": "Not found."}, status_code=404)

    async def _page(self, request: Request) -> Response:
        if not self._allowed(request):
            return self._denied()
        page = render_review_page(list(self.reviews.values()), against=self.against, script="review.js")
        return HTMLResponse(page, headers={"cache-control": "no-store"})

    async def _script(self, request: Request) -> Response:
        if not self._allowed(request):
            return self._denied()
        return Response(_SCRIPT.read_text(encoding="utf-8"), media_type="text/javascript")

    async def _state(self, request: Request) -> Response:
        if not self._allowed(request):
            return self._denied()
        return JSONResponse({"goldens": [_state(r) for r in self.reviews.values()]})

    async def _decide(self, request: Request) -> Response:
        if not self._allowed(request):
            return self._denied()
        try:
            body = json.loads(await request.body())
            path, key, decision = body["path"], body["key"], body["decision"]
        except (ValueError, KeyError, TypeError):
            return JSONResponse(
                {"message": 'Send JSON {"path": …, "key": …, "decision": "accept" or "reject"}.'}, status_code=400
            )
        review = self.reviews.get(path)
        if review is None:
            return JSONResponse({"message": f"No golden {path!r} is under review."}, status_code=404)
        try:
            review.decide(key, decision)
            written = review.write()
        except (KeyError, ValueError) as exc:
            return JSONResponse({"message": str(exc).strip("'\"")}, status_code=400)
        except FallbackRefused as exc:
            return JSONResponse({"message": str(exc)}, status_code=422)
        except ReviewConflict as exc:
            return JSONResponse({"message": str(exc)}, status_code=409)
        what = "every change" if key == WHOLE else key
        verb = "accepted" if decision == ACCEPT else "rejected"
        message = f"{path}: {what} {verb}; {'golden written' if written else 'golden unchanged'}."
        return JSONResponse({"message": message, "goldens": [_state(review, written)]})

    async def _finish(self, request: Request) -> Response:
        if not self._allowed(request):
            return self._denied()
        self.server.should_exit = True
        decided = sum(len(r.decisions) for r in self.reviews.values())
        return JSONResponse(
            {"message": f"Review finished: {count(decided, 'change')} decided. You can close this tab."}
        )

    def summary(self) -> list[str]:
        return [review.summary() for review in self.reviews.values()]

    def run(self, on_ready: Callable[[], None] | None = None) -> None:
        """Serve until "Finish the review", SIGINT or SIGTERM; ``on_ready`` (the banner) is
        called once a signal would end it quietly."""
        run_until_signalled(self.server, self._sock, on_ready)

    def start(self) -> None:
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self._sock]}, daemon=True)
        self._thread.start()
        for _ in range(200):  # bounded: 10 s
            if self.server.started:
                return
            time.sleep(0.05)
        raise RuntimeError("the review server did not start within 10 s")

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._sock.close()
