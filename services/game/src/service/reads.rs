//! Reads: a game's state, legal moves, log pages, steps and replays, each
//! as the caller may see it.

use std::collections::HashMap;
use std::sync::Arc;

use ludo_engine::{Seat, Viewer};

use crate::api::{EventPage, GameState, LegalMoves, Step, StepPage};
use crate::error::ServiceError;
use ludo_record::kinds::{AnyEffect, AnyGame};
use ludo_record::record::Record;
use ludo_record::status::Status;
use ludo_record::table::Table;

use super::ids::GameId;
use super::{GameService, Slot, blocking, corrupt, effective, event, history, page_limit, parse_records, seat_infos, seat_of};

impl GameService {
    /// The game as the holder of `token` (or a spectator) sees it.
    ///
    /// # Errors
    /// `not_found`, `unauthorized` for a token of no seat, storage errors.
    pub async fn get(&self, id: &GameId, token: Option<&str>) -> Result<GameState, ServiceError> {
        let slot = self.slot(id).await?;
        let viewer = slot.viewer(token)?;
        let current = slot.current();
        let mut state = self.state_of(&slot, viewer, (current.version, current.version), &current.status, &current.game, &current.table);
        if current.status.is_finished() {
            state.receipt =
                self.receipt_of(&slot, &current).await.map_err(|err| tracing::warn!(%err, game = %slot.meta.id, "no receipt")).ok();
        }
        Ok(state)
    }

    /// The game at `version` (of `latest`) as `viewer` sees it, with `table` its table then.
    pub(super) fn state_of(
        &self,
        slot: &Slot,
        viewer: Viewer,
        (version, latest): (u64, u64),
        status: &Status,
        game: &AnyGame,
        table: &Table,
    ) -> GameState {
        let latest_status = if version == latest { status.clone() } else { slot.current().status.clone() };
        let seen_as = effective(viewer, &latest_status);
        GameState {
            id: slot.meta.id.clone(),
            kind: slot.meta.kind.id.into(),
            ruleset: slot.meta.ruleset.clone(),
            version,
            latest_version: latest,
            status: status.clone(),
            seats: seat_infos(table),
            public: table.public(),
            viewer_seat: seat_of(viewer),
            created_at: slot.meta.created_at.clone(),
            options: Arc::clone(&slot.meta.options),
            clock: slot.meta.clock,
            seed_commitment: slot.meta.seed_commitment.clone(),
            seed: latest_status.is_finished().then(|| hex::encode(slot.meta.secrets.seed.0)),
            view: game.view(seen_as),
            receipt: None,
            imported: slot.meta.secrets.imported.clone(),
        }
    }

    /// The legal moves of the token's seat.
    ///
    /// # Errors
    /// `unauthorized` without a valid seat token; `not_found`.
    pub async fn legal_moves(&self, id: &GameId, token: Option<&str>) -> Result<LegalMoves, ServiceError> {
        let slot = self.slot(id).await?;
        let seat = slot.seat(token)?;
        let current = slot.current();
        // None while seats are open, nor for a seat that resigned (its bot plays).
        let moves =
            if current.status.to_move().contains(&seat) && current.table.seats().get(usize::from(seat.0)).is_some_and(|s| !s.resigned) {
                current.game.legal_moves(seat)
            } else {
                Vec::new()
            };
        Ok(LegalMoves { kind: slot.meta.kind.id.into(), version: current.version, seat, moves })
    }

    /// The move `bot` makes now for the token's seat, from what that seat
    /// may know (see [`ludo_record::kinds::AnyGame::bot_move`]), thought out on a blocking
    /// thread (a strong bot thinks for up to its time budget); the version
    /// it was chosen at, and the bot back. No move when it is not the
    /// seat's turn.
    ///
    /// # Errors
    /// `unauthorized` without a valid seat token; `not_found`.
    pub async fn bot_move(
        &self,
        id: &GameId,
        token: Option<&str>,
        bot: ludo_bots::Bot,
    ) -> Result<(Option<ludo_record::kinds::AnyMove>, u64, ludo_bots::Bot), ServiceError> {
        let slot = self.slot(id).await?;
        let seat = slot.seat(token)?;
        Self::think_for(&slot, seat, bot).await
    }

