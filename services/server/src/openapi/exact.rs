//! Makes the generated document exact: every union a response or request
//! holds is discriminated, so a validator finds exactly one matching schema
//! and a generated client picks the right type without guessing.
//!
//! utoipa describes the envelope (a game state, a move accepted, a log
//! page …) once, with its game-specific parts as unions of the hosted
//! engines' types (`GameOptions`, `GameMove`, `GameView`, `GameEffect`).
//! Those unions cannot be told apart by their contents (`{"first_seat":
//! null}` is valid options of every kind), so this pass:
//!
//! 1. turns every internally tagged union (each member an object with a
//!    one-value tag: `type`, `state`, `kind`) into a discriminated one: each
//!    member becomes a named schema (`cardinal.Move.Build`) whose tag is a
//!    `const`, and the union gets a `discriminator` with its mapping;
//! 2. gives every envelope that holds a game-specific part one schema per
//!    kind (`kardinal.GameState`, with `kind: const "kardinal"`, `options:
//!    kardinal.Options`, `view: kardinal.View` …), and makes the envelope a
//!    union of those discriminated by `kind`. What an envelope holds is
//!    specialised along (`kardinal.EventPage` holds `kardinal.Event`s);
//! 3. makes `GameMove`, which a move submission holds without a kind, any
//!    one kind's move union: two levels, the game's kind and then the move's
//!    `type`, as gRPC's `Move` holds a `oneof game` of each kind's `Move`.
//!    One flat union by `type` would map a tag two kinds share (`pass`) to
//!    one kind's schema, and a generated client could not submit the other's;
//! 4. gives requests options of their own (`kardinal.OptionsRequest`), where
//!    every option may be left out and no `default` is stated as a keyword
//!    (openapi-typescript's default flags make a property with a `default`
//!    required); the answers' options always hold every option, and say so;
//! 5. describes the rest exactly: a tag's `const` is also its `default` (a
//!    generated client fills it in), `options_schema` is a JSON Schema
//!    object, and an export sent as a body may be sent as bytes
//!    (`application/octet-stream`), the type generators know;
//! 6. drops the schemas nothing refers to any more.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

/// The hosted kinds: id, players, and their engine schemas' prefix.
pub(crate) struct KindSchemas {
    /// `cardinal` …
    pub id: &'static str,
    /// Fewest and most players.
    pub players: (usize, usize),
}

/// What each placeholder union becomes for a kind: `{kind}.{engine type}`.
const PLACEHOLDERS: [(&str, &str); 4] = [("GameOptions", "Options"), ("GameMove", "Move"), ("GameView", "View"), ("GameEffect", "Effect")];

const REF_PREFIX: &str = "#/components/schemas/";

fn reference(name: &str) -> Value {
    json!({ "$ref": format!("{REF_PREFIX}{name}") })
}

fn target(value: &Value) -> Option<&str> {
    value.get("$ref")?.as_str()?.strip_prefix(REF_PREFIX)
}

/// `in_progress` → `InProgress`, `draw_deck` → `DrawDeck`.
fn pascal(tag: &str) -> String {
    tag.split(['_', '-']).filter(|w| !w.is_empty()).map(|w| w[..1].to_ascii_uppercase() + &w[1..]).collect()
}

