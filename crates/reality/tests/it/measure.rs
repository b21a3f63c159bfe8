//! The mapping from a real trial's logs to the simulator's columns, on the fixture corpus: the
//! numbers a reader gets by hand from the log timestamps, and a whole run measured again from
//! its files giving the rows it wrote.

use election_reality::log::parse_log;
use election_reality::measure::{measure, Act, Window};
use election_reality::replay::{replay_dir, Replayed};
use election_reality::run::{reality_record, verdict, Load, TrialReport, REALITY_COLUMNS};
use election_runner::results::TrialRow;
use election_sim::Outcome;

use crate::common::{fixture, log_text, KILL_PAUSE, KILL_PAUSE_IDS, PARTITION, PRE_VOTE};

fn replayed(run: &str, scenario: &str, seed: u64) -> Replayed {
    replay_dir(&fixture(run))
        .unwrap()
        .into_iter()
        .find(|r| r.row.scenario == scenario && r.row.seed == seed)
        .unwrap()
}

/// Kill 2 of the corpus, the failure mode of issue 45: the leader (member 2, term 3) is
/// SIGKILLed at t0; member 3 campaigns at +931 ms (`became candidate at term 4`), member 1
/// ignores its vote at +933 ms because its own lease has a tick left (`lease is not expired
/// (remaining ticks: 1)`), campaigns itself at +1066 ms in the same term 4 (a split vote),
/// times out again and wins term 5 at +2167/+2168 ms; member 3 follows it at +2168 ms.
#[test]
fn a_lost_term_is_measured_from_its_log() {
    let r = replayed(KILL_PAUSE, "leader-crash", 2);
    let (row, f) = (&r.row, &r.failover);
    assert_eq!(row.detect_ms, Some(931.0));
    assert_eq!(row.failover_ms, Some(2168.0));
    assert_eq!(row.elect_ms, Some(2168.0));
    assert_eq!(row.unavailable_ms, 2168.0);
    // Two live members stranded from the kill to the new leader.
    assert_eq!(row.stranded_node_ms, 2.0 * 2168.0);
    assert_eq!(row.leader, Some(1));
    assert_eq!(row.elections_started, 3);
    assert_eq!(row.leader_changes, 1);
    assert!(!row.split_brain);
    assert_eq!(row.outcome, Outcome::RecoveredAfter);
    // 2168 ms is more than two election timeouts of 1000 ms: rounded up, three.
    assert_eq!(row.recovered_timeouts, Some(3));
    assert_eq!(f.leader_before, Some((2, 3)));
    assert_eq!(f.leader_after, Some((1, 5)));
    assert_eq!(f.terms(), Some(2));
    assert_eq!(
        (f.candidacies, f.pre_candidacies, f.votes_ignored),
        (3, 0, 1)
    );
    assert_eq!(r.window.t0_ms, 1_795_855_749_361);
}

/// Pause 1 of the corpus: the leader (member 3, term 6) is SIGSTOPped at t0 for the spec's
/// pause_ms (4000 ms at 100/1000); member 2 campaigns at +1285 ms and is followed by member 1 at
/// +1286 ms. The old leader, SIGCONTed at +4000 ms, still believes it leads until it hears term 7
/// at +4001 ms: one millisecond of two acting leaders, and only then is the new leader followed
/// by every member (elect_ms).
#[test]
fn a_pause_is_measured_from_its_log() {
    let r = replayed(KILL_PAUSE, "leader-pause", 1);
    let (row, f) = (&r.row, &r.failover);
    assert_eq!(r.window.calm_ms - r.window.t0_ms, 4000);
    assert_eq!(row.detect_ms, Some(1285.0));
    assert_eq!(row.failover_ms, Some(1286.0));
    assert_eq!(row.elect_ms, Some(4001.0));
    assert_eq!(row.paused_leader_ms, 4000.0);
    assert!(row.split_brain);
    assert_eq!((row.split_brain_ms, row.max_leaders), (1.0, 2));
    // Three members stranded until the new leader, then the paused old one until it hears it.
    assert_eq!(row.stranded_node_ms, 3.0 * 1286.0 + (4001.0 - 1286.0));
    assert_eq!(f.leader_before, Some((3, 6)));
    assert_eq!(f.leader_after, Some((2, 7)));
    assert_eq!(f.terms(), Some(1));
    // The resumed leader's backlog holds a stale vote request it ignores at +4001 ms: after the
    // failover, so not one of the failover's ignored votes.
    assert_eq!((f.candidacies, f.votes_ignored), (1, 0));
}

