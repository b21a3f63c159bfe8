//! The datagram format: an authenticated envelope, checked before the protocol's own decoder
//! runs.
//!
//! ```text
//! [version: u8 = 2][sender: u32][receiver: u32][seq: u64][length: u16][payload][tag: 32 bytes]
//! ```
//!
//! Big-endian integers. The payload is the protocol message's [`Wire`] encoding. The tag is
//! HMAC-SHA-256, under the run's secret [`Key`], of every byte before it: the version, both
//! ids, the sequence number, the length and the payload. Each live trial draws its own key
//! from the operating system, so only the trial's own nodes can make a datagram that verifies:
//! a forger who can send UDP to the ports, even from a member's address, cannot make a node
//! act on anything, whatever values it writes (why: issue 47, a single forged term or ballot
//! once wedged a whole cluster).
//!
//! A datagram is accepted only if it is long enough for the header and the tag, carries this
//! version, its length field matches the bytes that follow exactly, its tag verifies, it names
//! an endpoint as sender and this node as receiver, and its sequence number is fresh
//! ([`ReplayWindow`]: each sender numbers its datagrams to each receiver 1, 2, ...; a receiver
//! accepts each number once, and none more than [`REPLAY_WINDOW`] behind the highest it has
//! accepted). The receiver in the authenticated bytes stops a datagram meant for one node
//! being replayed to another. Payloads are at most [`MAX_PAYLOAD`] bytes, so a receiver reads
//! into one fixed buffer and never allocates on behalf of a peer. Nothing here panics on any
//! input.

use std::fmt;

use election_core::{NodeId, Wire, WireError};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The format version this driver writes and accepts.
pub const VERSION: u8 = 2;
/// Header bytes before the payload.
pub const HEADER: usize = 1 + 4 + 4 + 8 + 2;
/// Tag bytes after the payload (an untruncated HMAC-SHA-256).
pub const TAG: usize = 32;
/// The largest payload accepted (every protocol message is far smaller).
pub const MAX_PAYLOAD: usize = 512;
/// The largest datagram accepted.
pub const MAX_DATAGRAM: usize = HEADER + MAX_PAYLOAD + TAG;
/// How far behind the highest sequence number accepted from a sender a datagram may be and
/// still be accepted (once): room for datagrams the emulated delay reorders.
pub const REPLAY_WINDOW: u64 = 1024;

type HmacSha256 = Hmac<Sha256>;

/// A live run's secret: the key every datagram's tag is made under.
#[derive(Clone, PartialEq, Eq)]
pub struct Key([u8; 32]);

impl Key {
    /// A fresh key from the operating system's generator (never from the trial's seed, which
    /// is printed and recorded).
    pub fn random() -> Result<Key, getrandom::Error> {
        let mut k = [0u8; 32];
        getrandom::fill(&mut k)?;
        Ok(Key(k))
    }

    /// A key with these bytes (tests, and a forger who guessed it).
    pub fn from_bytes(bytes: [u8; 32]) -> Key {
        Key(bytes)
    }

    fn mac(&self) -> HmacSha256 {
        // HMAC takes a key of any length: this cannot fail.
        <HmacSha256 as Mac>::new_from_slice(&self.0).expect("HMAC accepts any key length")
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A key never reaches a log.
        f.write_str("Key(..)")
    }
}

