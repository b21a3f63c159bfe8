//! A real etcd cluster on 127.0.0.1: every member a child process we started, each in its own
//! process group, tracked by PID and killed when the [`Cluster`] is dropped — after a normal
//! run, on an error (the `?` that leaves the run drops it) and on Ctrl-C or SIGTERM
//! ([`install_interrupt_handler`]: the handler kills every registered group itself, then the
//! run notices [`interrupted`] and unwinds).
//!
//! Members listen on distinct free ports, keep their data in a fresh temporary directory
//! (removed with the cluster) and write their zap JSON log to standard error, which is a file
//! per member that we opened in append mode: a restarted member goes on in the same file, and
//! the file outlives the run as the evidence its rows were measured from.
//!
//! The faults act on processes: [`Cluster::kill`] is SIGKILL to the member's group (then
//! [`Cluster::restart`] starts it again with the same flags and data directory), and
//! [`Cluster::pause`] / [`Cluster::resume`] are SIGSTOP / SIGCONT, a stop-the-world pause.
//! Started with [`ClusterConfig::proxies`], every member's advertised peer URL is a proxy
//! ([`crate::proxy`]) in front of the port it listens on, and [`Cluster::partition`] /
//! [`Cluster::heal`] cut and restore links between members.

use std::fs::OpenOptions;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use crate::log::RaftId;
use crate::proxy::Proxies;
use crate::status::{query, MemberStatus};
use crate::Error;

/// Set by Ctrl-C or SIGTERM (see [`install_interrupt_handler`]).
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The process groups of every member running now, across clusters: what the interrupt
/// handler kills.
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

fn groups() -> std::sync::MutexGuard<'static, Vec<i32>> {
    GROUPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// SIGKILL every registered member group (the interrupt handler's job; Drop does the same per
/// cluster and reaps).
fn kill_registered() {
    for &g in groups().iter() {
        let _ = killpg(Pid::from_raw(g), Signal::SIGKILL);
    }
}

/// Make Ctrl-C and SIGTERM kill every member we started, at once, and mark the run
/// [`interrupted`] so it stops at its next check. Call once, before the first cluster starts;
/// a second call (another handler is already set) is not an error.
pub fn install_interrupt_handler() -> Result<(), Error> {
    match ctrlc::set_handler(|| {
        INTERRUPTED.store(true, Ordering::SeqCst);
        kill_registered();
    }) {
        Ok(()) | Err(ctrlc::Error::MultipleHandlers) => Ok(()),
        Err(e) => Err(Error::Process(format!(
            "cannot install the Ctrl-C handler: {e}"
        ))),
    }
}

/// Has Ctrl-C or SIGTERM arrived?
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Milliseconds since the Unix epoch on the wall clock, the clock etcd's log lines carry.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Sleep `d` in short slices, returning early with an error on Ctrl-C.
pub fn sleep(d: Duration) -> Result<(), Error> {
    let until = Instant::now() + d;
    loop {
        if interrupted() {
            return Err(Error::Interrupted);
        }
        let now = Instant::now();
        if now >= until {
            return Ok(());
        }
        std::thread::sleep((until - now).min(Duration::from_millis(20)));
    }
}

/// How to start the cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterConfig {
    /// The `etcd` binary.
    pub etcd: PathBuf,
    /// Members.
    pub nodes: u32,
    /// `--heartbeat-interval`, ms.
    pub heartbeat_ms: u64,
    /// `--election-timeout`, ms.
    pub election_ms: u64,
    /// `--pre-vote`.
    pub pre_vote: bool,
    /// Where each member's log goes (`m1.log`, `m2.log`, ...).
    pub log_dir: PathBuf,
    /// Put a [`Proxies`] proxy in front of every member's peer port, so that links can be
    /// cut ([`Cluster::partition`], [`Cluster::heal`]).
    pub proxies: bool,
}

/// One member.
#[derive(Debug)]
struct Member {
    name: String,
    client: SocketAddr,
    /// The peer address etcd listens on.
    peer: SocketAddr,
    /// The peer address the others reach it at: `peer`, or its proxy's.
    advertised: SocketAddr,
    data_dir: PathBuf,
    log: PathBuf,
    child: Option<Child>,
    paused: bool,
    id: RaftId,
}

/// A running cluster (see the module docs).
#[derive(Debug)]
pub struct Cluster {
    cfg: ClusterConfig,
    token: String,
    members: Vec<Member>,
    // Dropped after the members are killed (field order): the proxies, then the data.
    proxies: Option<Proxies>,
    _data: tempfile::TempDir,
}

