//! A stand-in for an etcd member, for testing the orchestration without etcd: it takes the
//! flags `election-reality` gives etcd, answers `--version` (`3.4.0+standin`) and
//! `/v3/maintenance/status` as etcd does, talks to its peers over HTTP with etcd's
//! `X-Server-From` header (so the partition proxy attributes and cuts its links), keeps its term
//! and vote in its data directory (so a restart resumes them), and logs etcd's zap JSON lines
//! for every role and leader change.
//!
//! The election is a small Raft without a log: a randomized timeout in whole ticks of the
//! heartbeat interval in `[E, 2E)`, votes for the first candidate of a term, CheckQuorum (a
//! leader that heard from no quorum in an election timeout steps down; a voter that heard from a
//! leader within the timeout ignores a candidate). It is not etcd: its numbers mean nothing; it
//! only makes the same kinds of lines at the same kinds of moments.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Follower,
    Candidate,
    Leader,
}

struct State {
    id: u64,
    peers: Vec<(u64, SocketAddr)>,
    term: u64,
    vote: u64,
    role: Role,
    lead: u64,
    votes: Vec<u64>,
    heard: HashMap<u64, Instant>,
    last_leader_contact: Option<Instant>,
    deadline: Instant,
    heartbeat: Duration,
    election: Duration,
    rng: u64,
    state_file: PathBuf,
}

fn now_ts() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = d.as_secs() as i64;
    let ms = d.subsec_millis();
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, dd) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{dd:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Howard Hinnant's `civil_from_days`.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = (if z >= 0 { z } else { z - 146_096 }) / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn log(caller: &str, msg: &str) {
    let line = serde_json::json!({"level": "info", "ts": now_ts(), "caller": caller, "msg": msg});
    eprintln!("{line}");
}

/// FNV-1a of the member's name and the cluster token: a stable id per member.
fn member_id(name: &str, token: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes().chain([0]).chain(token.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h | 1
}

impl State {
    fn rand_ticks(&mut self) -> u32 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let e = (self.election.as_millis() / self.heartbeat.as_millis().max(1)).max(1) as u64;
        (e + self.rng % e) as u32
    }

    fn reset_deadline(&mut self) {
        let ticks = self.rand_ticks();
        self.deadline = Instant::now() + self.heartbeat * ticks;
    }

    fn save(&self) {
        let _ = std::fs::write(&self.state_file, format!("{} {:x}\n", self.term, self.vote));
    }

    fn set_lead(&mut self, lead: u64) {
        if lead == self.lead {
            return;
        }
        let (id, t) = (self.id, self.term);
        match (self.lead, lead) {
            (0, l) => log(
                "raft/node.go:327",
                &format!("raft.node: {id:x} elected leader {l:x} at term {t}"),
            ),
            (old, 0) => log(
                "raft/node.go:333",
                &format!("raft.node: {id:x} lost leader {old:x} at term {t}"),
            ),
            (old, l) => log(
                "raft/node.go:329",
                &format!("raft.node: {id:x} changed leader from {old:x} to {l:x} at term {t}"),
            ),
        }
        self.lead = lead;
    }

    fn become_follower(&mut self, term: u64, lead: u64) {
        if term != self.term {
            self.term = term;
            self.vote = 0;
            self.save();
        }
        self.role = Role::Follower;
        log(
            "raft/raft.go:706",
            &format!("{:x} became follower at term {term}", self.id),
        );
        self.reset_deadline();
        self.set_lead(lead);
    }

    fn quorum(&self) -> usize {
        let members = self.peers.len() + 1;
        members / 2 + 1
    }
}

type Shared = Arc<Mutex<State>>;

fn lock(s: &Shared) -> std::sync::MutexGuard<'_, State> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

/// Send one message to a peer: `POST /raft` with etcd's sender header, one connection each.
fn send(from: u64, to: SocketAddr, body: String) {
    std::thread::spawn(move || {
        let Ok(mut s) = TcpStream::connect_timeout(&to, Duration::from_millis(200)) else {
            return;
        };
        let _ = s.set_write_timeout(Some(Duration::from_millis(500)));
        let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
        let req = format!(
            "POST /raft HTTP/1.1\r\nHost: {to}\r\nX-Server-From: {from:x}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        if s.write_all(req.as_bytes()).is_ok() {
            let mut sink = Vec::new();
            let _ = s.read_to_end(&mut sink);
        }
    });
}

