//! The REST adapter: thin handlers over the game service.

mod extract;
mod json;
pub mod problem;

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderName, StatusCode, header};
use axum::response::IntoResponse;
use axum::response::sse::{Event, KeepAlive, Sse};
use ludo_game::api::{
    Autopilot, CreateGame, CreatedGame, EventPage, GameList, GameState, GameUpdate, ImportedGame, JoinGame, JoinedSeat, KindInfo,
    LegalMoves, ListFilter, MoveAccepted, ReissuedToken, SeatKnowledge, SetAutopilot, SetSeatBot, StepPage, StreamEnd, StreamTicket,
    Submission, SubmitMove, TableChanged,
};
use ludo_game::{GameService, ServiceError, Watch, Watched};
use ludo_record::export::VerifyReport;
use serde::{Deserialize, Serialize};
use tokio_stream::StreamExt;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use extract::{Body, Caller, GamePath, Params, Prefer, RawBody, SeatPath};
use json::Json;
use problem::Problem;

/// What every REST handler shares.
#[derive(Clone)]
pub struct AppState {
    /// The game service.
    pub service: Arc<GameService>,
    /// The kinds, with their options schemas resolved from the OpenAPI document.
    pub kinds: Arc<Vec<KindInfo>>,
    /// The metrics `/metrics` encodes.
    pub metrics: crate::Metrics,
}

type Result<T> = std::result::Result<T, Problem>;

/// The REST routes, with their OpenAPI description.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_kinds))
        .routes(routes!(create_game, list_games))
        .routes(routes!(get_game))
        .routes(routes!(legal_moves))
        .routes(routes!(submit_move))
        .routes(routes!(hand_to_bot, take_back_from_bot))
        .routes(routes!(join_game))
        .routes(routes!(leave_game))
        .routes(routes!(resign))
        .routes(routes!(cancel_game))
        .routes(routes!(reissue_token))
        .routes(routes!(set_seat_bot, clear_seat_bot))
        .routes(routes!(seat_knowledge))
        .routes(routes!(list_events))
        .routes(routes!(replay))
        .routes(routes!(list_steps))
        .routes(routes!(export_game))
        .routes(routes!(game_receipt))
        .routes(routes!(log_info))
        .routes(routes!(log_checkpoint))
        .routes(routes!(log_key))
        .routes(routes!(log_consistency))
        .routes(routes!(stream_game))
        .routes(routes!(stream_ticket))
        .routes(routes!(health))
        .routes(routes!(ready))
        .routes(routes!(metrics))
        .merge(
            OpenApiRouter::new()
                .routes(routes!(verify_export))
                .routes(routes!(import_game))
                // Exports of long games outgrow axum's 2 MB default; every
                // other body keeps it.
                .layer(axum::extract::DefaultBodyLimit::max(crate::limits::MAX_EXPORT_BYTES)),
        )
}

/// The game kinds this server hosts.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct KindList {
    /// Every hosted kind.
    pub kinds: Vec<KindInfo>,
}

/// List the game kinds, their player counts and options schemas.
#[utoipa::path(get, path = "/v1/kinds", tag = "games", responses((status = 200, description = "The hosted game kinds", body = KindList)))]
async fn list_kinds(State(app): State<AppState>) -> Json<KindList> {
    Json(KindList { kinds: app.kinds.as_ref().clone() })
}

/// Create a game. The answer holds each seat's secret token, shown only here.
#[utoipa::path(
    post, path = "/v1/games", tag = "games",
    request_body = CreateGame,
    responses(
        (status = 201, description = "The game was created; each seat's token is shown only here", body = CreatedGame, headers(("location" = String, description = "URL of the new game"))),
        (status = 400, description = "invalid_input: a malformed request; `field` names the culprit", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn create_game(State(app): State<AppState>, Body(request): Body<CreateGame>) -> Result<impl IntoResponse> {
    let created = app.service.create(request).await?;
    let location = format!("/v1/games/{}", created.id);
    Ok((StatusCode::CREATED, [(header::LOCATION, location)], Json(created)))
}

/// Filters for `GET /v1/games`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Only games of this kind.
    kind: Option<String>,
    /// Only games in this state.
    #[param(inline)]
    state: Option<GameStateFilter>,
    /// Only public games waiting for players, with a seat anyone may join (`true`).
    open: Option<bool>,
    /// Only games created after this game id (paging: pass `next_after`).
    #[param(pattern = "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$")]
    after: Option<String>,
    /// Page size (1 to 1000, default 50).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<usize>,
}

/// A game's state, for filtering.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
enum GameStateFilter {
    /// Games still being played.
    InProgress,
    /// Games that are over.
    Finished,
}

/// List games, oldest first, in pages.
#[utoipa::path(
    get, path = "/v1/games", tag = "games", params(ListQuery),
    responses((status = 200, description = "A page of games, oldest first", body = GameList), (status = 400, description = "invalid_input: a malformed request; `field` names the culprit", body = Problem, content_type = "application/problem+json"))
)]
async fn list_games(State(app): State<AppState>, Params(query): Params<ListQuery>) -> Result<Json<GameList>> {
    let filter = ListFilter {
        kind: query.kind,
        finished: query.state.map(|s| matches!(s, GameStateFilter::Finished)),
        open: query.open.unwrap_or(false),
        after: query.after,
        limit: query.limit.unwrap_or(50),
    };
    Ok(Json(app.service.list(filter).await?))
}