/// Every component a schema refers to, directly.
fn refs(value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            if let Some(name) = target(value) {
                out.insert(name.to_string());
            }
            map.values().for_each(|v| refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

/// The one-value tag of an object schema: its name and value.
fn tag_of(schema: &Value) -> Option<(String, String)> {
    let required: Vec<&str> = schema.get("required")?.as_array()?.iter().filter_map(Value::as_str).collect();
    schema.get("properties")?.as_object()?.iter().find_map(|(name, property)| {
        let values = property.get("enum")?.as_array()?;
        match (required.contains(&name.as_str()), values.as_slice()) {
            (true, [Value::String(value)]) => Some((name.clone(), value.clone())),
            _ => None,
        }
    })
}

/// Rewrites the whole document; `kinds` are the hosted kinds in order.
pub(crate) fn exact(doc: &mut Value, kinds: &[KindSchemas]) {
    let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut) else { return };
    tag_unions(schemas);
    split_by_kind(schemas, kinds);
    any_kind_move(schemas, kinds);
    type_options_schema(schemas);
    request_options(doc, kinds);
    bytes_too(doc);
    drop_unused(doc);
}

/// Step 1: every internally tagged union becomes a discriminated one.
fn tag_unions(schemas: &mut Map<String, Value>) {
    let names: Vec<String> = schemas.keys().cloned().collect();
    for name in names {
        let Some(members) = schemas[&name].get("oneOf").and_then(Value::as_array).cloned() else { continue };
        let tags: Option<Vec<(String, String)>> = members.iter().map(tag_of).collect();
        let Some(tags) = tags else { continue };
        let property = tags[0].0.clone();
        if tags.iter().any(|(p, _)| *p != property) {
            continue;
        }
        let mut mapping = Map::new();
        let mut refs = Vec::new();
        for (mut member, (_, value)) in members.into_iter().zip(tags) {
            member["properties"][&property] = json!({ "type": "string", "const": value, "default": value });
            let member_name = format!("{name}.{}", pascal(&value));
            schemas.insert(member_name.clone(), member);
            mapping.insert(value, Value::String(format!("{REF_PREFIX}{member_name}")));
            refs.push(reference(&member_name));
        }
        let union = schemas.get_mut(&name).expect("listed");
        union["oneOf"] = Value::Array(refs);
        union["discriminator"] = json!({ "propertyName": property, "mapping": mapping });
    }
}

/// Step 2: envelopes holding game-specific parts, one schema per kind.
fn split_by_kind(schemas: &mut Map<String, Value>, kinds: &[KindSchemas]) {
    let placeholders: BTreeMap<&str, &str> = PLACEHOLDERS.into_iter().collect();
    // The schemas that hold a placeholder, directly or through others.
    let mut generic: BTreeSet<String> = BTreeSet::new();
    loop {
        let before = generic.len();
        for (name, schema) in schemas.iter() {
            let mut targets = BTreeSet::new();
            refs(schema, &mut targets);
            let holds = targets.iter().any(|t| placeholders.contains_key(t.as_str()) || generic.contains(t));
            if holds && !placeholders.contains_key(name.as_str()) {
                generic.insert(name.clone());
            }
        }
        if generic.len() == before {
            break;
        }
    }
    // Those a kind tells apart: `kind` is a required property …
    let rooted: Vec<String> = generic
        .iter()
        .filter(|name| schemas[name.as_str()]["required"].as_array().is_some_and(|r| r.contains(&json!("kind"))))
        .cloned()
        .collect();
    let mut specialised = BTreeSet::new();
    for name in &rooted {
        for kind in kinds {
            specialise(schemas, &generic, &placeholders, name, kind, &mut specialised);
        }
    }
    for name in &rooted {
        let description = schemas[name.as_str()].get("description").cloned();
        let mut union = discriminated(kinds, name);
        if let Some(description) = description {
            union["description"] = description;
        }
        schemas.insert(name.clone(), union);
    }
    // … or `kind` says so when it is there (a verify report: absent when the
    // export's header cannot be read or names a kind not hosted here).
    for name in generic.iter().filter(|name| !rooted.contains(name)) {
        let optional_kind = schemas[name.as_str()]["properties"].get("kind").is_some();
        if !optional_kind {
            continue;
        }
        for kind in kinds {
            specialise(schemas, &generic, &placeholders, name, kind, &mut specialised);
            let specific = schemas.get_mut(&format!("{}.{name}", kind.id)).expect("just made");
            specific["required"].as_array_mut().expect("objects list what they require").push(json!("kind"));
        }
        let mut unread = schemas[name.as_str()].clone();
        let properties = unread["properties"].as_object_mut().expect("an object");
        let dropped: Vec<String> = properties
            .iter()
            .filter(|(_, p)| {
                let mut targets = BTreeSet::new();
                refs(p, &mut targets);
                targets.iter().any(|t| placeholders.contains_key(t.as_str()) || generic.contains(t))
            })
            .map(|(key, _)| key.clone())
            .collect();
        for key in &dropped {
            properties.remove(key);
        }
        properties.remove("kind");
        // No `kind` and no game-specific part: nothing beyond what is left.
        unread["additionalProperties"] = json!(false);
        unread["description"] = json!(format!("{}: for an export whose kind is unknown here (no `kind`, no game-specific part).", name));
        let unread_name = format!("{name}.Unread");
        schemas.insert(unread_name.clone(), unread);
        let mut members: Vec<Value> = kinds.iter().map(|kind| reference(&format!("{}.{name}", kind.id))).collect();
        members.push(reference(&unread_name));
        let description = schemas[name.as_str()].get("description").cloned().unwrap_or(Value::Null);
        schemas.insert(
            name.clone(),
            json!({
                "description": description,
                "oneOf": members,
            }),
        );
    }
}

/// A union of `{kind}.{name}` discriminated by `kind`.
fn discriminated(kinds: &[KindSchemas], name: &str) -> Value {
    let members: Vec<Value> = kinds.iter().map(|kind| reference(&format!("{}.{name}", kind.id))).collect();
    let mapping: Map<String, Value> =
        kinds.iter().map(|kind| (kind.id.to_string(), Value::String(format!("{REF_PREFIX}{}.{name}", kind.id)))).collect();
    json!({ "oneOf": members, "discriminator": { "propertyName": "kind", "mapping": mapping } })
}

/// Makes `{kind}.{name}`: `name` with each placeholder replaced by the
/// kind's engine type, each generic schema it holds by its own
/// `{kind}.` version, and `kind` (when there) a `const`.
fn specialise(
    schemas: &mut Map<String, Value>,
    generic: &BTreeSet<String>,
    placeholders: &BTreeMap<&str, &str>,
    name: &str,
    kind: &KindSchemas,
    done: &mut BTreeSet<(String, &'static str)>,
) {
    if !done.insert((name.to_string(), kind.id)) {
        return;
    }
    let mut schema = schemas[name].clone();
    let mut held = BTreeSet::new();
    rewrite(&mut schema, &mut |value| {
        let Some(to) = target(value) else { return };
        let to = to.to_string();
        if let Some(engine) = placeholders.get(to.as_str()) {
            value["$ref"] = Value::String(format!("{REF_PREFIX}{}.{engine}", kind.id));
        } else if generic.contains(&to) {
            held.insert(to.clone());
            value["$ref"] = Value::String(format!("{REF_PREFIX}{}.{to}", kind.id));
        }
    });
    if let Some(property) = schema.pointer_mut("/properties/kind") {
        let description = property.get("description").cloned().unwrap_or(Value::Null);
        *property = json!({ "type": "string", "const": kind.id, "default": kind.id, "description": description });
    }
    if name == "CreateGame"
        && let Some(players) = schema.pointer_mut("/properties/players")
    {
        players["minItems"] = json!(kind.players.0);
        players["maxItems"] = json!(kind.players.1);
        players["example"] = json!(["Ann", "Bob", "Cid", "Dee", "Eve"][..kind.players.0]);
    }
    schemas.insert(format!("{}.{name}", kind.id), schema);
    for inner in held {
        specialise(schemas, generic, placeholders, &inner, kind, done);
    }
}

/// Calls `f` on every object of `value` (depth first, parents first).
fn rewrite(value: &mut Value, f: &mut dyn FnMut(&mut Value)) {
    if value.is_object() {
        f(value);
    }
    match value {
        Value::Object(map) => map.values_mut().for_each(|v| rewrite(v, f)),
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite(v, f)),
        _ => {}
    }
}

/// Step 3: `GameMove` is one kind's move: the kind's union of moves, which
/// is discriminated by `type`.
fn any_kind_move(schemas: &mut Map<String, Value>, kinds: &[KindSchemas]) {
    let members: Vec<Value> = kinds.iter().map(|kind| reference(&format!("{}.Move", kind.id))).collect();
    schemas.insert(
        "GameMove".into(),
        json!({
            "description": "A move, in the shape of the game's kind: exactly what the legal-moves endpoint lists. \
                One of the game's kind's moves (`cardinal.Move`, `kardinal.Move`, …), each kind's moves told apart by `type`: \
                two kinds may share a `type` (`pass`), so the kind decides first, as gRPC's `Move.game` does.",
            // Not `oneOf`: a move two kinds share in shape is valid as either.
            "anyOf": members,
        }),
    );
}

/// Step 4: options as a request gives them (every one may be left out, no
/// `default` keyword) and as answers give them (every one there).
fn request_options(doc: &mut Value, kinds: &[KindSchemas]) {
    let (requested, answered) = (reachable_from(doc, "requestBody"), reachable_from(doc, "responses"));
    let schemas = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut).expect("schemas");
    for kind in kinds {
        let name = format!("{}.Options", kind.id);
        let Some(options) = schemas.get_mut(&name) else { continue };
        let mut request = options.clone();
        let keys: Vec<Value> = options["properties"].as_object().map(|p| p.keys().map(|k| json!(k)).collect()).unwrap_or_default();
        options["required"] = Value::Array(keys);
        request.as_object_mut().expect("an object").remove("required");
        for property in request["properties"].as_object_mut().into_iter().flat_map(|p| p.values_mut()) {
            let Some(default) = property.as_object_mut().and_then(|p| p.remove("default")) else { continue };
            let said = property["description"].as_str().or_else(|| property.pointer("/oneOf/0/description").and_then(Value::as_str));
            let said = said.unwrap_or_default().trim_end().to_string();
            property["description"] = json!(format!("{said} Default: `{default}`.").trim_start().to_string());
        }
        let description = request["description"].as_str().unwrap_or_default().trim_end().to_string();
        request["description"] =
            json!(format!("{description} Any option left out takes its default (`GET /v1/kinds`).").trim_start().to_string());
        let request_name = format!("{name}Request");
        schemas.insert(request_name.clone(), request);
        // Only schemas no answer holds name the request's options.
        for holder in requested.difference(&answered) {
            if let Some(schema) = schemas.get_mut(holder) {
                rewrite(schema, &mut |value| {
                    if target(value) == Some(name.as_str()) {
                        value["$ref"] = Value::String(format!("{REF_PREFIX}{request_name}"));
                    }
                });
            }
        }
    }
}

