//! etcd's zap JSON log lines, read into the few election events a trial is measured from.
//!
//! Every member logs one JSON object per line (`--logger zap`); the ones that matter here come
//! from etcd-io/raft (vendored as `raft/` in etcd 3.4, `go.etcd.io/raft/v3` later) and carry the
//! member's raft id in hex at the start of `msg`:
//!
//! | `msg` | from | event |
//! | --- | --- | --- |
//! | `X became follower at term T` | `raft.go` becomeFollower | [`Event::BecameFollower`] |
//! | `X became pre-candidate at term T` | `raft.go` becomePreCandidate | [`Event::BecamePreCandidate`] |
//! | `X became candidate at term T` | `raft.go` becomeCandidate | [`Event::BecameCandidate`] |
//! | `X became leader at term T` | `raft.go` becomeLeader | [`Event::BecameLeader`] |
//! | `raft.node: X elected leader L at term T` | `node.go` run (SoftState.Lead set) | [`Event::Leader`] |
//! | `raft.node: X changed leader from A to B at term T` | `node.go` run | [`Event::Leader`] |
//! | `raft.node: X lost leader L at term T` | `node.go` run (Lead = None) | [`Event::Leader`] with `None` |
//! | `X [...] ignored MsgVote from C [...] at term T: lease is not expired (remaining ticks: K)` | `raft.go` Step, `inLease` | [`Event::VoteIgnored`] |
//! | `X stepped down to follower since quorum is not active` | `raft.go` stepLeader, MsgCheckQuorum | [`Event::SteppedDown`] |
//!
//! The `node.go` lines are the member's *belief* about who leads (its `SoftState.Lead`, as
//! `/v3/maintenance/status` reports it); the `raft.go` lines its role. `ts` is the wall clock
//! of the member's machine — on loopback the same clock as the fault injector — in milliseconds
//! (etcd 3.4: `2026-11-28T08:31:23.208Z`; an offset such as `+0000` or `+02:00` and more
//! fractional digits are read too, the fraction truncated to the millisecond as etcd 3.4's
//! own format truncates it).

/// A member's raft id (hex in the logs, decimal in `/v3/maintenance/status`).
pub type RaftId = u64;

/// One election event a member logged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// `becomeFollower`: a follower at `term` (its leader, if any, follows in a [`Event::Leader`]).
    BecameFollower {
        /// The member.
        id: RaftId,
        /// Its term.
        term: u64,
    },
    /// `becomePreCandidate`: a PreVote round at `term` (the term is not raised).
    BecamePreCandidate {
        /// The member.
        id: RaftId,
        /// Its term.
        term: u64,
    },
    /// `becomeCandidate`: an election at `term`, raised by one.
    BecameCandidate {
        /// The member.
        id: RaftId,
        /// Its new term.
        term: u64,
    },
    /// `becomeLeader` at `term`.
    BecameLeader {
        /// The member.
        id: RaftId,
        /// Its term.
        term: u64,
    },
    /// The member's belief about who leads changed (`node.go`): `Some` elected or changed,
    /// `None` lost.
    Leader {
        /// The member.
        id: RaftId,
        /// Whom it now names as leader.
        leader: Option<RaftId>,
        /// Its term.
        term: u64,
    },
    /// A vote (or pre-vote) request ignored within the leader lease (CheckQuorum's vote
    /// stickiness: `electionElapsed < electionTimeout` with a known leader).
    VoteIgnored {
        /// The voter that ignored it.
        id: RaftId,
        /// The candidate.
        from: RaftId,
        /// The voter's term.
        term: u64,
        /// A pre-vote (`MsgPreVote`) rather than a vote.
        pre: bool,
        /// The ticks left of the voter's lease, when logged.
        remaining_ticks: Option<u32>,
    },
    /// CheckQuorum deposed a leader that had not heard from a quorum in an election timeout.
    SteppedDown {
        /// The member.
        id: RaftId,
    },
}

impl Event {
    /// The member that logged it.
    pub fn member(&self) -> RaftId {
        match *self {
            Event::BecameFollower { id, .. }
            | Event::BecamePreCandidate { id, .. }
            | Event::BecameCandidate { id, .. }
            | Event::BecameLeader { id, .. }
            | Event::Leader { id, .. }
            | Event::VoteIgnored { id, .. }
            | Event::SteppedDown { id } => id,
        }
    }
}

/// An event with its timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogEvent {
    /// `ts`, milliseconds since the Unix epoch (UTC).
    pub ts_ms: i64,
    /// What happened.
    pub event: Event,
}

/// The election event on one log line, if it is one: `None` for every other line (other
/// messages, a line that is not JSON such as a Go panic's, a torn last line).
pub fn parse_line(line: &str) -> Option<LogEvent> {
    let v: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    let msg = v.get("msg")?.as_str()?;
    let event = parse_msg(msg)?;
    let ts_ms = parse_ts(v.get("ts")?.as_str()?)?;
    Some(LogEvent { ts_ms, event })
}

