//! The OpenAPI document of the REST API: utoipa's, made exact ([`exact`]),
//! bounded as the server is ([`bounds`]) and complete ([`responses`]).

mod bounds;
mod exact;
mod responses;

use serde_json::Value;
use utoipa::openapi::OpenApi as OpenApiDoc;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "ludotheque",
        description = "Game-as-a-service for Cardinal, Kardinal & König and Battle 13. Every accepted move is appended to a hash-chained, replayable log; state is rebuilt by replaying it. Moves of a seat need that seat's token (`Authorization: Bearer …`), returned once when the game is created (or when a seat is joined); the creator also gets a game-admin token; reads without a token are a spectator's. Errors are RFC 9457 `application/problem+json` with a stable `code`. The same API is served over gRPC on the same port (`ludo.v1.Ludo`, see proto/).",
        license(name = "MIT OR Apache-2.0"),
    ),
    modifiers(&SeatToken),
    components(schemas(ludo_record::schema::GameOptions, ludo_record::schema::GameMove, ludo_record::schema::GameView, ludo_record::schema::GameEffect)),
    tags(
        (name = "games", description = "Create games, play them, read their state and log"),
        (name = "seats", description = "Join open seats, leave, resign; as the game's admin, cancel, reissue tokens, hand seats to bots"),
        (name = "records", description = "Export, verify and import whole records; follow games live"),
        (name = "transparency", description = "The transparency log of games: the server's public key, signed checkpoints (C2SP tlog-checkpoint), receipts and consistency proofs"),
        (name = "operations", description = "Health and documentation"),
    )
)]
struct ApiDoc;

/// Declares the `seat_token` bearer scheme.
struct SeatToken;

impl Modify for SeatToken {
    fn modify(&self, openapi: &mut OpenApiDoc) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "seat_token",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("A seat's secret token: from `POST /v1/games`, a join, or a renewal"))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "admin_token",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("The game-admin token from `POST /v1/games` (`admin_token`)"))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "operator_token",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("The server operator's token (`ludo serve --operator-token-file`): imports need it"))
                    .build(),
            ),
        );
    }
}

/// The base document (info, security, shared schemas) the routes are added to.
pub(crate) fn base() -> OpenApiDoc {
    ApiDoc::openapi()
}

/// The document as served: utoipa's description of `api`, every union
/// discriminated, every status documented.
pub(crate) fn finish(api: &OpenApiDoc) -> Value {
    let mut doc = serde_json::to_value(api).expect("the OpenAPI document serializes");
    let kinds: Vec<exact::KindSchemas> = ludo_record::kinds::KINDS
        .iter()
        .map(|kind| exact::KindSchemas { id: kind.id, players: (kind.min_players, kind.max_players) })
        .collect();
    exact::exact(&mut doc, &kinds);
    bounds::state(&mut doc, &kinds);
    responses::complete(&mut doc);
    doc
}

/// The JSON Schema named `name` in the document, with every `$ref` inlined,
/// so a client can validate options without fetching the document.
pub(crate) fn resolved_schema(doc: &Value, name: &str) -> Value {
    let schemas = &doc["components"]["schemas"];
    inline(&schemas[name], schemas, 0)
}

fn inline(value: &Value, schemas: &Value, depth: usize) -> Value {
    // Options schemas are shallow; the bound only guards against a cycle.
    if depth > 32 {
        return value.clone();
    }
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref")
                && let Some(name) = target.strip_prefix("#/components/schemas/")
            {
                return inline(&schemas[name], schemas, depth + 1);
            }
            Value::Object(map.iter().map(|(k, v)| (k.clone(), inline(v, schemas, depth + 1))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| inline(v, schemas, depth + 1)).collect()),
        other => other.clone(),
    }
}
