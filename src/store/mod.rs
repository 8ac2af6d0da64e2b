//! Every D1 statement the Worker runs, one module per table group.
//!
//! Numbers are bound as f64 (D1 rejects BigInt; milliseconds and `seq` stay exact
//! up to 2^53) and read back as i64. Each module returns plain structs; no SQL
//! leaves this folder.

mod accounts;
mod channels;
mod deliveries;
mod questions;
mod reports;

pub use accounts::*;
pub use channels::*;
pub use deliveries::*;
pub use questions::*;
pub use reports::*;

use wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement, Env, Result};

pub(super) fn db(env: &Env) -> Result<D1Database> {
    env.d1("DB")
}

pub(super) fn s(v: &str) -> JsValue {
    JsValue::from_str(v)
}

pub(super) fn n(v: f64) -> JsValue {
    JsValue::from_f64(v)
}

pub(super) fn opt_n(v: Option<f64>) -> JsValue {
    v.map_or(JsValue::NULL, JsValue::from_f64)
}

pub(super) fn stmt(db: &D1Database, sql: &str, args: &[JsValue]) -> Result<D1PreparedStatement> {
    db.prepare(sql).bind(args)
}
