//! The parser on real etcd 3.4.23 lines: each election message it reads, and every other line
//! it leaves alone.

use election_reality::log::{parse_line, parse_log, Event};

use crate::common::{log_text, KILL_PAUSE, KILL_PAUSE_IDS, PARTITION, PRE_VOTE};

/// One line of each kind, copied from the fixture logs, read to the exact event and instant.
#[test]
fn each_kind_of_line_reads_to_its_event() {
    let [m1, m2, m3] = KILL_PAUSE_IDS;
    let ts = |s: &str| election_reality::log::parse_ts(s).unwrap();
    let cases: [(&str, &str, Event); 7] = [
        (
            r#"{"level":"info","ts":"2026-11-28T08:49:10.294Z","caller":"raft/raft.go:850","msg":"56a276743918c5d8 [logterm: 3, index: 10, vote: c3da0d31b8b36174] ignored MsgVote from fa188d307044974f [logterm: 3, index: 10] at term 3: lease is not expired (remaining ticks: 1)"}"#,
            "2026-11-28T08:49:10.294Z",
            Event::VoteIgnored {
                id: m1,
                from: m3,
                term: 3,
                pre: false,
                remaining_ticks: Some(1),
            },
        ),
        (
            r#"{"level":"info","ts":"2026-11-28T08:49:25.882Z","caller":"raft/node.go:329","msg":"raft.node: fa188d307044974f changed leader from fa188d307044974f to c3da0d31b8b36174 at term 7"}"#,
            "2026-11-28T08:49:25.882Z",
            Event::Leader {
                id: m3,
                leader: Some(m2),
                term: 7,
            },
        ),
        (
            r#"{"level":"info","ts":"2026-11-28T08:49:48.223Z","caller":"raft/raft.go:735","msg":"f5f08f4a4cda11dd became pre-candidate at term 1"}"#,
            "2026-11-28T08:49:48.223Z",
            Event::BecamePreCandidate {
                id: 0xf5f08f4a4cda11dd,
                term: 1,
            },
        ),
        (
            r#"{"level":"info","ts":"2026-11-28T08:49:10.427Z","caller":"raft/raft.go:719","msg":"56a276743918c5d8 became candidate at term 4"}"#,
            "2026-11-28T08:49:10.427Z",
            Event::BecameCandidate { id: m1, term: 4 },
        ),
        (
            r#"{"level":"info","ts":"2026-11-28T08:49:11.529Z","caller":"raft/raft.go:771","msg":"56a276743918c5d8 became leader at term 5"}"#,
            "2026-11-28T08:49:11.529Z",
            Event::BecameLeader { id: m1, term: 5 },
        ),
        (
            r#"{"level":"info","ts":"2026-11-28T08:49:11.529Z","caller":"raft/node.go:327","msg":"raft.node: fa188d307044974f elected leader 56a276743918c5d8 at term 5"}"#,
            "2026-11-28T08:49:11.529Z",
            Event::Leader {
                id: m3,
                leader: Some(m1),
                term: 5,
            },
        ),
        (
            r#"{"level":"info","ts":"2026-11-28T08:49:10.292Z","caller":"raft/node.go:333","msg":"raft.node: fa188d307044974f lost leader c3da0d31b8b36174 at term 4"}"#,
            "2026-11-28T08:49:10.292Z",
            Event::Leader {
                id: m3,
                leader: None,
                term: 4,
            },
        ),
    ];
    let corpus: Vec<String> = [KILL_PAUSE, PRE_VOTE]
        .iter()
        .flat_map(|run| (1..=3).map(move |m| log_text(run, m)))
        .collect();
    for (line, at, want) in cases {
        // Each line is verbatim from the corpus, a real etcd's.
        assert!(
            corpus.iter().any(|t| t.lines().any(|l| l == line)),
            "{line}"
        );
        let e = parse_line(line).unwrap_or_else(|| panic!("not read: {line}"));
        assert_eq!(e.event, want, "{line}");
        assert_eq!(e.ts_ms, ts(at), "{line}");
    }
    // The same message with etcd's later timestamp format, and a step-down (not in the
    // corpus: no partition was run), in etcd-io/raft's wording.
    let later = r#"{"level":"info","ts":"2026-11-28T09:49:10.294123+0100","caller":"raft/raft.go:850","msg":"c3da0d31b8b36174 became follower at term 9"}"#;
    assert_eq!(
        parse_line(later).map(|e| (e.ts_ms, e.event)),
        Some((
            ts("2026-11-28T08:49:10.294Z"),
            Event::BecameFollower { id: m2, term: 9 }
        ))
    );
    let down = r#"{"level":"warn","ts":"2026-11-28T08:49:10.294Z","caller":"raft/raft.go:1007","msg":"c3da0d31b8b36174 stepped down to follower since quorum is not active"}"#;
    assert_eq!(
        parse_line(down).map(|e| e.event),
        Some(Event::SteppedDown { id: m2 })
    );
}