/// With `--pre-vote` a failover is a pre-candidacy then a candidacy in one term.
#[test]
fn a_pre_vote_failover_counts_its_pre_candidacy() {
    let r = replayed(PRE_VOTE, "leader-crash", 1);
    assert_eq!(r.row.protocol, "etcd@3.4+pre_vote");
    assert_eq!(r.row.detect_ms, Some(1323.0));
    assert_eq!(r.row.failover_ms, Some(1324.0));
    assert_eq!((r.failover.pre_candidacies, r.failover.candidacies), (1, 1));
    assert_eq!(r.failover.terms(), Some(1));
    // The pre-candidate and then the candidate: two entries into the candidate role, as the
    // simulator counts a PreVote round.
    assert_eq!(r.row.elections_started, 2);
}

/// Partition 1 of the corpus: the leader (member 2, term 2) is cut off from members 1 and 3
/// at t0 for 10 s. Member 3 campaigns at +1264 ms and leads at +1265 ms (member 1 follows it
/// then); the deposed leader, alone, steps down only when CheckQuorum finds no quorum at
/// +1763 ms (`stepped down to follower since quorum is not active`): 1763 ms as a minority
/// leader, 498 of them beside the new one. Cut off, it campaigns on alone (no PreVote) up to
/// term 8, and after the heal its term deposes the new leader (+10064 ms) until member 3 wins
/// term 9 at +11264 ms, which the other two follow at +11265 ms.
#[test]
fn a_partitioned_leader_lingers_until_check_quorum() {
    let r = replayed(PARTITION, "partition-leader-minority", 1);
    let (row, f) = (&r.row, &r.failover);
    assert_eq!(r.window.calm_ms - r.window.t0_ms, 10_001);
    assert_eq!(row.detect_ms, Some(1264.0));
    assert_eq!(row.failover_ms, Some(1265.0));
    assert_eq!(row.minority_leader_ms, 1763.0);
    assert!(row.split_brain);
    assert_eq!(row.split_brain_ms, 1763.0 - 1265.0);
    assert_eq!(row.elect_ms, Some(11265.0));
    // Without a quorum leader: to the first election, and from the deposing vote to the instant
    // a second member names term 9's leader.
    assert_eq!(row.unavailable_ms, 1265.0 + (11265.0 - 10064.0));
    assert_eq!(row.leader_changes, 2);
    assert_eq!(f.leader_before, Some((2, 2)));
    assert_eq!(f.leader_after, Some((3, 3)));
    assert_eq!((f.candidacies, f.stepped_down), (1, 1));
}

/// A whole run measured again from its files alone gives the rows it wrote as it ran, byte for
/// byte, and the same failover details.
#[test]
fn a_run_measured_again_from_its_files_gives_its_rows() {
    for run in [KILL_PAUSE, PRE_VOTE, PARTITION] {
        let dir = fixture(run);
        let again = replay_dir(&dir).unwrap();
        let text = std::fs::read_to_string(dir.join("trials.csv")).unwrap();
        let mut rd = csv::Reader::from_reader(text.as_bytes());
        let written: Vec<TrialRow> = rd
            .records()
            .map(|r| {
                let r = r.unwrap();
                TrialRow::from_record(&r.iter().collect::<Vec<_>>(), 0).unwrap()
            })
            .collect();
        assert_eq!(again.len(), written.len(), "{run}");
        for (a, w) in again.iter().zip(&written) {
            assert_eq!(a.row.to_record(), w.to_record(), "{run}");
            assert_eq!(a.row.validate(), Ok(()), "{run}");
        }
        let text = std::fs::read_to_string(dir.join("reality.csv")).unwrap();
        let mut rd = csv::Reader::from_reader(text.as_bytes());
        assert_eq!(
            rd.headers().unwrap().iter().collect::<Vec<_>>(),
            REALITY_COLUMNS
        );
        for (a, rec) in again.iter().zip(rd.records()) {
            let rec = rec.unwrap();
            let get = |k: &str| {
                let i = REALITY_COLUMNS.iter().position(|c| *c == k).unwrap();
                rec[i].to_string()
            };
            let t = TrialReport {
                row: a.row.clone(),
                failover: a.failover,
                load: Load(Some([
                    get("load1").parse().unwrap(),
                    get("load5").parse().unwrap(),
                    get("load15").parse().unwrap(),
                ])),
                window: a.window,
                target: get("target").parse().unwrap(),
                lost_terms: get("lost_terms"),
                note: get("note"),
            };
            assert_eq!(reality_record(&t), rec.iter().collect::<Vec<_>>(), "{run}");
        }
    }
}

