"""The asyncio client. `_sync.py` is generated from this file by
tools/gen_sync.py, so both clients have one surface and one behaviour:
edit this file, then run the tool."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast, overload
from uuid import uuid4

import httpx

from ._core import Call, FollowState, RetryPolicy, SseParser, never_sent, path, problem_from, query
from .errors import TransportError

if TYPE_CHECKING:
    from . import battle13, cardinal, kardinal
    from .types import (
        Autopilot,
        BotRequest,
        ClockRequest,
        ConsistencyProof,
        CreatedGame,
        EventPage,
        GameList,
        GameMove,
        GameState,
        GameUpdate,
        Health,
        ImportedGame,
        JoinedSeat,
        KindList,
        LegalMoves,
        LogInfo,
        MoveAccepted,
        PlayerSeat,
        Receipt,
        ReissuedToken,
        SeatKnowledge,
        StepPage,
        StreamEnd,
        StreamTicket,
        TableChanged,
        VerifyReport,
    )

# A stream is idle for up to 15 s between the server's keep-alive comments:
# reading waits longer than that before taking the connection for dead.
STREAM_READ_TIMEOUT_S = 45.0


class AsyncClient:
    """A ludotheque server's REST API, for asyncio.

    `token` is the default bearer token (a seat's, a game's admin token, the
    operator's); every method that needs one also takes `token=` for the
    call. `retry` says when calls are sent again (see `RetryPolicy`).
    `http` lends an httpx client of your own (for its transport, proxies,
    TLS settings …; its base URL is not used); otherwise one is made, and
    closed by `aclose()` or `async with`.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 30.0,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.retry = retry if retry is not None else RetryPolicy()
        self._owns_http = http is None
        self._http = http if http is not None else httpx.AsyncClient(timeout=timeout)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    # -- sending -----------------------------------------------------------

    async def _send(self, call: Call, *, stream: bool = False, timeout: httpx.Timeout | None = None) -> httpx.Response:
        """Sends a call, retrying as the policy allows; returns a 2xx answer or raises."""
        attempt = 0
        while True:
            request = call.request(self._http, self.base_url, self.token, timeout)
            try:
                response = await self._http.send(request, stream=stream)
            except httpx.TransportError as error:
                delay = self.retry.after_failure(call, attempt, error)
                if delay is None:
                    unknown = not never_sent(error)
                    raise TransportError(f"{call.method} {call.path}: {error!r}", outcome_unknown=unknown) from error
            else:
                if response.is_success:
                    return response
                await response.aread()
                await response.aclose()
                problem = problem_from(response)
                delay = self.retry.after_problem(call, attempt, problem)
                if delay is None:
                    raise problem
            attempt += 1
            await asyncio.sleep(delay)

    async def _json(self, call: Call) -> Any:
        response = await self._send(call)
        return response.json()

    async def _text(self, call: Call) -> str:
        response = await self._send(call)
        return response.text

    # -- the server --------------------------------------------------------

    async def health(self) -> Health:
        """`GET /healthz`: the process is alive."""
        return cast("Health", await self._json(Call("GET", "/healthz")))

    async def ready(self) -> Health:
        """`GET /readyz`: the server takes moves (raises `Problem` `not_ready` otherwise)."""
        return cast("Health", await self._json(Call("GET", "/readyz")))

    async def metrics(self) -> str:
        """`GET /metrics`: OpenMetrics text."""
        return await self._text(Call("GET", "/metrics", headers={"accept": "application/openmetrics-text"}))

    async def kinds(self) -> KindList:
        """`GET /v1/kinds`: each kind's player counts, default options and options schema."""
        return cast("KindList", await self._json(Call("GET", "/v1/kinds")))

    # -- games -------------------------------------------------------------

    @overload
    async def create_game(
        self,
        kind: Literal["cardinal"],
        players: Sequence[PlayerSeat | None],
        *,
        options: cardinal.OptionsRequest | None = None,
        public: bool | None = None,
        clock: ClockRequest | None = None,
        webhook: str | None = None,
    ) -> CreatedGame: ...

    @overload
    async def create_game(
        self,
        kind: Literal["kardinal"],
        players: Sequence[PlayerSeat | None],
        *,
        options: kardinal.OptionsRequest | None = None,
        public: bool | None = None,
        clock: ClockRequest | None = None,
        webhook: str | None = None,
    ) -> CreatedGame: ...

    @overload
    async def create_game(
        self,
        kind: Literal["battle13"],
        players: Sequence[PlayerSeat | None],
        *,
        options: battle13.OptionsRequest | None = None,
        public: bool | None = None,
        clock: ClockRequest | None = None,
        webhook: str | None = None,
    ) -> CreatedGame: ...

    async def create_game(
        self,
        kind: Literal["cardinal", "kardinal", "battle13"],
        players: Sequence[PlayerSeat | None],
        *,
        options: cardinal.OptionsRequest | kardinal.OptionsRequest | battle13.OptionsRequest | None = None,
        public: bool | None = None,
        clock: ClockRequest | None = None,
        webhook: str | None = None,
    ) -> CreatedGame:
        """`POST /v1/games`. `players` in seat order: a name, `{"name": …, "bot":
        {"level": …}}` for a server bot, or None for a seat left open.

        The answer holds the seats' tokens, the admin token and the
        invitations, shown only this once. Not retried once it may have
        reached the server (a second try would make a second game).
        """
        body: dict[str, Any] = {"kind": kind, "players": list(players)}
        for name, value in (("options", options), ("public", public), ("clock", clock), ("webhook", webhook)):
            if value is not None:
                body[name] = value
        return cast("CreatedGame", await self._json(Call("POST", "/v1/games", json=body, replayable=False)))

    async def list_games(
        self,
        *,
        kind: Literal["cardinal", "kardinal", "battle13"] | None = None,
        state: Literal["in_progress", "finished"] | None = None,
        open: bool | None = None,
        after: str | None = None,
        limit: int | None = None,
    ) -> GameList:
        """`GET /v1/games`: a page of games, oldest first. `open=True` is the lobby
        (public games waiting for players); pass `next_after` as `after` for
        the next page."""
        params = query(kind=kind, state=state, open=open, after=after, limit=limit)
        return cast("GameList", await self._json(Call("GET", "/v1/games", params=params)))

    async def get_game(self, game_id: str, *, token: str | None = None) -> GameState:
        """`GET /v1/games/{id}`: the game as the token's seat sees it (a spectator's
        view without one)."""
        return cast("GameState", await self._json(Call("GET", path("/v1/games/{}", game_id), token=token)))

    async def join(
        self,
        game_id: str,
        name: str,
        *,
        invitation: str | None = None,
        seat: int | None = None,
    ) -> JoinedSeat:
        """`POST /v1/games/{id}/join`: takes the invitation's seat, or in a public
        game the lowest open seat (or `seat`). The answer holds the seat's
        token. Not retried once it may have reached the server."""
        body: dict[str, Any] = {"name": name}
        if invitation is not None:
            body["invitation"] = invitation
        if seat is not None:
            body["seat"] = seat
        call = Call("POST", path("/v1/games/{}/join", game_id), json=body, replayable=False)
        return cast("JoinedSeat", await self._json(call))

    async def leave(self, game_id: str, *, token: str | None = None) -> TableChanged:
        """`POST /v1/games/{id}/leave` (seat token): leaves a game that has not
        started. Not retried once it may have reached the server."""
        call = Call("POST", path("/v1/games/{}/leave", game_id), token=token, replayable=False)
        return cast("TableChanged", await self._json(call))

    async def resign(self, game_id: str, *, token: str | None = None) -> TableChanged:
        """`POST /v1/games/{id}/resign` (seat token). Not retried once it may have
        reached the server."""
        call = Call("POST", path("/v1/games/{}/resign", game_id), token=token, replayable=False)
        return cast("TableChanged", await self._json(call))

    async def cancel(self, game_id: str, *, token: str | None = None) -> TableChanged:
        """`POST /v1/games/{id}/cancel` (admin token): calls off a game that has not
        started. Not retried once it may have reached the server."""
        call = Call("POST", path("/v1/games/{}/cancel", game_id), token=token, replayable=False)
        return cast("TableChanged", await self._json(call))

    async def reissue_token(self, game_id: str, seat: int, *, token: str | None = None) -> ReissuedToken:
        """`POST /v1/games/{id}/seats/{seat}/token` (the seat's token, or the admin
        token for a seat token it holds): a new token; the old one, its
        tickets and streams stop. Never retried once it may have reached the
        server: a second renewal would void the token the first one made."""
        call = Call("POST", path("/v1/games/{}/seats/{}/token", game_id, seat), token=token, replayable=False)
        return cast("ReissuedToken", await self._json(call))

    async def set_seat_bot(
        self,
        game_id: str,
        seat: int,
        bot: BotRequest,
        *,
        name: str | None = None,
        token: str | None = None,
    ) -> TableChanged:
        """`PUT /v1/games/{id}/seats/{seat}/bot` (admin token): an open seat (taken
        under `name`) or a bot's seat goes to this server bot."""
        body: dict[str, Any] = {"bot": bot}
        if name is not None:
            body["name"] = name
        call = Call("PUT", path("/v1/games/{}/seats/{}/bot", game_id, seat), token=token, json=body)
        return cast("TableChanged", await self._json(call))

    async def clear_seat_bot(self, game_id: str, seat: int, *, token: str | None = None) -> TableChanged:
        """`DELETE /v1/games/{id}/seats/{seat}/bot` (admin token): a bot leaves its
        seat before the start (the seat opens again)."""
        call = Call("DELETE", path("/v1/games/{}/seats/{}/bot", game_id, seat), token=token)
        return cast("TableChanged", await self._json(call))

    # -- playing -----------------------------------------------------------

    async def legal_moves(self, game_id: str, *, token: str | None = None) -> LegalMoves:
        """`GET /v1/games/{id}/legal-moves` (seat token): each is a `move` that
        `submit_move` accepts, valid at the answer's `version`."""
        call = Call("GET", path("/v1/games/{}/legal-moves", game_id), token=token)
        return cast("LegalMoves", await self._json(call))

    async def submit_move(
        self,
        game_id: str,
        move: GameMove,
        *,
        token: str | None = None,
        expected_version: int | None = None,
        request_id: str | None = None,
        minimal: bool = False,
    ) -> MoveAccepted:
        """`POST /v1/games/{id}/moves` (seat token).

        `expected_version`: refused (`version_conflict`) unless the game is
        still there. `request_id`: the idempotency key; a fresh one is made
        when none is given, and every retry of this call sends the same one,
        so a retry returns the first answer and never makes a second move.
        `minimal`: leave the view out of the answer (`Prefer: return=minimal`).
        """
        body: dict[str, Any] = {"move": move, "request_id": request_id if request_id is not None else str(uuid4())}
        if expected_version is not None:
            body["expected_version"] = expected_version
        headers = {"prefer": "return=minimal"} if minimal else {}
        call = Call("POST", path("/v1/games/{}/moves", game_id), token=token, json=body, headers=headers)
        return cast("MoveAccepted", await self._json(call))

    async def set_autopilot(self, game_id: str, bot: BotRequest, *, token: str | None = None) -> Autopilot:
        """`PUT /v1/games/{id}/autopilot` (seat token): a server bot plays the seat
        until `clear_autopilot`; the token still moves and sees meanwhile."""
        call = Call("PUT", path("/v1/games/{}/autopilot", game_id), token=token, json={"bot": bot})
        return cast("Autopilot", await self._json(call))

    async def clear_autopilot(self, game_id: str, *, token: str | None = None) -> Autopilot:
        """`DELETE /v1/games/{id}/autopilot` (seat token): the seat's player plays again."""
        call = Call("DELETE", path("/v1/games/{}/autopilot", game_id), token=token)
        return cast("Autopilot", await self._json(call))

    async def seat_knowledge(self, game_id: str, *, token: str | None = None) -> SeatKnowledge:
        """`GET /v1/games/{id}/info` (seat token): the seat's information set, for a
        bot of your own."""
        call = Call("GET", path("/v1/games/{}/info", game_id), token=token)
        return cast("SeatKnowledge", await self._json(call))

    # -- the record ----------------------------------------------------------

    async def events(
        self,
        game_id: str,
        *,
        from_seq: int | None = None,
        limit: int | None = None,
        token: str | None = None,
    ) -> EventPage:
        """`GET /v1/games/{id}/events`: a page of the log from record `from_seq`,
        redacted for the caller; `next_from` is the next page's start."""
        params = query(**{"from": from_seq, "limit": limit})
        call = Call("GET", path("/v1/games/{}/events", game_id), token=token, params=params)
        return cast("EventPage", await self._json(call))

    async def steps(
        self,
        game_id: str,
        *,
        from_seq: int | None = None,
        limit: int | None = None,
        token: str | None = None,
    ) -> StepPage:
        """`GET /v1/games/{id}/steps`: what each record did, in words."""
        params = query(**{"from": from_seq, "limit": limit})
        call = Call("GET", path("/v1/games/{}/steps", game_id), token=token, params=params)
        return cast("StepPage", await self._json(call))

    async def replay(self, game_id: str, at: int, *, token: str | None = None) -> GameState:
        """`GET /v1/games/{id}/replay?at=N`: the game at version `at`, as the caller
        may see it."""
        call = Call("GET", path("/v1/games/{}/replay", game_id), token=token, params={"at": at})
        return cast("GameState", await self._json(call))

    async def export(self, game_id: str, *, token: str | None = None) -> str:
        """`GET /v1/games/{id}/export`: the record as JSON Lines; once the game is
        over, a bundle with the seed, the revealed cards and the receipt."""
        call = Call("GET", path("/v1/games/{}/export", game_id), token=token, headers={"accept": "application/x-ndjson"})
        return await self._text(call)

    async def verify(self, export: str | bytes) -> VerifyReport:
        """`POST /v1/verify`: checks an export (hash chain, seed, re-play, receipt)."""
        content = export.encode() if isinstance(export, str) else export
        call = Call("POST", "/v1/verify", content=content, content_type="application/x-ndjson")
        return cast("VerifyReport", await self._json(call))

    async def import_game(self, export: str | bytes, *, token: str | None = None) -> ImportedGame:
        """`POST /v1/games/import` (the operator's token): imports a finished game's
        export. Not retried once it may have reached the server."""
        content = export.encode() if isinstance(export, str) else export
        call = Call(
            "POST", "/v1/games/import", token=token, content=content, content_type="application/x-ndjson", replayable=False
        )
        return cast("ImportedGame", await self._json(call))

    # -- the transparency log ------------------------------------------------

    async def receipt(self, game_id: str) -> Receipt:
        """`GET /v1/games/{id}/receipt`: a finished game's receipt (`game_not_over` before)."""
        return cast("Receipt", await self._json(Call("GET", path("/v1/games/{}/receipt", game_id))))

    async def log_info(self) -> LogInfo:
        """`GET /v1/log`: the log's origin, public key and latest signed checkpoint."""
        return cast("LogInfo", await self._json(Call("GET", "/v1/log")))

    async def log_checkpoint(self) -> str:
        """`GET /v1/log/checkpoint`: the latest signed checkpoint (a C2SP signed note)."""
        return await self._text(Call("GET", "/v1/log/checkpoint", headers={"accept": "text/plain"}))

    async def log_key(self) -> str:
        """`GET /.well-known/ludotheque-log-key`: the log's verifier key."""
        return await self._text(Call("GET", "/.well-known/ludotheque-log-key", headers={"accept": "text/plain"}))

    async def log_consistency(self, from_size: int, to_size: int) -> ConsistencyProof:
        """`GET /v1/log/consistency`: proof that the tree of `from_size` leaves is a
        prefix of the tree of `to_size`."""
        call = Call("GET", "/v1/log/consistency", params={"from": from_size, "to": to_size})
        return cast("ConsistencyProof", await self._json(call))

    # -- following live ------------------------------------------------------

    async def stream_ticket(self, game_id: str, *, token: str | None = None) -> StreamTicket:
        """`POST /v1/games/{id}/stream-tickets` (seat token): a short-lived,
        read-only ticket that opens the game's stream as the seat."""
        call = Call("POST", path("/v1/games/{}/stream-tickets", game_id), token=token)
        return cast("StreamTicket", await self._json(call))

    def follow(
        self,
        game_id: str,
        *,
        token: str | None = None,
        from_version: int | None = None,
        last_event_id: str | None = None,
        use_ticket: bool = False,
        max_reconnects: int = 8,
    ) -> AsyncFeed:
        """The game's records as they are appended (`GET /v1/games/{id}/stream`):
        an async iterator of `GameUpdate`s that reconnects by itself and resumes
        with `Last-Event-ID`, so each record arrives once, in order. It ends
        when the game is over (`feed.end` then holds the final status).

        With a seat's token the views are the seat's; without one, a
        spectator's. `use_ticket` trades the token for a stream ticket on
        each connection, as a browser must (the token never goes in a URL).
        Start after `last_event_id` (a record's seq, as a string), or at
        record `from_version`; by default the stream starts at record 0.
        `max_reconnects` bounds the reconnections in a row that bring
        nothing new.
        """
        state = FollowState(game_id, from_version=from_version, last_event_id=last_event_id)
        return AsyncFeed(self, state, token, use_ticket, max_reconnects)


class AsyncFeed:
    """A live game stream; iterate it (`async for update in feed`).

    `end` is the stream's last message (the final status) once the game is
    over; it stays None if the feed was resumed after the last record was
    already received (the server then answers 204 and sends nothing).
    `last_event_id` is where a new feed would resume; `connections` counts
    the connections made.
    """

    def __init__(self, client: AsyncClient, state: FollowState, token: str | None, use_ticket: bool, max_reconnects: int) -> None:
        self._client = client
        self._state = state
        self._token = token
        self._use_ticket = use_ticket
        self._max_reconnects = max_reconnects
        self.end: StreamEnd | None = None

    @property
    def last_event_id(self) -> str | None:
        return self._state.last_event_id

    @property
    def connections(self) -> int:
        return self._state.connections

    def __aiter__(self) -> AsyncIterator[GameUpdate]:
        return self._updates()

    async def _updates(self) -> AsyncIterator[GameUpdate]:
        client, state = self._client, self._state
        fruitless = 0  # connections in a row that brought no record
        while True:
            ticket = None
            if self._use_ticket:
                ticket = (await client.stream_ticket(state.game_id, token=self._token))["ticket"]
            usual = client._http.timeout
            read = None if usual.read is None else max(usual.read, STREAM_READ_TIMEOUT_S)
            timeout = httpx.Timeout(connect=usual.connect, read=read, write=usual.write, pool=usual.pool)
            response = await client._send(state.call(self._token, ticket), stream=True, timeout=timeout)
            parser = SseParser(state.last_event_id)
            try:
                if response.status_code == 204:
                    return  # a finished game, every record already sent
                async for line in response.aiter_lines():
                    event = parser.feed(line)
                    if event is None:
                        continue
                    kind, data = state.step(event)
                    if kind == "update":
                        fruitless = 0
                        yield cast("GameUpdate", data)
                    elif kind == "end":
                        self.end = cast("StreamEnd", data)
                        return
            except httpx.TransportError:
                pass  # the connection dropped: resume below
            finally:
                await response.aclose()
            fruitless += 1
            if fruitless > self._max_reconnects:
                raise TransportError(
                    f"stream of game {state.game_id}: {fruitless} connections in a row brought nothing",
                    outcome_unknown=False,
                )
            retry = parser.retry_ms / 1000 if parser.retry_ms is not None else None
            await asyncio.sleep(retry if retry is not None else client.retry.backoff(fruitless - 1))
