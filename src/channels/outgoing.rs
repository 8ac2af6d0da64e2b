//! What every channel's request is made of: the request itself, as data
//! ([`Outgoing`]), and the checks of a configuration the channels share.

use super::error::Refused;
use serde_json::{Map, Value};

/// A request to send, as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    pub method: &'static str,
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Option<Vec<u8>>,
}

/// A value that can go into an HTTP header as it is: visible ASCII and inner
/// spaces. A token with a line break or a non-ASCII character would make every
/// delivery fail, so it is refused when it is set.
pub fn is_header_value(v: &str) -> bool {
    !v.is_empty() && v.trim() == v && v.bytes().all(|b| (0x20..0x7f).contains(&b))
}

/// Whether a channel's owner turned its words on (`words: true`): off when
/// left out, since the channel's server is a third party's.
pub fn words_of(c: &Map<String, Value>) -> Result<bool, Refused> {
    match c.get("words") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err("`words` must be true or false".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_are_printable_ascii() {
        assert!(is_header_value("tk_0123 abc"));
        for bad in ["", " tk", "tk\r\nX-Evil: 1", "tk\t", "tökén"] {
            assert!(!is_header_value(bad), "{bad:?}");
        }
    }
}
