"""Retry rules, against a tiny scripted HTTP server on 127.0.0.1: it answers
each request with the next step of its script, so the tests can make the
network fail exactly where they want."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from ludotheque import AsyncClient, Client, Problem, RetryPolicy, TransportError
from ludotheque.cardinal import KeepCardinalMove

# A step: (status, JSON body) to answer, or "drop" to read the request and
# close the connection without a word (the request reached the server, the
# answer was lost).
Step = tuple[int, dict[str, Any]] | str

ACCEPTED = {"kind": "cardinal", "version": 3, "status": {"state": "in_progress", "to_move": [1]}, "effects": []}
FAST = RetryPolicy(max_retries=3, backoff_s=0.01, max_backoff_s=0.05)
KEEP: KeepCardinalMove = {"type": "keep_cardinal"}


def problem(status: int, code: str, **extra: Any) -> dict[str, Any]:
    return {"type": f"urn:ludotheque:problem:{code}", "title": "t", "status": status, "detail": code, "code": code, **extra}


class Scripted:
    def __init__(self, steps: list[Step]) -> None:
        self.steps = steps
        self.bodies: list[dict[str, Any]] = []
        self.times: list[float] = []


@pytest.fixture
def scripted() -> Iterator[tuple[str, Scripted]]:
    script = Scripted([])

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(length)
            script.times.append(time.monotonic())
            script.bodies.append(json.loads(body) if body else {})
            step = script.steps.pop(0)
            if step == "drop":
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            assert not isinstance(step, str)
            status, answer = step
            data = json.dumps(answer).encode()
            self.send_response(status)
            kind = "application/json" if status < 400 else "application/problem+json"
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass  # keep the test output quiet

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", script
    finally:
        server.shutdown()
        server.server_close()


def test_429_waits_retry_after_ms_then_succeeds(scripted: tuple[str, Scripted]) -> None:
    base, script = scripted
    script.steps = [(429, problem(429, "rate_limited", retry_after_ms=300)), (200, ACCEPTED)]
    with Client(base, retry=FAST) as client:
        answer = client.submit_move("g1", KEEP, token="t")
    assert answer["version"] == 3
    assert len(script.bodies) == 2
    assert script.times[1] - script.times[0] >= 0.3, "waited the server's retry_after_ms"
    assert script.bodies[0]["request_id"] == script.bodies[1]["request_id"]


def test_a_lost_answer_is_retried_with_the_same_request_id(scripted: tuple[str, Scripted]) -> None:
    base, script = scripted
    script.steps = ["drop", (503, problem(503, "storage_unavailable", retry_after_ms=10)), (200, ACCEPTED)]
    with Client(base, retry=FAST) as client:
        answer = client.submit_move("g1", KEEP, token="t", expected_version=2)
    assert answer["version"] == 3
    ids = {body["request_id"] for body in script.bodies}
    assert len(script.bodies) == 3 and len(ids) == 1, "one request_id for every try: never a second move"
    assert all(body["expected_version"] == 2 for body in script.bodies)


def test_a_given_request_id_is_kept(scripted: tuple[str, Scripted]) -> None:
    base, script = scripted
    script.steps = ["drop", (200, ACCEPTED)]
    with Client(base, retry=FAST) as client:
        client.submit_move("g1", KEEP, token="t", request_id="turn-12")
    assert [body["request_id"] for body in script.bodies] == ["turn-12", "turn-12"]


def test_a_call_without_a_key_is_not_sent_twice(scripted: tuple[str, Scripted]) -> None:
    base, script = scripted
    script.steps = ["drop", (201, {})]
    with Client(base, retry=FAST) as client, pytest.raises(TransportError) as raised:
        client.create_game("cardinal", ["Ann", "Bob"])
    assert raised.value.outcome_unknown
    assert len(script.bodies) == 1, "a second try could have made a second game"


def test_a_call_without_a_key_is_retried_on_429(scripted: tuple[str, Scripted]) -> None:
    base, script = scripted
    script.steps = [(429, problem(429, "rate_limited", retry_after_ms=20)), (201, {"id": "g2"})]
    with Client(base, retry=FAST) as client:
        assert client.create_game("cardinal", ["Ann", "Bob"])["id"] == "g2"
    assert len(script.bodies) == 2


def test_refusals_are_not_retried_and_carry_their_fields(scripted: tuple[str, Scripted]) -> None:
    base, script = scripted
    script.steps = [(409, problem(409, "version_conflict", current_version=5, expected_version=2))]
    with Client(base, retry=FAST) as client, pytest.raises(Problem) as raised:
        client.submit_move("g1", KEEP, token="t", expected_version=2)
    assert (raised.value.status, raised.value.code) == (409, "version_conflict")
    assert (raised.value.current_version, raised.value.expected_version) == (5, 2)
    assert len(script.bodies) == 1


def test_retries_are_bounded(scripted: tuple[str, Scripted]) -> None:
    base, script = scripted
    script.steps = [(503, problem(503, "storage_unavailable", retry_after_ms=1))] * 10
    with Client(base, retry=FAST) as client, pytest.raises(Problem) as raised:
        client.submit_move("g1", KEEP, token="t")
    assert raised.value.code == "storage_unavailable"
    assert len(script.bodies) == 1 + FAST.max_retries


def test_a_wait_longer_than_max_wait_is_raised_at_once(scripted: tuple[str, Scripted]) -> None:
    base, script = scripted
    script.steps = [(429, problem(429, "rate_limited", retry_after_ms=120_000))]
    with Client(base, retry=FAST) as client, pytest.raises(Problem) as raised:
        client.submit_move("g1", KEEP, token="t")
    assert raised.value.retry_after_ms == 120_000 and len(script.bodies) == 1


def test_async_client_follows_the_same_rules(scripted: tuple[str, Scripted]) -> None:
    base, script = scripted
    script.steps = [(429, problem(429, "rate_limited", retry_after_ms=200)), "drop", (200, ACCEPTED)]

    async def run() -> int:
        async with AsyncClient(base, retry=FAST) as client:
            return (await client.submit_move("g1", KEEP, token="t"))["version"]

    assert asyncio.run(run()) == 3
    assert len(script.bodies) == 3 and len({b["request_id"] for b in script.bodies}) == 1
    assert script.times[1] - script.times[0] >= 0.2


def test_an_unreachable_server_is_retried_then_raised() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    with Client(f"http://127.0.0.1:{port}", retry=FAST) as client, pytest.raises(TransportError) as raised:
        client.create_game("cardinal", ["Ann", "Bob"])
    assert not raised.value.outcome_unknown, "no connection: the server never saw it"
    assert time.monotonic() - started < 5
