//! The seats of a game: joining an open seat (by invitation, or anyone in
//! a public game), leaving before the start, cancelling a game still
//! waiting for players, reissuing a seat's token, handing a seat to a bot
//! as the game's admin, and resigning.
//!
//! Each is a seat record in the game's log, appended by the game's single
//! writer like a move (the same lock, version check, hash chain, summary
//! and stream notices), and checked by the table (`ludo_record::table`), which
//! replay asks again for every stored record: the log says who sat where
//! and when, and replays and verifies with it.

use std::sync::Arc;

use ludo_engine::Seat;

use crate::api::{JoinGame, JoinedSeat, ReissuedToken, SetSeatBot, TableChanged};
use crate::error::ServiceError;
use crate::secrets;
use ludo_record::bot::BotLevel;
use ludo_record::bot::BotSeat;
use ludo_record::record::RecordBody;
use ludo_record::record::{SeatBotRecord, SeatJoined};
use ludo_record::status::Status;
use ludo_record::table::TokenBy;

use super::commit::{Committed, Proposal};
use super::ids::GameId;
use super::{Current, GameService, Slot, Writer, check_name, refusal, timestamp};

/// Most seat records (joins, leaves, reissues, hand-overs) one game takes:
/// far more than a table of people needs, and a bound on what repeated
/// requests can make the server store.
pub const MAX_SEAT_RECORDS: u32 = 256;

/// The level of the bot that plays a seat whose player resigned (unless a
/// bot already played it).
const RESIGNED_SEAT_BOT: BotLevel = BotLevel::Greedy;

impl GameService {
    /// The game, locked for writing, caught up with the store.
    pub(super) async fn locked(&self, id: &GameId) -> Result<(Arc<Slot>, tokio::sync::OwnedMutexGuard<Writer>), ServiceError> {
        loop {
            let slot = self.slot(id).await?;
            let writer = Arc::clone(&slot.writer).lock_owned().await;
            if !writer.evicted {
                return Ok((slot, writer));
            }
        }
    }

    /// Commits the seat record `body` as the game's next record, as its
    /// single writer (`writer`, locked at `current`), once the table
    /// accepts its change (the fold asks it).
    pub(super) async fn commit_seat_record(
        &self,
        slot: &Arc<Slot>,
        writer: tokio::sync::OwnedMutexGuard<Writer>,
        current: Arc<Current>,
        body: RecordBody,
    ) -> Result<Committed, ServiceError> {
        // Bounded are the records clients can repeat (joins, leaves,
        // reissues, hand-overs); a cancel and a resignation can only happen
        // once and must stay possible, and timeouts are the server's own
        // (at most one per turn).
        let repeatable = !matches!(body, RecordBody::Timeout { .. } | RecordBody::GameCancelled | RecordBody::SeatResigned { .. });
        if repeatable && current.table.changes() >= MAX_SEAT_RECORDS {
            return Err(ServiceError::invalid(
                "game",
                format!("this game has had {MAX_SEAT_RECORDS} seat changes (joins, leaves, tokens, hand-overs), as many as one game takes"),
            ));
        }
        let (at, expected) = (timestamp(self.clock.now()), current.version);
        self.commit(slot, writer, current, Proposal { body, mv: None, at, expected }).await
    }

    /// Takes an open seat: the invitation's, or (in a public game, without
    /// one) the one asked for or the lowest open one. The seat's token is
    /// in the answer, and only there.
    ///
    /// # Errors
    /// `invalid_input` for a bad name; `unauthorized` for an invitation of
    /// no seat of this game, or no invitation to a game that is not public;
    /// `seat_taken` (an invitation used again), `game_started`,
    /// `game_cancelled`, `game_finished`; storage errors.
    pub async fn join(&self, id: &GameId, request: JoinGame) -> Result<JoinedSeat, ServiceError> {
        check_name("name", &request.name)?;
        let (slot, writer) = self.locked(id).await?;
        let current = slot.current();
        let seat = match &request.invitation {
            Some(code) => {
                let seat = slot
                    .meta
                    .secrets
                    .invited_seat(code)
                    .ok_or_else(|| ServiceError::Unauthorized { reason: "this invitation opens no seat of this game".into() })?;
                if request.seat.is_some_and(|asked| asked != seat) {
                    return Err(ServiceError::invalid("seat", format!("the invitation opens {seat}")));
                }
                seat
            }
            None if !current.table.public() => {
                return Err(ServiceError::Unauthorized {
                    reason: "this game is not public: joining it takes a seat's invitation (`invitation`)".into(),
                });
            }
            None => match (request.seat, current.table.open_seats().first()) {
                (Some(seat), _) => seat,
                (None, Some(&open)) => open,
                // No seat is open: the table says why (started, cancelled, over).
                (None, None) => return Err(self.no_open_seat(&current)),
            },
        };
        self.limit_seat(slot.meta.stream, seat)?;
        let name = request.name.trim().to_string();
        // The seat first (taken, the game started …), then the name.
        let seating = ludo_record::table::Change::Join { seat, name: &name, bot: None, token_hash: Some([0; 32]) };
        current.table.check(&seating, current.game.status().is_finished()).map_err(refusal)?;
        // Results and sentences name seats by their players: one name each.
        let taken = |other: &Option<String>| other.as_deref().is_some_and(|other| other.trim().eq_ignore_ascii_case(&name));
        if let Some(at) = current.table.seats().iter().position(|sitter| taken(&sitter.name)) {
            return Err(ServiceError::invalid("name", format!("{name} already sits at seat {at}: choose another name")));
        }
        let (token, hash) = secrets::new_token().map_err(|e| ServiceError::Internal(format!("no randomness: {e}")))?;
        let body = RecordBody::SeatJoined(SeatJoined { seat, name: name.clone(), bot: None, token_hash: Some(hex::encode(hash)) });
        let now = self.commit_seat_record(&slot, writer, current, body).await?.now;
        Ok(JoinedSeat { version: now.version, seat, name, token, status: now.status.clone() })
    }