/// Why a datagram was rejected before or while decoding its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// Fewer bytes than a header and a tag.
    Short(usize),
    /// More bytes than [`MAX_DATAGRAM`].
    Oversized(usize),
    /// Another format version.
    Version(u8),
    /// The length field disagrees with the bytes between the header and the tag.
    Length {
        /// What the header says.
        declared: usize,
        /// What arrived.
        actual: usize,
    },
    /// The tag does not verify under the run's key: the datagram was not made by one of the
    /// trial's nodes, or was altered on the way.
    Tag,
    /// The sender field names no endpoint of the cluster.
    Sender(u32),
    /// The receiver field names another node than the one that received it.
    Receiver(u32),
    /// A sequence number already accepted from this sender, or too old to tell
    /// ([`REPLAY_WINDOW`]): a replay.
    Replay(u64),
    /// The protocol's decoder refused the payload.
    Payload(WireError),
    /// The payload decoded, but names a node id that is no cluster member (a candidate, a
    /// leader or a lease holder above `n`).
    Named(u32),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Short(n) => write!(
                f,
                "{n}-byte datagram is shorter than the {HEADER}-byte header and {TAG}-byte tag"
            ),
            FrameError::Oversized(n) => write!(f, "{n}-byte datagram exceeds {MAX_DATAGRAM} bytes"),
            FrameError::Version(v) => write!(f, "format version {v}, expected {VERSION}"),
            FrameError::Length { declared, actual } => {
                write!(
                    f,
                    "length field says {declared} payload bytes, {actual} arrived"
                )
            }
            FrameError::Tag => f.write_str("tag does not verify under the run's key"),
            FrameError::Sender(s) => write!(f, "sender id {s} is not a cluster endpoint"),
            FrameError::Receiver(r) => write!(f, "receiver id {r} is not this node"),
            FrameError::Replay(s) => write!(f, "sequence number {s} replayed or too old"),
            FrameError::Payload(e) => write!(f, "payload: {e}"),
            FrameError::Named(id) => write!(f, "payload names node {id}, not a cluster member"),
        }
    }
}

impl std::error::Error for FrameError {}

/// The authenticated header of a datagram whose tag verified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    /// Who made it.
    pub from: NodeId,
    /// Whom it is for.
    pub to: NodeId,
    /// Its number among the datagrams `from` sent to `to` (from 1).
    pub seq: u64,
}

/// Write `msg` from `env.from` to `env.to` with sequence number `env.seq` into `out` (cleared
/// first) as one datagram, tagged under `key`.
pub fn encode<M: Wire>(key: &Key, env: Envelope, msg: &M, out: &mut Vec<u8>) {
    header(env, out);
    msg.encode(out);
    debug_assert!(
        out.len() - HEADER <= MAX_PAYLOAD,
        "{}-byte payload",
        out.len() - HEADER
    );
    finish(key, out);
}

/// [`encode`] for a payload already encoded (or made up, of any size: the forgery tests).
pub fn seal(key: &Key, env: Envelope, payload: &[u8], out: &mut Vec<u8>) {
    header(env, out);
    out.extend_from_slice(payload);
    finish(key, out);
}

fn header(env: Envelope, out: &mut Vec<u8>) {
    out.clear();
    out.push(VERSION);
    out.extend_from_slice(&env.from.0.to_be_bytes());
    out.extend_from_slice(&env.to.0.to_be_bytes());
    out.extend_from_slice(&env.seq.to_be_bytes());
    out.extend_from_slice(&[0, 0]);
}

/// Fill in the length field and append the tag.
fn finish(key: &Key, out: &mut Vec<u8>) {
    let len = out.len() - HEADER;
    out[HEADER - 2..HEADER].copy_from_slice(&(len.min(u16::MAX as usize) as u16).to_be_bytes());
    let mut mac = key.mac();
    mac.update(out);
    out.extend_from_slice(&mac.finalize().into_bytes());
}

