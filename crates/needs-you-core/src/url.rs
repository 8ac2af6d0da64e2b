//! Which server addresses a client of needs-you may talk to: the reporter's
//! `NEEDS_YOU_URL`, the command line's login. HTTPS anywhere; plain HTTP only
//! to this machine (tests, `wrangler dev`), where nothing crosses a network;
//! never a user or password in the URL, which is written to logs and files.

/// The base URL without a trailing slash, or why it may not be used.
pub fn check_base_url(url: &str) -> Result<String, String> {
    let base = url.trim().trim_end_matches('/');
    let authority = base.split_once("://").map_or("", |(_, rest)| rest);
    if authority.split('/').next().unwrap_or("").contains('@') {
        return Err("the URL must not hold a user or password".into());
    }
    if base.starts_with("https://") {
        return Ok(base.to_owned());
    }
    if let Some(rest) = base.strip_prefix("http://") {
        let host = rest.split('/').next().unwrap_or("");
        let host = match host.rsplit_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
            _ => host,
        };
        let loopback = host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback());
        if loopback || matches!(host, "localhost" | "[::1]") {
            return Ok(base.to_owned());
        }
        return Err(format!(
            "the URL must use https:// (plain http is only for this machine: 127.0.0.1, localhost): {base}"
        ));
    }
    if !base.contains("://") {
        // A bare address: say which scheme it takes.
        let host = base.split(['/', ':']).next().unwrap_or("");
        let local = matches!(host, "127.0.0.1" | "localhost") || host.starts_with("127.");
        let scheme = if local { "http" } else { "https" };
        return Err(format!(
            "the URL needs its scheme: {scheme}://{base}{}",
            if local {
                " (plain http is for this machine only)"
            } else {
                ""
            }
        ));
    }
    Err(format!(
        "the URL must start with https:// (or http://127.0.0.1 on this machine): {base}"
    ))
}

#[cfg(test)]
mod tests {
    use super::check_base_url;

    #[test]
    fn https_anywhere_http_only_locally() {
        assert_eq!(
            check_base_url("https://x.example/").unwrap(),
            "https://x.example"
        );
        assert!(check_base_url("http://127.0.0.1:8787").is_ok());
        assert!(check_base_url("http://localhost:8787/").is_ok());
        assert!(check_base_url("http://[::1]:8787").is_ok());
        assert!(check_base_url("http://example.com").is_err());
        assert!(check_base_url("http://127.0.0.1.evil.com").is_err());
        assert!(check_base_url("ftp://x").is_err());
        assert!(check_base_url("https://u:secret@x.example").is_err());
        assert!(check_base_url("https://x.example/a@b").is_ok());
        assert_eq!(
            check_base_url("127.0.0.1:8787").unwrap_err(),
            "the URL needs its scheme: http://127.0.0.1:8787 (plain http is for this machine only)"
        );
        assert_eq!(
            check_base_url("needs-you.example.workers.dev").unwrap_err(),
            "the URL needs its scheme: https://needs-you.example.workers.dev"
        );
    }
}