    /// Why a public game has no seat to join.
    fn no_open_seat(&self, current: &Current) -> ServiceError {
        match current.status {
            Status::Cancelled => ServiceError::GameCancelled,
            Status::Finished { .. } => ServiceError::GameFinished,
            _ => ServiceError::GameStarted,
        }
    }

    /// The token's seat leaves a game that has not started: the seat is
    /// open again (its invitation, or anyone in a public game, takes it).
    ///
    /// # Errors
    /// `unauthorized` without the seat's token; `game_started`,
    /// `game_cancelled`; storage errors.
    pub async fn leave(&self, id: &GameId, token: Option<&str>) -> Result<TableChanged, ServiceError> {
        let (slot, writer) = self.locked(id).await?;
        let seat = slot.seat(token)?;
        self.limit_seat(slot.meta.stream, seat)?;
        let current = slot.current();
        let now = self.commit_seat_record(&slot, writer, current, RecordBody::SeatLeft { seat }).await?.now;
        Ok(TableChanged { version: now.version, status: now.status.clone(), receipt: None })
    }

    /// Calls off a game that has not started, with the game's admin token.
    ///
    /// # Errors
    /// `unauthorized` without the admin token; `game_started`,
    /// `game_cancelled`; storage errors.
    pub async fn cancel(&self, id: &GameId, token: Option<&str>) -> Result<TableChanged, ServiceError> {
        let (slot, writer) = self.locked(id).await?;
        slot.admin(token)?;
        let current = slot.current();
        let committed = self.commit_seat_record(&slot, writer, current, RecordBody::GameCancelled).await?;
        let now = &committed.now;
        Ok(TableChanged { version: now.version, status: now.status.clone(), receipt: committed.receipt.into_inner() })
    }

    /// A new token for `seat`; the old one stops opening it, and the
    /// seat's stream tickets and open streams end. Asked for by the seat
    /// itself, with its current token (the new token is then its person's
    /// alone), or by the game's admin for a seat whose token it holds
    /// already: one made with the game (its creator was handed it) or one
    /// it asked for since. Never for a token a person holds alone (one
    /// taken with a join, or renewed by the seat): with it the admin, who
    /// may sit at the table, would read that person's hand.
    ///
    /// # Errors
    /// `unauthorized` without the admin token or the seat's own token;
    /// `forbidden` for another seat's token, a token the admin does not
    /// hold, a seat a server bot holds; `invalid_input` for a seat not at
    /// the table; `seat_open`, `game_finished`, `game_cancelled`; storage
    /// errors.
    pub async fn reissue_token(&self, id: &GameId, token: Option<&str>, seat: Seat) -> Result<ReissuedToken, ServiceError> {
        let (slot, writer) = self.locked(id).await?;
        let by = match token {
            Some(token) if slot.meta.secrets.is_admin(token) => TokenBy::Admin,
            _ => match slot.seat(token) {
                Ok(own) if own == seat => TokenBy::Seat,
                Ok(own) => {
                    return Err(ServiceError::Forbidden {
                        reason: format!("the token of {own} renews its own seat's token only, not {seat}'s"),
                    });
                }
                Err(_) => {
                    return Err(ServiceError::Unauthorized {
                        reason: "this needs the seat's own token, or the game's admin token (Authorization: Bearer …)".into(),
                    });
                }
            },
        };
        self.limit_seat(slot.meta.stream, seat)?;
        let (token, hash) = secrets::new_token().map_err(|e| ServiceError::Internal(format!("no randomness: {e}")))?;
        let current = slot.current();
        let body = RecordBody::SeatToken { seat, token_hash: hex::encode(hash), by: Some(by) };
        let now = self.commit_seat_record(&slot, writer, current, body).await?.now;
        tracing::info!(game = %slot.meta.id, %seat, by = by.name(), "seat token renewed: the old token, its tickets and its streams no longer open the seat");
        Ok(ReissuedToken { version: now.version, seat, token })
    }

