//! Just enough HTTP/1.1 for the fake: reading one request (Content-Length or chunked) and writing plain or chunked responses.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;

use serde_json::Value;

use crate::Recorded;

const MAX_HEAD: usize = 1024 * 1024;
const MAX_BODY: usize = 256 * 1024 * 1024;

/// Reads one request; `None` when the peer sent something that is not one.
pub fn read_request(conn: &mut TcpStream) -> Option<Recorded> {
    let mut reader = BufReader::new(conn);
    let mut head_len = 0usize;
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    head_len += line.len();
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();

    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        head_len += h.len();
        if head_len > MAX_HEAD {
            return None;
        }
        let h = h.trim_end_matches(['\r', '\n']);
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let raw_body =
        if get("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
            read_chunked(&mut reader)?
        } else {
            let len: usize = get("content-length")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            if len > MAX_BODY {
                return None;
            }
            let mut body = vec![0u8; len];
            reader.read_exact(&mut body).ok()?;
            body
        };
    let body = serde_json::from_slice(&raw_body).unwrap_or(Value::Null);
    Some(Recorded {
        method,
        path,
        headers,
        body,
        raw_body,
    })
}

fn read_chunked(reader: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size_line = String::new();
        reader.read_line(&mut size_line).ok()?;
        let size_hex = size_line.trim().split(';').next()?;
        let size = usize::from_str_radix(size_hex, 16).ok()?;
        if body.len() + size > MAX_BODY {
            return None;
        }
        if size == 0 {
            // Trailers, then the blank line.
            loop {
                let mut t = String::new();
                if reader.read_line(&mut t).ok()? == 0 || t.trim().is_empty() {
                    return Some(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..]).ok()?;
        let mut crlf = [0u8; 2];
        reader.read_exact(&mut crlf).ok()?;
    }
}

pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// A complete response with Content-Length; the connection closes after it.
pub fn write_plain(
    conn: &mut TcpStream,
    status: u16,
    content_type: &str,
    extra: &[(&str, String)],
    body: &[u8],
) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        reason(status),
        body.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    conn.write_all(head.as_bytes())?;
    conn.write_all(body)?;
    conn.flush()
}

/// Starts a chunked 200 response.
pub fn start_chunked(conn: &mut TcpStream, content_type: &str) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    conn.write_all(head.as_bytes())?;
    conn.flush()
}

/// Writes one chunk and flushes it so it travels on its own.
pub fn write_chunk(conn: &mut TcpStream, data: &[u8]) -> io::Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    conn.write_all(format!("{:x}\r\n", data.len()).as_bytes())?;
    conn.write_all(data)?;
    conn.write_all(b"\r\n")?;
    conn.flush()
}

pub fn end_chunked(conn: &mut TcpStream) -> io::Result<()> {
    conn.write_all(b"0\r\n\r\n")?;
    conn.flush()
}