fn broadcast(st: &State, body: &str) {
    for &(_, addr) in &st.peers {
        send(st.id, addr, body.to_string());
    }
}

/// One message from a peer: `KIND TERM FROM [GRANTED]`.
fn on_message(sh: &Shared, body: &str) {
    let w: Vec<&str> = body.split_whitespace().collect();
    let (Some(kind), Some(term), Some(from)) = (
        w.first(),
        w.get(1).and_then(|t| t.parse::<u64>().ok()),
        w.get(2).and_then(|f| u64::from_str_radix(f, 16).ok()),
    ) else {
        return;
    };
    let mut st = lock(sh);
    let now = Instant::now();
    st.heard.insert(from, now);
    match *kind {
        "vote" => {
            let in_lease = st.lead != 0
                && st
                    .last_leader_contact
                    .is_some_and(|t| now.duration_since(t) < st.election);
            if term > st.term && in_lease {
                let ticks = st
                    .last_leader_contact
                    .map(|t| {
                        (st.election
                            .saturating_sub(now.duration_since(t))
                            .as_millis()
                            / st.heartbeat.as_millis().max(1)) as u64
                    })
                    .unwrap_or(0);
                let (id, vote, cur) = (st.id, st.vote, st.term);
                log(
                    "raft/raft.go:850",
                    &format!("{id:x} [logterm: {cur}, index: 0, vote: {vote:x}] ignored MsgVote from {from:x} [logterm: {cur}, index: 0] at term {cur}: lease is not expired (remaining ticks: {ticks})"),
                );
                return;
            }
            if term > st.term {
                st.become_follower(term, 0);
            }
            let grant = term == st.term && (st.vote == 0 || st.vote == from);
            if grant {
                st.vote = from;
                st.save();
                st.reset_deadline();
            }
            let addr = st.peers.iter().find(|p| p.0 == from).map(|p| p.1);
            let reply = format!("voteresp {} {:x} {}", st.term, st.id, u8::from(grant));
            if let Some(a) = addr {
                send(st.id, a, reply);
            }
        }
        "voteresp" => {
            if term > st.term {
                st.become_follower(term, 0);
                return;
            }
            if st.role == Role::Candidate && term == st.term && w.get(3) == Some(&"1") {
                if !st.votes.contains(&from) {
                    st.votes.push(from);
                }
                if st.votes.len() >= st.quorum() {
                    st.role = Role::Leader;
                    let (id, t) = (st.id, st.term);
                    log(
                        "raft/raft.go:771",
                        &format!("{id:x} became leader at term {t}"),
                    );
                    st.set_lead(id);
                    st.heard.clear();
                    st.deadline = now + st.election;
                    broadcast(&st, &format!("heartbeat {t} {id:x}"));
                }
            }
        }
        "heartbeat" => {
            if term < st.term {
                return;
            }
            if term > st.term || st.role != Role::Follower {
                st.become_follower(term, from);
            }
            st.set_lead(from);
            st.last_leader_contact = Some(now);
            st.reset_deadline();
            // The answer the leader's CheckQuorum counts.
            let addr = st.peers.iter().find(|p| p.0 == from).map(|p| p.1);
            if let Some(a) = addr {
                send(st.id, a, format!("heartbeatresp {} {:x}", st.term, st.id));
            }
        }
        "heartbeatresp" if term > st.term => st.become_follower(term, 0),
        _ => {}
    }
}

/// The timer: campaigns, heartbeats and CheckQuorum, every heartbeat interval.
fn tick(sh: &Shared) {
    let mut st = lock(sh);
    let now = Instant::now();
    match st.role {
        Role::Leader => {
            let (id, t) = (st.id, st.term);
            broadcast(&st, &format!("heartbeat {t} {id:x}"));
            if now >= st.deadline {
                let recent = 1 + st
                    .heard
                    .values()
                    .filter(|&&h| now.duration_since(h) < st.election)
                    .count();
                if recent < st.quorum() {
                    log(
                        "raft/raft.go:1007",
                        &format!("{id:x} stepped down to follower since quorum is not active"),
                    );
                    st.become_follower(t, 0);
                    return;
                }
                st.deadline = now + st.election;
            }
        }
        Role::Follower | Role::Candidate => {
            if now >= st.deadline {
                st.term += 1;
                let (id, t) = (st.id, st.term);
                st.vote = id;
                st.save();
                st.role = Role::Candidate;
                st.votes = vec![id];
                log(
                    "raft/raft.go:719",
                    &format!("{id:x} became candidate at term {t}"),
                );
                st.set_lead(0);
                st.last_leader_contact = None;
                st.reset_deadline();
                broadcast(&st, &format!("vote {t} {id:x}"));
            }
        }
    }
}

