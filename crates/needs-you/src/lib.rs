//! `needs-you`: the person's command line. Set up or log in once, then start
//! agents under watch (`needs-you run -- claude`), see what needs you, pair a
//! phone, set channels. This package also builds `report-prompt`, the hook
//! (`src/bin/report-prompt.rs`, all of it the `needs-you-reporter` library),
//! so that `cargo install needs-you` installs both.
//!
//! * `main.rs`: parses and dispatches, nothing else (the detached helpers it
//!   starts itself, the sender and the relay, go to `report-prompt`'s entry).
//! * [`cli`]: the command line and its `--help`, defined once (clap).
//! * [`commands`]: one module per command or small family:
//!   [`commands::account`] (setup, login, logout, rotate-token, pair, devices)
//!   and [`commands::trusting`] (the owner's key vouching for devices),
//!   [`commands::questions`] (ls, tasks, answer, dismiss, show) with
//!   [`commands::cards`] (the cards `ls` builds) and [`commands::watch`]
//!   (`ls --watch`), [`commands::history`] (log), [`commands::rules`],
//!   [`commands::channels`] (channels, test-push), [`commands::run`],
//!   [`commands::codex`] (`run -- codex`'s TUI against a private app-server),
//!   [`commands::deploy`] (the prebuilt Worker from the npm package onto
//!   Cloudflare, or served here), [`commands::version`] (`--version`, with
//!   the Worker's).
//! * [`login`]: the login file.
//! * [`keys`]: the owner's and a device's signing keys, which sign every answer.
//! * [`content_keys`]: the owner's content key, which seals every word, and
//!   a device's seal key, which it reaches the device wrapped to.
//! * [`display`]: lists for a person, cut to the terminal (pure).
//! * [`term`]: asking on the terminal, its width, QR codes.
//! * [`fail`]: exit codes, and the one line a failure prints.
//!
//! The HTTP client and the API's views are shared: `needs_you_reporter::client`
//! and `needs_you_core::api`.

pub mod cli;
pub mod commands;
pub mod content_keys;
pub mod display;
pub mod fail;
pub mod keys;
pub mod login;
pub mod term;