/// Check the framing and the tag of `bytes` under `key`, for a cluster of `endpoints`
/// endpoints; return the authenticated header and the payload. The tag is checked before any
/// field is believed, in constant time. Replays are the receiver's to catch
/// ([`ReplayWindow`]).
pub fn open<'a>(
    key: &Key,
    bytes: &'a [u8],
    endpoints: u32,
) -> Result<(Envelope, &'a [u8]), FrameError> {
    if bytes.len() < HEADER + TAG {
        return Err(FrameError::Short(bytes.len()));
    }
    if bytes.len() > MAX_DATAGRAM {
        return Err(FrameError::Oversized(bytes.len()));
    }
    if bytes[0] != VERSION {
        return Err(FrameError::Version(bytes[0]));
    }
    let declared = u16::from_be_bytes([bytes[HEADER - 2], bytes[HEADER - 1]]) as usize;
    let (signed, tag) = bytes.split_at(bytes.len() - TAG);
    let payload = &signed[HEADER..];
    if declared != payload.len() {
        return Err(FrameError::Length {
            declared,
            actual: payload.len(),
        });
    }
    let mut mac = key.mac();
    mac.update(signed);
    mac.verify_slice(tag).map_err(|_| FrameError::Tag)?;
    let u32_at =
        |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    let from = u32_at(1);
    let to = u32_at(5);
    let mut seq = [0u8; 8];
    seq.copy_from_slice(&bytes[9..17]);
    let seq = u64::from_be_bytes(seq);
    if from == 0 || from > endpoints {
        return Err(FrameError::Sender(from));
    }
    if to == 0 || to > endpoints {
        return Err(FrameError::Receiver(to));
    }
    let env = Envelope {
        from: NodeId(from),
        to: NodeId(to),
        seq,
    };
    Ok((env, payload))
}

/// Decode an authenticated payload for a cluster of `members` members: a node id named in
/// the payload ([`Wire::named_node`]) must be a member.
pub fn payload<M: Wire>(payload: &[u8], members: u32) -> Result<M, FrameError> {
    let msg = M::decode(payload).map_err(FrameError::Payload)?;
    match msg.named_node() {
        Some(id) if id.0 == 0 || id.0 > members => Err(FrameError::Named(id.0)),
        _ => Ok(msg),
    }
}

/// The sequence numbers a receiver has accepted from one sender: the highest, and which of
/// the [`REPLAY_WINDOW`] before it. A fixed-size bitmap: a sender cannot make it grow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayWindow {
    /// The highest sequence number accepted (0: none yet; senders start at 1).
    top: u64,
    /// Bit `seq % REPLAY_WINDOW`: `seq` was accepted, for `seq` in `top - REPLAY_WINDOW + 1 ..= top`.
    seen: [u64; (REPLAY_WINDOW / 64) as usize],
}

impl Default for ReplayWindow {
    fn default() -> Self {
        ReplayWindow {
            top: 0,
            seen: [0; (REPLAY_WINDOW / 64) as usize],
        }
    }
}

impl ReplayWindow {
    /// Accept `seq` if it is fresh, and remember it; a replay, a number too old to tell and 0
    /// are refused. Call only for datagrams whose tag verified, so that a forger cannot move
    /// the window.
    pub fn accept(&mut self, seq: u64) -> Result<(), FrameError> {
        if seq == 0 {
            return Err(FrameError::Replay(seq));
        }
        if seq > self.top {
            // Forget the numbers that fall out of the window (at most all of them).
            let gap = seq - self.top;
            if gap >= REPLAY_WINDOW {
                self.seen = [0; (REPLAY_WINDOW / 64) as usize];
            } else {
                for s in self.top + 1..=seq {
                    self.set(s, false);
                }
            }
            self.top = seq;
            self.set(seq, true);
            return Ok(());
        }
        if self.top - seq >= REPLAY_WINDOW || self.get(seq) {
            return Err(FrameError::Replay(seq));
        }
        self.set(seq, true);
        Ok(())
    }

    fn get(&self, seq: u64) -> bool {
        let bit = seq % REPLAY_WINDOW;
        self.seen[(bit / 64) as usize] & (1 << (bit % 64)) != 0
    }

    fn set(&mut self, seq: u64, on: bool) {
        let bit = seq % REPLAY_WINDOW;
        let word = &mut self.seen[(bit / 64) as usize];
        if on {
            *word |= 1 << (bit % 64);
        } else {
            *word &= !(1 << (bit % 64));
        }
    }
}
