//! Web Push: a browser's own notifications, through its vendor's push service.
//!
//! A device's page subscribes with the Worker's VAPID public key and hands the
//! Worker its `PushSubscription` (`endpoint`, `keys.p256dh`, `keys.auth`). To
//! notify it, the Worker POSTs to the endpoint:
//!
//! * the body encrypted for that browser alone (RFC 8291, `aes128gcm` from
//!   RFC 8188): an ephemeral P-256 key agreed with the browser's `p256dh`, mixed
//!   with its `auth` secret, one record;
//! * `Authorization: vapid t=<JWT>, k=<public key>` (RFC 8292): an ES256 JWT
//!   whose `aud` is the push service's origin, signed by the Worker's key, so
//!   the service knows the sender is the one the browser subscribed with;
//! * `TTL`, `Urgency: high`, and `Topic` derived from the question: the open
//!   and the close of one question share a topic, so a close replaces an open
//!   that the push service still holds for an offline phone, instead of the
//!   phone ringing late for a question already answered.
//!
//! The P-256 keys, the agreement, the signature and AES-GCM are the runtime's
//! WebCrypto's (`subtle`); what they are put together into is here, and pure:
//! the keys derived from the agreed secret, the body's framing, the token and
//! the headers, so that RFC 8291's example is a unit test.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use hkdf::Hkdf;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use needs_you_core::truncate_chars;

use super::error::{Failed, Refused};
use super::outgoing::Outgoing;
use super::subtle;
use crate::delivery::Event;
use crate::question::Question;

/// How long a push service keeps an undelivered message (seconds). Past half
/// a day an open question is stale, and its close would replace it anyway.
pub const TTL_S: u64 = 12 * 3600;
/// A VAPID JWT is valid this long (RFC 8292 allows at most 24 hours).
const JWT_LIFETIME_S: u64 = 12 * 3600;
/// The record size announced in the header. The message is one record.
const RECORD_SIZE: u32 = 4096;
/// Push services take a body of at most 4096 bytes (RFC 8291, section 4):
/// less the header (86 bytes with the sender's key) and the record's padding
/// delimiter and tag (17), this much is left for the message.
const MAX_MESSAGE_BYTES: usize = 4096 - 86 - 17;
/// A question's text is cut to this many characters in a push: a
/// notification shows a few lines at most. [`message`] cuts it further when
/// the bytes would not fit.
const MAX_TEXT_CHARS: usize = 600;

/// A browser's push subscription, as stored for its device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subscription {
    pub endpoint: String,
    /// The browser's P-256 public key, uncompressed (65 bytes), base64url.
    pub p256dh: String,
    /// The browser's 16-byte authentication secret, base64url.
    pub auth: String,
}

/// The hosts a push subscription may point at: the browsers' own push
/// services, and those an operator adds (`PUSH_SERVICE_HOSTS`). Anything
/// else would have the Worker POST, signed, wherever a device said.
pub struct PushServices {
    /// Host names, or `.suffix` for every host under it.
    hosts: Vec<String>,
    /// `http://127.0.0.1` too (`ALLOW_LOOPBACK_PUSH`): local runs and tests.
    loopback: bool,
}

/// Chrome's and Edge's Chromium (FCM), Firefox (Mozilla's autopush), Safari
/// (Apple), Windows' own (WNS).
pub const KNOWN_PUSH_SERVICES: &[&str] = &[
    "fcm.googleapis.com",
    ".push.services.mozilla.com",
    ".push.apple.com",
    ".notify.windows.com",
];

impl PushServices {
    /// The known services, `extra` (comma-separated hosts or `.suffixes`),
    /// and loopback if allowed.
    pub fn new(extra: &str, loopback: bool) -> PushServices {
        let hosts = KNOWN_PUSH_SERVICES
            .iter()
            .map(|h| (*h).to_owned())
            .chain(
                extra
                    .split(',')
                    .map(|h| h.trim().to_ascii_lowercase())
                    .filter(|h| !h.is_empty()),
            )
            .collect();
        PushServices { hosts, loopback }
    }