/// The schemas the paths' `part` (`requestBody`, `responses`) refer to,
/// directly or through other schemas.
fn reachable_from(doc: &Value, part: &str) -> BTreeSet<String> {
    let mut pending = BTreeSet::new();
    for operation in
        doc["paths"].as_object().into_iter().flat_map(|p| p.values()).flat_map(|p| p.as_object().into_iter().flat_map(|o| o.values()))
    {
        if let Some(held) = operation.get(part) {
            refs(held, &mut pending);
        }
    }
    if part == "responses"
        && let Some(shared) = doc.pointer("/components/responses")
    {
        refs(shared, &mut pending);
    }
    reachable(&doc["components"]["schemas"], pending)
}

/// `from`, and every schema they refer to, directly or through others.
fn reachable(schemas: &Value, from: BTreeSet<String>) -> BTreeSet<String> {
    let mut reached = BTreeSet::new();
    let mut pending: Vec<String> = from.into_iter().collect();
    while let Some(name) = pending.pop() {
        if reached.insert(name.clone()) {
            let mut inner = BTreeSet::new();
            refs(&schemas[name.as_str()], &mut inner);
            pending.extend(inner);
        }
    }
    reached
}

/// Step 5: a kind's `options_schema` is a JSON Schema of an object whose
/// properties are the options: said so, rather than "any value".
fn type_options_schema(schemas: &mut Map<String, Value>) {
    for schema in schemas.values_mut() {
        let Some(property) = schema.pointer_mut("/properties/options_schema") else { continue };
        let description = property.get("description").cloned().unwrap_or(Value::Null);
        *property = json!({
            "type": "object",
            "description": description,
            "required": ["type", "properties"],
            "properties": {
                "type": { "type": "string", "const": "object" },
                "description": { "type": "string" },
                "properties": {
                    "type": "object",
                    "description": "Each option's JSON Schema, by name.",
                    "additionalProperties": { "type": "object", "additionalProperties": true },
                },
            },
            "additionalProperties": true,
        });
    }
}

