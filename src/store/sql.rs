//! What every statement is made with: the database, its values bound (text
//! and numbers, numbers as f64: D1 rejects BigInt, and milliseconds and
//! `seq` stay exact up to 2^53), a statement prepared, the rows it changed,
//! a flag column read, and the four values every statement of a report's
//! batch binds first.

use wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement, D1Result, Env, Result};

pub fn db(env: &Env) -> Result<D1Database> {
    env.d1("DB")
}

pub fn s(v: &str) -> JsValue {
    JsValue::from_str(v)
}

pub fn n(v: f64) -> JsValue {
    JsValue::from_f64(v)
}

pub fn opt_n(v: Option<f64>) -> JsValue {
    v.map_or(JsValue::NULL, JsValue::from_f64)
}

pub fn stmt(db: &D1Database, sql: &str, args: &[JsValue]) -> Result<D1PreparedStatement> {
    db.prepare(sql).bind(args)
}

/// Rows a statement changed.
pub fn changes(r: &D1Result) -> Result<usize> {
    Ok(r.meta()?.and_then(|m| m.changes).unwrap_or(0))
}

/// The four values that every statement of a report's batch binds first:
/// ?1 the credential's hash, ?2 the session, ?3 this request's id, ?4 now.
pub struct ReportKeys<'a> {
    pub credential_hash: &'a str,
    pub session: &'a str,
    pub request_id: &'a str,
    pub now: f64,
}

impl ReportKeys<'_> {
    /// ?1 to ?4, then `extra` from ?5 on.
    pub fn bind(&self, extra: &[JsValue]) -> Vec<JsValue> {
        let mut args = vec![
            s(self.credential_hash),
            s(self.session),
            s(self.request_id),
            n(self.now),
        ];
        args.extend_from_slice(extra);
        args
    }
}

/// A column that SQLite keeps as 0 or 1 (or JSON's true and false), read as
/// a bool; anything else reads as false.
pub fn flag<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<bool, D::Error> {
    use serde::Deserialize;
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::Bool(b) => b,
        serde_json::Value::Number(n) => n.as_i64().unwrap_or(0) != 0,
        _ => false,
    })
}
