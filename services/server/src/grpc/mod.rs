//! The gRPC adapter (`ludo.v1.Ludo`): thin handlers over the game service,
//! plus gRPC health and reflection.

pub mod convert;
mod guard;
pub mod status;

use std::sync::Arc;

use ludo_game::api::{
    Answer, CreateGame, GameState, JoinGame, KindInfo, ListFilter, MoveInput, Player, SetAutopilot, SetSeatBot, Submission, TableChanged,
};
use ludo_game::{GameService, Watch, Watched};
use ludo_proto::v1 as pb;
use ludo_proto::v1::ludo_server::{Ludo, LudoServer};
use ludo_record::bot::{BotLevel, BotRequest, BotSeat};
use ludo_record::export::{SeedCheck, VerifyReport};
use ludo_record::kinds::AnyMove;
use tokio_stream::StreamExt;
use tonic::{Request, Response, Status};

use convert::{FromProto, ToProto, clock_in, effects_out, options_in, options_out, status_out, time_control_out};
use status::{from_service, invalid, unauthorized};

/// The gRPC routes: `ludo.v1.Ludo`, health and reflection (v1 and v1alpha).
pub async fn router(service: Arc<GameService>, kinds: Arc<Vec<KindInfo>>) -> axum::Router {
    let (health, health_service) = tonic_health::server::health_reporter();
    // The first status is set before the server answers anything.
    let serving = sync_health(&health, &service, None).await;
    tokio::spawn(report_health(health, Arc::clone(&service), serving));
    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(ludo_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()
        .expect("the descriptor set is valid");
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(ludo_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1alpha()
        .expect("the descriptor set is valid");
    // Exports of long games outgrow tonic's 4 MB default message size; the
    // guard keeps every call but verify and import to the REST body limit.
    let operator = Arc::clone(&service);
    let ludo = LudoServer::new(Api { service, kinds })
        .max_decoding_message_size(crate::limits::MAX_EXPORT_BYTES)
        .max_encoding_message_size(crate::limits::MAX_EXPORT_BYTES);
    tonic::service::Routes::new(ludo)
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .into_axum_router()
        .layer(axum::middleware::map_request(guard::guard))
        .layer(axum::middleware::from_fn_with_state(operator, guard::operator_only))
        // gRPC-Web (HTTP/1.1 or 2, binary or base64 text) for browsers: the
        // layer turns it into gRPC before the guard and back after; plain
        // gRPC passes through untouched.
        .layer(tonic_web::GrpcWebLayer::new())
}

/// Where an imported game came from, in proto.
fn imported_out(imported: &ludo_transparency::Imported) -> pb::Imported {
    pb::Imported { key: imported.key.clone() }
}

/// How often gRPC health is brought in line with the service's readiness.
const HEALTH_INTERVAL: std::time::Duration = std::time::Duration::from_millis(250);

/// Keeps gRPC health (`""` and `ludo.v1.Ludo`) in line with the service's
/// readiness: `SERVING` when it takes moves, `NOT_SERVING` while its store
/// fails or it shuts down. Ends once the store is closed.
async fn report_health(health: tonic_health::server::HealthReporter, service: Arc<GameService>, mut serving: bool) {
    while !service.is_closed() {
        tokio::time::sleep(HEALTH_INTERVAL).await;
        serving = sync_health(&health, &service, Some(serving)).await;
    }
    sync_health(&health, &service, Some(serving)).await;
}

/// Sets gRPC health from the service's readiness when it changed from `was`;
/// returns whether it serves.
async fn sync_health(health: &tonic_health::server::HealthReporter, service: &GameService, was: Option<bool>) -> bool {
    let ready = service.ready();
    if was != Some(ready.is_ok()) {
        let status = match &ready {
            Ok(()) => tonic_health::ServingStatus::Serving,
            Err(reason) => {
                tracing::warn!(%reason, "not ready");
                tonic_health::ServingStatus::NotServing
            }
        };
        health.set_service_status("", status).await;
        health.set_service_status(<LudoServer<Api> as tonic::server::NamedService>::NAME, status).await;
    }
    ready.is_ok()
}

/// The `ludo.v1.Ludo` service.
pub struct Api {
    service: Arc<GameService>,
    kinds: Arc<Vec<KindInfo>>,
}

/// The seat token from `authorization: Bearer <token>` metadata, if any.
fn token<T>(request: &Request<T>) -> Result<Option<String>, Status> {
    let Some(value) = request.metadata().get("authorization") else { return Ok(None) };
    let text = value.to_str().map_err(|_| unauthorized("the authorization metadata is not text"))?;
    match text.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() => Ok(Some(token.trim().to_string())),
        _ => Err(unauthorized("expected `authorization: Bearer <token>`")),
    }
}

fn game_state(state: GameState) -> Result<pb::GameState, Status> {
    Ok(pb::GameState {
        options: Some(options_out(&state.kind, state.options.get())?),
        view: Some(state.view.to_proto()),
        status: Some(status_out(&state.status)),
        seats: seats(&state.seats),
        viewer_seat: state.viewer_seat.map(|s| u32::from(s.0)),
        id: state.id,
        kind: state.kind,
        ruleset: state.ruleset,
        version: state.version,
        latest_version: state.latest_version,
        created_at: state.created_at,
        seed_commitment: state.seed_commitment,
        seed: state.seed,
        public: state.public,
        clock: state.clock.as_ref().map(time_control_out),
        receipt: state.receipt.map(receipt_out),
        imported: state.imported.as_ref().map(imported_out),
    })
}

fn receipt_out(receipt: ludo_transparency::Receipt) -> pb::Receipt {
    pb::Receipt {
        key: receipt.key,
        leaf_index: receipt.leaf_index,
        leaf: receipt.leaf,
        checkpoint: receipt.checkpoint,
        inclusion: receipt.inclusion,
    }
}

fn tree_out(tree: ludo_transparency::SignedTree) -> pb::SignedTree {
    pb::SignedTree { origin: tree.origin, size: tree.size, root: tree.root }
}

/// A log record as a proto message.
fn event_out(kind: &str, event: ludo_game::api::Event) -> Result<pb::Event, Status> {
    let record = match (event.game, event.seat, event.mv) {
        (Some(created), _, _) => pb::event::Record::GameCreated(pb::GameCreated {
            options: Some(options_out(kind, &created.options.to_string())?),
            game_id: created.game_id,
            kind: created.kind,
            ruleset: created.ruleset,
            bots: created.bots.iter().enumerate().filter_map(|(seat, bot)| bot.map(|bot| (seat as u32, bot_seat_out(bot)))).collect(),
            open_seats: (0..created.seats.len()).filter(|&seat| created.seats[seat].is_none()).map(|seat| seat as u32).collect(),
            seats: created.seats.into_iter().map(Option::unwrap_or_default).collect(),
            seed_commitment: created.seed_commitment,
            public: created.public,
            clock: created.clock.as_ref().map(time_control_out),
        }),
        (None, Some(seat), Some(mv)) => pb::event::Record::Move(pb::MoveRecord {
            seat: u32::from(seat.0),
            r#move: Some(mv.to_proto()),
            request_id: event.request_id,
            bot: event.bot.map(|mark| pb::BotMark { level: bot_level_out(mark.level), version: mark.version }),
        }),
        (None, Some(seat), None) => {
            let seat = u32::from(seat.0);
            let bot = event.handover.and_then(|handover| handover.bot).map(bot_seat_out);
            match event.kind.as_str() {
                "seat_bot" => pb::event::Record::SeatBot(pb::SeatBotRecord { seat, bot }),
                "seat_joined" => pb::event::Record::SeatJoined(pb::SeatJoinedRecord { seat, name: event.name.unwrap_or_default(), bot }),
                "seat_left" => pb::event::Record::SeatLeft(pb::SeatLeftRecord { seat }),
                "seat_token" => pb::event::Record::SeatToken(pb::SeatTokenRecord {
                    seat,
                    by: match event.by {
                        Some(ludo_record::table::TokenBy::Admin) => pb::TokenBy::Admin,
                        Some(ludo_record::table::TokenBy::Seat) => pb::TokenBy::Seat,
                        None => pb::TokenBy::Unspecified,
                    }
                    .into(),
                }),
                "seat_resigned" => pb::event::Record::SeatResigned(pb::SeatResignedRecord { seat, bot }),
                "timeout" => pb::event::Record::Timeout(pb::TimeoutRecord { seat, forfeit: event.forfeit.unwrap_or(false), bot }),
                other => return Err(Status::internal(format!("a {other} record names a seat but is no seat record"))),
            }
        }
        (None, None, None) if event.kind == "game_cancelled" => pb::event::Record::GameCancelled(pb::GameCancelledRecord {}),
        _ => return Err(Status::internal(format!("an event of type {} does not convert", event.kind))),
    };
    Ok(pb::Event { seq: event.seq, at: event.at, record: Some(record), effects: effects_out(&event.effects), hash: event.hash })
}

fn verify_report(report: VerifyReport) -> Result<pb::VerifyReport, Status> {
    Ok(pb::VerifyReport {
        valid: report.valid,
        records: report.records,
        chain_intact: report.chain_intact,
        seed: match report.seed {
            SeedCheck::Unchecked => pb::SeedCheck::Unchecked,
            SeedCheck::Matches => pb::SeedCheck::Matches,
            SeedCheck::Absent => pb::SeedCheck::Absent,
            SeedCheck::Mismatch => pb::SeedCheck::Mismatch,
        }
        .into(),
        replayed: report.replayed,
        revealed: report.revealed,
        last_hash: report.last_hash,
        status: report.status.as_ref().map(status_out),
        view: report.view.as_ref().map(ToProto::to_proto),
        fault: report.fault.map(|f| pb::ExportFault { line: f.line, seq: f.seq, reason: f.reason }),
        game_id: report.game_id,
        kind: report.kind,
        receipt: report.receipt.map(|r| pb::ReceiptReport {
            key: r.key,
            key_id: r.key_id,
            trusted: r.trusted,
            signature: r.signature,
            tree: r.tree.map(tree_out),
            leaf_index: r.leaf_index,
            leaf_matches: r.leaf_matches,
            included: r.included,
        }),
        imported: report.imported.as_ref().map(imported_out),
    })
}

/// A request's game id, parsed once: `not_found` when it is no game id.
fn game_id(id: &str) -> Result<ludo_game::GameId, Status> {
    id.parse().map_err(from_service)
}

fn seats(seats: &[ludo_game::api::SeatInfo]) -> Vec<pb::SeatInfo> {
    seats
        .iter()
        .map(|s| pb::SeatInfo {
            seat: u32::from(s.seat.0),
            name: s.name.clone().unwrap_or_default(),
            bot: s.bot.map(bot_seat_out),
            open: s.name.is_none(),
            resigned: s.resigned,
        })
        .collect()
}

fn table_changed(changed: TableChanged) -> pb::TableChanged {
    pb::TableChanged { version: changed.version, status: Some(status_out(&changed.status)), receipt: changed.receipt.map(receipt_out) }
}

/// A seat number from a request (`field` names it).
fn seat_in(field: &str, seat: u32) -> Result<ludo_engine::Seat, Status> {
    u8::try_from(seat).map(ludo_engine::Seat).map_err(|_| invalid(field, "a seat number is 0 to 255"))
}

fn bot_level_out(level: BotLevel) -> i32 {
    match level {
        BotLevel::Random => pb::BotLevel::Random,
        BotLevel::Greedy => pb::BotLevel::Greedy,
        BotLevel::Strong => pb::BotLevel::Strong,
    }
    .into()
}

fn bot_seat_out(bot: BotSeat) -> pb::BotSeat {
    pb::BotSeat { level: bot_level_out(bot.level), think_ms: bot.think_ms }
}

/// A requested bot: `field` names it in a refusal.
fn bot_in(field: &str, bot: pb::BotRequest) -> Result<BotRequest, Status> {
    let level = match pb::BotLevel::try_from(bot.level) {
        Ok(pb::BotLevel::Random) => BotLevel::Random,
        Ok(pb::BotLevel::Greedy) => BotLevel::Greedy,
        Ok(pb::BotLevel::Strong) => BotLevel::Strong,
        Ok(pb::BotLevel::Unspecified) | Err(_) => {
            return Err(invalid(&format!("{field}.level"), "unknown bot level: expected random, greedy or strong"));
        }
    };
    if let Some(ms) = bot.think_ms
        && ms > ludo_record::bot::MAX_THINK_MS
    {
        return Err(invalid(&format!("{field}.think_ms"), &format!("from 0 to {} milliseconds", ludo_record::bot::MAX_THINK_MS)));
    }
    Ok(BotRequest { level, think_ms: bot.think_ms })
}

/// The seats of a new game: the players' names, with the bots the request
/// names by seat and the seats it leaves open.
fn players_in(
    names: Vec<String>,
    mut bots: std::collections::HashMap<u32, pb::BotRequest>,
    open: &[u32],
) -> Result<Vec<Option<Player>>, Status> {
    let beyond =
        |field: String| invalid(&field, &format!("there are {} players: seats 0 to {}", names.len(), names.len().saturating_sub(1)));
    if let Some(seat) = bots.keys().find(|&&seat| seat as usize >= names.len()) {
        return Err(beyond(format!("bots[{seat}]")));
    }
    if let Some(seat) = open.iter().find(|&&seat| seat as usize >= names.len()) {
        return Err(beyond(format!("open_seats[{seat}]")));
    }
    names
        .iter()
        .enumerate()
        .map(|(seat, name)| {
            let bot = bots.remove(&(seat as u32));
            if open.contains(&(seat as u32)) {
                if !name.is_empty() || bot.is_some() {
                    return Err(invalid(&format!("players[{seat}]"), "an open seat has no name and no bot"));
                }
                return Ok(None);
            }
            Ok(Some(match bot {
                Some(bot) => Player::bot(name.clone(), bot_in(&format!("bots[{seat}]"), bot)?),
                None => Player::named(name.clone()),
            }))
        })
        .collect()
}

/// The seats of a new game from `seats` (REST's `players`, entry for
/// entry): a person's name, a server bot, or an open seat.
fn seats_in(seats: Vec<pb::PlayerSeat>) -> Result<Vec<Option<Player>>, Status> {
    use pb::player_seat::Seat;
    seats
        .into_iter()
        .enumerate()
        .map(|(i, seat)| match seat.seat {
            Some(Seat::Name(name)) => Ok(Some(Player::named(name))),
            Some(Seat::Bot(pb::BotPlayer { name, bot })) => {
                let field = format!("seats[{i}].bot.bot");
                let bot = bot.ok_or_else(|| invalid(&field, "a bot's seat names its bot: its level (and think_ms)"))?;
                Ok(Some(Player::bot(name, bot_in(&field, bot)?)))
            }
            Some(Seat::Open(pb::OpenSeat {})) => Ok(None),
            None => Err(invalid(&format!("seats[{i}]"), "a seat is a `name`, a `bot` or `open`: none is set")),
        })
        .collect()
}

/// The seats of a new game, from `seats` or from the older `players`,
/// `bots` and `open_seats`, never both; with whether they came from `seats`.
fn request_seats(request: &mut pb::CreateGameRequest) -> Result<(Vec<Option<Player>>, bool), Status> {
    if request.seats.is_empty() {
        let (names, bots) = (std::mem::take(&mut request.players), std::mem::take(&mut request.bots));
        return Ok((players_in(names, bots, &request.open_seats)?, false));
    }
    let older = [("players", request.players.is_empty()), ("bots", request.bots.is_empty()), ("open_seats", request.open_seats.is_empty())];
    if let Some((field, _)) = older.iter().find(|(_, empty)| !empty) {
        return Err(invalid(field, "give the seats in `seats` or in the older `players`, `bots` and `open_seats`, not both"));
    }
    Ok((seats_in(std::mem::take(&mut request.seats))?, true))
}

/// A refusal of the service naming `players` or `players[i]` (REST's
/// field), renamed for a request that gave `seats`: `seats`, or the name
/// of entry `i` (`seats[i].name`, `seats[i].bot.name`).
fn seats_error(err: ludo_game::ServiceError, players: &[Option<Player>]) -> ludo_game::ServiceError {
    let ludo_game::ServiceError::InvalidInput { field, reason } = err else { return err };
    let field = match field.strip_prefix("players") {
        Some("") => "seats".to_string(),
        Some(index) => {
            let seat = index.strip_prefix('[').and_then(|i| i.strip_suffix(']')).and_then(|i| i.parse::<usize>().ok());
            match seat.and_then(|seat| players.get(seat)) {
                Some(Some(Player { bot: Some(_), .. })) => format!("seats{index}.bot.name"),
                Some(Some(_)) => format!("seats{index}.name"),
                _ => format!("seats{index}"),
            }
        }
        None => field,
    };
    ludo_game::ServiceError::InvalidInput { field, reason }
}

fn limit(value: u32, default: usize) -> usize {
    if value == 0 { default } else { value as usize }
}

#[tonic::async_trait]
impl Ludo for Api {
    async fn list_kinds(&self, _: Request<pb::ListKindsRequest>) -> Result<Response<pb::ListKindsResponse>, Status> {
        let kinds = self
            .kinds
            .iter()
            .map(|k| {
                Ok(pb::KindInfo {
                    kind: k.kind.clone(),
                    name: k.name.clone(),
                    ruleset: k.ruleset.clone(),
                    min_players: k.min_players as u32,
                    max_players: k.max_players as u32,
                    default_options: Some(options_out(&k.kind, &k.default_options.to_string())?),
                    options_schema_json: k.options_schema.to_string(),
                })
            })
            .collect::<Result<_, Status>>()?;
        Ok(Response::new(pb::ListKindsResponse { kinds }))
    }

    async fn create_game(&self, request: Request<pb::CreateGameRequest>) -> Result<Response<pb::CreateGameResponse>, Status> {
        let mut request = request.into_inner();
        if ludo_record::kinds::kind(&request.kind).is_none() {
            return Err(from_service(ludo_game::ServiceError::invalid("kind", format!("unknown game kind `{}`", request.kind))));
        }
        let options = options_in(&request.kind, request.options.take())?;
        let (players, from_seats) = request_seats(&mut request)?;
        let clock = request.clock.map(clock_in).transpose()?;
        // Kept to name a refused seat as the request did.
        let named = if from_seats { players.clone() } else { Vec::new() };
        let create = CreateGame { kind: request.kind, players, options, public: request.public, clock, webhook: request.webhook };
        let created =
            self.service.create(create).await.map_err(|err| from_service(if from_seats { seats_error(err, &named) } else { err }))?;
        Ok(Response::new(pb::CreateGameResponse {
            status: Some(status_out(&created.status)),
            seats: created.seats.into_iter().map(|s| pb::SeatToken { seat: u32::from(s.seat.0), name: s.name, token: s.token }).collect(),
            id: created.id,
            kind: created.kind,
            version: created.version,
            seed_commitment: created.seed_commitment,
            admin_token: created.admin_token,
            webhook_secret: created.webhook_secret,
            invitations: created
                .invitations
                .into_iter()
                .map(|i| pb::Invitation { seat: u32::from(i.seat.0), open: i.open, code: i.code, link: i.link })
                .collect(),
        }))
    }

    async fn list_games(&self, request: Request<pb::ListGamesRequest>) -> Result<Response<pb::ListGamesResponse>, Status> {
        let request = request.into_inner();
        let finished = match pb::GameStateFilter::try_from(request.state) {
            Ok(pb::GameStateFilter::Any) => None,
            Ok(pb::GameStateFilter::InProgress) => Some(false),
            Ok(pb::GameStateFilter::Finished) => Some(true),
            Err(_) => return Err(invalid("state", "unknown state filter")),
        };
        let filter = ListFilter {
            kind: Some(request.kind).filter(|k| !k.is_empty()),
            finished,
            open: request.open,
            after: Some(request.after).filter(|a| !a.is_empty()),
            limit: limit(request.limit, 50),
        };
        let list = self.service.list(filter).await.map_err(from_service)?;
        Ok(Response::new(pb::ListGamesResponse {
            games: list
                .games
                .into_iter()
                .map(|g| pb::GameSummary {
                    seats: seats(&g.seats),
                    status: Some(status_out(&g.status)),
                    id: g.id,
                    kind: g.kind,
                    version: g.version,
                    created_at: g.created_at,
                    finished_at: g.finished_at,
                    imported: g.imported.as_ref().map(imported_out),
                    public: g.public,
                })
                .collect(),
            next_after: list.next_after,
        }))
    }

    async fn get_game(&self, request: Request<pb::GetGameRequest>) -> Result<Response<pb::GameState>, Status> {
        let token = token(&request)?;
        let state = self.service.get(&game_id(&request.get_ref().id)?, token.as_deref()).await.map_err(from_service)?;
        Ok(Response::new(game_state(state)?))
    }

    async fn list_legal_moves(&self, request: Request<pb::ListLegalMovesRequest>) -> Result<Response<pb::LegalMoves>, Status> {
        let token = token(&request)?;
        let legal = self.service.legal_moves(&game_id(&request.get_ref().id)?, token.as_deref()).await.map_err(from_service)?;
        Ok(Response::new(pb::LegalMoves {
            version: legal.version,
            seat: u32::from(legal.seat.0),
            moves: legal.moves.iter().map(ToProto::to_proto).collect(),
        }))
    }

    async fn submit_move(&self, request: Request<pb::SubmitMoveRequest>) -> Result<Response<pb::MoveAccepted>, Status> {
        let token = token(&request)?;
        let request = request.into_inner();
        let submit = Submission {
            mv: MoveInput::Typed(AnyMove::from_proto(request.r#move)?),
            expected_version: request.expected_version,
            request_id: request.request_id,
            answer: if request.omit_view { Answer::Minimal } else { Answer::Full },
        };
        let accepted = self.service.submit(&game_id(&request.id)?, token.as_deref(), submit).await.map_err(from_service)?;
        Ok(Response::new(pb::MoveAccepted {
            version: accepted.version,
            status: Some(status_out(&accepted.status)),
            effects: effects_out(&accepted.effects),
            view: accepted.view.as_ref().map(ToProto::to_proto),
            receipt: accepted.receipt.map(receipt_out),
        }))
    }

    async fn get_seat_knowledge(&self, request: Request<pb::GetSeatKnowledgeRequest>) -> Result<Response<pb::SeatKnowledge>, Status> {
        let token = token(&request)?;
        let known = self.service.seat_knowledge(&game_id(&request.get_ref().id)?, token.as_deref()).await.map_err(from_service)?;
        Ok(Response::new(pb::SeatKnowledge {
            kind: known.kind,
            version: known.version,
            seat: u32::from(known.seat.0),
            status: Some(status_out(&known.status)),
            info_json: known.info.get().to_string(),
        }))
    }

    async fn set_autopilot(&self, request: Request<pb::SetAutopilotRequest>) -> Result<Response<pb::Autopilot>, Status> {
        let token = token(&request)?;
        let request = request.into_inner();
        let bot = request.bot.map(|bot| bot_in("bot", bot)).transpose()?;
        let set = self.service.set_autopilot(&game_id(&request.id)?, token.as_deref(), SetAutopilot { bot }).await.map_err(from_service)?;
        Ok(Response::new(pb::Autopilot { version: set.version, seat: u32::from(set.seat.0), bot: set.bot.map(bot_seat_out) }))
    }

    async fn join_game(&self, request: Request<pb::JoinGameRequest>) -> Result<Response<pb::JoinedSeat>, Status> {
        let request = request.into_inner();
        let seat = request.seat.map(|seat| seat_in("seat", seat)).transpose()?;
        let join = JoinGame { name: request.name, invitation: request.invitation, seat };
        let joined = self.service.join(&game_id(&request.id)?, join).await.map_err(from_service)?;
        Ok(Response::new(pb::JoinedSeat {
            version: joined.version,
            seat: u32::from(joined.seat.0),
            name: joined.name,
            token: joined.token,
            status: Some(status_out(&joined.status)),
        }))
    }

    async fn leave_game(&self, request: Request<pb::LeaveGameRequest>) -> Result<Response<pb::TableChanged>, Status> {
        let token = token(&request)?;
        let changed = self.service.leave(&game_id(&request.get_ref().id)?, token.as_deref()).await.map_err(from_service)?;
        Ok(Response::new(table_changed(changed)))
    }

    async fn resign(&self, request: Request<pb::ResignRequest>) -> Result<Response<pb::TableChanged>, Status> {
        let token = token(&request)?;
        let changed = self.service.resign(&game_id(&request.get_ref().id)?, token.as_deref()).await.map_err(from_service)?;
        Ok(Response::new(table_changed(changed)))
    }

    async fn cancel_game(&self, request: Request<pb::CancelGameRequest>) -> Result<Response<pb::TableChanged>, Status> {
        let token = token(&request)?;
        let changed = self.service.cancel(&game_id(&request.get_ref().id)?, token.as_deref()).await.map_err(from_service)?;
        Ok(Response::new(table_changed(changed)))
    }

    async fn reissue_token(&self, request: Request<pb::ReissueTokenRequest>) -> Result<Response<pb::ReissuedToken>, Status> {
        let token = token(&request)?;
        let request = request.into_inner();
        let seat = seat_in("seat", request.seat)?;
        let issued = self.service.reissue_token(&game_id(&request.id)?, token.as_deref(), seat).await.map_err(from_service)?;
        Ok(Response::new(pb::ReissuedToken { version: issued.version, seat: u32::from(issued.seat.0), token: issued.token }))
    }

    async fn set_seat_bot(&self, request: Request<pb::SetSeatBotRequest>) -> Result<Response<pb::TableChanged>, Status> {
        let token = token(&request)?;
        let request = request.into_inner();
        let seat = seat_in("seat", request.seat)?;
        let bot = request.bot.map(|bot| bot_in("bot", bot)).transpose()?;
        let set = SetSeatBot { bot, name: request.name };
        let changed = self.service.set_seat_bot(&game_id(&request.id)?, token.as_deref(), seat, set).await.map_err(from_service)?;
        Ok(Response::new(table_changed(changed)))
    }

    async fn list_events(&self, request: Request<pb::ListEventsRequest>) -> Result<Response<pb::EventPage>, Status> {
        let token = token(&request)?;
        let request = request.into_inner();
        let page = self
            .service
            .events(&game_id(&request.id)?, token.as_deref(), request.from, limit(request.limit, 100))
            .await
            .map_err(from_service)?;
        let events = page.events.into_iter().map(|event| event_out(&page.kind, event)).collect::<Result<_, Status>>()?;
        Ok(Response::new(pb::EventPage { version: page.version, events, next_from: page.next_from }))
    }

    async fn list_steps(&self, request: Request<pb::ListStepsRequest>) -> Result<Response<pb::StepPage>, Status> {
        let token = token(&request)?;
        let request = request.into_inner();
        let page = self
            .service
            .steps(&game_id(&request.id)?, token.as_deref(), request.from, limit(request.limit, 100))
            .await
            .map_err(from_service)?;
        Ok(Response::new(pb::StepPage {
            version: page.version,
            steps: page
                .steps
                .into_iter()
                .map(|s| pb::Step { seq: s.seq, at: s.at, seat: s.seat.map(|seat| u32::from(seat.0)), lines: s.lines })
                .collect(),
            next_from: page.next_from,
        }))
    }

    async fn export_game(&self, request: Request<pb::ExportGameRequest>) -> Result<Response<pb::ExportGameResponse>, Status> {
        let token = token(&request)?;
        let export = self.service.export(&game_id(&request.get_ref().id)?, token.as_deref()).await.map_err(from_service)?;
        Ok(Response::new(pb::ExportGameResponse { export }))
    }

    async fn verify_game(&self, request: Request<pb::VerifyGameRequest>) -> Result<Response<pb::VerifyReport>, Status> {
        let report = self.service.verify(request.into_inner().export).await.map_err(from_service)?;
        Ok(Response::new(verify_report(report)?))
    }

    async fn import_game(&self, request: Request<pb::ImportGameRequest>) -> Result<Response<pb::ImportGameResponse>, Status> {
        let token = token(&request)?;
        let imported = self.service.import(request.into_inner().export, token.as_deref()).await.map_err(from_service)?;
        Ok(Response::new(pb::ImportGameResponse {
            status: Some(status_out(&imported.status)),
            id: imported.id,
            kind: imported.kind,
            version: imported.version,
            imported: Some(imported_out(&imported.imported)),
        }))
    }

    async fn get_log(&self, _request: Request<pb::GetLogRequest>) -> Result<Response<pb::LogInfo>, Status> {
        let info = self.service.log_info().await.map_err(from_service)?;
        Ok(Response::new(pb::LogInfo {
            origin: info.origin,
            key: info.key,
            key_id: info.key_id,
            checkpoint: info.checkpoint,
            tree: info.tree.map(tree_out),
        }))
    }

    async fn get_receipt(&self, request: Request<pb::GetReceiptRequest>) -> Result<Response<pb::Receipt>, Status> {
        let receipt = self.service.receipt(&game_id(&request.get_ref().id)?).await.map_err(from_service)?;
        Ok(Response::new(receipt_out(receipt)))
    }

    async fn get_consistency_proof(
        &self,
        request: Request<pb::GetConsistencyProofRequest>,
    ) -> Result<Response<pb::ConsistencyProof>, Status> {
        let request = request.into_inner();
        let proof = self.service.consistency_proof(request.from, request.to).await.map_err(from_service)?;
        Ok(Response::new(pb::ConsistencyProof { from: proof.from, to: proof.to, proof: proof.proof }))
    }

    type WatchGameStream = std::pin::Pin<Box<dyn tokio_stream::Stream<Item = Result<pb::GameUpdate, Status>> + Send + 'static>>;

    async fn watch_game(&self, request: Request<pb::WatchGameRequest>) -> Result<Response<Self::WatchGameStream>, Status> {
        let token = token(&request)?;
        let watched =
            self.service.watch(&game_id(&request.get_ref().id)?, token.as_deref(), request.get_ref().from).await.map_err(from_service)?;
        let updates = match watched {
            Watch::Over(_) => return Ok(Response::new(Box::pin(tokio_stream::empty()))),
            Watch::Live(updates) => updates,
        };
        // The stream ends after the last record: `Over` only marks it.
        let stream =
            tokio_stream::wrappers::ReceiverStream::new(updates).take_while(|item| !matches!(item, Ok(Watched::Over(_)))).map(|item| {
                let Watched::Update(update) = item.map_err(from_service)? else {
                    return Err(Status::internal("a stream went on after its end"));
                };
                Ok(pb::GameUpdate {
                    status: Some(status_out(&update.status)),
                    view: Some(update.view.to_proto()),
                    event: Some(event_out(&update.kind, update.event)?),
                })
            });
        Ok(Response::new(Box::pin(stream)))
    }

    async fn get_replay(&self, request: Request<pb::GetReplayRequest>) -> Result<Response<pb::GameState>, Status> {
        let token = token(&request)?;
        let state =
            self.service.replay_at(&game_id(&request.get_ref().id)?, token.as_deref(), request.get_ref().at).await.map_err(from_service)?;
        Ok(Response::new(game_state(state)?))
    }
}
