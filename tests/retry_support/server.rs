//! A scripted HTTP/1.1 server on the loopback interface, for the reqwest-middleware tests: one
//! reply per request, in order, then `then` for ever; each connection answers one request and
//! closes.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the server does with one request.
#[derive(Clone, Debug)]
pub enum Reply {
    Status(u16, Vec<(&'static str, &'static str)>),
    /// Reads the request and closes the connection without an answer.
    Drop,
}

pub fn status(code: u16) -> Reply {
    Reply::Status(code, Vec::new())
}

#[derive(Clone)]
pub struct Server {
    addr: SocketAddr,
    requests: Arc<AtomicU32>,
    /// While set, requests wait before they are answered.
    pub hold: Arc<AtomicBool>,
}

impl Server {
    pub async fn start(script: impl IntoIterator<Item = Reply>, then: Reply) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let server = Server {
            addr: listener.local_addr().expect("an address"),
            requests: Arc::default(),
            hold: Arc::default(),
        };
        let script = Arc::new(Mutex::new(script.into_iter().collect::<VecDeque<_>>()));
        let (requests, hold) = (Arc::clone(&server.requests), Arc::clone(&server.hold));
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                let (script, then) = (Arc::clone(&script), then.clone());
                let (requests, hold) = (Arc::clone(&requests), Arc::clone(&hold));
                tokio::spawn(async move {
                    if !read_request(&mut socket).await {
                        return;
                    }
                    requests.fetch_add(1, Ordering::SeqCst);
                    let reply = script.lock().unwrap().pop_front().unwrap_or(then);
                    while hold.load(Ordering::SeqCst) {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                    let Reply::Status(code, headers) = reply else {
                        return;
                    };
                    let body = format!("server {code}");
                    let mut head = format!(
                        "HTTP/1.1 {code} Scripted\r\ncontent-length: {}\r\nconnection: close\r\n",
                        body.len()
                    );
                    for (name, value) in headers {
                        let _ = write!(head, "{name}: {value}\r\n");
                    }
                    head.push_str("\r\n");
                    let _ = socket.write_all(head.as_bytes()).await;
                    let _ = socket.write_all(body.as_bytes()).await;
                    let _ = socket.shutdown().await;
                });
            }
        });
        server
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The requests received (read whole).
    pub fn requests(&self) -> u32 {
        self.requests.load(Ordering::SeqCst)
    }
}

/// Reads a request: its head, and a body of `content-length` bytes or in chunks.
async fn read_request(socket: &mut tokio::net::TcpStream) -> bool {
    let mut data = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let Ok(n) = socket.read(&mut buffer).await else {
            return false;
        };
        if n == 0 {
            return false;
        }
        data.extend_from_slice(&buffer[..n]);
        let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&data[..end]).to_ascii_lowercase();
        let body = &data[end + 4..];
        if head.contains("transfer-encoding: chunked") {
            if body.windows(5).any(|w| w == b"0\r\n\r\n") {
                return true;
            }
            continue;
        }
        let length = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .and_then(|n| n.trim().parse::<usize>().ok())
            .unwrap_or(0);
        if body.len() >= length {
            return true;
        }
    }
}