/// The observer sees only what the window holds: the same kill measured with the journal's
/// restart of the killed member inside the window counts it back as a follower, and a window
/// that ends before the new leader has none.
#[test]
fn the_window_bounds_what_is_measured() {
    let ids = KILL_PAUSE_IDS.to_vec();
    let events: Vec<_> = (1..=3)
        .flat_map(|m| parse_log(&log_text(KILL_PAUSE, m)))
        .collect();
    let t0 = 1_795_855_749_361;
    let journal = vec![(t0, Act::Crash(1))];
    let w = Window {
        origin_ms: t0 - 2000,
        t0_ms: t0,
        calm_ms: t0,
        end_ms: t0 + 2000,
    };
    let m = measure(&ids, &events, &journal, w, verdict(1000));
    assert_eq!(m.metrics.failover_ms, None);
    assert!(!m.metrics.converged);
    assert_eq!(m.metrics.unavailable_ms, 2000.0);
    assert_eq!(m.failover.leader_after, None);
    assert_eq!(m.failover.candidacies, 2);
    let w = Window {
        end_ms: t0 + 2168,
        ..w
    };
    let m = measure(&ids, &events, &journal, w, verdict(1000));
    assert_eq!(m.metrics.failover_ms, Some(2168.0));
    // The verdict needs the leadership to have held two election timeouts: not yet (one that
    // began at the very end has held no time at all: the observer's `no-leader`).
    assert_eq!(m.metrics.outcome, Outcome::NoLeader);
    assert!(m.metrics.outcome.is_failure());
}

/// Within one millisecond the logs cannot tell which member acted first: a handover logged in
/// one millisecond (the old leader's `became follower`, the new one's `became leader`) is not
/// two leaders at once, whichever member's file is read first. Constructed events, real
/// message shapes.
#[test]
fn a_handover_within_one_millisecond_is_not_a_split_brain() {
    use election_reality::log::{Event, LogEvent};
    let (a, b, c) = (0xa, 0xb, 0xc);
    let at = |ts_ms, event| LogEvent { ts_ms, event };
    let boot = |id| {
        [
            at(0, Event::BecameFollower { id, term: 1 }),
            at(
                1,
                Event::Leader {
                    id,
                    leader: Some(a),
                    term: 1,
                },
            ),
        ]
    };
    let mut base: Vec<LogEvent> = vec![at(0, Event::BecameLeader { id: a, term: 1 })];
    base.push(at(
        0,
        Event::Leader {
            id: a,
            leader: Some(a),
            term: 1,
        },
    ));
    base.extend(boot(b));
    base.extend(boot(c));
    // At 500 ms: a steps down as b takes term 2; c follows b at once.
    let old = [
        at(500, Event::BecameFollower { id: a, term: 2 }),
        at(
            500,
            Event::Leader {
                id: a,
                leader: Some(b),
                term: 2,
            },
        ),
    ];
    let new = [
        at(500, Event::BecameLeader { id: b, term: 2 }),
        at(
            500,
            Event::Leader {
                id: b,
                leader: Some(b),
                term: 2,
            },
        ),
        at(
            500,
            Event::Leader {
                id: c,
                leader: Some(b),
                term: 2,
            },
        ),
    ];
    let w = Window {
        origin_ms: 0,
        t0_ms: 100,
        calm_ms: 100,
        end_ms: 3000,
    };
    for first_new in [false, true] {
        let mut events = base.clone();
        if first_new {
            events.extend(new);
            events.extend(old);
        } else {
            events.extend(old);
            events.extend(new);
        }
        let m = measure(&[a, b, c], &events, &[], w, verdict(1000));
        assert_eq!(
            m.metrics.max_leaders, 1,
            "new leader's lines first: {first_new}"
        );
        assert!(!m.metrics.split_brain);
        assert_eq!(m.metrics.leader.map(|l| l.0), Some(2));
    }
}

/// What the logs show for each lost term, as `reality.csv`'s `lost_terms` records it: kill 2
/// of the first run lost term 4 to a split vote, during which m1 ignored m3's vote because its
/// lease had a tick left; pause 2 lost term 8 to a split vote alone.
#[test]
fn the_lost_terms_name_the_split_vote_and_the_lease() {
    let again = election_reality::replay::replay_dir(&fixture(KILL_PAUSE)).unwrap();
    let lost: Vec<&str> = again.iter().map(|r| r.lost_terms.as_str()).collect();
    assert_eq!(
        lost,
        [
            "",
            "term 4: m1 and m3 stood (split vote); m1 ignored m3's MsgVote (lease is not expired: remaining ticks 1)",
            "",
            "",
            "term 8: m1 and m3 stood (split vote)",
            "",
        ]
    );
}

