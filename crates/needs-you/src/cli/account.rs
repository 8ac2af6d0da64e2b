//! `devices` and `channels`: the owner's paired phones and the ways it is rung.

use clap::{Args, Subcommand};
use needs_you_core::api::ChannelKind;

#[derive(Debug, PartialEq, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct DevicesArgs {
    #[arg(long)]
    pub json: bool,
    #[command(subcommand)]
    pub action: Option<DeviceAction>,
}

#[derive(Debug, PartialEq, Subcommand)]
pub enum DeviceAction {
    /// Revoke a device (an id from `needs-you devices`).
    Revoke { device: String },
}

#[derive(Debug, PartialEq, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ChannelsArgs {
    #[arg(long)]
    pub json: bool,
    #[command(subcommand)]
    pub action: Option<ChannelAction>,
}

#[derive(Debug, PartialEq, Subcommand)]
pub enum ChannelAction {
    /// Set a channel: ntfy's token from $NEEDS_YOU_NTFY_TOKEN; the webhook's
    /// secret from $NEEDS_YOU_WEBHOOK_SECRET, or asked.
    Set {
        #[arg(value_parser = channel_kind)]
        kind: ChannelKind,
        url: String,
        /// ntfy's priority, 1 to 5.
        #[arg(long, value_parser = clap::value_parser!(u8).range(1..=5))]
        priority: Option<u8>,
        /// Send the question's words (its task's name, text and options)
        /// to the channel's server; without, only which CLI waits and what
        /// kind of question.
        #[arg(long)]
        words: bool,
    },
    /// Remove a channel.
    Remove {
        #[arg(value_parser = channel_kind)]
        kind: ChannelKind,
    },
}

fn channel_kind(s: &str) -> Result<ChannelKind, String> {
    ChannelKind::parse(s).ok_or_else(|| format!("the channel kind is {}", ChannelKind::choices()))
}
