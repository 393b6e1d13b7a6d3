"""The Server-Sent Events parser, line by line, as the HTML standard reads a stream."""

from __future__ import annotations

import pytest

from ludotheque import Problem
from ludotheque._core import FollowState, SseEvent, SseParser


def feed_all(parser: SseParser, text: str) -> list[SseEvent]:
    return [event for line in text.split("\n") if (event := parser.feed(line)) is not None]


def test_fields_comments_and_multiline_data() -> None:
    parser = SseParser()
    events = feed_all(
        parser,
        ": keep-alive\n"
        "id: 7\nevent: record\ndata: {\"a\":\ndata:1}\n\n"
        "data: no type\n\n"
        "retry: 2500\n"
        "id\n"  # an empty id resets the last event id
        "event:end\ndata:{}\n\n",
    )
    assert events == [
        SseEvent("record", '{"a":\n1}', "7"),
        SseEvent("message", "no type", "7"),
        SseEvent("end", "{}", ""),
    ]
    assert parser.retry_ms == 2500


def test_an_unfinished_event_is_never_dispatched() -> None:
    parser = SseParser()
    assert feed_all(parser, "id: 3\nevent: record\ndata: {}") == []
    assert parser.last_event_id == "3"  # the id counts even so, as the standard says
    assert feed_all(SseParser(), "retry: soon\nid: a\0b\n\n") == []


def test_resume_sends_last_event_id_not_from() -> None:
    state = FollowState("g 1", from_version=5)
    first = state.call(token="tok", ticket=None)
    assert first.path == "/v1/games/g%201/stream" and dict(first.params) == {"from": 5}
    state.step(SseEvent("record", '{"event": {"seq": 5}}', "5"))
    again = state.call(token="tok", ticket=None)
    assert dict(again.params) == {} and again.headers["last-event-id"] == "5"
    with_ticket = state.call(token="tok", ticket="0.1.ab")
    assert dict(with_ticket.params) == {"ticket": "0.1.ab"} and not with_ticket.authorized
    assert state.connections == 3


def test_seat_revoked_is_raised_as_its_problem() -> None:
    data = '{"type":"urn:ludotheque:problem:seat_revoked","title":"Unauthorized","status":401,"detail":"gone","code":"seat_revoked","seat":2}'
    with pytest.raises(Problem) as raised:
        FollowState("g").step(SseEvent("seat_revoked", data, "9"))
    assert (raised.value.status, raised.value.code, raised.value.seat) == (401, "seat_revoked", 2)
