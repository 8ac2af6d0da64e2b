//! The runtime's WebCrypto (`crypto.subtle`): the P-256 and AES-GCM that Web
//! Push needs, done by the platform rather than compiled into the wasm (the
//! curve arithmetic and the cipher were 11 KB of it gzipped). Every call is a
//! promise; a failure comes back as a reason, which a delivery records.
//!
//! Only the primitives are here; what they are put together into (RFC 8291's
//! keys and record, RFC 8292's token) is `webpush`'s, and pure.

use super::error::Failed;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use wasm_bindgen::prelude::*;
use worker::js_sys::{Promise, Reflect, Uint8Array, JSON};
use worker::wasm_bindgen_futures::JsFuture;

// Each declared `catch`: should the runtime throw rather than reject, the
// call is an `Err` like a rejection, never an abort of the whole instance.
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["crypto", "subtle"], js_name = importKey)]
    fn import_key(
        format: &str,
        key: &JsValue,
        algorithm: &JsValue,
        extractable: bool,
        usages: &JsValue,
    ) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["crypto", "subtle"], js_name = exportKey)]
    fn export_key(format: &str, key: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["crypto", "subtle"], js_name = generateKey)]
    fn generate_key(
        algorithm: &JsValue,
        extractable: bool,
        usages: &JsValue,
    ) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["crypto", "subtle"], js_name = deriveBits)]
    fn derive_bits(algorithm: &JsValue, key: &JsValue, length: u32) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["crypto", "subtle"])]
    fn encrypt(algorithm: &JsValue, key: &JsValue, data: &[u8]) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["crypto", "subtle"])]
    fn sign(algorithm: &JsValue, key: &JsValue, data: &[u8]) -> Result<Promise, JsValue>;
}

const ECDH: &str = r#"{"name":"ECDH","namedCurve":"P-256"}"#;
const ECDSA: &str = r#"{"name":"ECDSA","namedCurve":"P-256"}"#;
const ES256: &str = r#"{"name":"ECDSA","hash":"SHA-256"}"#;
const AES_GCM: &str = r#"{"name":"AES-GCM"}"#;

/// A key made in WebCrypto, held for the calls that use it.
pub struct Key(JsValue);

/// A JS value from JSON written here (algorithms, usages).
fn js(json: &str) -> JsValue {
    JSON::parse(json).unwrap_or(JsValue::NULL)
}

/// `json`'s object with `name` set to `value`.
fn with(json: &str, name: &str, value: &JsValue) -> JsValue {
    let o = js(json);
    let _ = Reflect::set(&o, &JsValue::from_str(name), value);
    o
}

fn array(bytes: &[u8]) -> JsValue {
    Uint8Array::from(bytes).into()
}

/// The promise's value, or why the call failed, thrown or rejected.
async fn call(what: &str, p: Result<Promise, JsValue>) -> Result<JsValue, Failed> {
    let failed = |e: JsValue| {
        let why = Reflect::get(&e, &JsValue::from_str("message"))
            .ok()
            .and_then(|m| m.as_string())
            .unwrap_or_default();
        format!("WebCrypto could not {what}: {why}")
    };
    Ok(JsFuture::from(p.map_err(failed)?).await.map_err(failed)?)
}

async fn bytes(what: &str, p: Result<Promise, JsValue>) -> Result<Vec<u8>, Failed> {
    Ok(Uint8Array::new(&call(what, p).await?).to_vec())
}

/// A P-256 public key, an uncompressed point: refused unless it is on the curve.
pub async fn ecdh_public(point: &[u8]) -> Result<Key, Failed> {
    let p = import_key("raw", &array(point), &js(ECDH), false, &js("[]"));
    call("read the P-256 public key", p).await.map(Key)
}

/// A fresh P-256 key agreed with `peer`: the shared secret (32 bytes) and the
/// fresh key's public point (65 bytes). Its private half never leaves WebCrypto.
pub async fn agree(peer: &Key) -> Result<(Vec<u8>, Vec<u8>), Failed> {
    let what = "make an ephemeral P-256 key";
    let pair = call(
        what,
        generate_key(&js(ECDH), false, &js(r#"["deriveBits"]"#)),
    )
    .await?;
    let half = |name: &str| Reflect::get(&pair, &JsValue::from_str(name)).map_err(|_| what);
    let (public, private) = (half("publicKey")?, half("privateKey")?);
    let point = bytes("export the ephemeral key", export_key("raw", &public)).await?;
    // The body's header gives the key's length in one byte.
    if point.len() != 65 {
        return Err("WebCrypto's ephemeral key is not an uncompressed P-256 point".into());
    }
    let algorithm = with(ECDH, "public", &peer.0);
    let shared = bytes(
        "agree a P-256 secret",
        derive_bits(&algorithm, &private, 256),
    )
    .await?;
    Ok((shared, point))
}

/// `data` sealed with AES-128-GCM under `key` and `nonce`: the ciphertext and
/// its 16-byte tag.
pub async fn aes128gcm(key: &[u8; 16], nonce: &[u8; 12], data: &[u8]) -> Result<Vec<u8>, Failed> {
    let p = import_key(
        "raw",
        &array(key),
        &js(AES_GCM),
        false,
        &js(r#"["encrypt"]"#),
    );
    let key = call("read the content key", p).await?;
    let algorithm = with(AES_GCM, "iv", &array(nonce));
    bytes("encrypt the push", encrypt(&algorithm, &key, data)).await
}

/// An ES256 signing key from its PKCS #8 form, with its public point
/// (65 bytes), which WebCrypto computes: the key's JWK names it.
pub async fn es256_key(pkcs8: &[u8]) -> Result<(Key, Vec<u8>), Failed> {
    let p = import_key("pkcs8", &array(pkcs8), &js(ECDSA), true, &js(r#"["sign"]"#));
    let key = call("read the VAPID key", p).await?;
    let jwk = call("export the VAPID key", export_key("jwk", &key)).await?;
    let mut point = vec![4u8];
    for c in ["x", "y"] {
        let coordinate = Reflect::get(&jwk, &JsValue::from_str(c))
            .ok()
            .and_then(|v| v.as_string())
            .and_then(|s| B64.decode(s).ok())
            .filter(|b| b.len() == 32)
            .ok_or("the VAPID key's JWK has no point")?;
        point.extend_from_slice(&coordinate);
    }
    Ok((Key(key), point))
}

/// ES256 over `data`: `r || s`, 64 bytes, as a JWT carries it.
pub async fn es256(key: &Key, data: &[u8]) -> Result<Vec<u8>, Failed> {
    bytes("sign the VAPID token", sign(&js(ES256), &key.0, data)).await
}