    /// The move `bot` makes now for `seat`, which a server bot plays, from
    /// what that seat may know, as [`Self::bot_move`]. For programs that
    /// run the service's bots themselves (`ludo simulate --records`), with
    /// [`Self::submit_for_bot`]; bot seats have no token.
    ///
    /// # Errors
    /// `invalid_input` (field `seat`) when no server bot plays the seat;
    /// `not_found`.
    pub async fn bot_move_for_bot(
        &self,
        id: &GameId,
        seat: Seat,
        bot: ludo_bots::Bot,
    ) -> Result<(Option<ludo_record::kinds::AnyMove>, u64, ludo_bots::Bot), ServiceError> {
        let slot = self.slot(id).await?;
        if slot.current().bot(seat).is_none() {
            return Err(ServiceError::invalid("seat", format!("no server bot plays {seat}")));
        }
        Self::think_for(&slot, seat, bot).await
    }

    async fn think_for(
        slot: &Slot,
        seat: Seat,
        mut bot: ludo_bots::Bot,
    ) -> Result<(Option<ludo_record::kinds::AnyMove>, u64, ludo_bots::Bot), ServiceError> {
        let current = slot.current();
        let version = current.version;
        // Nobody decides from a hand before the game starts (see `effective`).
        if matches!(current.status, Status::Waiting { .. }) {
            return Ok((None, version, bot));
        }
        let thought = tokio::task::spawn_blocking(move || {
            let mv = current.game.bot_move(seat, &mut bot);
            (mv, bot)
        })
        .await
        .map_err(|e| ServiceError::Internal(format!("a bot's thinking failed: {e}")))?;
        Ok((thought.0, version, thought.1))
    }

    /// What the token's seat knows of the game (its information set), for
    /// a computer player in another process.
    ///
    /// # Errors
    /// `unauthorized` without a valid seat token; `not_found`.
    pub async fn seat_knowledge(&self, id: &GameId, token: Option<&str>) -> Result<crate::api::SeatKnowledge, ServiceError> {
        let slot = self.slot(id).await?;
        let seat = slot.seat(token)?;
        let current = slot.current();
        // Nobody sees a hand before the game starts (see `effective`).
        if let Status::Waiting { open_seats } = &current.status {
            return Err(ServiceError::GameWaiting { open_seats: open_seats.clone() });
        }
        Ok(crate::api::SeatKnowledge {
            kind: slot.meta.kind.id.into(),
            version: current.version,
            seat,
            status: current.status.clone(),
            info: current.game.info_json(seat),
        })
    }

    /// A page of the log, redacted for the caller.
    ///
    /// # Errors
    /// `not_found`, `unauthorized`, storage and corruption errors.
    pub async fn events(&self, id: &GameId, token: Option<&str>, from: u64, limit: usize) -> Result<EventPage, ServiceError> {
        let slot = self.slot(id).await?;
        self.events_of(&slot, token, from, limit).await
    }

