//! JSON in and out: the error type that every route returns, and body reading
//! with the 32 KiB limit.

use futures_util::StreamExt;
use serde::Serialize;
use serde_json::Value;
use worker::{Request, Response};

use needs_you_core::report::MAX_BODY_BYTES;

/// A refused or failed request: `{"error": code, "message": message}`, and
/// `reason_code` where the agent's machine refused with a code of its own.
#[derive(Debug)]
pub struct ApiError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
    pub reason_code: Option<String>,
}

pub type ApiResult = Result<Response, ApiError>;

impl ApiError {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            reason_code: None,
        }
    }

    /// With the code the agent's machine gave for it, if it is one: a few
    /// lower-case letters and underscores, never free text.
    pub fn because(mut self, code: Option<String>) -> Self {
        self.reason_code = code.filter(|c| {
            (1..=40).contains(&c.len()) && c.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
        });
        self
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        ApiError::new(400, code, message)
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        ApiError::new(401, "unauthorized", message)
    }

    /// Also the answer for anything that belongs to another owner or task.
    pub fn not_found() -> Self {
        ApiError::new(404, "not_found", "no such thing here")
    }

    pub fn into_response(self) -> Response {
        let mut body = serde_json::json!({"error": self.code, "message": self.message});
        if let Some(reason) = self.reason_code {
            body["reason_code"] = reason.into();
        }
        json_response(self.status, &body).unwrap_or_else(|_| {
            Response::error("internal error", 500).expect("a plain response can be built")
        })
    }
}

/// Internal failures are logged with their cause and answered without it: a
/// D1 message may quote a statement, and statements never belong in a response.
impl From<worker::Error> for ApiError {
    fn from(e: worker::Error) -> Self {
        worker::console_error!("internal error: {e}");
        ApiError::new(500, "internal", "the server failed; try again")
    }
}

pub fn json_response<T: Serialize>(status: u16, body: &T) -> worker::Result<Response> {
    Ok(Response::from_json(body)?.with_status(status))
}

pub fn ok<T: Serialize>(status: u16, body: &T) -> ApiResult {
    Ok(json_response(status, body)?)
}

/// What is read and thrown away of a body past the limit, at most: beyond
/// it, or past [`DISCARD_FOR`], the rest is cancelled.
const DISCARD_BYTES: usize = 1024 * 1024;
const DISCARD_FOR: std::time::Duration = std::time::Duration::from_millis(300);

/// Reads the body, refusing more than 32 KiB: by its declared length before
/// reading anything, else as soon as the chunks read pass the limit, so a
/// huge or endless body is never read in full.
///
/// A body refused while it arrives is still read to its end and thrown away
/// when that is quick ([`DISCARD_BYTES`], [`DISCARD_FOR`]): cancelled half
/// way, it leaves the connection it came on broken, and the local runtime
/// (`wrangler dev`) hands that connection the next request, anyone's, which
/// then fails with "Your worker restarted mid-request".
pub async fn read_bytes(req: &mut Request) -> Result<Vec<u8>, ApiError> {
    read_bytes_up_to(req, MAX_BODY_BYTES).await
}

/// As [`read_bytes`], up to `limit` bytes: a report whose words are sealed
/// may be larger than any other body.
pub async fn read_bytes_up_to(req: &mut Request, limit: usize) -> Result<Vec<u8>, ApiError> {
    let too_large = || too_large(limit);
    if declared_length(req).is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    // No body at all reads as an empty one.
    let Ok(mut stream) = req.stream() else {
        return Ok(Vec::new());
    };
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if bytes.len() + chunk.len() > limit {
            discard_rest(&mut stream).await;
            return Err(too_large());
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// Reads what is left of `stream` and throws it away, within the bounds.
async fn discard_rest(stream: &mut worker::ByteStream) {
    use futures_util::future::{select, Either};
    let mut deadline = Box::pin(worker::Delay::from(DISCARD_FOR));
    let mut left = DISCARD_BYTES;
    loop {
        match select(stream.next(), &mut deadline).await {
            Either::Left((Some(Ok(chunk)), _)) if chunk.len() < left => left -= chunk.len(),
            // Read to its end: the connection stays good.
            Either::Left((None, _)) => return,
            // Too much, an error, or a body that stalls: cancelled on drop.
            _ => return,
        }
    }
}

/// Refuses a request to `what` (a WebSocket route) that is not an upgrade
/// to one, with 426.
pub fn websocket_upgrade(req: &Request, what: &str) -> Result<(), ApiError> {
    let upgrade = req.headers().get("upgrade")?.unwrap_or_default();
    if upgrade.eq_ignore_ascii_case("websocket") {
        return Ok(());
    }
    Err(ApiError::new(
        426,
        "upgrade_required",
        format!("{what} is a WebSocket (Upgrade: websocket)"),
    ))
}

/// The body's length as its `Content-Length` says, if it says.
pub fn declared_length(req: &Request) -> Option<u64> {
    req.headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|v| v.trim().parse::<u64>().ok())
}

/// Reads the body as one JSON object, refusing more than 32 KiB before parsing.
pub async fn read_object(req: &mut Request) -> Result<serde_json::Map<String, Value>, ApiError> {
    let bytes = read_bytes(req).await?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        ApiError::bad_request("invalid_json", format!("the body is not valid JSON: {e}"))
    })?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(ApiError::bad_request(
            "invalid_request",
            "the body must be a JSON object",
        )),
    }
}

/// The `signed` field of a body: an envelope a device of the owner signed,
/// kept and passed on as it came (only the agent's machine can check it),
/// or none.
pub fn signed_field(
    fields: &serde_json::Map<String, Value>,
) -> Result<Option<needs_you_core::signed::Envelope>, ApiError> {
    match fields.get("signed") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value::<needs_you_core::signed::Envelope>(v.clone())
            .ok()
            .filter(needs_you_core::signed::Envelope::well_formed)
            .map(Some)
            .ok_or_else(|| {
                ApiError::bad_request(
                    "invalid_request",
                    "`signed` is {\"statement\", \"signature\", \"key\"}, each base64url, 8 KiB in all at most",
                )
            }),
    }
}

/// Reads a body that may be left out: none at all is an empty object.
pub async fn read_optional_object(
    req: &mut Request,
) -> Result<serde_json::Map<String, Value>, ApiError> {
    let bytes = read_bytes(req).await?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(serde_json::Map::new());
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::bad_request(
            "invalid_request",
            "the body must be a JSON object",
        )),
        Err(e) => Err(ApiError::bad_request(
            "invalid_json",
            format!("the body is not valid JSON: {e}"),
        )),
    }
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        413,
        "too_large",
        format!("the body is over the limit of {limit} bytes"),
    )
}

/// A required name of 1 to `max` characters, as a person reads it: one line,
/// without control or invisible characters (`needs_you_core::text::line`),
/// so that no name can retitle a terminal or hide what it says.
pub fn name_field(
    obj: &serde_json::Map<String, Value>,
    field: &str,
    max: usize,
) -> Result<String, ApiError> {
    match obj.get(field) {
        Some(Value::String(s)) => {
            let name = needs_you_core::text::line(s);
            if name.is_empty() || name.chars().count() > max {
                return Err(ApiError::bad_request(
                    "invalid_request",
                    format!("`{field}` must be 1 to {max} visible characters"),
                ));
            }
            Ok(name)
        }
        Some(_) => Err(ApiError::bad_request(
            "invalid_request",
            format!("`{field}` must be a string"),
        )),
        None => Err(ApiError::bad_request(
            "invalid_request",
            format!("`{field}` is missing"),
        )),
    }
}
