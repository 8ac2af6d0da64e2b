//! This machine's content key, and a report's words sealed under it before
//! they leave the machine ([`needs_you_core::words`]).
//!
//! The hook's foreground queues a report as it makes it; the detached
//! sender, off the agent's path, seals it once before its first try
//! ([`sealed_body`]). A machine that names a content key never sends a word
//! in the clear: a key it cannot read, or no owner pinned to seal for,
//! keeps the report back (in the log) rather than send it unsealed.

use std::path::PathBuf;

use needs_you_core::classify::card;
use needs_you_core::report::Sealed;
use needs_you_core::sealed::{field, open_scope};
use needs_you_core::words;
use needs_you_core::Report;

use needs_you_trust::sealing::{self, ContentKey, ContentKeys};

use crate::error::Error;
use crate::owner::{self, KEYS_VAR};

/// Whether this machine seals what it reports: it names a content key
/// ([`KEYS_VAR`]), readable or not (then nothing is sent).
pub fn seals_here() -> bool {
    named_key().is_some()
}

/// The file [`KEYS_VAR`] names, if it names one.
fn named_key() -> Option<std::ffi::OsString> {
    std::env::var_os(KEYS_VAR).filter(|p| !p.is_empty())
}

/// The owner's content key on this machine, from the file
/// [`KEYS_VAR`] names
/// (`needs-you run` sets it from the login): read at each use, so that a
/// version made since is the one that seals. A file others can read is
/// refused, as the login is.
pub fn held_keys() -> Result<Option<ContentKeys>, Error> {
    let Some(path) = named_key() else {
        return Ok(None);
    };
    // What goes wrong is said without the file's path: the reason travels
    // to the server, which has no business knowing this machine's folders.
    let unreadable =
        |why: &str| Error::Setup(format!("this machine's content key ({}) {why}", KEYS_VAR));
    let path = PathBuf::from(path);
    let meta = std::fs::metadata(&path).map_err(|_| unreadable("cannot be read"))?;
    if std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o077 != 0 {
        return Err(unreadable("can be read by others: make it 0600"));
    }
    let text = std::fs::read_to_string(&path).map_err(|_| unreadable("cannot be read"))?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|_| unreadable("is not a needs-you content key"))
}

/// What this machine's reports are sealed with: the newest version of the
/// content key it holds, for the owner it pinned; `None` when it names no
/// key (it seals nothing); an error when it names one it cannot seal with,
/// and its reports are then kept back rather than sent readable.
pub fn sealer() -> Result<Option<(ContentKey, String)>, Error> {
    let Some(keys) = held_keys()? else {
        return Ok(None);
    };
    let owner = owner::pinned_owner().ok_or_else(|| {
        Error::Setup(format!(
            "this machine holds a content key ({}) but pins no owner to seal for",
            KEYS_VAR
        ))
    })?;
    let key = keys
        .newest()
        .cloned()
        .ok_or_else(|| Error::Setup("this machine's content key holds no version".into()))?;
    Ok(Some((key, owner)))
}

/// `body`, a queued report, as it is sent: an open that carries its request
/// with the card and the lasting choices built from it ([`card::built`]:
/// the server reads no request), its words sealed on a machine that holds a
/// content key; a close as it is.
pub fn sealed_body(body: Vec<u8>) -> Result<Vec<u8>, Error> {
    let Some((key, owner)) = sealer()? else {
        return Ok(built_in_the_clear(body));
    };
    let report = Report::parse(&body)
        .map_err(|e| Error::State(format!("a queued report does not read: {}", e.message)))?;
    let Some(taken) = words::take(card::built(report)) else {
        return Ok(body);
    };
    let sealed = seal_taken(&key, &owner, taken)?;
    serde_json::to_vec(&sealed).map_err(|e| Error::State(format!("cannot encode a report: {e}")))
}