fn read_request(s: &TcpStream) -> Option<(String, String)> {
    let mut r = BufReader::new(s.try_clone().ok()?);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" || line == "\n" {
            break;
        }
        head.push_str(&line);
    }
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).ok()?;
    Some((head, String::from_utf8_lossy(&body).into_owned()))
}

fn serve_peers(l: TcpListener, sh: Shared) {
    for s in l.incoming().flatten() {
        let sh = sh.clone();
        std::thread::spawn(move || {
            let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
            if let Some((_, body)) = read_request(&s) {
                on_message(&sh, &body);
            }
            let _ = (&s).write_all(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
        });
    }
}

fn serve_clients(l: TcpListener, sh: Shared) {
    for s in l.incoming().flatten() {
        let sh = sh.clone();
        std::thread::spawn(move || {
            let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
            if read_request(&s).is_none() {
                return;
            }
            let body = {
                let st = lock(&sh);
                serde_json::json!({
                    "header": {"member_id": st.id.to_string(), "raft_term": st.term.to_string()},
                    "version": "3.4.0+standin",
                    "leader": st.lead.to_string(),
                    "raftTerm": st.term.to_string(),
                })
                .to_string()
            };
            let resp = format!(
                "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            let _ = (&s).write_all(resp.as_bytes());
        });
    }
}

fn url_addr(url: &str) -> Option<SocketAddr> {
    url.trim()
        .strip_prefix("http://")?
        .trim_end_matches('/')
        .parse()
        .ok()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--version") {
        println!("etcd Version: 3.4.0+standin\nGit SHA: election-reality stand-in\nGo Version: none\nGo OS/Arch: none");
        return;
    }
    let flag = |name: &str| -> Option<String> {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let need = |name: &str| flag(name).unwrap_or_else(|| panic!("etcd-standin needs {name}"));
    let name = need("--name");
    let token = flag("--initial-cluster-token").unwrap_or_default();
    let data = PathBuf::from(need("--data-dir"));
    let heartbeat = Duration::from_millis(need("--heartbeat-interval").parse().expect("ms"));
    let election = Duration::from_millis(need("--election-timeout").parse().expect("ms"));
    let peer_listen =
        url_addr(&need("--listen-peer-urls")).expect("--listen-peer-urls http://ADDR");
    let client_listen =
        url_addr(&need("--listen-client-urls")).expect("--listen-client-urls http://ADDR");
    let id = member_id(&name, &token);
    let peers: Vec<(u64, SocketAddr)> = need("--initial-cluster")
        .split(',')
        .filter_map(|e| {
            let (n, u) = e.split_once('=')?;
            (n != name).then(|| Some((member_id(n, &token), url_addr(u)?)))?
        })
        .collect();
    std::fs::create_dir_all(&data).expect("data dir");
    let state_file = data.join("standin-state");
    let (term, vote) = std::fs::read_to_string(&state_file)
        .ok()
        .and_then(|s| {
            let mut w = s.split_whitespace();
            Some((
                w.next()?.parse().ok()?,
                u64::from_str_radix(w.next()?, 16).ok()?,
            ))
        })
        .unwrap_or((0, 0));
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        ^ u64::from(std::process::id()).rotate_left(32)
        ^ id;
    log(
        "etcdserver/raft.go:536",
        &format!("starting local member {id:x} (election-reality stand-in)"),
    );
    let mut st = State {
        id,
        peers,
        term,
        vote,
        role: Role::Follower,
        lead: 0,
        votes: Vec::new(),
        heard: HashMap::new(),
        last_leader_contact: None,
        deadline: Instant::now(),
        heartbeat,
        election,
        rng: seed | 1,
        state_file,
    };
    log(
        "raft/raft.go:706",
        &format!("{id:x} became follower at term {term}"),
    );
    st.reset_deadline();
    let sh: Shared = Arc::new(Mutex::new(st));
    let peer = TcpListener::bind(peer_listen).expect("bind the peer port");
    let client = TcpListener::bind(client_listen).expect("bind the client port");
    let (a, b) = (sh.clone(), sh.clone());
    std::thread::spawn(move || serve_peers(peer, a));
    std::thread::spawn(move || serve_clients(client, b));
    loop {
        std::thread::sleep(heartbeat);
        tick(&sh);
    }
}