    /// Whether `endpoint` is at one of them: `https://` to an allowed host,
    /// or `http://127.0.0.1` when loopback is allowed.
    pub fn allow(&self, endpoint: &str) -> bool {
        if !crate::urls::is_http_url(endpoint) || endpoint.len() > 1024 {
            return false;
        }
        if let Some(rest) = endpoint.strip_prefix("https://") {
            let host = rest
                .split(['/', '?', '#', ':'])
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            return self.hosts.iter().any(|h| match h.strip_prefix('.') {
                Some(suffix) => host.ends_with(&format!(".{suffix}")),
                None => host == *h,
            });
        }
        self.loopback
            && (endpoint.starts_with("http://127.0.0.1:")
                || endpoint.starts_with("http://127.0.0.1/"))
    }
}

impl Subscription {
    /// Reads the browser's `PushSubscription` JSON as it is
    /// (`{endpoint, keys: {p256dh, auth}}`), for an endpoint at one of
    /// `services`.
    pub fn from_browser(v: &Value, services: &PushServices) -> Result<Subscription, Refused> {
        let endpoint = v
            .get("endpoint")
            .and_then(Value::as_str)
            .ok_or("`endpoint` must be the push service URL")?;
        if !services.allow(endpoint) {
            return Err(
                "`endpoint` must be an https:// URL of a browser's push service (FCM, Mozilla, Apple, Windows, or one in PUSH_SERVICE_HOSTS), at most 1024 characters"
                    .into(),
            );
        }
        let key = |name: &str| {
            v.get("keys")
                .and_then(|k| k.get(name))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| format!("`keys.{name}` must be a base64url string"))
        };
        let sub = Subscription {
            endpoint: endpoint.to_owned(),
            p256dh: key("p256dh")?,
            auth: key("auth")?,
        };
        sub.keys()?;
        Ok(sub)
    }

    /// The browser's public key (an uncompressed point, 65 bytes) and auth
    /// secret, their sizes checked; [`Subscription::check`] checks the point.
    fn keys(&self) -> Result<(Vec<u8>, Vec<u8>), Refused> {
        let public = decode(&self.p256dh)
            .filter(|k| k.len() == 65 && k[0] == 4)
            .ok_or(NOT_A_POINT)?;
        let auth = decode(&self.auth)
            .filter(|a| a.len() == 16)
            .ok_or("`keys.auth` must be 16 bytes, base64url")?;
        Ok((public, auth))
    }

    /// Whether the browser's public key is a point of P-256, which only
    /// WebCrypto can tell here: a subscription is refused when it is not.
    pub async fn check(&self) -> Result<(), Refused> {
        let (public, _) = self.keys()?;
        subtle::ecdh_public(&public)
            .await
            .map(|_| ())
            .map_err(|_| NOT_A_POINT.into())
    }
}

const NOT_A_POINT: &str = "`keys.p256dh` is not an uncompressed P-256 public key";

/// The Worker's VAPID identity as configured: its private scalar and a
/// contact for the push services (`mailto:` or `https:`).
pub struct Vapid {
    scalar: [u8; 32],
    subject: String,
}

/// What [`Vapid::key`] says of a scalar WebCrypto refuses (zero, or not
/// below the curve's order).
const NOT_A_KEY: &str = "VAPID_PRIVATE_KEY is not a P-256 private key (32 bytes, base64url)";

/// The DER of a PKCS #8 P-256 private key up to its 32-byte scalar (RFC 5915's
/// `ECPrivateKey` without its optional public key, which WebCrypto computes):
/// the one form in which WebCrypto takes a bare scalar.
const PKCS8_P256_PREFIX: [u8; 35] = [
    0x30, 0x41, 0x02, 0x01, 0x00, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
    0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x04, 0x27, 0x30, 0x25, 0x02, 0x01,
    0x01, 0x04, 0x20,
];

