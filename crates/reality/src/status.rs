//! A member's own answer to "who leads, at which term": `/v3/maintenance/status` on its client
//! URL, through etcd's gRPC gateway (an HTTP POST of `{}`; the answer is JSON with 64-bit
//! numbers as decimal strings).
//!
//! The request is HTTP/1.0 over a plain TCP connection, so the answer is never chunked and ends
//! when the member closes the connection; every step has a timeout, since a paused member
//! accepts the connection (the kernel does) and never answers.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::log::RaftId;

/// What a member says about itself and its leader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberStatus {
    /// Its raft id (`header.member_id`).
    pub member: RaftId,
    /// Whom it names as leader (`leader`; `None` for 0: no leader known).
    pub leader: Option<RaftId>,
    /// Its raft term (`raftTerm`).
    pub term: u64,
}

/// Ask the member at `addr` (its client URL's address) for its status, within `timeout` for
/// each of connecting, writing and reading.
pub fn query(addr: SocketAddr, timeout: Duration) -> std::io::Result<MemberStatus> {
    let mut s = TcpStream::connect_timeout(&addr, timeout)?;
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(timeout))?;
    let req = format!(
        "POST /v3/maintenance/status HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}"
    );
    s.write_all(req.as_bytes())?;
    let mut buf = Vec::new();
    // An answer is a few hundred bytes; anything far larger is not one.
    s.take(64 * 1024).read_to_end(&mut buf)?;
    parse_response(&buf).map_err(|why| std::io::Error::new(std::io::ErrorKind::InvalidData, why))
}

/// The status in an HTTP response (status line, headers, JSON body).
pub fn parse_response(bytes: &[u8]) -> Result<MemberStatus, String> {
    let text = String::from_utf8_lossy(bytes);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("no HTTP header in {} bytes", bytes.len()))?;
    let status_line = head.lines().next().unwrap_or_default();
    if status_line.split(' ').nth(1) != Some("200") {
        return Err(format!("answered {status_line:?}: {}", body.trim()));
    }
    parse_body(body)
}

/// The status in the gateway's JSON body.
pub fn parse_body(body: &str) -> Result<MemberStatus, String> {
    let v: serde_json::Value =
        serde_json::from_str(body.trim()).map_err(|e| format!("not JSON ({e}): {body:?}"))?;
    // proto3's JSON mapping writes uint64 as a decimal string and leaves zero values out.
    let u64_at = |path: &[&str]| -> Result<u64, String> {
        let mut x = &v;
        for k in path {
            match x.get(k) {
                Some(y) => x = y,
                None => return Ok(0),
            }
        }
        match x {
            serde_json::Value::String(s) => s
                .parse()
                .map_err(|_| format!("{} = {s:?} is not a number", path.join("."))),
            serde_json::Value::Number(n) => n
                .as_u64()
                .ok_or_else(|| format!("{} = {n} is not a whole number", path.join("."))),
            other => Err(format!("{} = {other} is not a number", path.join("."))),
        }
    };
    let member = u64_at(&["header", "member_id"])?;
    if member == 0 {
        return Err(format!("no header.member_id in {body:?}"));
    }
    let leader = u64_at(&["leader"])?;
    Ok(MemberStatus {
        member,
        leader: (leader != 0).then_some(leader),
        term: u64_at(&["raftTerm"])?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real answer of etcd 3.4.23 (its member ids are decimal strings).
    #[test]
    fn reads_an_etcd_answer() {
        let r = b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{\"header\":{\"cluster_id\":\"15276262748873838274\",\"member_id\":\"16322613195064898111\",\"revision\":\"1\",\"raft_term\":\"3\"},\"version\":\"3.4.23\",\"dbSize\":\"20480\",\"leader\":\"16322613195064898111\",\"raftIndex\":\"9\",\"raftTerm\":\"3\",\"raftAppliedIndex\":\"9\",\"dbSizeInUse\":\"16384\"}";
        let s = parse_response(r).unwrap();
        assert_eq!(s.member, 0xe285923851f2723f);
        assert_eq!(s.leader, Some(0xe285923851f2723f));
        assert_eq!(s.term, 3);
        let none = parse_body(r#"{"header":{"member_id":"5"},"raftTerm":"4"}"#).unwrap();
        assert_eq!(none.leader, None);
        assert!(parse_response(b"HTTP/1.0 503 Service Unavailable\r\n\r\n{}").is_err());
    }
}
