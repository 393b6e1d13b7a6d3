"""What a call raises: the server's refusals as `Problem`, a network that
failed for good as `TransportError`; both are `LudoError`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import types


class LudoError(Exception):
    """Anything the SDK raises on purpose."""


class Problem(LudoError):
    """The server refused the call (an RFC 9457 problem); nothing was changed.

    `code` is the stable machine code (`rule_violation`, `version_conflict`,
    `not_your_turn` …, see docs/api.md); the other attributes are the
    problem's fields, `None` where the problem has none. `body` is the
    whole problem as the server sent it.

    An answer that is not a problem (say a proxy's 502 page) is raised as a
    `Problem` too, with `code` `http_<status>` and the start of its text as
    `detail`.
    """

    def __init__(self, body: types.Problem, *, retry_after_ms: int | None = None) -> None:
        self.body = body
        self.status: int = body["status"]
        self.code: str = body["code"]
        self.title: str = body["title"]
        self.detail: str = body["detail"]
        self.type: str = body["type"]
        self.rule = body.get("rule")
        self.field = body.get("field")
        self.current_version = body.get("current_version")
        self.expected_version = body.get("expected_version")
        self.open_seats = body.get("open_seats")
        self.to_move = body.get("to_move")
        self.seat = body.get("seat")
        self.line = body.get("line")
        self.seq = body.get("seq")
        # The problem's own field, else the Retry-After header (whole seconds).
        own = body.get("retry_after_ms")
        self.retry_after_ms = own if own is not None else retry_after_ms
        super().__init__(f"{self.status} {self.code}: {self.detail}")


class TransportError(LudoError):
    """The server could not be reached, or the connection failed, and the
    retry policy gave up (or may not retry this call).

    `outcome_unknown` is true when the request may have reached the server:
    for a call that is not idempotent (creating or joining a game, leaving,
    resigning, cancelling, renewing a token, importing), it may have taken
    effect. Read the game to find out before trying again.
    """

    def __init__(self, message: str, *, outcome_unknown: bool) -> None:
        self.outcome_unknown = outcome_unknown
        super().__init__(message)