impl Vapid {
    /// From the secrets: `VAPID_PRIVATE_KEY` (the 32-byte scalar, base64url)
    /// and `VAPID_SUBJECT`.
    pub fn new(private_key: &str, subject: &str) -> Result<Vapid, Refused> {
        // Some tools drop a scalar's leading zero bytes (one key in 256 is
        // a byte short): 24 to 32 bytes are taken, padded back on the left.
        let given = decode(private_key.trim())
            .filter(|d| (24..=32).contains(&d.len()))
            .ok_or(NOT_A_KEY)?;
        let mut scalar = [0u8; 32];
        scalar[32 - given.len()..].copy_from_slice(&given);
        let subject = subject.trim();
        if !(subject.starts_with("mailto:") || subject.starts_with("https://")) {
            return Err("VAPID_SUBJECT must be a mailto: or https:// address".into());
        }
        Ok(Vapid {
            scalar,
            subject: subject.to_owned(),
        })
    }

    /// The scalar as PKCS #8.
    fn pkcs8(&self) -> Vec<u8> {
        let mut der = PKCS8_P256_PREFIX.to_vec();
        der.extend_from_slice(&self.scalar);
        der
    }

    /// The key in WebCrypto, with its public half: for each push sent and
    /// each read of the key route (an import is a fraction of a millisecond
    /// beside the push itself).
    pub async fn key(&self) -> Result<VapidKey, Failed> {
        let (signing, public) = subtle::es256_key(&self.pkcs8())
            .await
            .map_err(|e| format!("{NOT_A_KEY} ({e})"))?;
        Ok(VapidKey {
            signing,
            public: B64.encode(public),
            subject: self.subject.clone(),
        })
    }
}

/// The VAPID key ready to sign.
pub struct VapidKey {
    signing: subtle::Key,
    /// The public key, uncompressed, base64url: the page's `applicationServerKey`.
    pub public: String,
    subject: String,
}

impl VapidKey {
    /// The `Authorization` header for a request to `endpoint` at `now_s`.
    pub async fn authorization(&self, endpoint: &str, now_s: u64) -> Result<String, Failed> {
        let input = token_input(&self.subject, endpoint, now_s);
        let signature = subtle::es256(&self.signing, input.as_bytes()).await?;
        Ok(authorization(&input, &signature, &self.public))
    }
}

