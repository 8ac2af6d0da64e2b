//! Panic reporting. The worker SDK installs its own hook at start, which flags
//! the instance for a restart; we chain `console_error_panic_hook` in front of it
//! (for a readable message with the location) instead of replacing it.

use std::sync::Once;

pub fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let sdk_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            console_error_panic_hook::hook(info);
            sdk_hook(info);
        }));
    });
}
