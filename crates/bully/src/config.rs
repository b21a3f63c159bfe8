//! The bully's configuration: the shared [`Timing`], its two election timeouts and the
//! switches for the fixes later protocols added.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use election_core::Timing;

/// What a node does when it boots or recovers from a crash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Rejoin {
    /// The paper's behaviour: a booting node starts an election at once, so a returning
    /// higher id takes leadership back from the interim leader.
    #[default]
    Eager,
    /// The modern variant: a booting node first listens for a live leader's heartbeat for
    /// [`BullyConfig::listen_window`] and joins it as a follower if it hears one, even a lower
    /// id; only if the window passes in silence does it start an election. Avoids the
    /// leadership churn a flapping high-id node causes.
    Defer,
}

impl Rejoin {
    /// The lowercase name used by the runner (`rejoin = eager | defer`).
    pub fn name(self) -> &'static str {
        match self {
            Rejoin::Eager => "eager",
            Rejoin::Defer => "defer",
        }
    }
}

impl fmt::Display for Rejoin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Rejoin {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "eager" => Ok(Rejoin::Eager),
            "defer" => Ok(Rejoin::Defer),
            other => Err(format!(
                "rejoin = {other:?}: expected \"eager\" or \"defer\""
            )),
        }
    }
}

/// Configuration shared (through an `Arc`) by every node of one bully cluster.
///
/// [`BullyConfig::new`] gives the fair defaults: the workbench's common [`Timing`]
/// (50 ms heartbeats, suspicion after 150–300 ms), `t_elec` = 20 ms, `t_coord` = 2 × `t_elec`,
/// the paper's eager rejoin, and every fix switched off.
#[derive(Clone, Debug, PartialEq)]
pub struct BullyConfig {
    /// Cluster size; node ids are `1..=n`.
    pub n: u32,
    /// Heartbeat period and failure-detection window, the same for every protocol.
    pub timing: Timing,
    /// How long a candidate waits for an OK after sending ELECTION before it declares itself
    /// coordinator (the paper's T). Must exceed a round trip.
    pub t_elec: Duration,
    /// How long a node that yielded (received OK) waits for a COORDINATOR before it starts
    /// again; `None` means 2 × `t_elec` (see [`BullyConfig::t_coord`]).
    pub t_coord: Option<Duration>,
    /// Boot behaviour: the paper's eager election or the modern deferred join.
    pub rejoin: Rejoin,
    /// Majority fix: a candidate declares itself coordinator only if a majority of the whole
    /// cluster (itself included) answered during its election, and a leader steps down when
    /// it stops hearing from a majority (check-quorum lease). Prevents a minority-side leader
    /// under partition.
    pub quorum: bool,
    /// Fencing fix: every declaration increases an epoch carried by all messages; COORDINATOR
    /// and HEARTBEAT from an older epoch are ignored, and the epoch is persisted and reported.
    pub epoch: bool,
}

impl BullyConfig {
    /// The default `t_elec`: a LAN round trip plus generous slack.
    pub const DEFAULT_T_ELEC: Duration = Duration::from_millis(20);

    /// The fair defaults for an `n`-node cluster (see the type docs).
    pub fn new(n: u32) -> Self {
        BullyConfig {
            n,
            timing: Timing::default(),
            t_elec: Self::DEFAULT_T_ELEC,
            t_coord: None,
            rejoin: Rejoin::Eager,
            quorum: false,
            epoch: false,
        }
    }

    /// The effective `t_coord`: the configured value, or 2 × `t_elec` (the usual practice;
    /// the paper asks only for `t_elec` plus the time a higher node's own election takes).
    pub fn t_coord(&self) -> Duration {
        self.t_coord.unwrap_or(self.t_elec.saturating_mul(2))
    }

    /// How long a node rejoining under [`Rejoin::Defer`] listens for a leader's heartbeat:
    /// `timing.detect_timeout`, the silence after which a follower would suspect a leader
    /// anyway (longer than a heartbeat period, which [`BullyConfig::validate`] checks).
    pub fn listen_window(&self) -> Duration {
        self.timing.detect_timeout
    }

    /// Checks the configuration, naming the first bad field and its value.
    pub fn validate(&self) -> Result<(), String> {
        if self.n == 0 {
            return Err("n = 0: a cluster needs at least one node".into());
        }
        if self.t_elec.is_zero() {
            return Err("t_elec = 0: a candidate must wait for answers".into());
        }
        if self.t_coord == Some(Duration::ZERO) {
            return Err("t_coord = 0: a yielded node must wait for COORDINATOR".into());
        }
        if self.timing.heartbeat.is_zero() {
            return Err("timing.heartbeat = 0: the leader would heartbeat without pause".into());
        }
        if self.timing.heartbeat >= self.timing.detect_timeout {
            return Err(format!(
                "timing.heartbeat = {:?} is not below timing.detect_timeout = {:?}: followers would suspect a healthy leader",
                self.timing.heartbeat, self.timing.detect_timeout
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_documented_ones() {
        let c = BullyConfig::new(5);
        assert_eq!(c.timing, Timing::default());
        assert_eq!(c.t_elec, Duration::from_millis(20));
        assert_eq!(c.t_coord(), Duration::from_millis(40));
        assert_eq!(c.rejoin, Rejoin::Eager);
        assert!(!c.quorum && !c.epoch);
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn validate_names_the_field() {
        let mut c = BullyConfig::new(0);
        assert!(c.validate().unwrap_err().starts_with("n = 0"));
        c.n = 3;
        c.t_elec = Duration::ZERO;
        assert!(c.validate().unwrap_err().starts_with("t_elec"));
        c.t_elec = Duration::from_millis(5);
        c.t_coord = Some(Duration::ZERO);
        assert!(c.validate().unwrap_err().starts_with("t_coord"));
        c.t_coord = Some(Duration::from_millis(7));
        assert_eq!(c.t_coord(), Duration::from_millis(7));
        c.timing.heartbeat = Duration::from_millis(200);
        assert!(c.validate().unwrap_err().starts_with("timing.heartbeat"));
    }

    #[test]
    fn rejoin_parses() {
        assert_eq!("defer".parse::<Rejoin>(), Ok(Rejoin::Defer));
        assert_eq!("eager".parse::<Rejoin>(), Ok(Rejoin::Eager));
        assert!("lazy".parse::<Rejoin>().unwrap_err().contains("lazy"));
        assert_eq!(Rejoin::Defer.to_string(), "defer");
    }
}