    /// Hands a seat no person holds to a server bot, with the game's admin
    /// token: an open seat of a game that has not started is taken by the
    /// bot (`seat_joined`, under `name`), a seat a bot plays goes to
    /// another bot (`seat_bot`); before the start, `bot` null makes a bot
    /// leave its seat (`seat_left`: the seat is open again). A seat a
    /// person holds is theirs: only they hand it to a bot (autopilot), or
    /// the game's clock when their time runs out.
    ///
    /// # Errors
    /// `unauthorized` without the admin token; `forbidden` for a seat a
    /// person holds, or a bot's seat left to nobody; `invalid_input` for a
    /// seat not at the table, a bad name; `seat_open` (no bot for an open
    /// seat), `seat_resigned`, `game_finished`, `game_cancelled`; storage
    /// errors.
    pub async fn set_seat_bot(
        &self,
        id: &GameId,
        token: Option<&str>,
        seat: Seat,
        request: SetSeatBot,
    ) -> Result<TableChanged, ServiceError> {
        if let Some(name) = &request.name {
            check_name("name", name)?;
        }
        let (slot, writer) = self.locked(id).await?;
        slot.admin(token)?;
        self.limit_seat(slot.meta.stream, seat)?;
        let current = slot.current();
        let sitter = current
            .table
            .seats()
            .get(usize::from(seat.0))
            .ok_or_else(|| ServiceError::invalid("seat", format!("{seat} is not at this table")))?;
        let bot = request.bot.map(|bot| bot.seat(self.think_ms()));
        if current.table.held_by_person(seat) && !sitter.resigned {
            // (A resigned seat's bot stays: the table says so below.)
            // The admin may sit at the table too: a person's seat goes to a
            // bot only by that person (autopilot) or by the clock's rules.
            return Err(ServiceError::Forbidden {
                reason: format!(
                    "{seat} is its player's: only they hand it to a bot (autopilot), or the game's clock does when their time runs out"
                ),
            });
        }
        let body = if sitter.name.is_none() && current.table.waiting() {
            // Taking a bot off a seat nobody sits at: there is none.
            let bot = bot.ok_or(ServiceError::SeatOpen { seat })?;
            let name = request.name.map_or_else(|| format!("Bot {}", seat.0), |name| name.trim().to_string());
            RecordBody::SeatJoined(SeatJoined { seat, name, bot: Some(bot), token_hash: None })
        } else if sitter.name.is_some() && bot.is_none() && current.table.waiting() {
            // A bot that took a seat before the start leaves it: the seat is open again.
            RecordBody::SeatLeft { seat }
        } else if sitter.name.is_some() && bot.is_none() && !sitter.resigned {
            // A seat nobody holds and a bot plays: without its bot, nobody would.
            return Err(ServiceError::Forbidden {
                reason: format!("{seat} is a server bot's and no person holds it: it can be handed to another bot, not to nobody"),
            });
        } else if sitter.bot == bot {
            // Nothing changes: nothing is appended.
            return Ok(TableChanged { version: current.version, status: current.status.clone(), receipt: None });
        } else {
            RecordBody::SeatBot(SeatBotRecord { seat, bot })
        };
        let now = self.commit_seat_record(&slot, writer, current, body).await?.now;
        Ok(TableChanged { version: now.version, status: now.status.clone(), receipt: None })
    }

    /// The token's seat resigns. A game of two sides (Battle 13's camps,
    /// any two-player game) ends with that side losing; in any other game a
    /// server bot plays the seat from then on, and the result names the seat.
    ///
    /// # Errors
    /// `unauthorized` without the seat's token; `seat_resigned` (again),
    /// `game_waiting`, `game_finished`, `game_cancelled`; storage errors.
    pub async fn resign(&self, id: &GameId, token: Option<&str>) -> Result<TableChanged, ServiceError> {
        let (slot, writer) = self.locked(id).await?;
        let seat = slot.seat(token)?;
        self.limit_seat(slot.meta.stream, seat)?;
        let current = slot.current();
        let bot = (!current.table.two_sided())
            .then(|| current.bot(seat).unwrap_or(BotSeat { level: RESIGNED_SEAT_BOT, think_ms: self.think_ms() }));
        let committed = self.commit_seat_record(&slot, writer, current, RecordBody::SeatResigned { seat, bot }).await?;
        tracing::info!(game = %slot.meta.id, %seat, "seat resigned");
        let now = &committed.now;
        Ok(TableChanged { version: now.version, status: now.status.clone(), receipt: committed.receipt.into_inner() })
    }
}
