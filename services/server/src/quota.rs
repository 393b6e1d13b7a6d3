//! Per-address rate limits on what makes the server store or compute:
//! games created, exports imported or verified, moves. One middleware for
//! REST and gRPC, so both transports share each client's buckets. (Moves are
//! also limited per seat, by the game service, which knows the seat.)
//! Behind trusted proxies, the client is the address they forwarded (see
//! [`TrustedProxies`]).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use ludo_game::quota::Limiter;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

use crate::config::{RateLimits, TrustedProxies};
use crate::rest::problem::Problem;
use crate::serve::{client_key, is_grpc};

/// The ends of the `POST` paths that append a record to a game.
const SEAT_POSTS: [&str; 6] = ["/moves", "/join", "/leave", "/resign", "/cancel", "/token"];

/// What a request costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Create,
    Records,
    Moves,
}

impl Class {
    fn of(method: &Method, path: &str) -> Option<Class> {
        match path {
            "/ludo.v1.Ludo/CreateGame" => Some(Class::Create),
            "/ludo.v1.Ludo/ImportGame" | "/ludo.v1.Ludo/VerifyGame" => Some(Class::Records),
            // Seat changes append a record, like a move.
            "/ludo.v1.Ludo/SubmitMove"
            | "/ludo.v1.Ludo/SetAutopilot"
            | "/ludo.v1.Ludo/JoinGame"
            | "/ludo.v1.Ludo/LeaveGame"
            | "/ludo.v1.Ludo/Resign"
            | "/ludo.v1.Ludo/CancelGame"
            | "/ludo.v1.Ludo/ReissueToken"
            | "/ludo.v1.Ludo/SetSeatBot" => Some(Class::Moves),
            _ if path.starts_with("/v1/games/")
                && (path.ends_with("/autopilot") || path.ends_with("/bot"))
                && (method == Method::PUT || method == Method::DELETE) =>
            {
                Some(Class::Moves)
            }
            _ if method != Method::POST => None,
            "/v1/games" => Some(Class::Create),
            "/v1/games/import" | "/v1/verify" => Some(Class::Records),
            _ if path.starts_with("/v1/games/") && SEAT_POSTS.iter().any(|end| path.ends_with(end)) => Some(Class::Moves),
            _ => None,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Class::Create => "create",
            Class::Records => "records",
            Class::Moves => "moves",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Class::Create => "games created from this address",
            Class::Records => "exports imported or verified from this address",
            Class::Moves => "moves and seat changes from this address",
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ClassLabel {
    class: &'static str,
}

/// The per-address buckets.
pub(crate) struct Gate {
    create: Option<Limiter<IpAddr>>,
    records: Option<Limiter<IpAddr>>,
    moves: Option<Limiter<IpAddr>>,
    trusted: TrustedProxies,
    refused: Family<ClassLabel, Counter>,
}

impl Gate {
    pub(crate) fn new(rates: &RateLimits, trusted: TrustedProxies, registry: &crate::Metrics) -> Arc<Self> {
        let refused = Family::<ClassLabel, Counter>::default();
        for class in [Class::Create, Class::Records, Class::Moves] {
            let _ = refused.get_or_create(&ClassLabel { class: class.label() });
        }
        registry.register(
            "rate_limited",
            "Requests refused by a per-address rate limit, by class (per-seat refusals count as moves with outcome rate_limited)",
            refused.clone(),
        );
        Arc::new(Gate {
            create: rates.create_per_ip.map(Limiter::new),
            records: rates.records_per_ip.map(Limiter::new),
            moves: rates.moves_per_ip.map(Limiter::new),
            trusted,
            refused,
        })
    }

    fn limiter(&self, class: Class) -> Option<&Limiter<IpAddr>> {
        match class {
            Class::Create => self.create.as_ref(),
            Class::Records => self.records.as_ref(),
            Class::Moves => self.moves.as_ref(),
        }
    }
}

/// Refuses a request whose client address has no token left for its class:
/// `429 rate_limited` with `Retry-After` (gRPC `RESOURCE_EXHAUSTED` with a
/// `RetryInfo`).
pub(crate) async fn gate(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    let Some(class) = Class::of(request.method(), request.uri().path()) else {
        return next.run(request).await;
    };
    let Some(limiter) = gate.limiter(class) else {
        return next.run(request).await;
    };
    // Requests always carry their connection's address; a bare router (in
    // tests) counts everyone as one client.
    let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |info| info.0.ip());
    let address = gate.trusted.client(peer, request.headers().get_all("x-forwarded-for").iter().map(|value| value.as_bytes()));
    match limiter.check(&client_key(address)) {
        Ok(()) => next.run(request).await,
        Err(retry_after) => {
            gate.refused.get_or_create(&ClassLabel { class: class.label() }).inc();
            let detail = format!("too many {}: retry in {} ms", class.what(), ludo_game::quota::retry_after_ms(retry_after));
            if is_grpc(&request) {
                crate::grpc::status::rate_limited(detail, retry_after).into_http()
            } else {
                Problem::rate_limited(detail, retry_after).into_response()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_classed_by_route_on_both_transports() {
        let post = Method::POST;
        assert_eq!(Class::of(&post, "/v1/games"), Some(Class::Create));
        assert_eq!(Class::of(&Method::GET, "/v1/games"), None, "listing is a read");
        assert_eq!(Class::of(&post, "/v1/games/import"), Some(Class::Records));
        assert_eq!(Class::of(&post, "/v1/verify"), Some(Class::Records));
        assert_eq!(Class::of(&post, "/v1/games/0190/moves"), Some(Class::Moves));
        assert_eq!(Class::of(&Method::GET, "/v1/games/0190/legal-moves"), None);
        assert_eq!(Class::of(&Method::PUT, "/v1/games/0190/autopilot"), Some(Class::Moves));
        assert_eq!(Class::of(&Method::DELETE, "/v1/games/0190/autopilot"), Some(Class::Moves));
        assert_eq!(Class::of(&post, "/ludo.v1.Ludo/SetAutopilot"), Some(Class::Moves));
        assert_eq!(Class::of(&post, "/ludo.v1.Ludo/CreateGame"), Some(Class::Create));
        assert_eq!(Class::of(&post, "/ludo.v1.Ludo/VerifyGame"), Some(Class::Records));
        assert_eq!(Class::of(&post, "/ludo.v1.Ludo/SubmitMove"), Some(Class::Moves));
        assert_eq!(Class::of(&post, "/ludo.v1.Ludo/GetGame"), None);
        for seat_change in ["join", "leave", "resign", "cancel", "seats/1/token"] {
            assert_eq!(Class::of(&post, &format!("/v1/games/0190/{seat_change}")), Some(Class::Moves), "{seat_change}");
        }
        assert_eq!(Class::of(&Method::PUT, "/v1/games/0190/seats/1/bot"), Some(Class::Moves));
        assert_eq!(Class::of(&Method::DELETE, "/v1/games/0190/seats/1/bot"), Some(Class::Moves));
        for rpc in ["JoinGame", "LeaveGame", "Resign", "CancelGame", "ReissueToken", "SetSeatBot"] {
            assert_eq!(Class::of(&post, &format!("/ludo.v1.Ludo/{rpc}")), Some(Class::Moves), "{rpc}");
        }
    }
}