/// `n` distinct free ports on 127.0.0.1 (all held until every one is chosen).
fn free_ports(n: usize) -> Result<Vec<SocketAddr>, Error> {
    let held: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<_, _>>()
        .map_err(|e| Error::Process(format!("cannot find a free port on 127.0.0.1: {e}")))?;
    held.iter()
        .map(|l| l.local_addr())
        .collect::<Result<_, _>>()
        .map_err(|e| Error::Process(format!("cannot read a bound port: {e}")))
}

/// The last `lines` lines of a file, for error messages.
pub fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

impl Cluster {
    /// Start `cfg.nodes` members and wait (at most `startup`) until every one answers its
    /// status endpoint; their raft ids are learned from those answers.
    pub fn start(cfg: &ClusterConfig, startup: Duration) -> Result<Cluster, Error> {
        if cfg.nodes == 0 {
            return Err(Error::Usage("a cluster needs at least one member".into()));
        }
        let data = tempfile::Builder::new()
            .prefix("election-reality-")
            .tempdir()
            .map_err(|e| Error::Process(format!("cannot create a data directory: {e}")))?;
        std::fs::create_dir_all(&cfg.log_dir).map_err(|e| Error::Io {
            path: cfg.log_dir.clone(),
            source: e,
        })?;
        let n = cfg.nodes as usize;
        let ports = free_ports(2 * n)?;
        // The proxies' listeners are bound now and kept: they are the advertised peer URLs.
        let proxy_listeners: Vec<TcpListener> = if cfg.proxies {
            (0..n)
                .map(|_| TcpListener::bind("127.0.0.1:0"))
                .collect::<Result<_, _>>()
                .map_err(|e| Error::Process(format!("cannot bind a peer proxy: {e}")))?
        } else {
            Vec::new()
        };
        let mut advertised = Vec::new();
        for l in &proxy_listeners {
            advertised.push(
                l.local_addr()
                    .map_err(|e| Error::Process(format!("cannot read a bound port: {e}")))?,
            );
        }
        let proxies = if cfg.proxies {
            let targets = (0..n).map(|i| ports[2 * i + 1]).collect();
            Some(Proxies::start(proxy_listeners, targets)?)
        } else {
            None
        };
        let members = (0..n)
            .map(|i| Member {
                name: format!("m{}", i + 1),
                client: ports[2 * i],
                peer: ports[2 * i + 1],
                advertised: advertised.get(i).copied().unwrap_or(ports[2 * i + 1]),
                data_dir: data.path().join(format!("m{}", i + 1)),
                log: cfg.log_dir.join(format!("m{}.log", i + 1)),
                child: None,
                paused: false,
                id: 0,
            })
            .collect();
        let token = format!("election-reality-{}-{}", std::process::id(), now_ms());
        let mut c = Cluster {
            cfg: cfg.clone(),
            token,
            members,
            proxies,
            _data: data,
        };
        for i in 0..n {
            c.spawn(i)?;
        }
        let deadline = Instant::now() + startup;
        for i in 0..n {
            loop {
                c.check_alive()?;
                if let Ok(s) = query(c.members[i].client, Duration::from_millis(500)) {
                    c.members[i].id = s.member;
                    break;
                }
                if Instant::now() >= deadline {
                    return Err(Error::Process(format!(
                        "member {} did not answer on {} within {} s; its log ends:\n{}",
                        c.members[i].name,
                        c.members[i].client,
                        startup.as_secs(),
                        tail(&c.members[i].log, 5)
                    )));
                }
                sleep(Duration::from_millis(50))?;
            }
        }
        if let Some(p) = &c.proxies {
            p.set_ids(c.ids());
        }
        Ok(c)
    }

