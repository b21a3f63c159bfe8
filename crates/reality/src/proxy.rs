//! Network partitions without root: a small TCP proxy per member that *is* the member's
//! advertised peer URL and forwards to the port etcd really listens on, knowing for every
//! connection which member sent it and which way its raft messages flow.
//!
//! etcd's peer traffic (rafthttp) is HTTP, and every request a member makes to a peer carries
//! its own id in the `X-Server-From` header (`rafthttp/stream.go` dial, `pipeline.go` post,
//! `snapshot_sender.go`). A connection from member `j` to member `i`'s URL carries:
//!
//! * `POST /raft` (the pipeline) and `POST /raft/snapshot`: messages `j → i`;
//! * `GET /raft/stream/...` (the two long-lived streams `j` reads): messages `i → j`, written by
//!   `i` into the response.
//!
//! A one-way cut `a → b` therefore closes, and refuses while it lasts, the pipeline connections
//! from `a` at `b`'s proxy and the stream connections from `b` at `a`'s proxy: both carry
//! `a`'s messages to `b`, and nothing else does. A partition cuts both ways between its groups;
//! a heal lets every new connection through (etcd redials within its retry interval, about
//! 100 ms). Other requests (`/version`, `/members`, `/raft/probing`: no raft messages) always
//! pass.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::log::RaftId;
use crate::Error;

/// Which way a connection's raft messages flow, by member index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flow {
    /// The sender of the messages.
    pub from: usize,
    /// Their receiver.
    pub to: usize,
}

/// Which way a raft connection's messages flow, relative to the member whose proxy it reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// From the sender to this member (pipeline, snapshot).
    ToHere,
    /// From this member to the sender (a stream the sender reads).
    FromHere,
}

/// A peer request's sender (`X-Server-From`) and the way its raft messages flow, from its head;
/// `None` for requests that carry none.
pub fn sender_and_way(head: &str) -> Option<(RaftId, Way)> {
    let mut lines = head.split("\r\n");
    let request = lines.next()?;
    let mut parts = request.split(' ');
    let (method, path) = (parts.next()?, parts.next()?);
    let sender = lines.find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case("X-Server-From")
            .then(|| u64::from_str_radix(v.trim(), 16).ok())
            .flatten()
    })?;
    let way = match (method, path) {
        ("POST", p) if p == "/raft" || p.starts_with("/raft/snapshot") => Way::ToHere,
        ("GET", p) if p.starts_with("/raft/stream/") => Way::FromHere,
        _ => return None,
    };
    Some((sender, way))
}

/// The flow of a connection from `sender` reaching member `at`'s proxy, once the members' ids
/// are known (`None` for a sender that is not another member).
pub fn flow(sender: RaftId, way: Way, at: usize, ids: &[RaftId]) -> Option<Flow> {
    let j = ids.iter().position(|&id| id == sender)?;
    if j == at {
        return None;
    }
    Some(match way {
        Way::ToHere => Flow { from: j, to: at },
        Way::FromHere => Flow { from: at, to: j },
    })
}

/// Classify a peer request arriving at member `at`'s proxy ([`sender_and_way`], then [`flow`]).
pub fn classify(head: &str, at: usize, ids: &[RaftId]) -> Option<Flow> {
    let (sender, way) = sender_and_way(head)?;
    flow(sender, way, at, ids)
}

/// The state every proxy shares: the members' ids, the cut links, the open connections.
#[derive(Debug, Default)]
struct Shared {
    ids: Vec<RaftId>,
    /// `down[from * n + to]`.
    down: Vec<bool>,
    n: usize,
    /// Open raft connections: a number, the proxy's member, the sender and way, and both
    /// sockets (to shut them on a cut). Their flow is worked out at the cut, since connections
    /// opened while the cluster starts come before its ids are known.
    conns: Vec<Conn>,
    next: u64,
}

/// An open raft connection (see [`Shared::conns`]).
#[derive(Debug)]
struct Conn {
    number: u64,
    at: usize,
    /// The sender and way of its latest request, if that carried raft messages.
    sender: Option<(RaftId, Way)>,
    client: TcpStream,
    upstream: TcpStream,
}

