//! Panic reporting. The worker SDK installs its own hook when the module
//! starts, which logs "Critical" and flags the instance for a fresh start.
//! `console_error_panic_hook` is chained beside it, never in its place, so
//! that a panic's message and its file and line reach the log
//! (`wrangler tail`, `wrangler dev`'s output) and the instance is still
//! started anew. Installed once, when the module starts ([`install`]).
//!
//! Both hooks run whichever start function the runtime calls first: the one
//! installed second takes the other with `take_hook` and calls it.

pub fn install() {
    let before = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        console_error_panic_hook::hook(info);
        before(info);
    }));
}

/// A panic on purpose, for the test that reads its message in the log:
/// only where the Worker runs with `ALLOW_TEST_PANIC=true` (a test's
/// `wrangler dev`), a 404 anywhere else.
pub fn on_purpose(env: &worker::Env) -> crate::json::ApiResult {
    if crate::config::test_panic_allowed(env) {
        panic!("a panic on purpose, asked for by a test");
    }
    Err(crate::json::ApiError::new(
        404,
        "not_found",
        "no route /v1/test/panic",
    ))
}