/// Get a game as the caller sees it: a seat (with its token) sees its own
/// hidden items, a spectator (no token) only public ones.
#[utoipa::path(
    get, path = "/v1/games/{id}", tag = "games",
    params(("id" = String, Path, description = "Game id")),
    security((), ("seat_token" = [])),
    responses(
        (status = 200, description = "The game as the caller may see it", body = GameState),
        (status = 401, description = "unauthorized: missing or wrong seat token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found: no such game", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn get_game(State(app): State<AppState>, caller: Caller, GamePath(id): GamePath) -> Result<Json<GameState>> {
    Ok(Json(app.service.get(&id, caller.token()).await?))
}

/// The caller's legal moves: each is exactly a `move` the submit endpoint accepts.
#[utoipa::path(
    get, path = "/v1/games/{id}/legal-moves", tag = "games",
    params(("id" = String, Path, description = "Game id")),
    security(("seat_token" = [])),
    responses(
        (status = 200, description = "The caller's legal moves", body = LegalMoves),
        (status = 401, description = "unauthorized: missing or wrong seat token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found: no such game", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn legal_moves(State(app): State<AppState>, caller: Caller, GamePath(id): GamePath) -> Result<Json<LegalMoves>> {
    Ok(Json(app.service.legal_moves(&id, caller.token()).await?))
}

/// Submit a move for the caller's seat. Answered once the move's record is
/// durable. With `request_id`, an exact retry returns the first answer.
/// With `Prefer: return=minimal` the answer leaves out `view` (most of its
/// size and of its cost to the server), for a client that follows the game
/// by its stream or keeps its own state from the effects.
#[utoipa::path(
    post, path = "/v1/games/{id}/moves", tag = "games",
    params(
        ("id" = String, Path, description = "Game id"),
        ("Prefer" = Option<String>, Header, nullable = false, description = "`return=minimal`: answer without `view` (RFC 7240); `return=representation` or none: the whole answer"),
    ),
    request_body = SubmitMove,
    security(("seat_token" = [])),
    responses(
        (status = 200, description = "The move was accepted and its record is durable", body = MoveAccepted,
            headers(("Preference-Applied" = String, description = "`return=minimal` when the answer was made without `view`"))),
        (status = 400, description = "invalid_input", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "unauthorized", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "version_conflict, not_your_turn, game_finished", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "rule_violation, request_id_reused", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn submit_move(
    State(app): State<AppState>,
    caller: Caller,
    GamePath(id): GamePath,
    prefer: Prefer,
    Body(request): Body<SubmitMove>,
) -> Result<(Option<[(HeaderName, &'static str); 1]>, Json<MoveAccepted>)> {
    let submission = Submission { answer: prefer.0, ..request.into() };
    Ok((prefer.applied(), Json(app.service.submit(&id, caller.token(), submission).await?)))
}

/// What the caller's seat knows of the game: its information set, in its
/// engine's shape, for a computer player running in the caller's own
/// process (`ludo bot`, or a program using the `ludo-bots` library). It
/// holds what the seat's view and the log as it may read it prove, and
/// nothing more: the cards it has not seen are placed canonically.
#[utoipa::path(
    get, path = "/v1/games/{id}/info", tag = "games",
    params(("id" = String, Path, description = "Game id")),
    security(("seat_token" = [])),
    responses(
        (status = 200, description = "The seat's information set", body = SeatKnowledge),
        (status = 401, description = "unauthorized: missing or wrong seat token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found: no such game", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "game_waiting: seats are still open, nothing has been dealt", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn seat_knowledge(State(app): State<AppState>, caller: Caller, GamePath(id): GamePath) -> Result<Json<SeatKnowledge>> {
    Ok(Json(app.service.seat_knowledge(&id, caller.token()).await?))
}

/// Hand the caller's seat to a server bot (autopilot): from now on the
/// server plays the seat's turns, each after the bot's think delay. The
/// hand-over is a `seat_bot` record in the log; handing the seat to the
/// bot that already plays it appends nothing. The seat's token still
/// moves for it meanwhile, and takes it back with `DELETE`.
#[utoipa::path(
    put, path = "/v1/games/{id}/autopilot", tag = "games",
    params(("id" = String, Path, description = "Game id")),
    request_body = SetAutopilot,
    security(("seat_token" = [])),
    responses(
        (status = 200, description = "Who plays the seat now; `version` is the game's after the change", body = Autopilot),
        (status = 400, description = "invalid_input: an unknown bot level, a think delay out of range", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "unauthorized: not this seat's token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "game_finished, version_conflict", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn hand_to_bot(
    State(app): State<AppState>,
    caller: Caller,
    GamePath(id): GamePath,
    Body(request): Body<SetAutopilot>,
) -> Result<Json<Autopilot>> {
    Ok(Json(app.service.set_autopilot(&id, caller.token(), request).await?))
}

/// Take the caller's seat back from the server bot that plays it. A
/// `seat_bot` record in the log; nothing when no bot plays the seat.
#[utoipa::path(
    delete, path = "/v1/games/{id}/autopilot", tag = "games",
    params(("id" = String, Path, description = "Game id")),
    security(("seat_token" = [])),
    responses(
        (status = 200, description = "The seat is its player's; `version` is the game's after the change", body = Autopilot),
        (status = 401, description = "unauthorized: not this seat's token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "game_finished, version_conflict", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn take_back_from_bot(State(app): State<AppState>, caller: Caller, GamePath(id): GamePath) -> Result<Json<Autopilot>> {
    Ok(Json(app.service.set_autopilot(&id, caller.token(), SetAutopilot { bot: None }).await?))
}

/// Take an open seat: with its invitation (`invitation`), or in a public
/// game without one (the seat asked for, or the lowest open one). The
/// answer holds the seat's token, shown only here. The game starts when
/// its last seat is taken.
#[utoipa::path(
    post, path = "/v1/games/{id}/join", tag = "seats",
    params(("id" = String, Path, description = "Game id")),
    request_body = JoinGame,
    responses(
        (status = 200, description = "The seat is taken (a `seat_joined` record); its token is shown only here", body = JoinedSeat),
        (status = 400, description = "invalid_input: a bad name, a seat the invitation does not open", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "unauthorized: an invitation to no seat of this game, or none to a game that is not public", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "seat_taken (an invitation used again), game_started, game_cancelled, version_conflict", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn join_game(State(app): State<AppState>, GamePath(id): GamePath, Body(request): Body<JoinGame>) -> Result<Json<JoinedSeat>> {
    Ok(Json(app.service.join(&id, request).await?))
}

/// Leave a game that has not started: the caller's seat is open again
/// (a `seat_left` record) and its token stops opening it.
#[utoipa::path(
    post, path = "/v1/games/{id}/leave", tag = "seats",
    params(("id" = String, Path, description = "Game id")),
    security(("seat_token" = [])),
    responses(
        (status = 200, description = "The seat is open again", body = TableChanged),
        (status = 401, description = "unauthorized: not a seat's token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "game_started, game_cancelled, version_conflict", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn leave_game(State(app): State<AppState>, caller: Caller, GamePath(id): GamePath) -> Result<Json<TableChanged>> {
    Ok(Json(app.service.leave(&id, caller.token()).await?))
}

/// Resign the caller's seat (a `seat_resigned` record). A game of two sides
/// (Battle 13's camps, any two-player game) ends, the resigning side losing;
/// in any other game a server bot plays the seat from now on, and the
/// result names the seat among its `forfeits`.
#[utoipa::path(
    post, path = "/v1/games/{id}/resign", tag = "seats",
    params(("id" = String, Path, description = "Game id")),
    security(("seat_token" = [])),
    responses(
        (status = 200, description = "The seat resigned; how the game stands now", body = TableChanged),
        (status = 401, description = "unauthorized: not a seat's token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "seat_resigned, game_waiting, game_finished, game_cancelled, version_conflict", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn resign(State(app): State<AppState>, caller: Caller, GamePath(id): GamePath) -> Result<Json<TableChanged>> {
    Ok(Json(app.service.resign(&id, caller.token()).await?))
}

/// Cancel a game that has not started (a `game_cancelled` record), with
/// the game's admin token.
#[utoipa::path(
    post, path = "/v1/games/{id}/cancel", tag = "seats",
    params(("id" = String, Path, description = "Game id")),
    security(("admin_token" = [])),
    responses(
        (status = 200, description = "The game is cancelled", body = TableChanged),
        (status = 401, description = "unauthorized: not the game's admin token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "game_started, game_cancelled, version_conflict", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn cancel_game(State(app): State<AppState>, caller: Caller, GamePath(id): GamePath) -> Result<Json<TableChanged>> {
    Ok(Json(app.service.cancel(&id, caller.token()).await?))
}

/// Give a seat a new token (a `seat_token` record holding the new token's
/// hash and who asked): the old token, its stream tickets and its open
/// streams stop opening the seat at once. Asked for with the seat's own
/// token (the new token is then its player's alone: do this once you hold
/// a seat someone else was handed the token of), or with the game's admin
/// token for a seat whose token the admin holds already (one made with the
/// game, or one it renewed since), never for a token a player joined with
/// or renewed. The new token is shown only here.
#[utoipa::path(
    post, path = "/v1/games/{id}/seats/{seat}/token", tag = "seats",
    params(("id" = String, Path, description = "Game id"), ("seat" = u8, Path, description = "Seat number")),
    security(("seat_token" = []), ("admin_token" = [])),
    responses(
        (status = 200, description = "The seat's new token", body = ReissuedToken),
        (status = 400, description = "invalid_input: no such seat", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "unauthorized: neither the seat's own token nor the game's admin token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden: another seat's token; the admin token for a token a player holds alone; a seat a server bot holds", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "seat_open, game_finished, game_cancelled, version_conflict", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn reissue_token(State(app): State<AppState>, caller: Caller, SeatPath(id, seat): SeatPath) -> Result<Json<ReissuedToken>> {
    Ok(Json(app.service.reissue_token(&id, caller.token(), seat).await?))
}

/// Hand a seat no person holds to a server bot, with the game's admin
/// token. An open seat of a game that has not started is taken by the bot
/// (a `seat_joined` record, under `name`); a seat a bot plays goes to
/// another bot (a `seat_bot` record). A seat a person holds is theirs: only
/// they hand it to a bot (`PUT /v1/games/{id}/autopilot`), or the game's
/// clock when their time runs out.
#[utoipa::path(
    put, path = "/v1/games/{id}/seats/{seat}/bot", tag = "seats",
    params(("id" = String, Path, description = "Game id"), ("seat" = u8, Path, description = "Seat number")),
    request_body = SetSeatBot,
    security(("admin_token" = [])),
    responses(
        (status = 200, description = "Who plays the seat changed; how the game stands now", body = TableChanged),
        (status = 400, description = "invalid_input: no such seat, a bad bot or name", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "unauthorized: not the game's admin token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden: a seat a person holds", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "seat_resigned, game_finished, game_cancelled, version_conflict", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn set_seat_bot(
    State(app): State<AppState>,
    caller: Caller,
    SeatPath(id, seat): SeatPath,
    Body(request): Body<SetSeatBot>,
) -> Result<Json<TableChanged>> {
    Ok(Json(app.service.set_seat_bot(&id, caller.token(), seat, request).await?))
}

/// Before the game starts, make the server bot that took a seat leave it,
/// with the game's admin token (a `seat_left` record: the seat is open
/// again). Once the game has started a bot's seat is never left to nobody,
/// and a person's seat is theirs (`DELETE /v1/games/{id}/autopilot`).
#[utoipa::path(
    delete, path = "/v1/games/{id}/seats/{seat}/bot", tag = "seats",
    params(("id" = String, Path, description = "Game id"), ("seat" = u8, Path, description = "Seat number")),
    security(("admin_token" = [])),
    responses(
        (status = 200, description = "The seat is open again", body = TableChanged),
        (status = 400, description = "invalid_input: no such seat", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "unauthorized: not the game's admin token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden: a seat a person holds, or a bot's seat of a game that has started", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "seat_open, seat_resigned, game_finished, game_cancelled, version_conflict", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn clear_seat_bot(State(app): State<AppState>, caller: Caller, SeatPath(id, seat): SeatPath) -> Result<Json<TableChanged>> {
    Ok(Json(app.service.set_seat_bot(&id, caller.token(), seat, SetSeatBot { bot: None, name: None }).await?))
}

/// Paging of `GET /v1/games/{id}/events`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct EventsQuery {
    /// First record to return (default 0).
    from: Option<u64>,
    /// Page size (1 to 1000, default 100).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<usize>,
}

/// The game's log, redacted for the caller, in pages.
#[utoipa::path(
    get, path = "/v1/games/{id}/events", tag = "games",
    params(("id" = String, Path, description = "Game id"), EventsQuery),
    security((), ("seat_token" = [])),
    responses(
        (status = 200, description = "A page of the log", body = EventPage),
        (status = 401, description = "unauthorized: missing or wrong seat token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found: no such game", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn list_events(
    State(app): State<AppState>,
    caller: Caller,
    GamePath(id): GamePath,
    Params(query): Params<EventsQuery>,
) -> Result<Json<EventPage>> {
    Ok(Json(app.service.events(&id, caller.token(), query.from.unwrap_or(0), query.limit.unwrap_or(100)).await?))
}

/// The game's log in words: what each record did ("Ann placed an abbey at
/// Cluny in Burgundy, paying with a Bavaria / Burgundy card"), redacted for
/// the caller, in pages.
#[utoipa::path(
    get, path = "/v1/games/{id}/steps", tag = "records",
    params(("id" = String, Path, description = "Game id"), EventsQuery),
    security((), ("seat_token" = [])),
    responses(
        (status = 200, description = "A page of steps", body = StepPage),
        (status = 401, description = "unauthorized: a token of no seat of this game", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found: no such game", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn list_steps(
    State(app): State<AppState>,
    caller: Caller,
    GamePath(id): GamePath,
    Params(query): Params<EventsQuery>,
) -> Result<Json<StepPage>> {
    Ok(Json(app.service.steps(&id, caller.token(), query.from.unwrap_or(0), query.limit.unwrap_or(100)).await?))
}

/// Which version to replay.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct ReplayQuery {
    /// The version (record number) to rebuild the game at.
    at: u64,
}

/// The game as it was at version `at`, rebuilt from its log, as the caller may see it.
#[utoipa::path(
    get, path = "/v1/games/{id}/replay", tag = "games",
    params(("id" = String, Path, description = "Game id"), ReplayQuery),
    security((), ("seat_token" = [])),
    responses(
        (status = 200, description = "The game at version `at`, as the caller may see it", body = GameState),
        (status = 400, description = "invalid_input: a malformed request; `field` names the culprit", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found: no such game", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn replay(
    State(app): State<AppState>,
    caller: Caller,
    GamePath(id): GamePath,
    Params(query): Params<ReplayQuery>,
) -> Result<Json<GameState>> {
    Ok(Json(app.service.replay_at(&id, caller.token(), query.at).await?))
}

/// The game's whole record as JSON Lines: a header line, then every record
/// exactly as stored (each with its hash). While the game runs it holds the
/// public log; once it is over the header also carries the seed.
#[utoipa::path(
    get, path = "/v1/games/{id}/export", tag = "records",
    params(("id" = String, Path, description = "Game id")),
    security((), ("seat_token" = [])),
    responses(
        (status = 200, description = "The export (JSON Lines)", body = String, content_type = "application/x-ndjson"),
        (status = 401, description = "unauthorized: a token of no seat of this game", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found: no such game", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn export_game(State(app): State<AppState>, caller: Caller, GamePath(id): GamePath) -> Result<impl IntoResponse> {
    let bytes = app.service.export(&id, caller.token()).await?;
    let disposition = format!("attachment; filename=\"{id}.jsonl\"");
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson".to_string()), (header::CONTENT_DISPOSITION, disposition)], bytes))
}

/// The game's receipt from the server's transparency log: its head (id,
/// record count, last hash, outcome), the signed checkpoint that first
/// included it and the inclusion proof. A finished game's export carries
/// the same receipt.
#[utoipa::path(
    get, path = "/v1/games/{id}/receipt", tag = "transparency",
    params(("id" = String, Path, description = "Game id")),
    responses(
        (status = 200, description = "The receipt", body = ludo_transparency::Receipt),
        (status = 404, description = "not_found: no such game", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "game_not_over: the game is still waiting or being played", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn game_receipt(State(app): State<AppState>, GamePath(id): GamePath) -> Result<Json<ludo_transparency::Receipt>> {
    Ok(Json(app.service.receipt(&id).await?))
}

/// The transparency log: its origin, its public key (a C2SP signed-note
/// verifier key) and its latest signed checkpoint.
#[utoipa::path(
    get, path = "/v1/log", tag = "transparency",
    responses((status = 200, description = "The log's key and latest checkpoint", body = ludo_game::LogInfo))
)]
async fn log_info(State(app): State<AppState>) -> Result<Json<ludo_game::LogInfo>> {
    Ok(Json(app.service.log_info().await?))
}

/// The log's latest signed checkpoint, as a C2SP tlog-checkpoint in a
/// signed note (the text any C2SP client reads).
#[utoipa::path(
    get, path = "/v1/log/checkpoint", tag = "transparency",
    responses(
        (status = 200, description = "The checkpoint (signed note)", body = String, content_type = "text/plain"),
        (status = 404, description = "not_found: the log is empty (no game has ended yet)", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn log_checkpoint(State(app): State<AppState>) -> Result<impl IntoResponse> {
    let info = app.service.log_info().await?;
    let checkpoint = info.checkpoint.ok_or_else(|| Problem::not_found("the log is empty: no game has ended yet"))?;
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], checkpoint))
}

/// The log's public key, as one line: a C2SP signed-note verifier key
/// (`origin+keyid+base64`), what `ludo verify --key` takes.
#[utoipa::path(
    get, path = "/.well-known/ludotheque-log-key", tag = "transparency",
    responses((status = 200, description = "The verifier key", body = String, content_type = "text/plain"))
)]
async fn log_key(State(app): State<AppState>) -> Result<impl IntoResponse> {
    let info = app.service.log_info().await?;
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], format!("{}\n", info.key)))
}

/// The two tree sizes of `GET /v1/log/consistency`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct ConsistencyQuery {
    /// The older checkpoint's tree size.
    from: u64,
    /// The newer checkpoint's tree size.
    to: u64,
}

/// The RFC 6962 proof that the log's tree of `from` leaves is a prefix of
/// its tree of `to` leaves: no game committed to by the older checkpoint
/// was dropped or changed by the newer one.
#[utoipa::path(
    get, path = "/v1/log/consistency", tag = "transparency", params(ConsistencyQuery),
    responses(
        (status = 200, description = "The consistency proof", body = ludo_transparency::ConsistencyProof),
        (status = 400, description = "invalid_input: not 0 <= from <= to <= the log's size", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn log_consistency(
    State(app): State<AppState>,
    Params(query): Params<ConsistencyQuery>,
) -> Result<Json<ludo_transparency::ConsistencyProof>> {
    Ok(Json(app.service.consistency_proof(query.from, query.to).await?))
}

/// An export as a request body: JSON Lines text (`GET
/// /v1/games/{id}/export` writes it), never empty: an empty body is no
/// export and is refused.
struct Export;

impl utoipa::PartialSchema for Export {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .min_length(Some(1))
            .description(Some("A game's export: a header line, then every record, as JSON Lines"))
            .into()
    }
}

impl ToSchema for Export {}

/// Checks an export without any server state: the hash chain, the seed
/// against its commitment, and a re-play of every record through the engine.
/// Answers `200` with a report whether or not the export is valid; an
/// empty body is no export at all (`400`).
#[utoipa::path(
    post, path = "/v1/verify", tag = "records",
    request_body(content = Export, description = "An export (JSON Lines)", content_type = "application/x-ndjson"),
    responses((status = 200, description = "The verification report; `valid` says whether the export checks out", body = VerifyReport))
)]
async fn verify_export(State(app): State<AppState>, RawBody(body): RawBody) -> Result<Json<VerifyReport>> {
    Ok(Json(app.service.verify(body).await?))
}

/// Imports a finished game's export after verifying it, with the server
/// operator's token: imports are off unless the operator configures one
/// (`ludo serve --operator-token-file`). The game keeps its id and replays
/// identically here, and shows as imported everywhere: listings, views,
/// exports, and its transparency-log leaf, which names its origin (the key
/// that signed the bundle's receipt, or unknown). It is bounded as a game
/// created here is (options, clock, names, records, bytes).
#[utoipa::path(
    post, path = "/v1/games/import", tag = "records",
    request_body(content = Export, description = "A finished game's export (JSON Lines)", content_type = "application/x-ndjson"),
    security(("operator_token" = [])),
    responses(
        (status = 201, description = "The game was imported", body = ImportedGame, headers(("location" = String, description = "URL of the game"))),
        (status = 400, description = "invalid_input: no export (an empty body), a running game's export (it has no seed), a game longer or bigger than any played here", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "unauthorized: not the operator's token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden: this server takes no import (no operator token is configured)", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large: more than 4 MiB", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "game_exists: a game with this id is already here", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "invalid_export: the export does not verify; `line` and `seq` name the first bad record", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn import_game(State(app): State<AppState>, caller: Caller, request: axum::extract::Request) -> Result<impl IntoResponse> {
    // The operator's token before the body is kept: a refused body is
    // read and dropped (see `limits::discard`), never held.
    if let Err(refused) = app.service.check_operator(caller.token()) {
        crate::limits::discard(request.into_body(), crate::limits::MAX_EXPORT_BYTES).await;
        return Err(refused.into());
    }
    let RawBody(body) = <RawBody as axum::extract::FromRequest<AppState>>::from_request(request, &app).await?;
    let imported = app.service.import(body, caller.token()).await?;
    let location = format!("/v1/games/{}", imported.id);
    Ok((StatusCode::CREATED, [(header::LOCATION, location)], Json(imported)))
}

/// The `data` of one Server-Sent Event of a live stream: a record
/// (`event: record`, a `GameUpdate`) or the end of a finished game's stream
/// (`event: end`, a `StreamEnd`).
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum StreamData {
    /// A record, with the caller's view after it.
    Record(Box<GameUpdate>),
    /// The game is over and its last record was sent.
    End(StreamEnd),
}

/// Where a stream starts.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct StreamQuery {
    /// First record to send (default 0: the whole log, then live). A
    /// `Last-Event-ID` header (sent by browsers when they reconnect) resumes
    /// after that record instead.
    from: Option<u64>,
    /// A stream ticket (`POST /v1/games/{id}/stream-tickets`): follows the
    /// game as the ticket's seat. For browsers, whose `EventSource` cannot
    /// send `Authorization`; never put a seat token in a URL.
    ticket: Option<String>,
}

/// Live updates (Server-Sent Events): each record as it is appended, with
/// the caller's new view (`event: record`, `id:` the record's seq, `data:` a
/// `GameUpdate`), redacted for the caller; the records already in the log
/// come first. Once the game is over and its last record sent, a final
/// `event: end` (`data:` a `StreamEnd`) closes the stream: clients should
/// close on it. A stream opened as a seat ends with `event: seat_revoked`
/// (`data:` a problem, code `seat_revoked`) once the seat changes hands (its
/// player left, its token was renewed, a bot took it over after a timeout):
/// its old token and tickets no longer open it. A reconnect to a finished game whose last record was already
/// received (`Last-Event-ID` = its last seq) answers `204`, which stops a
/// browser's `EventSource`. The stream also ends when the server stops (no
/// `end` event then: reconnect). A seat follows with its token in
/// `Authorization`, or, from a browser, with a stream ticket in `ticket`.
#[utoipa::path(
    get, path = "/v1/games/{id}/stream", tag = "records",
    params(("id" = String, Path, description = "Game id"), StreamQuery,
           ("last-event-id" = Option<u64>, Header, nullable = false, description = "Resume after this record")),
    security((), ("seat_token" = [])),
    responses(
        (status = 200, description = "An event stream: each record as a `GameUpdate` (`event: record`), ended by a `StreamEnd` (`event: end`) once the game is over; the schema is each event's `data`", body = StreamData, content_type = "text/event-stream"),
        (status = 204, description = "The game is over and nothing follows the record named by `Last-Event-ID` (or `from`)"),
        (status = 400, description = "invalid_input: `from` or `Last-Event-ID` lies past the next record", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "unauthorized: a token of no seat of this game, or a ticket expired or of another game; seat_revoked: the ticket's seat changed hands since it was issued", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found: no such game", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn stream_game(
    State(app): State<AppState>,
    caller: Caller,
    GamePath(id): GamePath,
    headers: axum::http::HeaderMap,
    Params(query): Params<StreamQuery>,
) -> Result<axum::response::Response> {
    let resume = match headers.get("last-event-id") {
        None => None,
        Some(value) => {
            let last = value
                .to_str()
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or_else(|| Problem::invalid("Last-Event-ID", "expected the seq of the last record received"))?;
            Some(last.checked_add(1).ok_or_else(|| Problem::invalid("Last-Event-ID", "no record can follow this one"))?)
        }
    };
    let from = resume.or(query.from).unwrap_or(0);
    let watched = match (&query.ticket, caller.token()) {
        (Some(_), Some(_)) => return Err(Problem::invalid("ticket", "send a seat token or a stream ticket, not both")),
        (Some(ticket), None) => app.service.watch_with_ticket(&id, ticket, from).await,
        (None, token) => app.service.watch(&id, token, from).await,
    };
    let watched = watched.map_err(|err| match err {
        ServiceError::InvalidInput { field, reason } if field == "from" && resume.is_some() => Problem::invalid("Last-Event-ID", reason),
        other => Problem::from(other),
    })?;
    let updates = match watched {
        // Nothing will ever follow: 204 tells a browser's EventSource to stop reconnecting.
        Watch::Over(_) => return Ok(StatusCode::NO_CONTENT.into_response()),
        Watch::Live(updates) => updates,
    };
    let events = tokio_stream::wrappers::ReceiverStream::new(updates).map(|item| {
        let event = match item {
            Ok(Watched::Update(update)) => {
                Event::default().id(update.event.seq.to_string()).event("record").json_data(StreamData::Record(update))
            }
            Ok(Watched::Over(end)) => Event::default().event("end").json_data(StreamData::End(end)),
            // The seat changed hands: the stream's last event, named so a
            // page can tell it from a failure (a reconnect with the same
            // ticket or token is refused).
            Err(err @ ServiceError::SeatRevoked { .. }) => Event::default().event("seat_revoked").json_data(Problem::from(err)),
            Err(err) => Event::default().event("problem").json_data(Problem::from(err)),
        };
        Ok::<_, std::convert::Infallible>(event.unwrap_or_else(|e| Event::default().event("problem").data(e.to_string())))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()).into_response())
}

/// A stream ticket for the caller's seat: it opens this game's live stream
/// as that seat (`GET /v1/games/{id}/stream?ticket=…`) for a minute. For
/// browsers, whose `EventSource` cannot send `Authorization`: the
/// long-lived seat token stays in a header, and only a short-lived,
/// read-only ticket for one game and seat ever appears in a URL.
#[utoipa::path(
    post, path = "/v1/games/{id}/stream-tickets", tag = "records",
    params(("id" = String, Path, description = "Game id")),
    security(("seat_token" = [])),
    responses(
        (status = 201, description = "A ticket for the caller's seat", body = StreamTicket),
        (status = 401, description = "unauthorized: no token, or a token of no seat of this game", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found: no such game", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn stream_ticket(State(app): State<AppState>, caller: Caller, GamePath(id): GamePath) -> Result<impl IntoResponse> {
    let ticket = app.service.stream_ticket(&id, caller.token()).await?;
    // Never cached: a ticket is a credential.
    Ok((StatusCode::CREATED, [(header::CACHE_CONTROL, "no-store")], Json(ticket)))
}

/// Liveness or readiness answer.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// `ok` (`/healthz`) or `ready` (`/readyz`).
    pub status: String,
}

/// Metrics in the OpenMetrics text format (Prometheus): games created,
/// move outcomes by code, time to a durable move, live games and streams,
/// the event store's appends and shared flushes.
#[utoipa::path(
    get, path = "/metrics", tag = "operations",
    responses((status = 200, description = "The metrics", body = String, content_type = "application/openmetrics-text"))
)]
async fn metrics(State(app): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], app.metrics.encode())
}

/// Liveness check: the process answers. Restart it when this fails; see
/// `/readyz` for whether it can take moves.
#[utoipa::path(get, path = "/healthz", tag = "operations", responses((status = 200, description = "The server is up", body = Health)))]
async fn health() -> Json<Health> {
    Json(Health { status: "ok".into() })
}

/// Readiness check: `200` when the server takes moves, `503 not_ready` while
/// its store fails (a full or failing disk: it recovers by itself once
/// writes succeed again) or while it shuts down. gRPC health reports the
/// same (`NOT_SERVING`).
#[utoipa::path(
    get, path = "/readyz", tag = "operations",
    responses(
        (status = 200, description = "The server takes moves", body = Health),
        (status = 503, description = "not_ready: the store is failing or the server is shutting down; `detail` says which", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn ready(State(app): State<AppState>) -> Result<Json<Health>> {
    match app.service.ready() {
        Ok(()) => Ok(Json(Health { status: "ready".into() })),
        Err(reason) => Err(Problem::new(StatusCode::SERVICE_UNAVAILABLE, "not_ready", reason)),
    }
}