/// `--replay DIR --write` writes the committed fixture's files byte for byte (they were
/// written so), and a `manifest.json` that reads as a results directory of `mode = real`.
#[test]
fn a_rewritten_run_is_its_files_and_a_manifest() {
    for run in [KILL_PAUSE, PRE_VOTE, PARTITION] {
        let dir = fixture(run);
        let out = tempfile::tempdir().unwrap();
        let files = election_reality::replay::rewrite(&dir, out.path()).unwrap();
        assert_eq!(files.len(), 4, "{files:?}");
        for f in ["trials.csv", "summary.csv", "reality.csv"] {
            assert_eq!(
                std::fs::read_to_string(out.path().join(f)).unwrap(),
                std::fs::read_to_string(dir.join(f)).unwrap(),
                "{run}/{f}"
            );
        }
        let m =
            election_runner::results::Manifest::read(&out.path().join("manifest.json")).unwrap();
        assert_eq!(m.config["mode"], "real");
        assert_eq!(m.config["nets"][0], "loopback");
        let rows = std::fs::read_to_string(dir.join("trials.csv")).unwrap();
        assert_eq!(m.trials as usize, rows.lines().count() - 1);
        assert!(m
            .command
            .starts_with("election-bench reality --nodes 3 --trials "));
    }
}

/// `--trials`: a count per fault and size, the most specific entry counting.
#[test]
fn trials_per_fault_and_size() {
    use election_reality::run::{Fault, Trials};
    let t = Trials::parse("3:kill=40,3:pause=20,3:partition=15,5:kill=40").unwrap();
    assert_eq!(t.of(3, Fault::Kill), 40);
    assert_eq!(t.of(3, Fault::Pause), 20);
    assert_eq!(t.of(3, Fault::Partition), 15);
    assert_eq!(t.of(5, Fault::Kill), 40);
    assert_eq!(t.of(5, Fault::Pause), 0, "a cell no entry names is not run");
    assert_eq!(
        t.faults(),
        Some(vec![Fault::Kill, Fault::Pause, Fault::Partition])
    );
    assert_eq!(
        t.to_string(),
        "3:kill=40,3:pause=20,3:partition=15,5:kill=40"
    );
    let t = Trials::parse("10,kill=40,5:kill=2").unwrap();
    assert_eq!(
        (
            t.of(3, Fault::Kill),
            t.of(5, Fault::Kill),
            t.of(5, Fault::Pause)
        ),
        (40, 2, 10)
    );
    assert_eq!(t.faults(), None);
    for bad in [
        "",
        "kill",
        "crash=3",
        "x:kill=3",
        "kill=3,kill=4",
        "kill=-1",
    ] {
        let e = Trials::parse(bad).unwrap_err().to_string();
        assert!(e.contains("--trials"), "{bad}: {e}");
    }
    // Entries must name sizes and faults the run has, and every size needs trials.
    let mut args = election_reality::RealityArgs::new("/nonexistent".into());
    args.etcd = "/nonexistent/etcd".into();
    args.trials = Trials::parse("7:kill=3").unwrap();
    let e = election_reality::run(&args, |_| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("7 members is not one of --nodes"), "{e}");
    args.trials = Trials::parse("partition=3").unwrap();
    let e = election_reality::run(&args, |_| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("partition is not one of --faults"), "{e}");
    args.nodes = vec![3, 5];
    args.trials = Trials::parse("3:kill=3").unwrap();
    let e = election_reality::run(&args, |_| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("no trials on 5 members"), "{e}");
}

/// The committed run (`results/reality`, its raft log lines kept) measures again to its rows,
/// and a partition's lost term names the cut-off leader's own candidacy apart from the
/// majority's split vote: partition 11 cut m1 off; m2 and m3 split term 136 (m2 having
/// ignored m3's vote within its lease) while m1 stood alone on its side.
#[test]
fn the_committed_run_names_a_cut_off_candidate_apart() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../results/reality");
    if !dir.join("run.json").is_file() {
        return;
    }
    let again = replay_dir(&dir).unwrap();
    assert_eq!(again.len(), 115);
    let written = std::fs::read_to_string(dir.join("trials.csv")).unwrap();
    for (r, line) in again.iter().zip(written.lines().skip(1)) {
        assert_eq!(
            String::from_utf8(election_runner::results::write_trials([&r.row])).unwrap(),
            format!("{line}\n")
        );
    }
    let cut = again
        .iter()
        .find(|r| r.row.scenario == "partition-leader-minority" && r.row.seed == 11)
        .unwrap();
    assert_eq!(
        cut.lost_terms,
        "term 136: m2 and m3 stood (split vote); m1 stood cut off; m2 ignored m3's MsgVote (lease is not expired: remaining ticks 1)"
    );
}