    fn initial_cluster(&self) -> String {
        self.members
            .iter()
            .map(|m| format!("{}=http://{}", m.name, m.advertised))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The command line of member `i` (the same at every start).
    fn command(&self, i: usize) -> Command {
        let m = &self.members[i];
        let mut cmd = Command::new(&self.cfg.etcd);
        cmd.arg("--name")
            .arg(&m.name)
            .arg("--data-dir")
            .arg(&m.data_dir)
            .arg("--listen-peer-urls")
            .arg(format!("http://{}", m.peer))
            .arg("--initial-advertise-peer-urls")
            .arg(format!("http://{}", m.advertised))
            .arg("--listen-client-urls")
            .arg(format!("http://{}", m.client))
            .arg("--advertise-client-urls")
            .arg(format!("http://{}", m.client))
            .arg("--initial-cluster")
            .arg(self.initial_cluster())
            .arg("--initial-cluster-state")
            .arg("new")
            .arg("--initial-cluster-token")
            .arg(&self.token)
            .arg("--heartbeat-interval")
            .arg(self.cfg.heartbeat_ms.to_string())
            .arg("--election-timeout")
            .arg(self.cfg.election_ms.to_string())
            .arg("--logger")
            .arg("zap")
            .arg("--log-outputs")
            .arg("stderr");
        if self.cfg.pre_vote {
            cmd.arg("--pre-vote");
        }
        cmd
    }

    /// Start member `i` (again), its output appended to its log, in a process group of its own.
    fn spawn(&mut self, i: usize) -> Result<(), Error> {
        use std::os::unix::process::CommandExt;
        let log = &self.members[i].log;
        let open = || {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
                .map_err(|e| Error::Io {
                    path: log.clone(),
                    source: e,
                })
        };
        let (out, err) = (open()?, open()?);
        let mut cmd = self.command(i);
        cmd.stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        let mut registry = groups();
        if interrupted() {
            return Err(Error::Interrupted);
        }
        let child = cmd.spawn().map_err(|e| {
            Error::Process(format!(
                "cannot start {} as member {}: {e}",
                self.cfg.etcd.display(),
                self.members[i].name
            ))
        })?;
        registry.push(child.id() as i32);
        drop(registry);
        self.members[i].child = Some(child);
        self.members[i].paused = false;
        Ok(())
    }

    /// Members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Always false: a cluster has members.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Every member's raft id, by member index.
    pub fn ids(&self) -> Vec<RaftId> {
        self.members.iter().map(|m| m.id).collect()
    }

    /// The member index of a raft id.
    pub fn index_of(&self, id: RaftId) -> Option<usize> {
        self.members.iter().position(|m| m.id == id)
    }

    /// Member `i`'s client and (advertised) peer addresses.
    pub fn addrs(&self, i: usize) -> (SocketAddr, SocketAddr) {
        (self.members[i].client, self.members[i].advertised)
    }

    fn proxies(&self) -> Result<&Proxies, Error> {
        self.proxies.as_ref().ok_or_else(|| {
            Error::Process(
                "this cluster was started without peer proxies: links cannot be cut".into(),
            )
        })
    }

    /// Cut the links both ways between the groups (member indices). Returns the instant (ms)
    /// taken just before.
    pub fn partition(&mut self, groups: &[Vec<usize>]) -> Result<i64, Error> {
        let p = self.proxies()?;
        let at = now_ms();
        p.partition(groups);
        Ok(at)
    }

    /// Every link up again. Returns the instant (ms) taken just before.
    pub fn heal(&mut self) -> Result<i64, Error> {
        let p = self.proxies()?;
        let at = now_ms();
        p.heal();
        Ok(at)
    }

    /// Member `i`'s log file.
    pub fn log_path(&self, i: usize) -> &Path {
        &self.members[i].log
    }

    /// Member `i`'s PID while it runs.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.members[i].child.as_ref().map(Child::id)
    }

    /// Is member `i` running (started, not killed)?
    pub fn running(&self, i: usize) -> bool {
        self.members[i].child.is_some()
    }

    /// Is member `i` stopped by [`Cluster::pause`]?
    pub fn paused(&self, i: usize) -> bool {
        self.members[i].paused
    }

    fn signal(&self, i: usize, sig: Signal) -> Result<(), Error> {
        let pid = self.pid(i).ok_or_else(|| {
            Error::Process(format!("member {} is not running", self.members[i].name))
        })?;
        killpg(Pid::from_raw(pid as i32), sig).map_err(|e| {
            Error::Process(format!(
                "cannot send {sig} to member {} (pid {pid}): {e}",
                self.members[i].name
            ))
        })
    }

    /// SIGKILL member `i` and reap it. Returns the wall-clock instant (ms) taken just before
    /// the signal was sent: the fault instant.
    pub fn kill(&mut self, i: usize) -> Result<i64, Error> {
        let at = now_ms();
        self.signal(i, Signal::SIGKILL)?;
        self.reap(i);
        Ok(at)
    }

    /// Wait for a killed member and forget it.
    fn reap(&mut self, i: usize) {
        if let Some(mut child) = self.members[i].child.take() {
            let pid = child.id() as i32;
            let _ = child.wait();
            groups().retain(|&g| g != pid);
        }
        self.members[i].paused = false;
    }