/// Every line of the corpus that names a role, a leader or an ignored vote is read, and no
/// other: the counts are those of `grep` on the same files.
#[test]
fn the_corpus_reads_completely() {
    for run in [KILL_PAUSE, PRE_VOTE, PARTITION] {
        for m in 1..=3 {
            let text = log_text(run, m);
            let events = parse_log(&text);
            let grep = |pat: &str| text.lines().filter(|l| l.contains(pat)).count();
            let count = |f: fn(&Event) -> bool| events.iter().filter(|e| f(&e.event)).count();
            assert_eq!(
                count(|e| matches!(e, Event::BecameFollower { .. })),
                grep(" became follower at term "),
                "{run} m{m}"
            );
            assert_eq!(
                count(|e| matches!(e, Event::BecamePreCandidate { .. })),
                grep(" became pre-candidate at term "),
                "{run} m{m}"
            );
            assert_eq!(
                count(|e| matches!(e, Event::BecameCandidate { .. })),
                grep(" became candidate at term "),
                "{run} m{m}"
            );
            assert_eq!(
                count(|e| matches!(e, Event::BecameLeader { .. })),
                grep(" became leader at term "),
                "{run} m{m}"
            );
            assert_eq!(
                count(|e| matches!(e, Event::Leader { .. })),
                grep(" elected leader ") + grep(" changed leader from ") + grep(" lost leader "),
                "{run} m{m}"
            );
            assert_eq!(
                count(|e| matches!(e, Event::VoteIgnored { .. })),
                grep("lease is not expired"),
                "{run} m{m}"
            );
            assert_eq!(
                count(|e| matches!(e, Event::SteppedDown { .. })),
                grep("stepped down to follower since quorum is not active"),
                "{run} m{m}"
            );
            // Each member logs only its own events, and its timestamps never go back.
            let me = events[0].event.member();
            assert!(events.iter().all(|e| e.event.member() == me), "{run} m{m}");
            assert!(
                events.windows(2).all(|w| w[0].ts_ms <= w[1].ts_ms),
                "{run} m{m}"
            );
        }
    }
    // The pre-vote run's members campaign through PreVote, the other's never do.
    let pre = |run| {
        (1..=3)
            .flat_map(|m| parse_log(&log_text(run, m)))
            .filter(|e| matches!(e.event, Event::BecamePreCandidate { .. }))
            .count()
    };
    assert!(pre(PRE_VOTE) >= 3);
    assert_eq!(pre(KILL_PAUSE), 0);
}

/// Lines that are not election events: other messages, broken JSON, a torn last line.
#[test]
fn other_lines_are_left_alone() {
    let text = log_text(KILL_PAUSE, 1);
    let other = text
        .lines()
        .find(|l| l.contains("peer became active"))
        .unwrap();
    assert_eq!(parse_line(other), None);
    let first = text
        .lines()
        .find(|l| l.contains(" became leader at term "))
        .unwrap();
    assert!(parse_line(first).is_some());
    assert_eq!(parse_line(&first[..first.len() / 2]), None);
    assert_eq!(parse_line("panic: runtime error"), None);
    assert_eq!(
        parse_line(r#"{"ts":"2026-11-28T08:49:10.294Z","msg":"zz became leader at term 5"}"#),
        None
    );
    assert_eq!(
        parse_line(r#"{"ts":"yesterday","msg":"56a276743918c5d8 became leader at term 5"}"#),
        None
    );
}
