//! Makes the document state the bounds the server enforces that utoipa's
//! derive cannot say, so that whatever the document allows is accepted
//! and whatever it forbids is refused (`tests/schemathesis.rs` checks both
//! ways):
//!
//! 1. every integer gets its Rust type's range: serde refuses a `u8` seat
//!    of 256 or a `u64` version of 2^64, so the document says so (utoipa
//!    names the type in `format`, with its `non_strict_integers` feature,
//!    and gives at most the lower bound);
//! 2. a `kind` query parameter takes the hosted kinds only, a `seat` path
//!    parameter the seats of the largest table they have;
//! 3. the rules that tie one field to another (a clock needs a limit per
//!    move or a bank, an increment needs a bank);
//! 4. a new game's table: the seat its options name to play first is at
//!    it, and a public game has a seat left open.

use serde_json::{Value, json};

use super::exact::KindSchemas;

/// The range of the integer type a `format` names (utoipa's names).
fn range(format: &str) -> Option<(Value, Value)> {
    Some(match format {
        "int8" => (json!(i8::MIN), json!(i8::MAX)),
        "uint8" => (json!(u8::MIN), json!(u8::MAX)),
        "int16" => (json!(i16::MIN), json!(i16::MAX)),
        "uint16" => (json!(u16::MIN), json!(u16::MAX)),
        "int32" => (json!(i32::MIN), json!(i32::MAX)),
        "uint32" => (json!(u32::MIN), json!(u32::MAX)),
        "int64" => (json!(i64::MIN), json!(i64::MAX)),
        "uint64" => (json!(u64::MIN), json!(u64::MAX)),
        _ => return None,
    })
}

fn is_integer(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(types)) => types.iter().any(|t| t == "integer"),
        _ => false,
    }
}

fn as_integer(value: &Value) -> Option<i128> {
    value.as_i64().map(i128::from).or_else(|| value.as_u64().map(i128::from))
}

/// The tighter of the bound an integer has (if any) and its type's
/// `limit`; `wider` says which way a bound is wider.
fn tighter(kept: Option<&Value>, limit: Value, wider: std::cmp::Ordering) -> Value {
    match (kept.and_then(as_integer), as_integer(&limit)) {
        (Some(kept), Some(limit)) if kept.cmp(&limit) != wider => json!(kept),
        _ => limit,
    }
}

/// Step 1, over the whole document (schemas and parameters alike).
fn integer_ranges(value: &mut Value) {
    // utoipa spells the unsigned formats `u-int8` …; the OpenAPI format
    // registry (and every tool) says `uint8` ….
    if let Some(unsigned) = value.get("format").and_then(Value::as_str).and_then(|f| f.strip_prefix("u-int")) {
        value["format"] = json!(format!("uint{unsigned}"));
    }
    if is_integer(value)
        && let Some((low, high)) = value.get("format").and_then(Value::as_str).and_then(range)
    {
        let minimum = tighter(value.get("minimum"), low, std::cmp::Ordering::Less);
        let maximum = tighter(value.get("maximum"), high, std::cmp::Ordering::Greater);
        value["minimum"] = minimum;
        value["maximum"] = maximum;
    }
    match value {
        Value::Object(map) => map.values_mut().for_each(integer_ranges),
        Value::Array(items) => items.iter_mut().for_each(integer_ranges),
        _ => {}
    }
}

/// Step 2: `kind` in a query is one of `kinds`; `seat` in a path is below
/// the most players any of them seats (which seats a game has is its own:
/// the server refuses the others with `invalid_input`).
fn kind_parameters(doc: &mut Value, kinds: &[KindSchemas]) {
    let ids: Vec<&str> = kinds.iter().map(|kind| kind.id).collect();
    let most_seats = kinds.iter().map(|kind| kind.players.1).max().unwrap_or(1);
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else { return };
    for operation in paths.values_mut().filter_map(Value::as_object_mut).flat_map(|item| item.values_mut()) {
        let Some(parameters) = operation.get_mut("parameters").and_then(Value::as_array_mut) else { continue };
        for parameter in parameters.iter_mut() {
            match (parameter["in"].as_str(), parameter["name"].as_str()) {
                (Some("query"), Some("kind")) => parameter["schema"]["enum"] = json!(ids),
                (Some("path"), Some("seat")) => parameter["schema"]["maximum"] = json!(most_seats - 1),
                _ => {}
            }
        }
    }
}

/// Step 3: the rules between fields, by the schema they constrain.
fn cross_field_rules(doc: &mut Value) {
    let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut) else { return };
    // `ClockRequest::control`: a limit per move, a bank, or both; an
    // increment (other than 0) only with a bank.
    if let Some(clock) = schemas.get_mut("ClockRequest") {
        let set = |field: &str| json!({ "required": [field], "properties": { field: { "type": "integer" } } });
        clock["allOf"] = json!([
            { "anyOf": [set("move_ms"), set("bank_ms")] },
            {
                "if": { "required": ["increment_ms"], "properties": { "increment_ms": { "type": "integer", "minimum": 1 } } },
                "then": set("bank_ms"),
            },
        ]);
    }
}