/// `body` with its card built, on a machine that seals nothing: its text as
/// the server keeps it (a Write's whole content cut to a card's length; a
/// device shows the card it builds from the request, whole). A body that
/// does not read goes as it is, for the server to refuse and say why, and
/// so does one whose built card the server would refuse (a lasting choice's
/// rule longer than it takes): its question is listed all the same, with
/// the hook's words and no lasting choice.
fn built_in_the_clear(body: Vec<u8>) -> Vec<u8> {
    let Ok(
        report @ Report::Open {
            request: Some(_), ..
        },
    ) = Report::parse(&body)
    else {
        return body;
    };
    let mut report = card::built(report);
    if let Report::Open { text, .. } = &mut report {
        *text = needs_you_core::report::listed_text(text);
    }
    match serde_json::to_vec(&report) {
        Ok(built) if Report::parse(&built).is_ok() => built,
        _ => body,
    }
}

/// The wordless report of `taken`, its words sealed for `owner` under `key`.
fn seal_taken(key: &ContentKey, owner: &str, taken: words::Taken) -> Result<Report, Error> {
    let failed = |e: sealing::SealError| Error::Setup(format!("cannot seal a report: {e}"));
    let mut report = taken.wordless;
    let scope = open_scope(report.session(), report.seq());
    // The summary says the card's words; the words go without the card of
    // their request, which every device builds again.
    let summary = taken.words.summary();
    let plain = serde_json::to_vec(&taken.words.without_card()).unwrap_or_default();
    // The request's digest and each lasting choice's id go keyed: in the
    // clear, a server could test a guess of a whole command or rule against
    // them. The relay checks an answer's against its own record, keyed the
    // same (`needs_you_trust::admission`).
    if let Report::Open { takes: Some(t), .. } = &mut report {
        t.digest = key.keyed(owner, &t.digest);
    }
    let mut lasting = Vec::with_capacity(taken.lasting.len());
    for mut offer in taken.lasting {
        offer.id = key.keyed(owner, &offer.id);
        let rule = serde_json::to_vec(&words::rule_words(&offer)).unwrap_or_default();
        offer.rule =
            Some(sealing::seal(key, owner, &offer.id, field::RULE, &rule).map_err(failed)?);
        offer.label = String::new();
        lasting.push(offer);
    }
    let same = key.same(
        owner,
        &[report.session().as_bytes(), b"\n", &plain].concat(),
    );
    let words = sealing::seal(key, owner, &scope, field::QUESTION, &plain).map_err(failed)?;
    let summary =
        sealing::seal(key, owner, &scope, field::SUMMARY, summary.as_bytes()).map_err(failed)?;
    if let Report::Open { sealed, .. } = &mut report {
        *sealed = Some(Box::new(Sealed {
            words,
            same,
            lasting,
            summary: Some(summary),
        }));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use needs_you_core::request::Request;
    use needs_you_core::words::{RuleWords, Words};
    use serde_json::json;

    use super::*;

    fn permission_request() -> Request {
        let Report::Open {
            request: Some(r), ..
        } = permission()
        else {
            panic!("a request")
        };
        *r
    }

    fn permission() -> Report {
        let mut body = json!({"action": "open", "cli": "claude-code", "session": "s1", "seq": 9,
            "kind": "permission", "text": "",
            "terminal": {"kind": "tmux", "host": "box", "cwd": "/srv/hidden-folder", "target": "a:0.1"},
            "takes": "decision",
            "request": {"tool": "Bash", "input": {"command": "curl -H 'token: planted-7f3a' x"},
                        "lasting": [{"type": "addRules", "behavior": "allow", "destination": "localSettings",
                                     "rules": [{"toolName": "Bash", "ruleContent": "curl -H 'token: planted-7f3a':*"}]}]}});
        let request: Request = serde_json::from_value(body["request"].clone()).unwrap();
        body["digest"] = json!(request.digest());
        card::built(Report::from_value(&body).unwrap())
    }

    #[test]
    fn a_report_in_the_clear_goes_with_its_card_and_lasting_choices_within_a_body() {
        use needs_you_core::report::{MAX_SEALED_BODY_BYTES, MAX_TEXT_CHARS};
        let mut body = serde_json::to_value(permission()).unwrap();
        body["text"] = json!("made up by the hook");
        body.as_object_mut().unwrap().remove("lasting");
        let sent = built_in_the_clear(serde_json::to_vec(&body).unwrap());
        let Report::Open { text, lasting, .. } = Report::parse(&sent).unwrap() else {
            panic!()
        };
        assert!(text.starts_with("Claude Code wants to run: curl"), "{text}");
        assert_eq!(lasting.len(), 1, "read from the request's suggestion");

        // A Write of 20 KB: its card is its content, cut as the server
        // keeps it, and the request beside it, whole.
        let input = json!({"file_path": "/w/notes.md", "content": "é\"\t \n".repeat(2_500)});
        let request = Request::new("Write", &input);
        let write = json!({"action": "open", "cli": "claude-code", "session": "s1", "seq": 9,
            "kind": "permission", "text": "x", "takes": "decision", "digest": request.digest(),
            "request": request});
        let sent = built_in_the_clear(serde_json::to_vec(&write).unwrap());
        assert!(sent.len() <= MAX_SEALED_BODY_BYTES, "{} bytes", sent.len());
        let Report::Open { text, request, .. } = Report::parse(&sent).unwrap() else {
            panic!()
        };
        assert!(text.starts_with("Claude Code wants to write /w/notes.md"));
        assert_eq!(
            text.chars().count(),
            MAX_TEXT_CHARS,
            "cut as the server keeps it"
        );
        let request = request.unwrap();
        assert_eq!(request.input, input, "the request goes whole");
        // What a device checks the list's words against.
        assert_eq!(
            card::check_shown(needs_you_core::Kind::Permission, &request, &text),
            Ok(request.digest())
        );

        // A lasting choice whose rule is longer than the server takes: the
        // report goes as the hook made it, without its card.
        let rule = "x".repeat(3 * needs_you_core::report::MAX_DESCRIPTION_CHARS);
        let request: Request =
            serde_json::from_value(json!({"tool": "Bash", "input": {"command": "make"},
            "lasting": [{"type": "addRules", "behavior": "allow", "destination": "localSettings",
                         "rules": [{"toolName": "Bash", "ruleContent": rule}]}]}))
            .unwrap();
        let long = serde_json::to_vec(
            &json!({"action": "open", "cli": "claude-code", "session": "s1",
            "seq": 9, "kind": "permission", "text": "x", "takes": "decision",
            "digest": request.digest(), "request": request}),
        )
        .unwrap();
        assert_eq!(built_in_the_clear(long.clone()), long);
        // A body that does not read goes as it was.
        assert_eq!(built_in_the_clear(b"{".to_vec()), b"{");
    }

    #[test]
    fn a_sealed_report_holds_no_word_and_opens_to_its_words_with_the_key() {
        let keys = ContentKeys::first().unwrap();
        let key = keys.newest().unwrap();
        let taken = words::take(permission()).unwrap();
        let sealed = seal_taken(key, "owner-fp", taken.clone()).unwrap();
        let wire = serde_json::to_vec(&sealed).unwrap();
        let text = String::from_utf8(wire.clone()).unwrap();
        for word in ["planted-7f3a", "hidden-folder", "curl"] {
            assert!(!text.contains(word), "{word} in {text}");
        }
        // The Worker takes it, and keeps what it takes and its digest.
        let Report::Open {
            sealed: Some(s),
            takes,
            ..
        } = Report::parse(&wire).unwrap()
        else {
            panic!("a sealed open")
        };
        // Its digest and its lasting choice's id keyed: no guess of the
        // command or the rule can be tested against them.
        let (plain_digest, plain_id) = match &taken.wordless {
            Report::Open { takes: Some(t), .. } => (t.digest.clone(), taken.lasting[0].id.clone()),
            _ => panic!("an open that takes a decision"),
        };
        assert_eq!(plain_digest, permission_request().digest());
        assert_eq!(takes.unwrap().digest, key.keyed("owner-fp", &plain_digest));
        assert_ne!(s.lasting[0].id, plain_id);
        assert_eq!(s.lasting[0].id, key.keyed("owner-fp", &plain_id));
        assert!(needs_you_core::lasting::is_id(&s.lasting[0].id));
        for plain in [plain_digest.as_str(), &plain_id[5..]] {
            assert!(!text.contains(plain), "{plain} in {text}");
        }
        let scope = open_scope("s1", 9);
        let plain = sealing::open(&keys, "owner-fp", &scope, field::QUESTION, &s.words).unwrap();
        let words: Words = serde_json::from_slice(&plain).unwrap();
        assert!(
            words.text.chars().count() <= words::START_CHARS,
            "sealed without its card"
        );
        assert_eq!(
            words.with_card(needs_you_core::Kind::Permission),
            taken.words
        );
        // Bound to its open: not as another seq, not as another field.
        assert!(sealing::open(
            &keys,
            "owner-fp",
            &open_scope("s1", 10),
            field::QUESTION,
            &s.words
        )
        .is_err());
        assert!(sealing::open(&keys, "owner-fp", &scope, field::SCREEN, &s.words).is_err());
        let offer = &s.lasting[0];
        let rule = sealing::open(
            &keys,
            "owner-fp",
            &offer.id,
            field::RULE,
            offer.rule.as_ref().unwrap(),
        )
        .unwrap();
        let rule: RuleWords = serde_json::from_slice(&rule).unwrap();
        assert!(rule.rule.contains("planted-7f3a") && rule.label.contains("don't ask again"));
        let summary = s.summary.as_deref().unwrap();
        let summary = sealing::open(&keys, "owner-fp", &scope, field::SUMMARY, summary).unwrap();
        assert_eq!(String::from_utf8(summary).unwrap(), taken.words.summary());
        assert!(taken.words.summary().contains("planted-7f3a"));
    }

    #[test]
    fn a_request_whose_card_is_many_times_itself_is_sealed_within_a_report() {
        use needs_you_core::report::MAX_SEALED_BODY_BYTES;
        use needs_you_core::request::MAX_REQUEST_BYTES;
        // A Write of soft hyphens, as large as a request is carried: its
        // card writes each one out as ⟨U+00AD⟩, six times its bytes.
        let content = "\u{ad}".repeat((MAX_REQUEST_BYTES - 200) / 2);
        let request = Request::new("Write", &json!({"file_path": "/w/z", "content": content}));
        assert!(request.size() <= MAX_REQUEST_BYTES);
        let body = json!({"action": "open", "cli": "claude-code", "session": "s1", "seq": 9,
            "kind": "permission", "text": "", "takes": "decision",
            "digest": request.digest(), "request": request});
        let taken = words::take(card::built(Report::from_value(&body).unwrap())).unwrap();
        assert!(
            taken.words.text.len() > MAX_SEALED_BODY_BYTES,
            "its card alone, {} bytes, is larger than a sealed report may be",
            taken.words.text.len()
        );
        let keys = ContentKeys::first().unwrap();
        let sealed = seal_taken(keys.newest().unwrap(), "o", taken).unwrap();
        let wire = serde_json::to_vec(&sealed).unwrap();
        assert!(wire.len() <= MAX_SEALED_BODY_BYTES, "{} bytes", wire.len());
        assert!(Report::parse(&wire).is_ok(), "the Worker takes it");
    }

    #[test]
    fn the_same_words_are_the_same_question_and_others_are_not() {
        let keys = ContentKeys::first().unwrap();
        let key = keys.newest().unwrap();
        let once = seal_taken(key, "o", words::take(permission()).unwrap()).unwrap();
        let again = seal_taken(key, "o", words::take(permission()).unwrap()).unwrap();
        let same = |r: &Report| match r {
            Report::Open {
                sealed: Some(s), ..
            } => s.same.clone(),
            _ => panic!(),
        };
        assert_eq!(same(&once), same(&again));
        let other_key = ContentKeys::first().unwrap();
        let other = seal_taken(
            other_key.newest().unwrap(),
            "o",
            words::take(permission()).unwrap(),
        )
        .unwrap();
        assert_ne!(
            same(&once),
            same(&other),
            "keyed: the hash says nothing without the key"
        );
    }
}
