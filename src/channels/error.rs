//! What goes wrong with a channel, by whose it is to fix: [`Refused`], what
//! an owner or a browser sent (a channel's settings, a push subscription) or
//! a secret of the Worker's, refused with why (a 400, or a line in the log);
//! [`Failed`], a delivery that could not be made or sent, kept with its
//! attempt. Neither ever holds a secret's value.

use std::fmt;

/// Settings, a subscription or a secret refused: why, for whoever sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

/// A delivery not made or not sent: why, recorded with the attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed(pub String);

macro_rules! reason {
    ($t:ident) => {
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $t {
            fn from(why: String) -> $t {
                $t(why)
            }
        }

        impl From<&str> for $t {
            fn from(why: &str) -> $t {
                $t(why.to_owned())
            }
        }
    };
}

reason!(Refused);
reason!(Failed);

/// A delivery whose channel or secret was refused cannot be made.
impl From<Refused> for Failed {
    fn from(r: Refused) -> Failed {
        Failed(r.0)
    }
}