    async fn events_of(&self, slot: &Arc<Slot>, token: Option<&str>, from: u64, limit: usize) -> Result<EventPage, ServiceError> {
        let viewer = slot.viewer(token)?;
        let current = slot.current();
        let limit = page_limit(limit)? as u64;
        if from > current.version {
            return Ok(EventPage { kind: slot.meta.kind.id.into(), version: current.version, events: vec![], next_from: None });
        }
        let to = (from + limit).min(current.version + 1);
        let records = self.records(slot, from, Some(to)).await?;
        let seen_as = effective(viewer, &current.status);
        let game = &current.game;
        let events = if seen_as == Viewer::Spectator {
            // A spectator of a running game sees exactly the stored (public) effects.
            records
                .into_iter()
                .map(|record| {
                    let effects = record
                        .effects()
                        .map(|e| game.parse_effect_json(e))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|reason| ServiceError::CorruptLog { game: slot.meta.id.clone(), seq: record.seq, reason })?;
                    event(game, &slot.meta.id, record, effects)
                })
                .collect::<Result<Vec<_>, _>>()?
        } else {
            // Anyone else may see more: the kept unredacted effects, redacted
            // against the game as it is now.
            self.ensure_history(slot).await?;
            let effects: Vec<Vec<AnyEffect>> = {
                let history = slot.history.read().expect("history lock");
                let history = history.as_ref().ok_or_else(|| ServiceError::Internal("the history went missing".into()))?;
                records.iter().map(|r| history.effects(r.seq).iter().map(|e| game.redact(e, seen_as)).collect()).collect()
            };
            records
                .into_iter()
                .zip(effects)
                .map(|(record, effects)| event(game, &slot.meta.id, record, effects))
                .collect::<Result<_, _>>()?
        };
        let next_from = (to <= current.version).then_some(to);
        Ok(EventPage { kind: slot.meta.kind.id.into(), version: current.version, events, next_from })
    }

    /// A page of the game's steps: what each record did, in words, as the
    /// caller may see it (built on the same redaction as [`Self::events`]).
    ///
    /// # Errors
    /// `not_found`, `unauthorized`, storage and corruption errors.
    pub async fn steps(&self, id: &GameId, token: Option<&str>, from: u64, limit: usize) -> Result<StepPage, ServiceError> {
        let slot = self.slot(id).await?;
        let page = self.events_of(&slot, token, from, limit).await?;
        let current = slot.current();
        let seats = current.table.names();
        let game = &current.game;
        // Who left a seat is named from the table before they left.
        let leavers: HashMap<u64, String> = if page.events.iter().any(|e| e.kind == "seat_left") {
            self.ensure_history(&slot).await?;
            let history = slot.history.read().expect("history lock");
            let history = history.as_ref().ok_or_else(|| ServiceError::Internal("the history went missing".into()))?;
            page.events
                .iter()
                .filter(|e| e.kind == "seat_left")
                .filter_map(|e| {
                    let before = history.table_at(e.seq.checked_sub(1)?);
                    Some((e.seq, before.seats().get(usize::from(e.seat?.0))?.name.clone()?))
                })
                .collect()
        } else {
            HashMap::new()
        };
        let steps = page
            .events
            .into_iter()
            .map(|event| {
                let mut lines = Vec::with_capacity(event.effects.len() + 1);
                let name = event.seat.and_then(|seat| seats.get(usize::from(seat.0))).map_or("?", String::as_str);
                match event.kind.as_str() {
                    "game_created" => {
                        if let Some(created) = &event.game {
                            let names: Vec<String> =
                                created.seats.iter().map(|s| s.clone().unwrap_or_else(|| "an open seat".into())).collect();
                            lines.push(format!(
                                "A game of {} was set up for {}",
                                slot.meta.kind.name,
                                ludo_engine::words::and_list(&names)
                            ));
                        }
                    }
                    "seat_bot" => lines.push(match event.handover.as_ref().and_then(|h| h.bot) {
                        Some(bot) => format!("{name} handed the seat to the {} bot", bot.level.name()),
                        None => format!("{name} took the seat back from its bot"),
                    }),
                    "seat_joined" => {
                        let joined = event.name.as_deref().unwrap_or("?");
                        lines.push(match event.handover.as_ref().and_then(|h| h.bot) {
                            Some(bot) => format!("The {} bot {joined} took a seat", bot.level.name()),
                            None => format!("{joined} joined"),
                        });
                    }
                    "seat_left" => lines.push(match leavers.get(&event.seq) {
                        Some(name) => format!("{name} left"),
                        None => "A player left".into(),
                    }),
                    "game_cancelled" => lines.push("The game was cancelled".into()),
                    "seat_token" => lines.push(format!("{name} was given a new token")),
                    "timeout" => lines.push(match (event.forfeit, event.handover.as_ref().and_then(|h| h.bot)) {
                        (Some(false), Some(bot)) => format!("{name}'s time ran out; the {} bot makes the move", bot.level.name()),
                        (_, Some(bot)) => {
                            format!("{name}'s time ran out: the seat lost, and the {} bot plays it from now on", bot.level.name())
                        }
                        (_, None) => format!("{name}'s time ran out: the seat lost"),
                    }),
                    "seat_resigned" => lines.push(match event.handover.as_ref().and_then(|h| h.bot) {
                        Some(bot) => format!("{name} resigned; the {} bot plays the seat from now on", bot.level.name()),
                        None => format!("{name} resigned"),
                    }),
                    _ => {}
                }
                lines.extend(event.effects.iter().map(|e| game.narrate(e, &seats)).filter(|line| !line.is_empty()));
                Step { seq: event.seq, at: event.at, seat: event.seat, lines }
            })
            .collect();
        Ok(StepPage { kind: page.kind, version: page.version, steps, next_from: page.next_from })
    }

    /// The game at version `at`, as the caller may see it.
    ///
    /// # Errors
    /// `invalid_input` for a version past the end; `not_found`, `unauthorized`.
    pub async fn replay_at(&self, id: &GameId, token: Option<&str>, at: u64) -> Result<GameState, ServiceError> {
        let slot = self.slot(id).await?;
        let viewer = slot.viewer(token)?;
        let current = slot.current();
        if at > current.version {
            return Err(ServiceError::invalid("at", format!("the game is at version {}", current.version)));
        }
        if at == current.version {
            return Ok(self.state_of(&slot, viewer, (at, at), &current.status, &current.game, &current.table));
        }
        let (game, table) = self.game_and_table_at(&slot, at).await?;
        Ok(self.state_of(&slot, viewer, (at, current.version), &table.status(game.status()), &game, &table))
    }

    /// The game after record `at`, and its table then.
    pub(super) async fn game_and_table_at(&self, slot: &Slot, at: u64) -> Result<(AnyGame, Arc<Table>), ServiceError> {
        self.ensure_history(slot).await?;
        let history = slot.history.read().expect("history lock");
        let history = history.as_ref().ok_or_else(|| ServiceError::Internal("the history went missing".into()))?;
        let game = history.game_at(at).map_err(|reason| ServiceError::CorruptLog { game: slot.meta.id.clone(), seq: at, reason })?;
        Ok((game, history.table_at(at)))
    }

    /// Builds the game's history if it has none yet: one replay of the log,
    /// off the async workers, under the writer lock so that no append falls
    /// between the log read and the history's install.
    pub(super) async fn ensure_history(&self, slot: &Slot) -> Result<(), ServiceError> {
        if slot.history.read().expect("history lock").is_some() {
            return Ok(());
        }
        let writer = slot.writer.lock().await;
        if slot.history.read().expect("history lock").is_some() {
            return Ok(());
        }
        let upto = slot.current().version;
        let store = Arc::clone(&self.store);
        let stream = slot.meta.stream;
        let id = slot.meta.id.clone();
        let seed = slot.meta.secrets.seed.clone();
        let stored = store.read(stream, 0, Some(upto + 1)).await?;
        // A whole replay: off the async workers.
        let history = blocking(move || {
            let records = parse_records(&id, stored)?;
            history::History::build(&records, &seed).map_err(|e| corrupt(&id, e))
        })
        .await??;
        *slot.history.write().expect("history lock") = Some(history);
        drop(writer);
        Ok(())
    }

    pub(super) async fn records(&self, slot: &Slot, from: u64, to: Option<u64>) -> Result<Vec<Record>, ServiceError> {
        let store = Arc::clone(&self.store);
        let stream = slot.meta.stream;
        let bytes = store.read(stream, from, to).await?;
        parse_records(&slot.meta.id, bytes)
    }
}
