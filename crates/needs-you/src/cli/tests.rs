//! The command line as clap reads it.

use clap::FromArgMatches;
use needs_you_core::api::ChannelKind;

use super::*;

fn p(args: &[&str]) -> Result<Command, clap::Error> {
    let all = std::iter::once("needs-you").chain(args.iter().copied());
    command()
        .try_get_matches_from(all)
        .and_then(|m| Cli::from_arg_matches(&m))
        .map(|c| c.command)
}

#[test]
fn run_takes_its_options_before_the_dashes_and_the_command_as_is() {
    let Command::Run(r) = p(&[
        "run",
        "--name",
        "api",
        "--expires",
        "8h",
        "--",
        "claude",
        "--name",
        "x",
    ])
    .unwrap() else {
        panic!()
    };
    assert_eq!(r.name.as_deref(), Some("api"));
    assert_eq!(r.expires_s, 8 * 3600);
    assert!(!r.tmux);
    assert_eq!(
        r.command,
        vec![OsString::from("claude"), "--name".into(), "x".into()]
    );
    let Command::Run(d) = p(&["run", "--", "x"]).unwrap() else {
        panic!()
    };
    assert_eq!(d.expires_s, 7 * 86_400, "a week by default");
    assert!(p(&["run", "claude"]).is_err());
    assert!(p(&["run", "--"]).is_err());
    assert!(p(&["run", "--expires", "soon", "--", "x"]).is_err());
    assert!(p(&["run", "--bogus", "--", "x"]).is_err());
    assert!(p(&["run", "--name", " ", "--", "x"]).is_err());
}

#[test]
fn an_answer_keeps_every_word_after_the_question() {
    let answer = |args: &[&str]| match p(args) {
        Ok(Command::Answer { question, text, .. }) => Ok((question, text.join(" "))),
        other => Err(format!("{other:?}")),
    };
    assert_eq!(
        answer(&["answer", "q_1", "use", "--force", "please"]).unwrap(),
        ("q_1".into(), "use --force please".into())
    );
    assert_eq!(
        answer(&["answer", "q_1", "--", "--no-verify is fine"])
            .unwrap()
            .1,
        "--no-verify is fine"
    );
    assert!(answer(&["answer", "--json", "q_1", "yes"]).is_err());
    assert!(p(&["answer", "q_1", "--deny", "--choose", "x"]).is_err());
}

#[test]
fn an_answer_takes_a_decision_or_choices() {
    let Command::Answer {
        allow,
        deny,
        choose,
        text,
        ..
    } = p(&["answer", "q_1", "--deny", "not on main"]).unwrap()
    else {
        panic!()
    };
    assert_eq!(
        (allow, deny.as_deref(), choose.len(), text.len()),
        (false, Some("not on main"), 0, 0)
    );
    let Command::Answer { deny, .. } = p(&["answer", "q_1", "--deny"]).unwrap() else {
        panic!()
    };
    assert_eq!(deny.as_deref(), Some(""));
    let Command::Answer { choose, .. } = p(&[
        "answer",
        "q_1",
        "--choose",
        "Postgres",
        "--choose",
        "Login|Search",
    ])
    .unwrap() else {
        panic!()
    };
    assert_eq!(choose, ["Postgres", "Login|Search"]);
    assert!(p(&["answer", "q_1", "--allow", "--deny"]).is_err());
    assert!(p(&["answer", "q_1", "--allow", "--keep", "keep-0"]).is_err());
    assert!(p(&["answer", "q_1", "--keep", "keep-0", "--deny"]).is_err());
    let Command::Answer { keep, .. } = p(&["answer", "q_1", "--keep", "keep-0"]).unwrap() else {
        panic!("answer")
    };
    assert_eq!(keep.as_deref(), Some("keep-0"));
}

#[test]
fn durations() {
    assert_eq!(duration_s("90m"), Ok(5400));
    assert_eq!(duration_s("7d"), Ok(604_800));
    assert!(duration_s("0h").is_err());
    assert!(duration_s("h").is_err());
    assert!(duration_s("12").is_err());
}

#[test]
fn listing_commands_take_json_and_refuse_unknown_options() {
    assert_eq!(
        p(&["ls", "--json"]).unwrap(),
        Command::Ls {
            watch: false,
            json: true
        }
    );
    assert!(p(&["ls", "--watch", "--json"]).is_err());
    assert_eq!(
        p(&["tasks", "--rules"]).unwrap(),
        Command::Tasks(TasksArgs {
            json: false,
            rules: true,
            action: None
        })
    );
    assert_eq!(
        p(&["tasks", "mute", "api", "--for", "30m"]).unwrap(),
        Command::Tasks(TasksArgs {
            json: false,
            rules: false,
            action: Some(TaskAction::Mute {
                task: "api".into(),
                for_s: 1800
            })
        })
    );
    assert!(p(&["tasks", "--wat"]).is_err());
    assert!(p(&["ls", "extra"]).is_err());
    assert!(p(&["frobnicate"]).is_err());
    assert_eq!(
        p(&[
            "channels",
            "set",
            "ntfy",
            "https://ntfy.sh/t",
            "--priority",
            "5",
            "--words"
        ])
        .unwrap(),
        Command::Channels(ChannelsArgs {
            json: false,
            action: Some(ChannelAction::Set {
                kind: ChannelKind::Ntfy,
                url: "https://ntfy.sh/t".into(),
                priority: Some(5),
                words: true
            })
        })
    );
    assert!(p(&["channels", "set", "email", "x"]).is_err());
    assert!(p(&["channels", "set", "ntfy", "u", "--priority", "9"]).is_err());
    assert!(p(&["dismiss"]).is_err());
}

#[test]
fn the_help_shows_an_example_of_every_command() {
    let help = command().render_help().to_string();
    for sub in Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
    {
        let name = sub.get_name();
        assert!(
            help.contains(&format!("needs-you {name}")),
            "no example of {name} in:\n{help}"
        );
    }
    assert!(help.contains("Exit codes:"));
    assert!(!help.contains("__exec"));
}

#[test]
fn an_owner_fingerprint_that_begins_with_a_dash_is_still_the_value() {
    // Base64url: the line `pair` prints can say `--owner -F…`.
    let fp = "-Fq2bZ0x9yLk3VnW7aR1sT4uE6iO8pA5dG2hJ0kL9mN";
    let Command::Login { owner, code, .. } = p(&[
        "login",
        "http://127.0.0.1:8787",
        "--code",
        "K7Q2-M9XD.c2VjcmV0",
        "--owner",
        fp,
    ])
    .unwrap() else {
        panic!()
    };
    assert_eq!(owner.as_deref(), Some(fp));
    assert_eq!(code.as_deref(), Some("K7Q2-M9XD.c2VjcmV0"));
}
