//! An HTTP client of the Worker's JSON API, for people's commands (`needs-you`,
//! `report-prompt doctor`): one blocking request at a time, and every failure
//! sorted into what a person (and a script's exit code) needs to know: the
//! server is out of reach, the credential was refused, or the server refused
//! the request and said why. (The hook never uses it: its reports go through
//! the outbox and the detached sender, `send`.)

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;

use needs_you_core::url::check_base_url;

use crate::error::Error;

/// A request that gets no answer in this time counts as "out of reach".
const TIMEOUT: Duration = Duration::from_secs(15);

/// Why a request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// No answer: down, wrong address, no network.
    Unreachable,
    /// 401: the credential is unknown, revoked or expired, or of the wrong kind.
    Refused,
    /// Any other 4xx: the server refused the request and said why.
    Rejected,
    /// 5xx: the server failed.
    Server,
}

#[derive(Debug)]
pub struct Failure {
    pub kind: FailureKind,
    pub status: Option<u16>,
    /// The server's `error` code, when it sent one.
    pub code: Option<String>,
    /// For a person: the server's own message, or what went wrong.
    pub message: String,
}

/// A client for one server, with or without a credential.
pub struct Client {
    base: String,
    token: Option<String>,
    agent: ureq::Agent,
}

/// A successful response: the status, the JSON body (null for none), the ETag.
pub struct Reply {
    pub status: u16,
    pub body: Value,
    pub etag: Option<String>,
}

impl Client {
    /// `base` must be https (or http to this machine), like the reporter's.
    pub fn new(base: &str, token: Option<&str>) -> Result<Client, Error> {
        Ok(Client {
            base: check_base_url(base).map_err(Error::Setup)?,
            token: token.map(str::to_owned),
            agent: ureq::Agent::config_builder()
                .timeout_global(Some(TIMEOUT))
                .http_status_as_error(false)
                // A redirect means a wrong URL (a login page, a renamed
                // Worker): said, not followed.
                .max_redirects(0)
                .user_agent(concat!("needs-you/", env!("CARGO_PKG_VERSION")))
                .build()
                .into(),
        })
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// A success that no needs-you Worker would send: most likely a wrong URL
    /// (a login page, a proxy), never to be taken for an empty answer.
    fn not_a_worker(&self, status: u16, what: &str) -> Failure {
        Failure {
            kind: FailureKind::Server,
            status: Some(status),
            code: None,
            message: format!(
                "{} {what} (HTTP {status}): is it the needs-you Worker's URL?",
                self.base
            ),
        }
    }

    /// `GET path`, its answer read as `T` (one of `needs_you_core::api`'s views).
    pub fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, Failure> {
        self.read(self.request("GET", path, None, None)?.body)
    }

    pub fn post<T: DeserializeOwned>(&self, path: &str, body: &Value) -> Result<T, Failure> {
        self.read(self.request("POST", path, Some(body), None)?.body)
    }

    pub fn put<T: DeserializeOwned>(&self, path: &str, body: &Value) -> Result<T, Failure> {
        self.read(self.request("PUT", path, Some(body), None)?.body)
    }

    pub fn delete<T: DeserializeOwned>(&self, path: &str) -> Result<T, Failure> {
        self.read(self.request("DELETE", path, None, None)?.body)
    }

    /// `DELETE path` with a JSON body (a signed statement of what to delete).
    pub fn delete_with<T: DeserializeOwned>(&self, path: &str, body: &Value) -> Result<T, Failure> {
        self.read(self.request("DELETE", path, Some(body), None)?.body)
    }

    /// A successful answer as the view it should be; one that is not (a
    /// server of another version, a proxy) is said as such.
    pub fn read<T: DeserializeOwned>(&self, body: Value) -> Result<T, Failure> {
        serde_json::from_value(body).map_err(|e| Failure {
            kind: FailureKind::Server,
            status: None,
            code: None,
            message: format!(
                "{} answered in a form this needs-you cannot read ({e})",
                self.base
            ),
        })
    }

    /// One request; `etag` is sent as `If-None-Match` (a 304 is an answer
    /// with a null body).
    pub fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        etag: Option<&str>,
    ) -> Result<Reply, Failure> {
        let url = format!("{}{path}", self.base);
        let auth = self.token.as_ref().map(|t| format!("Bearer {t}"));
        let result = match method {
            "GET" | "DELETE" if body.is_none() => {
                let mut req = if method == "GET" {
                    self.agent.get(&url)
                } else {
                    self.agent.delete(&url)
                };
                if let Some(a) = &auth {
                    req = req.header("authorization", a);
                }
                if let Some(e) = etag {
                    req = req.header("if-none-match", e);
                }
                req.call()
            }
            _ => {
                let mut req = match method {
                    "PUT" => self.agent.put(&url),
                    "DELETE" => self.agent.delete(&url).force_send_body(),
                    _ => self.agent.post(&url),
                };
                if let Some(a) = &auth {
                    req = req.header("authorization", a);
                }
                let bytes = serde_json::to_vec(body.unwrap_or(&Value::Object(Default::default())))
                    .unwrap_or_default();
                req.header("content-type", "application/json")
                    .send(&bytes[..])
            }
        };
        let mut resp = result.map_err(|e| Failure {
            kind: FailureKind::Unreachable,
            status: None,
            code: None,
            message: format!("no answer from {}: {e}", self.base),
        })?;
        let status = resp.status().as_u16();
        let etag = resp
            .headers()
            .get("etag")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        let parsed = serde_json::from_str::<Value>(&text);
        if (300..400).contains(&status) && status != 304 {
            return Err(self.not_a_worker(status, "sent the request elsewhere"));
        }
        if status < 400 && !text.trim().is_empty() && parsed.is_err() {
            return Err(self.not_a_worker(status, "answered with something else than JSON"));
        }
        let body = parsed.unwrap_or(Value::Null);
        if status < 400 {
            return Ok(Reply { status, body, etag });
        }
        // Every refusal of the Worker's API is JSON with a message: without
        // one, this is some other server (or a path under the Worker's).
        if body["message"].as_str().is_none() && matches!(status, 404 | 405) {
            return Err(self.not_a_worker(status, "does not know this request"));
        }
        let code = body["error"].as_str().map(str::to_owned);
        let message = body["message"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| format!("the server answered {status}"));
        let kind = match status {
            401 => FailureKind::Refused,
            400..=499 => FailureKind::Rejected,
            _ => FailureKind::Server,
        };
        Err(Failure {
            kind,
            status: Some(status),
            code,
            message,
        })
    }
}