/// Step 4: each kind's `{kind}.CreateGame` (made by [`super::exact`]):
/// `options.first_seat` is below the number of seats in `players` (the
/// engines refuse `seat 3 is not at a table of 2`). JSON Schema cannot
/// compare two values, so the rule is one condition per table size: at
/// most `n` players, first seat at most `n - 1`. And a public game (which
/// anyone may join) has an open seat, a `null` in `players`.
fn new_tables(doc: &mut Value, kinds: &[KindSchemas]) {
    let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut) else { return };
    for kind in kinds {
        let Some(create) = schemas.get_mut(&format!("{}.CreateGame", kind.id)) else { continue };
        let rules: Vec<Value> = (kind.players.0..=kind.players.1)
            .map(|seats| {
                json!({
                    "if": { "properties": { "players": { "maxItems": seats } } },
                    "then": { "properties": { "options": { "properties": { "first_seat": { "maximum": seats - 1 } } } } },
                })
            })
            .chain([json!({
                "if": { "required": ["public"], "properties": { "public": { "const": true } } },
                "then": { "properties": { "players": { "contains": { "type": "null" } } } },
            })])
            .collect();
        create["allOf"] = Value::Array(rules);
    }
}

/// Adds the bounds to `doc`, whose per-kind schemas [`super::exact`] made.
pub(crate) fn state(doc: &mut Value, kinds: &[KindSchemas]) {
    integer_ranges(doc);
    kind_parameters(doc, kinds);
    cross_field_rules(doc);
    new_tables(doc, kinds);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_integer_gets_its_types_range_within_the_bounds_it_has() {
        let mut doc = json!({
            "seat": { "type": "integer", "format": "u-int8", "minimum": 0 },
            "first": { "type": ["integer", "null"], "format": "uint8", "minimum": 0, "maximum": 3 },
            "version": { "type": "integer", "format": "uint64" },
            "delta": { "type": "integer", "format": "int32", "minimum": -5 },
            "page": { "type": "integer", "minimum": 1, "maximum": 1000 },
            "name": { "type": "string", "format": "uint8" },
        });
        integer_ranges(&mut doc);
        assert_eq!(doc["seat"], json!({ "type": "integer", "format": "uint8", "minimum": 0, "maximum": 255 }));
        assert_eq!((&doc["first"]["minimum"], &doc["first"]["maximum"]), (&json!(0), &json!(3)));
        assert_eq!((&doc["version"]["minimum"], &doc["version"]["maximum"]), (&json!(0), &json!(u64::MAX)));
        assert_eq!((&doc["delta"]["minimum"], &doc["delta"]["maximum"]), (&json!(-5), &json!(i32::MAX)));
        assert_eq!(doc["page"], json!({ "type": "integer", "minimum": 1, "maximum": 1000 }), "no format: as it was");
        assert_eq!(doc["name"], json!({ "type": "string", "format": "uint8" }), "not an integer");
    }

    /// The bounds written as literals in the types' annotations are the
    /// constants the server checks against.
    #[test]
    fn the_documents_bounds_are_the_servers_constants() {
        use ludo_record::clock::{MAX_INCREMENT_MS, MAX_LIMIT_MS, MIN_LIMIT_MS};
        let doc = crate::openapi();
        let schemas = &doc["components"]["schemas"];
        assert_eq!(schemas["BotRequest"]["properties"]["think_ms"]["maximum"], json!(ludo_record::bot::MAX_THINK_MS));
        let clock = &schemas["ClockRequest"]["properties"];
        for field in ["move_ms", "bank_ms"] {
            assert_eq!((&clock[field]["minimum"], &clock[field]["maximum"]), (&json!(MIN_LIMIT_MS), &json!(MAX_LIMIT_MS)), "{field}");
        }
        assert_eq!(clock["increment_ms"]["maximum"], json!(MAX_INCREMENT_MS));
        assert_eq!(schemas["PlayerName"]["maxLength"], json!(ludo_game::MAX_NAME_CHARS));
        assert_eq!(schemas["cardinal.CreateGame"]["properties"]["webhook"]["maxLength"], json!(ludo_game::webhook::MAX_URL_BYTES));
        for path in ["/v1/games", "/v1/games/{id}/events", "/v1/games/{id}/steps"] {
            let parameters = doc["paths"][path]["get"]["parameters"].as_array().expect("parameters");
            let limit = parameters.iter().find(|p| p["name"] == "limit").expect("a limit");
            assert_eq!((&limit["schema"]["minimum"], &limit["schema"]["maximum"]), (&json!(1), &json!(ludo_game::MAX_PAGE)), "{path}");
        }
    }
}
