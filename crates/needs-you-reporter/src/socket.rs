//! A WebSocket to the Worker, opened the same way for the relay
//! (`GET /v1/relay`) and for `needs-you ls --watch` (`GET /v1/live`).

use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use tungstenite::client::IntoClientRequest;
use tungstenite::http::HeaderValue;
use tungstenite::stream::MaybeTlsStream;
use tungstenite::WebSocket;

pub type Socket = WebSocket<MaybeTlsStream<TcpStream>>;

pub enum Opened {
    Up(Box<Socket>),
    /// 401: the credential or ticket was refused.
    Refused,
    Down(String),
}

/// Opens `path` (with its query) on the Worker at `base` (`http://` or
/// `https://`), sending `headers`; a read waits at most `tick`, so that
/// the caller's loop can do its own work between messages.
pub fn open(base: &str, path: &str, headers: &[(&str, &str)], tick: Duration) -> Opened {
    let url = format!(
        "{}{path}",
        base.replacen("https://", "wss://", 1)
            .replacen("http://", "ws://", 1)
    );
    let mut req = match url.as_str().into_client_request() {
        Ok(r) => r,
        Err(e) => return Opened::Down(format!("bad URL: {e}")),
    };
    for (name, value) in headers {
        match (
            tungstenite::http::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            (Ok(n), Ok(v)) => {
                req.headers_mut().insert(n, v);
            }
            _ => return Opened::Down(format!("{name} cannot go in a header")),
        }
    }
    let host = req
        .uri()
        .host()
        .unwrap_or("")
        .trim_matches(['[', ']'])
        .to_owned();
    let port = req
        .uri()
        .port_u16()
        .unwrap_or(if url.starts_with("wss") { 443 } else { 80 });
    let addr = match (host.as_str(), port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
    {
        Some(a) => a,
        None => return Opened::Down(format!("cannot resolve {host}")),
    };
    let stream = match TcpStream::connect_timeout(&addr, Duration::from_secs(10)) {
        Ok(s) => s,
        Err(e) => return Opened::Down(format!("cannot connect: {e}")),
    };
    let _ = stream.set_read_timeout(Some(tick));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(10)));
    match tungstenite::client_tls_with_config(req, stream, None, None) {
        Ok((ws, _)) => Opened::Up(Box::new(ws)),
        Err(tungstenite::HandshakeError::Failure(tungstenite::Error::Http(resp)))
            if resp.status().as_u16() == 401 =>
        {
            Opened::Refused
        }
        Err(e) => Opened::Down(format!("no connection: {e}")),
    }
}

/// Whether a read failed only because it waited its `tick`.
pub fn timed_out(e: &tungstenite::Error) -> bool {
    matches!(e, tungstenite::Error::Io(io)
        if matches!(io.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut))
}

/// What one read of a socket brought.
pub enum Heard {
    Text(String),
    /// Nothing within the tick, or a frame that is no text (a ping).
    Nothing,
    /// Closed, by either side or the network.
    Gone,
}

pub fn hear(ws: &mut Socket) -> Heard {
    match ws.read() {
        Ok(tungstenite::Message::Text(t)) => Heard::Text(t.as_str().to_owned()),
        Ok(tungstenite::Message::Close(_)) => Heard::Gone,
        Ok(_) => Heard::Nothing,
        Err(e) if timed_out(&e) => Heard::Nothing,
        Err(_) => Heard::Gone,
    }
}