impl Shared {
    fn is_down(&self, f: Flow) -> bool {
        self.down
            .get(f.from * self.n + f.to)
            .copied()
            .unwrap_or(false)
    }

    fn carries_cut(&self, c: &Conn) -> bool {
        c.sender
            .and_then(|(sender, way)| flow(sender, way, c.at, &self.ids))
            .is_some_and(|f| self.is_down(f))
    }
}

fn close(c: Conn) {
    let _ = c.client.shutdown(Shutdown::Both);
    let _ = c.upstream.shutdown(Shutdown::Both);
}

/// The proxies of one cluster (see the module docs). Dropping them stops every thread and
/// closes every connection.
#[derive(Debug)]
pub struct Proxies {
    shared: Arc<Mutex<Shared>>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

fn lock(s: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

impl Proxies {
    /// Serve `listeners[i]` (member `i`'s advertised peer address) in front of `targets[i]`
    /// (the address its etcd listens on).
    pub fn start(listeners: Vec<TcpListener>, targets: Vec<SocketAddr>) -> Result<Proxies, Error> {
        let n = listeners.len();
        let shared = Arc::new(Mutex::new(Shared {
            down: vec![false; n * n],
            n,
            ..Shared::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for (i, (l, target)) in listeners.into_iter().zip(targets).enumerate() {
            l.set_nonblocking(true)
                .map_err(|e| Error::Process(format!("proxy of member {}: {e}", i + 1)))?;
            let (shared, stop) = (shared.clone(), stop.clone());
            threads.push(std::thread::spawn(move || {
                accept_loop(i, l, target, &shared, &stop)
            }));
        }
        Ok(Proxies {
            shared,
            stop,
            threads,
        })
    }

    /// The members' raft ids, by member index (known once they answer): until then no
    /// connection can be attributed, and every one passes.
    pub fn set_ids(&self, ids: Vec<RaftId>) {
        lock(&self.shared).ids = ids;
    }

    /// Cut the links from every member of `from` to every member of `to` (one way), closing the
    /// connections that carry them.
    pub fn cut(&self, from: &[usize], to: &[usize]) {
        let mut s = lock(&self.shared);
        let n = s.n;
        for &a in from {
            for &b in to {
                if a != b && a < n && b < n {
                    s.down[a * n + b] = true;
                }
            }
        }
        let (cut, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut s.conns)
            .into_iter()
            .partition(|c| s.carries_cut(c));
        s.conns = kept;
        cut.into_iter().for_each(close);
    }

    /// Cut both ways between the groups (members in no group are their own group).
    pub fn partition(&self, groups: &[Vec<usize>]) {
        for (x, a) in groups.iter().enumerate() {
            for (y, b) in groups.iter().enumerate() {
                if x != y {
                    self.cut(a, b);
                }
            }
        }
    }

    /// Every link up again: new connections pass (etcd redials by itself).
    pub fn heal(&self) {
        lock(&self.shared).down.iter_mut().for_each(|d| *d = false);
    }
}

impl Drop for Proxies {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        std::mem::take(&mut lock(&self.shared).conns)
            .into_iter()
            .for_each(close);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn accept_loop(
    at: usize,
    l: TcpListener,
    target: SocketAddr,
    shared: &Arc<Mutex<Shared>>,
    stop: &Arc<AtomicBool>,
) {
    while !stop.load(Ordering::SeqCst) {
        match l.accept() {
            Ok((client, _)) => {
                let (shared, stop) = (shared.clone(), stop.clone());
                // Connection threads end when either side closes, or at a cut or a stop
                // (their sockets shut down).
                std::thread::spawn(move || {
                    let _ = serve(at, client, target, &shared, &stop);
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// Read one HTTP request head (through the empty line) from `r`; `None` at a clean end.
fn read_head(r: &mut impl BufRead) -> std::io::Result<Option<String>> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        if head.len() + line.len() > 64 * 1024 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "request head too long",
            ));
        }
        let end = line == "\r\n" || line == "\n";
        head.push_str(&line);
        if end {
            return Ok(Some(head));
        }
    }
}

/// A header's value in a request head.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.split("\r\n").skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then_some(v.trim())
    })
}

/// One connection: every request is read, attributed ([`sender_and_way`]) and checked against
/// the cuts before it is forwarded, since a kept-alive connection may carry a request without
/// raft messages (`GET /version`) before pipeline posts; the answers are copied back as they
/// come.
fn serve(
    at: usize,
    client: TcpStream,
    target: SocketAddr,
    shared: &Arc<Mutex<Shared>>,
    stop: &Arc<AtomicBool>,
) -> std::io::Result<()> {
    let mut upstream = TcpStream::connect_timeout(&target, Duration::from_secs(2))?;
    let _ = upstream.set_nodelay(true);
    let _ = client.set_nodelay(true);
    let number = {
        let mut s = lock(shared);
        if stop.load(Ordering::SeqCst) {
            return Ok(());
        }
        s.next += 1;
        let number = s.next;
        s.conns.push(Conn {
            number,
            at,
            sender: None,
            client: client.try_clone()?,
            upstream: upstream.try_clone()?,
        });
        number
    };
    let (mut c2, mut u2) = (client.try_clone()?, upstream.try_clone()?);
    let back = std::thread::spawn(move || {
        let _ = std::io::copy(&mut u2, &mut c2);
        let _ = c2.shutdown(Shutdown::Both);
        let _ = u2.shutdown(Shutdown::Both);
    });
    let mut reader = BufReader::new(client.try_clone()?);
    let forward = (|| -> std::io::Result<()> {
        while let Some(head) = read_head(&mut reader)? {
            {
                let mut s = lock(shared);
                let Some(i) = s.conns.iter().position(|c| c.number == number) else {
                    return Ok(()); // closed by a cut meanwhile
                };
                s.conns[i].sender = sender_and_way(&head);
                if s.carries_cut(&s.conns[i]) {
                    // Refused while the link is cut: the sender sees the connection close.
                    return Ok(());
                }
            }
            upstream.write_all(head.as_bytes())?;
            if header(&head, "Transfer-Encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
            {
                // A streamed body (a snapshot): the rest of the connection is this request's.
                std::io::copy(&mut reader, &mut upstream)?;
                return Ok(());
            }
            let len: u64 = header(&head, "Content-Length")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let copied = std::io::copy(&mut (&mut reader).take(len), &mut upstream)?;
            if copied < len {
                return Ok(());
            }
        }
        Ok(())
    })();
    let _ = client.shutdown(Shutdown::Both);
    let _ = upstream.shutdown(Shutdown::Both);
    let _ = back.join();
    lock(shared).conns.retain(|c| c.number != number);
    forward
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_attributed_to_their_flow() {
        let ids = [0xa, 0xb, 0xc];
        let head = |req: &str, from: &str| {
            format!("{req} HTTP/1.1\r\nHost: x\r\nX-Server-From: {from}\r\nX-Etcd-Cluster-ID: 1")
        };
        // A pipeline post from member 2 arriving at member 1: 2 -> 1.
        assert_eq!(
            classify(&head("POST /raft", "b"), 0, &ids),
            Some(Flow { from: 1, to: 0 })
        );
        // A stream member 3 reads from member 1: 1 -> 3.
        assert_eq!(
            classify(&head("GET /raft/stream/message/c", "c"), 0, &ids),
            Some(Flow { from: 0, to: 2 })
        );
        assert_eq!(
            classify(&head("GET /raft/stream/msgappv2/c", "c"), 0, &ids),
            Some(Flow { from: 0, to: 2 })
        );
        assert_eq!(
            classify(&head("POST /raft/snapshot", "c"), 1, &ids),
            Some(Flow { from: 2, to: 1 })
        );
        assert_eq!(classify(&head("GET /version", "c"), 0, &ids), None);
        assert_eq!(classify(&head("POST /raft", "d"), 0, &ids), None);
        assert_eq!(classify("POST /raft HTTP/1.1\r\nHost: x", 0, &ids), None);
    }
}
