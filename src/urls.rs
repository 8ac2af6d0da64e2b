//! URLs, checked and cut by hand: a URL parser's Unicode tables would cost
//! the Worker tens of kilobytes of wasm.

/// An `http://` or `https://` URL with a host and no user name or password:
/// what every channel sends to. Credentials belong in a channel's own token
/// or secret field, which is never shown back; in a URL they would be.
pub fn is_http_url(u: &str) -> bool {
    let Some(rest) = u
        .strip_prefix("https://")
        .or_else(|| u.strip_prefix("http://"))
    else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = match authority.rsplit_once(':') {
        // A port is digits; an IPv6 literal's colons are inside its brackets.
        Some((h, port)) if !port.contains(']') => {
            if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
                return false;
            }
            h
        }
        _ => authority,
    };
    // A host is a name or an address, or an IPv6 address in brackets.
    let bracketed = host.starts_with('[') && host.ends_with(']') && host.len() > 2;
    let plain = !host.contains(['[', ']']);
    !host.is_empty()
        && (bracketed || plain)
        && !authority.contains('@')
        && !u.contains(|c: char| c.is_whitespace() || c.is_control())
}

/// `scheme://host[:port]` of an absolute URL.
pub fn origin(url: &str) -> &str {
    let start = url.find("://").map_or(0, |i| i + 3);
    match url[start..].find(['/', '?', '#']) {
        Some(i) => &url[..start + i],
        None => url,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_must_be_http_with_a_host_and_no_credentials() {
        assert!(is_http_url("https://ntfy.sh/topic"));
        assert!(is_http_url("http://127.0.0.1:8080/hook"));
        assert!(is_http_url("http://[::1]:8080/hook"));
        assert!(is_http_url("https://example.com?x=1"));
        for bad in [
            "ftp://x.example/a",
            "https://",
            "https:///path",
            "not a url",
            "https://user:pass@ntfy.sh/topic",
            "https://user@ntfy.sh/topic",
            "https://ntfy.sh/a b",
            "https://exa mple.com",
            "https://example.com:http/x",
            "https://:443/x",
            "https://example.com/a\r\nb",
            "http://[",
            "http://[]/x",
            "https://ex]ample.com/",
        ] {
            assert!(!is_http_url(bad), "{bad}");
        }
    }

    #[test]
    fn the_origin_is_scheme_host_and_port() {
        assert_eq!(
            origin("https://a.example:8443/x?y#z"),
            "https://a.example:8443"
        );
        assert_eq!(origin("http://127.0.0.1:8787"), "http://127.0.0.1:8787");
        assert_eq!(origin("https://a.example?q"), "https://a.example");
    }
}
