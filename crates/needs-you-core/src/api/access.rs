//! Who may do what, and what a creation answers, once: a task credential's
//! identity, a device's [`Rights`], new owners, tokens, tasks, pairings and
//! devices, and what a revocation took with it.

use serde::{Deserialize, Serialize};

/// `GET /v1/task`: who a task credential is, for the reporter's `doctor`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskIdentity {
    pub task_id: String,
    pub name: String,
}

wire_enum! {
    /// What a device may do beyond reading its owner's list and tasks, chosen
    /// when it is paired (a device's token never gains one later).
    Right {
        /// Create and revoke tasks: what `needs-you run` does.
        Tasks = "tasks",
        /// Act on questions: answer, allow, deny, choose, dismiss.
        Answer = "answer",
        /// Make pairing codes, which grant at most these same rights.
        Pair = "pair",
        /// See the agent's terminal (Show terminal), which may hold what the
        /// agent printed: secrets too.
        Screen = "screen",
    }
}

/// A set of [`Right`]s, in their listed order, each once.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Vec<Right>", into = "Vec<Right>")]
pub struct Rights(Vec<Right>);

impl Rights {
    /// Every right: the owner's token, and a page's pairing unless narrowed.
    pub fn all() -> Rights {
        Rights(Right::ALL.to_vec())
    }

    pub fn has(&self, r: Right) -> bool {
        self.0.contains(&r)
    }

    /// The rights both sets hold.
    pub fn and(&self, other: &Rights) -> Rights {
        Rights::from(
            self.0
                .iter()
                .copied()
                .filter(|r| other.has(*r))
                .collect::<Vec<_>>(),
        )
    }

    pub fn iter(&self) -> impl Iterator<Item = Right> + '_ {
        self.0.iter().copied()
    }

    /// For people and command lines: `tasks,answer`.
    pub fn to_list(&self) -> String {
        self.0
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// From [`Rights::to_list`]; unknown names are dropped (a right an older
    /// Worker does not know grants nothing).
    pub fn from_list(list: &str) -> Rights {
        Rights::from(
            list.split(',')
                .filter_map(|r| Right::parse(r.trim()))
                .collect::<Vec<_>>(),
        )
    }

    /// As D1 keeps it: one bit per right, in [`Right::ALL`]'s order, so that
    /// SQL can narrow a set with `&`.
    pub fn bits(&self) -> u32 {
        Right::ALL
            .iter()
            .enumerate()
            .filter(|(_, r)| self.has(**r))
            .fold(0, |bits, (i, _)| bits | 1 << i)
    }

    /// From [`Rights::bits`]; bits of no known right grant nothing.
    pub fn from_bits(bits: u32) -> Rights {
        Rights(
            Right::ALL
                .iter()
                .enumerate()
                .filter(|(i, _)| bits & 1 << i != 0)
                .map(|(_, r)| *r)
                .collect(),
        )
    }
}

impl From<Vec<Right>> for Rights {
    fn from(v: Vec<Right>) -> Rights {
        Rights(
            Right::ALL
                .iter()
                .copied()
                .filter(|r| v.contains(r))
                .collect(),
        )
    }
}

impl From<Rights> for Vec<Right> {
    fn from(r: Rights) -> Vec<Right> {
        r.0
    }
}

/// `POST /v1/owners`: the token, shown once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewOwner {
    pub owner_id: String,
    pub name: String,
    pub token: String,
}

/// `POST /v1/owners/me/token`: the new token, shown once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewToken {
    pub owner_id: String,
    pub token: String,
}

/// `POST /v1/tasks`: the credential, shown once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewTask {
    pub task_id: String,
    pub name: String,
    pub credential: String,
    pub expires_at: Option<i64>,
}

/// `POST /v1/pairings`: a one-time code and the link that carries it, and
/// the most a device paired with it may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pairing {
    pub code: String,
    pub url: String,
    pub expires_at: i64,
    pub rights: Rights,
    /// The code's first half: `GET /v1/pairings/{id}` says whether a device
    /// used it, and with what key.
    #[serde(default)]
    pub pairing_id: String,
}

/// `GET /v1/pairings/{id}`: whether the code was used, and by which device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairingState {
    pub pairing_id: String,
    pub expires_at: i64,
    pub device: Option<PairedDevice>,
}

/// The device a pairing code made, with the key it says is its own and the
/// proof of that key (`crate::signed`), as it sent them: the pairer checks
/// the proof with the secret only it and the device know.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairedDevice {
    pub device_id: String,
    pub name: String,
    pub rights: Rights,
    pub key: Option<String>,
    /// Its seal key, which the content key is wrapped to
    /// (`crate::sealed`); the proof covers both keys.
    #[serde(default)]
    pub seal_key: Option<String>,
    /// What it asked to be able to do, which the proof covers too.
    #[serde(default)]
    pub asked: Option<Rights>,
    pub proof: Option<String>,
}

/// `POST /v1/pairings/check`: whose a code is and what it grants, before it
/// is used, so that a page asks "Pair this browser with Ana?".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairingCheck {
    pub owner_name: String,
    pub expires_at: i64,
    pub rights: Rights,
}

/// `POST /v1/devices`: the device's credential, shown once, and what it may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewDevice {
    pub device_id: String,
    pub name: String,
    pub token: String,
    pub rights: Rights,
}

/// A paired device, in `GET /v1/devices`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Device {
    pub device_id: String,
    pub name: String,
    pub created_at: i64,
    /// Whether it has a Web Push subscription.
    pub push: bool,
    pub rights: Rights,
    /// The device whose code paired it, or null for the owner's.
    pub paired_by: Option<String>,
    /// Its signing key, as it sent it at pairing (`crate::signed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Its seal key, as it sent it at pairing (`crate::sealed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seal_key: Option<String>,
    /// The certificate the owner's key signed for it, once its pairer sent
    /// it: a `signed::Envelope`, kept as JSON here (the signed formats build
    /// on this module's rights, not the other way round).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<serde_json::Value>,
    /// The owner's content key wrapped to its seal key, one `w1.…` text
    /// per version its pairer gave it (`crate::sealed`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content_keys: Vec<String>,
}

/// `GET /v1/devices`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Devices {
    pub devices: Vec<Device>,
}

/// `DELETE /v1/devices/{id}`: what went with it, the devices it paired (and
/// theirs) and the tasks any of them created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revoked {
    pub device_id: String,
    pub revoked: bool,
    pub devices: Vec<String>,
    pub tasks: Vec<String>,
}