/// Every election event of a log's text, in the order logged.
pub fn parse_log(text: &str) -> Vec<LogEvent> {
    text.lines().filter_map(parse_line).collect()
}

fn hex(s: &str) -> Option<RaftId> {
    u64::from_str_radix(s, 16).ok()
}

fn num<T: std::str::FromStr>(s: &str) -> Option<T> {
    s.trim_end_matches([')', ':', ',']).parse().ok()
}

/// The event a raft `msg` describes.
fn parse_msg(msg: &str) -> Option<Event> {
    if let Some(rest) = msg.strip_prefix("raft.node: ") {
        let w: Vec<&str> = rest.split(' ').collect();
        // X elected leader L at term T / X lost leader L at term T /
        // X changed leader from A to B at term T
        return match w.as_slice() {
            [x, "elected", "leader", l, "at", "term", t] => Some(Event::Leader {
                id: hex(x)?,
                leader: Some(hex(l)?),
                term: num(t)?,
            }),
            [x, "lost", "leader", _, "at", "term", t] => Some(Event::Leader {
                id: hex(x)?,
                leader: None,
                term: num(t)?,
            }),
            [x, "changed", "leader", "from", _, "to", b, "at", "term", t] => Some(Event::Leader {
                id: hex(x)?,
                leader: Some(hex(b)?),
                term: num(t)?,
            }),
            _ => None,
        };
    }
    let w: Vec<&str> = msg.split(' ').collect();
    match w.as_slice() {
        [x, "became", role, "at", "term", t] => {
            let (id, term) = (hex(x)?, num(t)?);
            match *role {
                "follower" => Some(Event::BecameFollower { id, term }),
                "pre-candidate" => Some(Event::BecamePreCandidate { id, term }),
                "candidate" => Some(Event::BecameCandidate { id, term }),
                "leader" => Some(Event::BecameLeader { id, term }),
                _ => None,
            }
        }
        [x, "stepped", "down", "to", "follower", "since", "quorum", "is", "not", "active"] => {
            Some(Event::SteppedDown { id: hex(x)? })
        }
        [x, ..] if msg.contains("lease is not expired") => {
            // X [logterm: a, index: b, vote: v] ignored MsgVote from C [logterm: .., index: ..]
            // at term T: lease is not expired (remaining ticks: K)
            let at = w.iter().position(|s| *s == "ignored")?;
            let kind = *w.get(at + 1)?;
            let pre = match kind {
                "MsgVote" => false,
                "MsgPreVote" => true,
                _ => return None,
            };
            if *w.get(at + 2)? != "from" {
                return None;
            }
            let from = hex(w.get(at + 3)?)?;
            let t = w.iter().position(|s| *s == "term")?;
            let term = num(w.get(t + 1)?)?;
            let remaining_ticks = w
                .iter()
                .position(|s| *s == "ticks:")
                .and_then(|k| num(w.get(k + 1)?));
            Some(Event::VoteIgnored {
                id: hex(x)?,
                from,
                term,
                pre,
                remaining_ticks,
            })
        }
        _ => None,
    }
}

/// Milliseconds since the Unix epoch of an RFC 3339 timestamp as etcd's zap writes it
/// (`2026-11-28T08:31:23.208Z`, `2021-06-15T20:24:25.468+0800`); the fraction is truncated.
pub fn parse_ts(ts: &str) -> Option<i64> {
    let b = ts.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    let int = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = ts.get(r)?;
        if !s.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    let (y, mo, d) = (int(0..4)?, int(5..7)?, int(8..10)?);
    let (h, mi, s) = (int(11..13)?, int(14..16)?, int(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut rest = &ts[19..];
    let mut ms = 0i64;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let mut scaled = String::from(&frac[..digits.min(3)]);
        while scaled.len() < 3 {
            scaled.push('0');
        }
        ms = scaled.parse().ok()?;
        rest = &frac[digits..];
    }
    let offset_min = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let hm: String = rest[1..].chars().filter(|c| *c != ':').collect();
            if hm.len() != 4 || !hm.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let oh: i64 = hm[..2].parse().ok()?;
            let om: i64 = hm[2..].parse().ok()?;
            sign * (oh * 60 + om)
        }
    };
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + s - offset_min * 60;
    Some(secs * 1000 + ms)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = (if y >= 0 { y } else { y - 399 }) / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_read_as_unix_milliseconds() {
        assert_eq!(parse_ts("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(parse_ts("1970-01-01T00:00:01.5Z"), Some(1500));
        assert_eq!(parse_ts("2000-03-01T00:00:00Z"), Some(951_868_800_000));
        assert_eq!(
            parse_ts("2026-11-28T08:31:23.208Z"),
            parse_ts("2026-11-28T09:31:23.208999+0100")
        );
        assert_eq!(
            parse_ts("2026-11-28T08:31:23.208Z"),
            parse_ts("2026-11-28T06:31:23.208-02:00")
        );
        assert_eq!(parse_ts("2026-11-28 08:31:23Z"), None);
        assert_eq!(parse_ts("2026-13-28T08:31:23Z"), None);
    }
}