    /// Start killed member `i` again with the same flags and data directory.
    pub fn restart(&mut self, i: usize) -> Result<(), Error> {
        if self.running(i) {
            return Err(Error::Process(format!(
                "member {} is already running",
                self.members[i].name
            )));
        }
        self.spawn(i)
    }

    /// SIGSTOP member `i`. Returns the instant (ms) taken just before the signal.
    pub fn pause(&mut self, i: usize) -> Result<i64, Error> {
        let at = now_ms();
        self.signal(i, Signal::SIGSTOP)?;
        self.members[i].paused = true;
        Ok(at)
    }

    /// SIGCONT member `i`. Returns the instant (ms) taken just before the signal.
    pub fn resume(&mut self, i: usize) -> Result<i64, Error> {
        let at = now_ms();
        self.signal(i, Signal::SIGCONT)?;
        self.members[i].paused = false;
        Ok(at)
    }

    /// An error if a member we did not kill has exited (with the end of its log).
    pub fn check_alive(&mut self) -> Result<(), Error> {
        for m in &mut self.members {
            if let Some(child) = &mut m.child {
                if let Ok(Some(status)) = child.try_wait() {
                    let pid = child.id() as i32;
                    m.child = None;
                    groups().retain(|&g| g != pid);
                    return Err(Error::Process(format!(
                        "member {} (pid {pid}) exited by itself ({status}); its log ends:\n{}",
                        m.name,
                        tail(&m.log, 8)
                    )));
                }
            }
        }
        Ok(())
    }

    /// Each running, unpaused member's status (`None`: not asked, or no answer in `timeout`).
    pub fn statuses(&self, timeout: Duration) -> Vec<Option<MemberStatus>> {
        self.members
            .iter()
            .map(|m| {
                (m.child.is_some() && !m.paused)
                    .then(|| query(m.client, timeout).ok())
                    .flatten()
            })
            .collect()
    }

    /// The leader (member index) and term every running, unpaused member agrees on right now,
    /// if they do: each answers, each names the same leader at the same term, and that leader
    /// is one of them and names itself.
    pub fn agreement(&self, timeout: Duration) -> Option<(usize, u64)> {
        let st = self.statuses(timeout);
        let mut agreed: Option<(RaftId, u64)> = None;
        for (m, s) in self.members.iter().zip(&st) {
            if m.child.is_none() || m.paused {
                continue;
            }
            let s = (*s)?;
            let here = (s.leader?, s.term);
            if agreed.is_some_and(|a| a != here) {
                return None;
            }
            agreed = Some(here);
        }
        let (leader, term) = agreed?;
        let l = self.index_of(leader)?;
        let ls = st[l]?;
        (ls.leader == Some(leader)).then_some((l, term))
    }

    /// Poll (every `every`) until the same agreement ([`Cluster::agreement`]) has held for
    /// `hold`, or until `deadline`. Returns the agreement and the instant (ms) it began, or
    /// `None` at the deadline.
    pub fn wait_agreement(
        &mut self,
        hold: Duration,
        every: Duration,
        deadline: Instant,
    ) -> Result<Option<Agreement>, Error> {
        let timeout = every.max(Duration::from_millis(200));
        let mut current: Option<((usize, u64), i64, Instant)> = None;
        loop {
            if interrupted() {
                return Err(Error::Interrupted);
            }
            self.check_alive()?;
            let asked_at = now_ms();
            let asked = Instant::now();
            match (self.agreement(timeout), current) {
                (Some(a), Some((b, _, _))) if a == b => {}
                (Some(a), _) => current = Some((a, asked_at, asked)),
                (None, _) => current = None,
            }
            if let Some(((leader, term), since_ms, since)) = current {
                if since.elapsed() >= hold {
                    return Ok(Some(Agreement {
                        leader,
                        term,
                        since_ms,
                    }));
                }
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            sleep(every)?;
        }
    }
}

/// A leader and term every running member agreed on, and since when (ms, wall clock: the
/// first poll that saw it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Agreement {
    /// The leader's member index.
    pub leader: usize,
    /// The term.
    pub term: u64,
    /// The first poll that saw this agreement.
    pub since_ms: i64,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            if let Some(child) = &self.members[i].child {
                // SIGKILL works on a stopped process too; the group holds only etcd.
                let _ = killpg(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
            }
            self.reap(i);
        }
    }
}
