//! Where the owner is rung: `channels` (list, set, remove) and `test-push`.

use needs_you_core::api::{Channel, ChannelKind, Channels, TestResults};
use serde_json::{json, Value};

use super::account::secret;
use super::{now_ms, owner, print_json};
use crate::display;
use crate::fail::{exit, Result};

/// `channels [--json]`.
pub fn list(json_out: bool) -> Result<i32> {
    let (_, client) = owner("manages channels")?;
    let list: Channels = client.get("/v1/channels")?;
    if json_out {
        print_json(&list);
    } else {
        print!("{}", display::channels(&list.channels, now_ms()));
    }
    Ok(exit::OK)
}

/// `channels set KIND URL [--priority N] [--words]`: ntfy's token from the
/// environment, the webhook's secret from the environment or asked, never an
/// argument. Set again without `--words`, a channel carries no words.
pub fn set(kind: ChannelKind, url: &str, priority: Option<u8>, words: bool) -> Result<i32> {
    let (_, client) = owner("manages channels")?;
    let mut body = json!({"url": url, "words": words});
    match kind {
        ChannelKind::Ntfy => {
            if let Some(t) = std::env::var("NEEDS_YOU_NTFY_TOKEN")
                .ok()
                .filter(|t| !t.is_empty())
            {
                body["token"] = json!(t);
            }
            if let Some(p) = priority {
                body["priority"] = json!(p);
            }
        }
        ChannelKind::Webhook => {
            if priority.is_some() {
                return Err(crate::fail::Fail::new(
                    exit::USAGE,
                    "--priority is ntfy's; a webhook has none",
                ));
            }
            body["secret"] = json!(secret(
                "NEEDS_YOU_WEBHOOK_SECRET",
                "Webhook secret (16 characters or more): "
            )?);
        }
    }
    let shown: Channel = client.put(&format!("/v1/channels/{kind}"), &body)?;
    println!(
        "Set the {kind} channel: {}",
        display::channel_line(&shown, now_ms())
    );
    println!("Try it: needs-you test-push");
    Ok(exit::OK)
}

/// `channels remove KIND`.
pub fn remove(kind: ChannelKind) -> Result<i32> {
    let (_, client) = owner("manages channels")?;
    client.delete::<Value>(&format!("/v1/channels/{kind}"))?;
    println!("Removed the {kind} channel.");
    Ok(exit::OK)
}

/// `test-push [--json]`: exit 0 only when every channel answered.
pub fn test_push(json_out: bool) -> Result<i32> {
    let (_, client) = owner("sends a test push")?;
    let r: TestResults = client.post("/v1/channels/test", &json!({}))?;
    if json_out {
        print_json(&r);
    } else if r.results.is_empty() {
        println!("No channel to test: set one (`needs-you channels set ntfy URL`) or turn on notifications on the page.");
    } else {
        print!("{}", display::test_results(&r.results));
    }
    let all_ok = !r.results.is_empty() && r.results.iter().all(|x| x.ok);
    Ok(if all_ok { exit::OK } else { exit::REFUSED })
}
