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
//! Everything here is pure; the randomness (ephemeral key, salt) and the clock
//! come in as arguments, so the RFC 8291 example is a unit test.

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes128Gcm, Nonce};
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use hkdf::Hkdf;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::{PublicKey, SecretKey};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use needs_you_core::truncate_chars;

use super::Outgoing;
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
        if !super::is_http_url(endpoint) || endpoint.len() > 1024 {
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
    pub fn from_browser(v: &Value, services: &PushServices) -> Result<Subscription, String> {
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

    /// The browser's public key and auth secret, checked.
    fn keys(&self) -> Result<(PublicKey, Vec<u8>), String> {
        let p256dh = decode(&self.p256dh).ok_or("`keys.p256dh` is not base64url")?;
        let public = PublicKey::from_sec1_bytes(&p256dh)
            .ok()
            .filter(|_| p256dh.len() == 65)
            .ok_or("`keys.p256dh` is not an uncompressed P-256 public key")?;
        let auth = decode(&self.auth)
            .filter(|a| a.len() == 16)
            .ok_or("`keys.auth` must be 16 bytes, base64url")?;
        Ok((public, auth))
    }
}

/// The Worker's VAPID identity: its signing key and a contact for the push
/// services (`mailto:` or `https:`).
pub struct Vapid {
    key: SigningKey,
    subject: String,
}

impl Vapid {
    /// From the secrets: `VAPID_PRIVATE_KEY` (the 32-byte scalar, base64url)
    /// and `VAPID_SUBJECT`.
    pub fn new(private_key: &str, subject: &str) -> Result<Vapid, String> {
        let key = decode(private_key.trim())
            .and_then(|d| SigningKey::from_slice(&d).ok())
            .ok_or("VAPID_PRIVATE_KEY is not a P-256 private key (32 bytes, base64url)")?;
        let subject = subject.trim();
        if !(subject.starts_with("mailto:") || subject.starts_with("https://")) {
            return Err("VAPID_SUBJECT must be a mailto: or https:// address".into());
        }
        Ok(Vapid {
            key,
            subject: subject.to_owned(),
        })
    }

    /// The public key, uncompressed, base64url: the page's `applicationServerKey`.
    pub fn public_key(&self) -> String {
        B64.encode(self.key.verifying_key().to_encoded_point(false).as_bytes())
    }

    /// The `Authorization` header for a request to `endpoint` at `now_s`.
    pub fn authorization(&self, endpoint: &str, now_s: u64) -> String {
        let header = B64.encode(br#"{"typ":"JWT","alg":"ES256"}"#);
        let claims = json!({
            "aud": crate::urls::origin(endpoint),
            "exp": now_s + JWT_LIFETIME_S,
            "sub": self.subject,
        });
        let input = format!("{header}.{}", B64.encode(claims.to_string()));
        // ES256 in a JWT is r || s, 64 bytes: what `to_bytes` gives.
        let sig: Signature = self.key.sign(input.as_bytes());
        format!(
            "vapid t={input}.{}, k={}",
            B64.encode(sig.to_bytes()),
            self.public_key()
        )
    }
}

/// What the Worker needs to build one push: its identity, the time, and
/// fresh randomness for the encryption.
pub struct Sender<'a> {
    pub vapid: &'a Vapid,
    pub now_s: u64,
    /// A fresh ephemeral key for this message only.
    pub ephemeral: &'a SecretKey,
    /// 16 fresh random bytes.
    pub salt: [u8; 16],
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

/// The request that tells `sub` about `event` of `q`.
pub fn request(
    sub: &Subscription,
    event: Event,
    q: &Question,
    s: &Sender<'_>,
) -> Result<Outgoing, String> {
    let (ua_public, auth) = sub.keys()?;
    let plaintext = message(event, q);
    let body = encrypt(
        plaintext.as_bytes(),
        &ua_public,
        &auth,
        s.ephemeral,
        &s.salt,
    )?;
    Ok(Outgoing {
        method: "POST",
        url: sub.endpoint.clone(),
        headers: vec![
            (
                "authorization",
                s.vapid.authorization(&sub.endpoint, s.now_s),
            ),
            ("content-encoding", "aes128gcm".to_owned()),
            ("content-type", "application/octet-stream".to_owned()),
            ("ttl", TTL_S.to_string()),
            ("urgency", "high".to_owned()),
            ("topic", topic(&q.question_id)),
        ],
        body: Some(body),
    })
}

/// RFC 8291: `plaintext` encrypted for the browser whose key is `ua_public`
/// and whose auth secret is `auth`, with the sender's ephemeral key `as_secret`
/// and `salt`. The result is the whole body: the RFC 8188 header (salt, record
/// size, the sender's public key) and one record.
pub fn encrypt(
    plaintext: &[u8],
    ua_public: &PublicKey,
    auth: &[u8],
    as_secret: &SecretKey,
    salt: &[u8; 16],
) -> Result<Vec<u8>, String> {
    if plaintext.len() > MAX_MESSAGE_BYTES {
        return Err("the message is too long for a push".into());
    }
    let ua_bytes = ua_public.to_encoded_point(false);
    let as_public = as_secret.public_key().to_encoded_point(false);
    let shared = p256::ecdh::diffie_hellman(as_secret.to_nonzero_scalar(), ua_public.as_affine());

    // IKM = HKDF(salt = auth, ikm = ECDH secret, info = "WebPush: info" 0 ua as).
    let mut key_info = b"WebPush: info\0".to_vec();
    key_info.extend_from_slice(ua_bytes.as_bytes());
    key_info.extend_from_slice(as_public.as_bytes());
    let mut ikm = [0u8; 32];
    Hkdf::<Sha256>::new(Some(auth), shared.raw_secret_bytes())
        .expand(&key_info, &mut ikm)
        .map_err(|_| "HKDF failed")?;

    // The content key and nonce, from the salt (RFC 8188).
    let hk = Hkdf::<Sha256>::new(Some(salt), &ikm);
    let mut cek = [0u8; 16];
    let mut nonce = [0u8; 12];
    hk.expand(b"Content-Encoding: aes128gcm\0", &mut cek)
        .and_then(|_| hk.expand(b"Content-Encoding: nonce\0", &mut nonce))
        .map_err(|_| "HKDF failed")?;

    // One record, so it is the last: its padding delimiter is 2.
    let mut record = plaintext.to_vec();
    record.push(2);
    let cipher = Aes128Gcm::new_from_slice(&cek).map_err(|_| "bad key length")?;
    let sealed = cipher
        .encrypt(Nonce::from_slice(&nonce), record.as_slice())
        .map_err(|_| "encryption failed")?;

    let mut body = Vec::with_capacity(86 + sealed.len());
    body.extend_from_slice(salt);
    body.extend_from_slice(&RECORD_SIZE.to_be_bytes());
    body.push(as_public.as_bytes().len() as u8);
    body.extend_from_slice(as_public.as_bytes());
    body.extend_from_slice(&sealed);
    Ok(body)
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

    /// RFC 8291, Appendix A: fixed keys and salt give the published body.
    #[test]
    fn the_rfc_8291_example_byte_for_byte() {
        let as_secret =
            SecretKey::from_slice(&d("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw")).unwrap();
        assert_eq!(
            B64.encode(as_secret.public_key().to_encoded_point(false).as_bytes()),
            "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
        );
        let ua_public = PublicKey::from_sec1_bytes(&d(
            "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4",
        ))
        .unwrap();
        let salt: [u8; 16] = d("DGv6ra1nlYgDCS1FRnbzlw").try_into().unwrap();
        let body = encrypt(
            b"When I grow up, I want to be a watermelon",
            &ua_public,
            &d("BTBZMqHH6r4Tts7J_aSIgg"),
            &as_secret,
            &salt,
        )
        .unwrap();
        assert_eq!(
            B64.encode(body),
            "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
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
        let auth = vapid().authorization("https://push.example.net:8443/wp/abc?x=1", 1_000);
        let (t, k) = auth
            .strip_prefix("vapid t=")
            .unwrap()
            .split_once(", k=")
            .unwrap();
        assert_eq!(k, vapid().public_key());
        let parts: Vec<&str> = t.split('.').collect();
        assert_eq!(parts.len(), 3);
        let claims: Value = serde_json::from_slice(&d(parts[1])).unwrap();
        assert_eq!(claims["aud"], "https://push.example.net:8443");
        assert_eq!(claims["sub"], "mailto:ops@example.com");
        let exp = claims["exp"].as_u64().unwrap();
        assert!(exp > 1_000 && exp <= 1_000 + 24 * 3600);
        assert_eq!(d(parts[2]).len(), 64);
    }

    #[test]
    fn vapid_keys_and_subjects_are_checked() {
        assert!(Vapid::new("short", "mailto:a@b.c").is_err());
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
    /// fixed key and salt.
    fn push(event: Event, q: &Question) -> Result<Outgoing, String> {
        let sub = Subscription::from_browser(
            &browser("https://fcm.googleapis.com/wp/1"),
            &PushServices::new("", false),
        )
        .unwrap();
        let key = SecretKey::from_slice(&[7u8; 32]).unwrap();
        let v = vapid();
        let sender = Sender {
            vapid: &v,
            now_s: 1_000,
            ephemeral: &key,
            salt: [1; 16],
        };
        request(&sub, event, q, &sender)
    }

    #[test]
    fn open_and_close_share_a_topic_and_carry_the_headers() {
        let q = question();
        let open = push(Event::Open, &q).unwrap();
        let close = push(Event::Close, &q).unwrap();
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
        assert!(push(Event::Open, &q).unwrap().body.unwrap().len() <= 4096);
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
        assert!(push(Event::Open, &q).unwrap().body.unwrap().len() <= 4096);
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
            let body = push(Event::Open, &q).unwrap().body.unwrap();
            assert!(body.len() <= 4096, "{} bytes", body.len());
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