/// Step 5: an export sent as a request body (import, verify) is JSON Lines;
/// it may be declared as bytes too, which generated clients can send.
fn bytes_too(doc: &mut Value) {
    for operation in doc["paths"]
        .as_object_mut()
        .into_iter()
        .flat_map(|p| p.values_mut())
        .flat_map(|p| p.as_object_mut().into_iter().flat_map(|o| o.values_mut()))
    {
        let Some(content) = operation.pointer_mut("/requestBody/content").and_then(Value::as_object_mut) else { continue };
        if content.contains_key("application/x-ndjson") {
            content.insert(
                "application/octet-stream".into(),
                json!({ "schema": { "type": "string", "format": "binary", "description": "The same JSON Lines, as bytes: the server reads the body whatever its content type" } }),
            );
        }
    }
}

/// Step 6: drops the schemas nothing refers to (from the paths, or from a
/// schema something refers to).
fn drop_unused(doc: &mut Value) {
    loop {
        let mut used = BTreeSet::new();
        if let Some(paths) = doc.get("paths") {
            refs(paths, &mut used);
        }
        if let Some(responses) = doc.pointer("/components/responses") {
            refs(responses, &mut used);
        }
        let reached = reachable(&doc["components"]["schemas"], used);
        let schemas = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut).expect("schemas");
        let before = schemas.len();
        schemas.retain(|name, _| reached.contains(name));
        if schemas.len() == before {
            return;
        }
    }
}
