//! Every status an operation can answer, documented: what utoipa's path
//! attributes name is kept; what every request can meet (a deadline, a full
//! server, a failing disk, a rate limit …) is added from one table, as
//! shared responses. Also the servers, and the security of public
//! operations (none, said explicitly).

use serde_json::{Map, Value, json};

/// The problems every operation may answer, by the condition that brings
/// them, as `components/responses`.
fn shared() -> Map<String, Value> {
    let problem = |description: &str| {
        json!({
            "description": description,
            "content": { "application/problem+json": { "schema": { "$ref": "#/components/schemas/Problem" } } },
        })
    };
    let retry_after = json!({
        "description": "Seconds until a retry may succeed",
        "schema": { "type": "integer", "minimum": 1 },
    });
    let mut responses = Map::new();
    responses.insert(
        "BadRequest".into(),
        problem("invalid_input: a malformed request (a path id that is not text, a bad query or body); `field` names the culprit"),
    );
    responses
        .insert("Unauthorized".into(), problem("unauthorized: a malformed `Authorization` header, or a token of no seat of this game"));
    responses.insert("NotFound".into(), problem("not_found: no such game"));
    responses.insert("RequestTimeout".into(), problem("request_timeout: the request was not received and answered within the request timeout (a body that stops coming); the connection is closed"));
    responses.insert("PayloadTooLarge".into(), problem("payload_too_large: a body over this route's limit (2 MiB; 4 MiB for verify and import), told by its `Content-Length` (refused at once) or by its bytes"));
    responses.insert("UnsupportedMediaType".into(), problem("unsupported_media_type: a body that is not `application/json`"));
    let mut limited = problem(
        "rate_limited: this client address (or, for moves, this seat) has used its token bucket; `Retry-After` and `retry_after_ms` say when to retry",
    );
    limited["headers"] = json!({ "Retry-After": retry_after.clone() });
    responses.insert("TooManyRequests".into(), limited);
    responses.insert(
        "InternalError".into(),
        problem("corrupt_log: a stored log fails verification (`seq` names the first bad record); internal: a server-side failure"),
    );
    let mut unavailable = problem(
        "storage_unavailable: the log could not be written or read. On a full disk only writes are refused, with nothing written, and reads go on; writes are taken again once the disk has room. A failing disk or an unreachable database may fail reads too; the server recovers by itself (`/readyz` tells when) and `Retry-After` says when to try again. After a failed write the outcome of a move or a creation is unknown: retry with the same `request_id` to get the first answer if it was stored, or have it taken now. too_many_connections: the server (or this address) has as many connections as it may; retry after `Retry-After`",
    );
    unavailable["headers"] = json!({ "Retry-After": retry_after });
    responses.insert("Unavailable".into(), unavailable);
    responses
}

/// Operations limited per client address (and per seat, for moves).
const RATE_LIMITED: [(&str, &str); 4] =
    [("post", "/v1/games"), ("post", "/v1/games/{id}/moves"), ("post", "/v1/games/import"), ("post", "/v1/verify")];

/// Adds the servers, the public operations' empty security, the shared
/// responses, and to each operation every status it can answer.
pub(crate) fn complete(doc: &mut Value) {
    doc["servers"] = json!([{ "url": "/", "description": "The server this document is served by" }]);
    doc["info"]["license"]["identifier"] = json!("MIT OR Apache-2.0");
    doc["components"]["responses"] = Value::Object(shared());
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else { return };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else { continue };
        for (method, operation) in item.iter_mut() {
            complete_operation(path, method, operation);
            describe_event_streams(operation);
        }
    }
    // A shared response every operation that could meet it describes
    // itself (each game route says what its 404 means) is left out.
    let text = doc["paths"].to_string();
    if let Some(shared) = doc.pointer_mut("/components/responses").and_then(Value::as_object_mut) {
        shared.retain(|name, _| text.contains(&format!("\"#/components/responses/{name}\"")));
    }
}

/// A Server-Sent Events answer is described as its events (the convention
/// OpenAPI 3.2 makes explicit, and tools follow): each has an `event` name,
/// an `id`, and `data` holding JSON text whose schema is the one utoipa gave
/// for the answer.
fn describe_event_streams(operation: &mut Value) {
    let Some(responses) = operation.get_mut("responses").and_then(Value::as_object_mut) else { return };
    for response in responses.values_mut() {
        let Some(schema) = response.pointer_mut("/content/text~1event-stream/schema") else { continue };
        let data = schema.take();
        *schema = json!({
            "type": "object",
            "description": "One event of the stream: `event: record` (data: a `GameUpdate`) for each record, then `event: end` (data: a `StreamEnd`) once the game is over",
            "required": ["data"],
            "properties": {
                "event": { "type": "string", "enum": ["record", "end"] },
                "id": { "type": "string", "description": "The record's seq (`record` events), for `Last-Event-ID`" },
                "retry": { "type": "integer", "minimum": 0 },
                "data": { "type": "string", "contentMediaType": "application/json", "contentSchema": data },
            },
        });
    }
}

fn complete_operation(path: &str, method: &str, operation: &mut Value) {
    if operation.get("security").is_none() {
        operation["security"] = json!([]);
    }
    let parameters: Vec<&Value> = operation.get("parameters").and_then(Value::as_array).map(|p| p.iter().collect()).unwrap_or_default();
    let in_path = parameters.iter().any(|p| p["in"] == "path");
    let in_query = parameters.iter().any(|p| p["in"] == "query" || p["in"] == "header");
    let json_body = operation.pointer("/requestBody/content/application~1json").is_some();
    let any_body = operation.get("requestBody").is_some();
    let with_token = operation["security"].as_array().is_some_and(|s| s.iter().any(|r| r.get("seat_token").is_some()));
    let game_api = path.starts_with("/v1/");
    let mut add = vec![("408", "RequestTimeout"), ("503", "Unavailable")];
    if in_path || in_query || any_body {
        add.push(("400", "BadRequest"));
    }
    if with_token {
        add.push(("401", "Unauthorized"));
    }
    if in_path {
        add.push(("404", "NotFound"));
    }
    if any_body {
        add.push(("413", "PayloadTooLarge"));
    }
    if json_body {
        add.push(("415", "UnsupportedMediaType"));
    }
    if RATE_LIMITED.contains(&(method, path)) {
        add.push(("429", "TooManyRequests"));
    }
    if game_api {
        add.push(("500", "InternalError"));
    }
    let responses = operation["responses"].as_object_mut().expect("every operation has responses");
    for (status, shared) in add {
        responses.entry(status).or_insert_with(|| json!({ "$ref": format!("#/components/responses/{shared}") }));
    }
    // Status order, as a reader looks for them.
    let mut sorted: Vec<(String, Value)> = std::mem::take(responses).into_iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    responses.extend(sorted);
}
