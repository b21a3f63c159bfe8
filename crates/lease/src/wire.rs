//! The lease messages' binary encoding ([`election_core::Wire`]), for drivers on a real
//! network.
//!
//! Every message is exactly [`Message::wire_size`] bytes: a tag, then (for all but `GET`) the
//! record — holder as a big-endian u32 (0: none), then version, transitions, duration,
//! acquire time and renew time as big-endian u64s (durations and times in ns).
//!
//! | tag | message | bytes |
//! |---|---|---|
//! | 1 | `GET` | 1 |
//! | 2 | `RECORD` | 45 |
//! | 3 / 4 / 5 | `ACQUIRE` / `RENEW` / `RELEASE` | 45 |
//! | 6 / 7 | `ACQUIRE_OK` / `ACQUIRE_CONFLICT` | 45 |
//! | 8 / 9 | `RENEW_OK` / `RENEW_CONFLICT` | 45 |
//! | 10 / 11 | `RELEASE_OK` / `RELEASE_CONFLICT` | 45 |
//!
//! Tag 0 is unused, so that a zeroed buffer is never a message. Decoding rejects, as
//! [`WireError::Invalid`], records no node sends: a stored record (in `RECORD` and the update
//! answers) of version 0 other than the empty one, an acquire or renew without a holder, and a
//! release that names one. An update's record carries the version its writer read, 0 included.
//! A holder must be a member; the decoder cannot know `n`, so [`Wire::named_node`] hands the
//! holder to the driver, which refuses one above the cluster's size.

use std::time::Duration;

use election_core::{Message, NodeId, Time, Wire, WireError, WireReader};

use crate::message::{LeaseMsg, Op, Record};

fn encode_record(r: &Record, out: &mut Vec<u8>) {
    out.extend_from_slice(&r.holder.map_or(0, |h| h.0).to_be_bytes());
    for v in [
        r.version,
        r.transitions,
        r.duration.as_nanos().min(u64::MAX as u128) as u64,
        r.acquire.0,
        r.renew.0,
    ] {
        out.extend_from_slice(&v.to_be_bytes());
    }
}

/// A record as the store holds it: version 0 only for the empty record.
fn decode_stored(r: &mut WireReader<'_>) -> Result<Record, WireError> {
    let rec = decode_record(r)?;
    if rec.version == 0 && rec != Record::EMPTY {
        return Err(WireError::Invalid(
            "version-0 record that is not the empty one",
        ));
    }
    Ok(rec)
}

/// A record as a member writes it: any fields, with the version it read.
fn decode_record(r: &mut WireReader<'_>) -> Result<Record, WireError> {
    let holder = match r.u32()? {
        0 => None,
        h => Some(NodeId(h)),
    };
    let rec = Record {
        holder,
        version: r.u64()?,
        transitions: r.u64()?,
        duration: Duration::from_nanos(r.u64()?),
        acquire: Time(r.u64()?),
        renew: Time(r.u64()?),
    };
    Ok(rec)
}

const OPS: [Op; 3] = [Op::Acquire, Op::Renew, Op::Release];

impl Wire for LeaseMsg {
    fn encode(&self, out: &mut Vec<u8>) {
        let op_index = |op: Op| OPS.iter().position(|&o| o == op).unwrap_or(0) as u8;
        match self {
            LeaseMsg::Get => out.push(1),
            LeaseMsg::Record(r) => {
                out.push(2);
                encode_record(r, out);
            }
            LeaseMsg::Update { op, record } => {
                out.push(3 + op_index(*op));
                encode_record(record, out);
            }
            LeaseMsg::Updated { op, ok, record } => {
                out.push(6 + 2 * op_index(*op) + u8::from(!ok));
                encode_record(record, out);
            }
        }
        debug_assert!(out.len() >= self.wire_size());
    }

    fn named_node(&self) -> Option<NodeId> {
        match self {
            LeaseMsg::Get => None,
            LeaseMsg::Record(r) | LeaseMsg::Update { record: r, .. } => r.holder,
            LeaseMsg::Updated { record, .. } => record.holder,
        }
    }

    fn decode(bytes: &[u8]) -> Result<Self, WireError> {
        let mut r = WireReader::new(bytes);
        let tag = r.u8()?;
        let msg = match tag {
            1 => LeaseMsg::Get,
            2 => LeaseMsg::Record(decode_stored(&mut r)?),
            3..=5 => {
                let op = OPS[(tag - 3) as usize];
                let record = decode_record(&mut r)?;
                match (op, record.holder) {
                    (Op::Release, Some(_)) => {
                        return Err(WireError::Invalid("release naming a holder"))
                    }
                    (Op::Acquire | Op::Renew, None) => {
                        return Err(WireError::Invalid("acquire or renew without a holder"))
                    }
                    _ => {}
                }
                LeaseMsg::Update { op, record }
            }
            6..=11 => LeaseMsg::Updated {
                op: OPS[((tag - 6) / 2) as usize],
                ok: (tag - 6) % 2 == 0,
                record: decode_stored(&mut r)?,
            },
            t => return Err(WireError::UnknownTag(t)),
        };
        r.finish()?;
        Ok(msg)
    }
}
