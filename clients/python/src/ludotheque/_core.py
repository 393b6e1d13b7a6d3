"""What the sync and async clients share, with no I/O: how a call is
described, when it may be sent again, how a refusal is read, and how a
Server-Sent Events stream is parsed and resumed."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast
from urllib.parse import quote

import httpx

from ._version import __version__
from .errors import Problem

if TYPE_CHECKING:
    from . import types

USER_AGENT = f"ludotheque-python/{__version__}"


def path(template: str, *parts: str | int) -> str:
    """A path with each part percent-encoded (a game id is the caller's text)."""
    return template.format(*(quote(str(p), safe="") for p in parts))


@dataclass(frozen=True)
class Call:
    """One API call, as both clients send it.

    `replayable`: the call may be sent again even if an earlier try may
    have reached the server, because repeating it changes nothing more:
    every read, a move (it always carries a `request_id`), verification, a
    stream ticket, and the PUT/DELETE hand-overs (asking for what already
    holds appends nothing). Creating, joining, leaving, resigning,
    cancelling, renewing a token and importing are not: they are retried
    only when the server surely never saw them (no connection was made, or
    it answered 429 or `too_many_connections`).
    """

    method: str
    path: str
    token: str | None = None
    params: Mapping[str, str | int] = field(default_factory=dict)
    json: Any = None
    content: bytes | None = None
    content_type: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    replayable: bool = True
    # False sends no token at all, not even the client's default (a stream
    # opened with a ticket).
    authorized: bool = True

    def request(
        self,
        http: httpx.Client | httpx.AsyncClient,
        base_url: str,
        default_token: str | None,
        timeout: httpx.Timeout | None = None,
    ) -> httpx.Request:
        """The httpx request for one try (built anew for each, so nothing is consumed)."""
        headers = {"accept": "application/json, application/problem+json", "user-agent": USER_AGENT, **self.headers}
        token = self.token if self.token is not None else default_token
        if token is not None and self.authorized:
            headers["authorization"] = f"Bearer {token}"
        if self.content_type is not None:
            headers["content-type"] = self.content_type
        return http.build_request(
            self.method,
            base_url + self.path,
            params=dict(self.params),
            json=self.json,
            content=self.content,
            headers=headers,
            timeout=timeout if timeout is not None else http.timeout,
        )


def query(**values: str | int | bool | None) -> dict[str, str | int]:
    """Query parameters, leaving out those not given; booleans as the API spells them."""
    out: dict[str, str | int] = {}
    for name, value in values.items():
        if value is None:
            continue
        out[name] = ("true" if value else "false") if isinstance(value, bool) else value
    return out


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before sending a call again.

    - `429 rate_limited`: wait the server's `retry_after_ms`, for any call
      (the server refused it before doing anything). So is `503
      too_many_connections`.
    - A connection that could not be made: back off and retry any call.
    - A connection that failed after the request may have been sent, and
      `408`, `502`, `503`, `504`: back off and retry replayable calls only
      (see `Call`); a move is replayable because every try carries the same
      `request_id`, so the server stores it at most once.

    At most `max_retries` retries per call; backoff doubles from `backoff_s`
    up to `max_backoff_s`, with jitter. A `retry_after_ms` beyond
    `max_wait_s` is not waited for: the `Problem` is raised.
    """

    max_retries: int = 4
    backoff_s: float = 0.2
    max_backoff_s: float = 5.0
    max_wait_s: float = 30.0

    def backoff(self, attempt: int) -> float:
        ceiling = min(self.max_backoff_s, self.backoff_s * 2**attempt)
        return random.uniform(ceiling / 2, ceiling)

    def after_problem(self, call: Call, attempt: int, problem: Problem) -> float | None:
        """Seconds to wait before retrying a refused call, or None to raise."""
        if attempt >= self.max_retries:
            return None
        waited = problem.retry_after_ms / 1000 if problem.retry_after_ms is not None else None
        if problem.status == 429 or problem.code == "too_many_connections":
            delay = waited if waited is not None else self.backoff(attempt)
            return delay if delay <= self.max_wait_s else None
        if problem.status in (408, 502, 503, 504) and call.replayable:
            delay = max(waited or 0.0, self.backoff(attempt))
            return delay if delay <= self.max_wait_s else None
        return None

    def after_failure(self, call: Call, attempt: int, error: httpx.TransportError) -> float | None:
        """Seconds to wait before retrying after a network failure, or None to raise."""
        if attempt >= self.max_retries:
            return None
        if never_sent(error) or call.replayable:
            return self.backoff(attempt)
        return None


def never_sent(error: httpx.TransportError) -> bool:
    """Whether the request surely never reached the server."""
    return isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout))


def problem_from(response: httpx.Response) -> Problem:
    """The refusal a non-2xx answer carries (its body must have been read)."""
    header = response.headers.get("retry-after")
    retry_after_ms = int(header) * 1000 if header is not None and header.isdigit() else None
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("code"), str) and isinstance(body.get("status"), int):
        return Problem(cast("types.Problem", body), retry_after_ms=retry_after_ms)
    # Not the server's problem: a proxy's page, say. Keep what can be told.
    synthetic: types.Problem = {
        "type": "about:blank",
        "title": response.reason_phrase,
        "status": response.status_code,
        "detail": response.text[:500],
        "code": f"http_{response.status_code}",
    }
    return Problem(synthetic, retry_after_ms=retry_after_ms)


# -- Server-Sent Events ------------------------------------------------------


@dataclass(frozen=True)
class SseEvent:
    """One dispatched event: its type, data, and the stream's last event id."""

    event: str
    data: str
    id: str | None


class SseParser:
    """The event-stream interpretation of the HTML standard, fed a line at a time
    (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation).
    """

    def __init__(self, last_event_id: str | None = None) -> None:
        self.last_event_id = last_event_id
        self.retry_ms: int | None = None
        self._event = ""
        self._data: list[str] = []

    def feed(self, line: str) -> SseEvent | None:
        """Takes one line (without its end); returns the event a blank line completes."""
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment: the server's keep-alive
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self.retry_ms = int(value)
        return None

    def _dispatch(self) -> SseEvent | None:
        event, data = self._event or "message", self._data
        self._event, self._data = "", []
        if not data:
            return None
        return SseEvent(event, "\n".join(data), self.last_event_id)


StepKind = Literal["update", "end", "ignore"]


@dataclass
class FollowState:
    """Where a feed stands: what to ask on (re)connecting, and what each event means.

    The first connection asks `?from=N` if a starting version was given;
    every later one sends `Last-Event-ID` (the seq of the last record
    received), so the server resumes right after it: no gap, no repeat.
    """

    game_id: str
    from_version: int | None = None
    last_event_id: str | None = None
    connections: int = 0

    def call(self, token: str | None, ticket: str | None) -> Call:
        headers = {"accept": "text/event-stream"}
        params: dict[str, str | int] = {}
        if self.last_event_id is not None:
            headers["last-event-id"] = self.last_event_id
        elif self.from_version is not None:
            params["from"] = self.from_version
        if ticket is not None:
            # A ticket goes in the URL by design (short-lived, read-only, one
            # game and seat); the token itself never does.
            params["ticket"] = ticket
        self.connections += 1
        return Call(
            "GET",
            path("/v1/games/{}/stream", self.game_id),
            token=token,
            params=params,
            headers=headers,
            authorized=ticket is None,
        )

    def step(self, event: SseEvent) -> tuple[StepKind, Any]:
        """What an event means: a record to hand over, the end, or nothing."""
        if event.event == "record":
            update = json.loads(event.data)
            if event.id is not None:
                self.last_event_id = event.id
            return "update", update
        if event.event == "end":
            return "end", json.loads(event.data)
        if event.event == "seat_revoked":
            raise revoked_problem(event.data)
        return "ignore", None


def revoked_problem(data: str) -> Problem:
    """The `seat_revoked` event (its data is the problem), raised as a `Problem`."""
    try:
        body = json.loads(data)
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("code"), str) and isinstance(body.get("status"), int):
        return Problem(cast("types.Problem", body))
    return Problem(
        {
            "type": "urn:ludotheque:problem:seat_revoked",
            "title": "Unauthorized",
            "status": 401,
            "detail": data,
            "code": "seat_revoked",
        }
    )