/// The JWT's signed part (RFC 8292): its header and claims, each base64url.
fn token_input(subject: &str, endpoint: &str, now_s: u64) -> String {
    let header = B64.encode(br#"{"typ":"JWT","alg":"ES256"}"#);
    let claims = json!({
        "aud": crate::urls::origin(endpoint),
        "exp": now_s + JWT_LIFETIME_S,
        "sub": subject,
    });
    format!("{header}.{}", B64.encode(claims.to_string()))
}

/// `vapid t=<JWT>, k=<public key>`; ES256 in a JWT is `r || s`, 64 bytes,
/// what WebCrypto's signature is.
fn authorization(input: &str, signature: &[u8], public: &str) -> String {
    format!("vapid t={input}.{}, k={public}", B64.encode(signature))
}

/// The notification a service worker shows, as the JSON that is encrypted,
/// within [`MAX_MESSAGE_BYTES`]. A limit in characters is not one in bytes: an
/// emoji takes four, a control character six once escaped in JSON. So the
/// question's text is cut further until the message fits; with no text at all
/// it always does (names and options are bounded well below).
fn message(event: Event, q: &Question) -> String {
    let mut chars = MAX_TEXT_CHARS;
    loop {
        let m = fields(event, q, chars).to_string();
        if m.len() <= MAX_MESSAGE_BYTES || chars == 0 {
            return m;
        }
        // In proportion to the excess: strictly fewer characters each time.
        chars = chars * MAX_MESSAGE_BYTES / m.len();
    }
}

/// The message's fields, the question's text cut to `text_chars` characters.
/// The page's service worker reads these fields; `docs/api.md` lists them.
fn fields(event: Event, q: &Question, text_chars: usize) -> Value {
    let title = match event {
        Event::Close => format!("{}: answered", q.cli.display_name()),
        Event::Open => q.cli.asking(q.kind),
    };
    // A sealed task name is not the server's to carry either: the service
    // worker opens it (`task_sealed`, below).
    let task = if q.task_sealed_name.is_some() {
        "A task"
    } else {
        q.task_name.as_str()
    };
    let body = match event {
        // Sealed words are not the server's to carry: the page shows them.
        Event::Open if q.sealed => format!("{task}: open needs-you to see it"),
        Event::Open => {
            let text = truncate_chars(&q.text, text_chars);
            let options = needs_you_core::words::option_lines(&q.options);
            if options.is_empty() {
                format!("{task}: {text}")
            } else {
                format!("{task}: {text}\n{}", truncate_chars(&options, 300))
            }
        }
        Event::Close => format!("{task}: no longer needs you"),
    };
    // What an open question takes from afar, and the digest an answer to it
    // carries back: the service worker offers a notification's actions
    // (Deny, Allow…) by these, and signs its Deny for the machine's own
    // open (`session`, `open_seq`).
    let (takes, digest) = match event {
        Event::Open => (
            q.answer_from_afar.map(|a| a.as_str()),
            q.digest.as_deref().filter(|_| q.answer_from_afar.is_some()),
        ),
        Event::Close => (None, None),
    };
    // A sealed question's summary, which the service worker opens as the
    // open's (`session`, `open_seq`), for the task it names.
    let summary = q
        .summary
        .as_deref()
        .filter(|_| q.sealed && event == Event::Open);
    let (session, open_seq) = match (digest, summary) {
        (None, None) => (None, None),
        _ => (Some(q.session.as_str()), Some(q.open_seq)),
    };
    json!({
        "event": event.as_str(),
        "question_id": q.question_id,
        "tag": format!("question-{}", q.question_id),
        "title": title,
        "body": body,
        "url": format!("/#question-{}", q.question_id),
        "reason": q.close_reason.map(|r| r.as_str()),
        "takes": takes,
        "digest": digest,
        "session": session,
        "open_seq": open_seq,
        "sealed": summary,
        "task": summary.map(|_| task),
        "task_id": q.task_sealed_name.as_ref().map(|_| q.task_id.as_str()),
        "task_sealed": q.task_sealed_name,
        "quiet": q.quiet && event == Event::Open,
    })
}

/// The push service's `Topic` for a question: at most 32 characters of the
/// base64url alphabet (RFC 8030), and not the question id itself, which the
/// push service has no need to learn.
fn topic(question_id: &str) -> String {
    B64.encode(&Sha256::digest(question_id.as_bytes())[..24])
}

/// A push made ready for one subscription: its body encrypted for that
/// browser alone, and the Worker's signed token.
pub struct Sealed {
    body: Vec<u8>,
    authorization: String,
}

/// `event` of `q`, encrypted and signed for `sub` at `now_s`, with a fresh
/// `salt` (16 random bytes) and a fresh ephemeral key, which WebCrypto makes.
pub async fn seal(
    sub: &Subscription,
    event: Event,
    q: &Question,
    vapid: &VapidKey,
    now_s: u64,
    salt: &[u8; 16],
) -> Result<Sealed, Failed> {
    let (ua_public, auth) = sub.keys()?;
    let record = record(&message(event, q))?;
    let peer = subtle::ecdh_public(&ua_public).await?;
    let (shared, as_public) = subtle::agree(&peer).await?;
    let (cek, nonce) = content_keys(&shared, &auth, &ua_public, &as_public, salt);
    let sealed = subtle::aes128gcm(&cek, &nonce, &record).await?;
    Ok(Sealed {
        body: body(salt, &as_public, &sealed),
        authorization: vapid.authorization(&sub.endpoint, now_s).await?,
    })
}

/// The request that tells `sub` about `q`, with what [`seal`] made of it.
pub fn request(sub: &Subscription, q: &Question, sealed: &Sealed) -> Outgoing {
    Outgoing {
        method: "POST",
        url: sub.endpoint.clone(),
        headers: vec![
            ("authorization", sealed.authorization.clone()),
            ("content-encoding", "aes128gcm".to_owned()),
            ("content-type", "application/octet-stream".to_owned()),
            ("ttl", TTL_S.to_string()),
            ("urgency", "high".to_owned()),
            ("topic", topic(&q.question_id)),
        ],
        body: Some(sealed.body.clone()),
    }
}

/// One record of `message`, the last (RFC 8188: its padding delimiter is 2),
/// refused over what one push carries.
fn record(message: &str) -> Result<Vec<u8>, Failed> {
    if message.len() > MAX_MESSAGE_BYTES {
        return Err("the message is too long for a push".into());
    }
    let mut record = message.as_bytes().to_vec();
    record.push(2);
    Ok(record)
}

/// RFC 8291's content key and nonce, from the agreed secret `shared`, the
/// browser's `auth` secret and public key `ua_public`, the sender's ephemeral
/// `as_public`, and the body's `salt`.
fn content_keys(
    shared: &[u8],
    auth: &[u8],
    ua_public: &[u8],
    as_public: &[u8],
    salt: &[u8; 16],
) -> ([u8; 16], [u8; 12]) {
    // IKM = HKDF(salt = auth, ikm = ECDH secret, info = "WebPush: info" 0 ua as).
    let mut key_info = b"WebPush: info\0".to_vec();
    key_info.extend_from_slice(ua_public);
    key_info.extend_from_slice(as_public);
    let mut ikm = [0u8; 32];
    let mut cek = [0u8; 16];
    let mut nonce = [0u8; 12];
    // Lengths this small are always within HKDF's limit (255 hashes).
    let _ = Hkdf::<Sha256>::new(Some(auth), shared).expand(&key_info, &mut ikm);
    let hk = Hkdf::<Sha256>::new(Some(salt), &ikm);
    let _ = hk.expand(b"Content-Encoding: aes128gcm\0", &mut cek);
    let _ = hk.expand(b"Content-Encoding: nonce\0", &mut nonce);
    (cek, nonce)
}

/// The whole body: the RFC 8188 header (salt, record size, the sender's
/// public key) and the one record, `sealed`.
fn body(salt: &[u8; 16], as_public: &[u8], sealed: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(21 + as_public.len() + sealed.len());
    body.extend_from_slice(salt);
    body.extend_from_slice(&RECORD_SIZE.to_be_bytes());
    body.push(as_public.len() as u8);
    body.extend_from_slice(as_public);
    body.extend_from_slice(sealed);
    body
}

fn decode(s: &str) -> Option<Vec<u8>> {
    // Browsers give base64url; some pad it.
    B64.decode(s.trim_end_matches('=')).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use needs_you_core::afar::Afar;
    use needs_you_core::{Cli, Kind, QuestionOption};

    fn d(s: &str) -> Vec<u8> {
        B64.decode(s).unwrap()
    }

    /// RFC 8291, Appendix A: the published agreed secret, keys and salt give
    /// the published content key and nonce, and with the published record,
    /// the published body byte for byte. (The agreement and AES-GCM are
    /// WebCrypto's: the Worker's tests decrypt real pushes with `http_ece`.)
    #[test]
    fn the_rfc_8291_example_byte_for_byte() {
        let ua_public = d(
            "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4",
        );
        let as_public = d(
            "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8",
        );
        let salt: [u8; 16] = d("DGv6ra1nlYgDCS1FRnbzlw").try_into().unwrap();
        let (cek, nonce) = content_keys(
            &d("kyrL1jIIOHEzg3sM2ZWRHDRB62YACZhhSlknJ672kSs"),
            &d("BTBZMqHH6r4Tts7J_aSIgg"),
            &ua_public,
            &as_public,
            &salt,
        );
        assert_eq!(B64.encode(cek), "oIhVW04MRdy2XN9CiKLxTg");
        assert_eq!(B64.encode(nonce), "4h_95klXJ5E_qnoN");
        let published = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN";
        let sealed = &d(published)[86..];
        assert_eq!(B64.encode(body(&salt, &as_public, sealed)), published);
        // The plaintext's record, as the RFC seals it: 41 bytes, then 2.
        let plain = "When I grow up, I want to be a watermelon";
        assert_eq!(record(plain).unwrap().len() + 16, sealed.len());
    }

    /// A whole body stays within what a push service takes: the header with
    /// a P-256 point, the longest record, its tag.
    #[test]
    fn the_longest_message_fits_one_push() {
        let longest = "x".repeat(MAX_MESSAGE_BYTES);
        let sealed = vec![0u8; record(&longest).unwrap().len() + 16];
        assert_eq!(body(&[0; 16], &[4; 65], &sealed).len(), 4096);
        assert!(record(&format!("{longest}x")).is_err());
    }

    /// The scalar wrapped as PKCS #8 is the DER an independent encoder gives
    /// (`openssl asn1parse -genconf` of the structure, base64url), which
    /// OpenSSL reads back as the RFC 8291 example's key.
    #[test]
    fn the_vapid_scalar_as_pkcs8() {
        assert_eq!(
            B64.encode(vapid().pkcs8()),
            "MEECAQAwEwYHKoZIzj0CAQYIKoZIzj0DAQcEJzAlAgEBBCDJ9Y-JgT6fjocucfQqpk4XV8klTcxity3cAQu0BD6hHA"
        );
    }

    fn question() -> Question {
        Question::open(
            "q_1",
            "deploy",
            Cli::Codex,
            Kind::Permission,
            "Run `rm -rf build`?",
            0,
        )
    }

    fn vapid() -> Vapid {
        Vapid::new(
            "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw",
            "mailto:ops@example.com",
        )
        .unwrap()
    }

    #[test]
    fn the_jwt_names_the_push_service_origin_and_expires_within_a_day() {
        let input = token_input(
            "mailto:ops@example.com",
            "https://push.example.net:8443/wp/abc?x=1",
            1_000,
        );
        let auth = authorization(&input, &[9; 64], "KEY");
        let (t, k) = auth
            .strip_prefix("vapid t=")
            .unwrap()
            .split_once(", k=")
            .unwrap();
        assert_eq!(k, "KEY");
        let parts: Vec<&str> = t.split('.').collect();
        assert_eq!(parts.len(), 3);
        let head: Value = serde_json::from_slice(&d(parts[0])).unwrap();
        assert_eq!(head["alg"], "ES256");
        let claims: Value = serde_json::from_slice(&d(parts[1])).unwrap();
        assert_eq!(claims["aud"], "https://push.example.net:8443");
        assert_eq!(claims["sub"], "mailto:ops@example.com");
        let exp = claims["exp"].as_u64().unwrap();
        assert!(exp > 1_000 && exp <= 1_000 + 24 * 3600);
        assert_eq!(d(parts[2]), vec![9; 64]);
    }

    #[test]
    fn vapid_keys_and_subjects_are_checked() {
        assert!(Vapid::new("short", "mailto:a@b.c").is_err());
        assert!(Vapid::new(&B64.encode([1; 33]), "mailto:a@b.c").is_err());
        assert!(Vapid::new(&B64.encode([1; 23]), "mailto:a@b.c").is_err());
        // A scalar a byte short, as some tools write one with a leading zero.
        let short = Vapid::new(&B64.encode([7; 31]), "mailto:a@b.c").unwrap();
        assert_eq!(short.scalar[0], 0);
        assert_eq!(&short.scalar[1..], &[7; 31]);
        assert!(Vapid::new("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw", "a@b.c").is_err());
    }

    fn browser(endpoint: &str) -> Value {
        json!({"endpoint": endpoint, "expirationTime": null, "keys": {
            "p256dh": "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4",
            "auth": "BTBZMqHH6r4Tts7J_aSIgg"}})
    }

    #[test]
    fn subscriptions_must_be_https_unless_loopback_is_allowed() {
        let known = PushServices::new("", false);
        let local = PushServices::new("", true);
        let fcm = "https://fcm.googleapis.com/fcm/send/abc";
        assert!(Subscription::from_browser(&browser(fcm), &known).is_ok());
        for ok in [
            "https://updates.push.services.mozilla.com/wpush/v2/x",
            "https://web.push.apple.com/QGp",
            "https://wns2-par02p.notify.windows.com/w/?token=x",
        ] {
            assert!(known.allow(ok), "{ok}");
        }
        for bad in [
            "https://attacker.example/collect",
            "https://fcm.googleapis.com.attacker.example/x",
            "https://evilpush.apple.com/x",
            "http://fcm.googleapis.com/fcm/send/abc",
            "https://u:p@fcm.googleapis.com/1",
        ] {
            assert!(!known.allow(bad), "{bad}");
        }
        assert!(
            PushServices::new(" push.example.org, .corp.example ", false)
                .allow("https://a.corp.example/p")
        );
        assert!(Subscription::from_browser(&browser("http://127.0.0.1:9/p"), &known).is_err());
        assert!(Subscription::from_browser(&browser("http://127.0.0.1:9/p"), &local).is_ok());
        assert!(Subscription::from_browser(&browser("http://10.0.0.1:9/p"), &local).is_err());
        let mut bad = browser("https://fcm.googleapis.com/wp/1");
        bad["keys"]["auth"] = json!("AAAA");
        assert!(Subscription::from_browser(&bad, &PushServices::new("", false)).is_err());
        bad = browser("https://fcm.googleapis.com/wp/1");
        bad["keys"]["p256dh"] = json!("BAAA");
        assert!(Subscription::from_browser(&bad, &PushServices::new("", false)).is_err());
    }

    /// The request for `event` of `q` to a browser's subscription, with a
    /// made-up body and token (sealing them is WebCrypto's).
    fn push(event: Event, q: &Question) -> Outgoing {
        let sub = Subscription::from_browser(
            &browser("https://fcm.googleapis.com/wp/1"),
            &PushServices::new("", false),
        )
        .unwrap();
        let sealed = Sealed {
            body: record(&message(event, q)).unwrap(),
            authorization: "vapid t=x, k=y".into(),
        };
        request(&sub, q, &sealed)
    }

    #[test]
    fn open_and_close_share_a_topic_and_carry_the_headers() {
        let q = question();
        let open = push(Event::Open, &q);
        let close = push(Event::Close, &q);
        let header = |o: &Outgoing, name: &str| {
            o.headers
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.clone())
                .unwrap()
        };
        assert_eq!(header(&open, "topic"), header(&close, "topic"));
        assert_eq!(header(&open, "topic").len(), 32);
        assert_eq!(header(&open, "urgency"), "high");
        assert_eq!(header(&open, "ttl"), TTL_S.to_string());
        assert_eq!(header(&open, "content-encoding"), "aes128gcm");
        assert_eq!(open.url, "https://fcm.googleapis.com/wp/1");
        assert_eq!(header(&open, "authorization"), "vapid t=x, k=y");
        let m: Value = serde_json::from_str(&message(Event::Open, &q)).unwrap();
        assert_eq!(m["title"], "Codex needs your permission");
        assert_eq!(m["tag"], "question-q_1");
        assert_eq!(m["takes"], Value::Null, "Codex takes nothing from afar");
    }

    #[test]
    fn an_open_permission_that_takes_a_decision_says_so_with_its_digest() {
        let mut q = question();
        q.cli = Cli::ClaudeCode;
        q.digest = Some("ab".repeat(32));
        q.settle_afar(Some(Afar::Decision));
        let open: Value = serde_json::from_str(&message(Event::Open, &q)).unwrap();
        assert_eq!(open["takes"], "decision");
        assert_eq!(open["digest"], "ab".repeat(32));
        // A close offers nothing to act on.
        let close: Value = serde_json::from_str(&message(Event::Close, &q)).unwrap();
        assert_eq!(close["takes"], Value::Null);
        assert_eq!(close["digest"], Value::Null);
    }

    #[test]
    fn a_sealed_question_rings_with_its_summary_sealed_and_no_word_of_its_own() {
        let mut q = question();
        q.task_name = "deploy".into();
        q.text = String::new();
        q.sealed = true;
        q.session = "s-7".into();
        q.open_seq = 12;
        // The longest summary there is, sealed: still one push.
        let sealed = format!(
            "s1.1.AAAAAAAAAAAAAAAA.{}",
            "B".repeat(
                needs_you_core::sealed::max_sealed_chars(needs_you_core::sealed::MAX_SUMMARY_BYTES)
                    - 30
            )
        );
        q.summary = Some(sealed.clone());
        q.session = "s".repeat(200);
        let open: Value = serde_json::from_str(&message(Event::Open, &q)).unwrap();
        assert_eq!(open["sealed"], sealed.as_str());
        assert_eq!(open["task"], "deploy");
        assert_eq!(
            (
                open["open_seq"].as_u64(),
                open["session"].as_str().map(str::len)
            ),
            (Some(12), Some(200))
        );
        assert_eq!(open["body"], "deploy: open needs-you to see it");
        assert!(message(Event::Open, &q).len() <= MAX_MESSAGE_BYTES);
        // A close carries no summary.
        let close: Value = serde_json::from_str(&message(Event::Close, &q)).unwrap();
        assert_eq!(close["sealed"], Value::Null);

        // A task whose name is sealed: named by none of its words, its name
        // carried sealed for the service worker, the longest still one push.
        let name = format!(
            "s1.1.AAAAAAAAAAAAAAAA.{}",
            "C".repeat(
                // A name of a hundred characters, the most, of four bytes each.
                needs_you_core::sealed::max_sealed_chars(100 * 4) - 30
            )
        );
        q.task_name = String::new();
        q.task_id = "tsk_1".into();
        q.task_sealed_name = Some(name.clone());
        let open: Value = serde_json::from_str(&message(Event::Open, &q)).unwrap();
        assert_eq!(
            (&open["task_sealed"], &open["task_id"], &open["task"]),
            (
                &Value::from(name),
                &Value::from("tsk_1"),
                &Value::from("A task")
            )
        );
        assert_eq!(open["body"], "A task: open needs-you to see it");
        assert!(message(Event::Open, &q).len() <= MAX_MESSAGE_BYTES);
    }

    #[test]
    fn a_message_fits_one_push_whatever_its_characters_weigh() {
        // Four bytes a character, and six once escaped: both far over 4 KB
        // at the character limits.
        for heavy in ["\u{1F680}", "\u{1b}"] {
            let mut q = question();
            q.task_name = "\u{1F680}".repeat(100);
            q.text = heavy.repeat(2000);
            q.options = vec![QuestionOption {
                label: heavy.repeat(400),
                description: None,
            }];
            let m = message(Event::Open, &q);
            assert!(m.len() <= MAX_MESSAGE_BYTES, "{} bytes", m.len());
            let text = serde_json::from_str::<Value>(&m).unwrap()["body"]
                .as_str()
                .unwrap()
                .to_owned();
            let (question, options) = text.split_once('\n').unwrap();
            assert!(
                question.contains(heavy),
                "some of the question is kept: {question}"
            );
            assert!(options.contains(heavy), "and of its options");
        }
        // A light text is not cut below the character limit.
        let mut q = question();
        q.text = "a".repeat(2000);
        let m: Value = serde_json::from_str(&message(Event::Open, &q)).unwrap();
        assert!(m["body"]
            .as_str()
            .unwrap()
            .contains(&"a".repeat(MAX_TEXT_CHARS - 1)));
    }
}
