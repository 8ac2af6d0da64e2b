//! `needs-you`: the person's command line (see `report_prompt::cli`).

fn main() {
    let code = report_prompt::cli::main(std::env::args_os().skip(1).collect());
    std::process::exit(code);
}
