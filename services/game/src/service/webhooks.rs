//! The games' webhooks, as a subscriber of the commit pipeline: a record
//! that makes it someone's turn, or ends the game, queues a call to the
//! game's webhook (if it has one, and the server has a sink to send it).

use ludo_engine::Seat;

use super::GameService;
use super::commit::{Committed, Heard, Subscriber};
use crate::webhook::{Delivery, Notice, notices};

/// Queues the calls a committed record makes due. Never waits: the sink
/// sends later.
pub(super) struct Webhooks;

impl Subscriber for Webhooks {
    fn name(&self) -> &'static str {
        "webhooks"
    }

    fn committed<'a>(&'a self, service: &'a GameService, commit: &'a Committed) -> Heard<'a> {
        let slot = &commit.slot;
        if let (Some(hook), Some(sink)) = (&slot.meta.secrets.webhook, service.webhooks.get()) {
            let after = &commit.now;
            let people = |seat: Seat| after.table.bot_for(seat).is_none();
            for (event, seats) in notices(commit.before.as_ref().map(|before| &before.status), &after.status, people) {
                let notice = Notice {
                    event,
                    game_id: slot.meta.id.clone(),
                    version: after.version,
                    seats,
                    status: after.status.clone(),
                    at: commit.at.clone(),
                };
                sink.deliver(Delivery::of(hook, &notice));
            }
        }
        Box::pin(std::future::ready(()))
    }
}
