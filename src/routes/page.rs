//! The "Needs you" page: static files from `public/` (Workers static assets,
//! the `ASSETS` binding), served through the Worker so that every file gets
//! the same security headers, here rather than in a second config file.
//!
//! * A strict Content-Security-Policy: scripts, styles and connections from
//!   this origin only, no inline script or style, no plugins, no framing.
//!   Questions are put in the page as text; the policy is the second line of
//!   defence should one ever reach the DOM as HTML.
//! * The API sends no CORS headers at all, so no other site's script can
//!   read it; credentials travel as bearer tokens, never cookies, so no other
//!   site can make a browser send them either.

use worker::{Env, Headers, Request, Response};

/// The page's Content-Security-Policy.
/// `'wasm-unsafe-eval'` lets the page compile its own card builder
/// (`card.wasm`, from this origin like its scripts); it allows no `eval`.
pub const CSP: &str =
    "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; \
img-src 'self' data:; connect-src 'self'; manifest-src 'self'; worker-src 'self'; \
base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Headers every page file carries.
const SECURITY_HEADERS: &[(&str, &str)] = &[
    ("content-security-policy", CSP),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "no-referrer"),
    ("cross-origin-opener-policy", "same-origin"),
    (
        "permissions-policy",
        "camera=(), microphone=(), geolocation=()",
    ),
];

/// Serves a page file. Unknown paths (`/pair` among them) get the app shell,
/// as the assets' single-page-application setting says.
pub async fn serve(req: Request, env: &Env) -> worker::Result<Response> {
    let resp = env.assets("ASSETS")?.fetch_request(req).await?;
    let headers: Headers = resp.headers().clone();
    for (name, value) in SECURITY_HEADERS {
        headers.set(name, value)?;
    }
    // Revalidate every time (cheap: the assets answer 304 by ETag). The
    // service worker keeps the copy that works offline.
    headers.set("cache-control", "no-cache")?;
    Ok(resp.with_headers(headers))
}
