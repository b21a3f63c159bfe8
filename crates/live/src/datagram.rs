//! The datagram format: a fixed header checked before the protocol's own decoder runs.
//!
//! ```text
//! [version: u8 = 1][sender: u32][length: u16][payload: `length` bytes]
//! ```
//!
//! Big-endian integers. The payload is the protocol message's [`Wire`] encoding. A datagram is
//! accepted only if it is long enough for the header, carries this version, names a cluster
//! member as sender, and its length field matches the bytes that follow exactly; payloads are
//! at most [`MAX_PAYLOAD`] bytes, so a receiver reads into one fixed buffer and never
//! allocates on behalf of a peer. Nothing here panics on any input.

use std::fmt;

use election_core::{NodeId, Wire, WireError};

/// The format version this driver writes and accepts.
pub const VERSION: u8 = 1;
/// Header bytes before the payload.
pub const HEADER: usize = 1 + 4 + 2;
/// The largest payload accepted (every protocol message is far smaller).
pub const MAX_PAYLOAD: usize = 512;
/// The largest datagram accepted.
pub const MAX_DATAGRAM: usize = HEADER + MAX_PAYLOAD;

/// Why a datagram was rejected before or while decoding its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// Fewer bytes than a header.
    Short(usize),
    /// More bytes than [`MAX_DATAGRAM`].
    Oversized(usize),
    /// Another format version.
    Version(u8),
    /// The sender field names no cluster member.
    Sender(u32),
    /// The length field disagrees with the bytes that follow the header.
    Length {
        /// What the header says.
        declared: usize,
        /// What arrived.
        actual: usize,
    },
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
                "{n}-byte datagram is shorter than the {HEADER}-byte header"
            ),
            FrameError::Oversized(n) => write!(f, "{n}-byte datagram exceeds {MAX_DATAGRAM} bytes"),
            FrameError::Version(v) => write!(f, "format version {v}, expected {VERSION}"),
            FrameError::Sender(s) => write!(f, "sender id {s} is not a cluster member"),
            FrameError::Length { declared, actual } => {
                write!(
                    f,
                    "length field says {declared} payload bytes, {actual} arrived"
                )
            }
            FrameError::Payload(e) => write!(f, "payload: {e}"),
            FrameError::Named(id) => write!(f, "payload names node {id}, not a cluster member"),
        }
    }
}

impl std::error::Error for FrameError {}

/// Write `msg` from `from` into `out` (cleared first) as one datagram.
pub fn encode<M: Wire>(from: NodeId, msg: &M, out: &mut Vec<u8>) {
    out.clear();
    out.push(VERSION);
    out.extend_from_slice(&from.0.to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    msg.encode(out);
    let len = out.len() - HEADER;
    debug_assert!(len <= MAX_PAYLOAD, "{len}-byte payload");
    out[5..7].copy_from_slice(&(len.min(u16::MAX as usize) as u16).to_be_bytes());
}

/// Check the header of `bytes` for an `n`-node cluster; return the claimed sender and the
/// payload.
pub fn split(bytes: &[u8], n: u32) -> Result<(NodeId, &[u8]), FrameError> {
    if bytes.len() < HEADER {
        return Err(FrameError::Short(bytes.len()));
    }
    if bytes.len() > MAX_DATAGRAM {
        return Err(FrameError::Oversized(bytes.len()));
    }
    if bytes[0] != VERSION {
        return Err(FrameError::Version(bytes[0]));
    }
    let sender = u32::from_be_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]);
    if sender == 0 || sender > n {
        return Err(FrameError::Sender(sender));
    }
    let declared = u16::from_be_bytes([bytes[5], bytes[6]]) as usize;
    let payload = &bytes[HEADER..];
    if declared != payload.len() {
        return Err(FrameError::Length {
            declared,
            actual: payload.len(),
        });
    }
    Ok((NodeId(sender), payload))
}

/// Check and decode one datagram for an `n`-node cluster (every endpoint a member).
pub fn decode<M: Wire>(bytes: &[u8], n: u32) -> Result<(NodeId, M), FrameError> {
    decode_for(bytes, n, n)
}

/// Check and decode one datagram for a cluster of `members` nodes and `endpoints` endpoints in
/// all (the members, then the service endpoints such as a lease store): the sender may be any
/// endpoint, a node id named in the payload ([`Wire::named_node`]) must be a member.
pub fn decode_for<M: Wire>(
    bytes: &[u8],
    endpoints: u32,
    members: u32,
) -> Result<(NodeId, M), FrameError> {
    let (from, payload) = split(bytes, endpoints)?;
    let msg = M::decode(payload).map_err(FrameError::Payload)?;
    match msg.named_node() {
        Some(id) if id.0 == 0 || id.0 > members => Err(FrameError::Named(id.0)),
        _ => Ok((from, msg)),
    }
}
