//! `report-prompt`: run from a coding agent's hooks. Everything it does is
//! the `needs-you-reporter` library's (see its `src/lib.rs`); this package
//! builds the binary so that `cargo install needs-you` installs it too.

fn main() {
    std::process::exit(needs_you_reporter::commands::main());
}
