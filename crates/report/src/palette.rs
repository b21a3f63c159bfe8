//! One colour per protocol spec, the same in every chart and trace.
//!
//! The known specs have fixed colours, in this documented order (which is also the order of
//! legends and tables): `bully`, `bully+quorum`, `bully+epoch`, `ring`, `raft`, `raft+pre_vote`,
//! `raft+pre_vote+check_quorum`, `raft+pre_vote+check_quorum+voters=5`, `lease`,
//! `k8s-lease`. Warm colours are the bully family, purple the ring, cool colours the
//! Raft family (dark green with learners), gold the lease (dark at the scaled timings, bright
//! at client-go's own). Any other spec gets a colour from a second palette picked by a
//! stable hash (FNV-1a) of its text, so it never depends on iteration order or on which other
//! specs are present.

use election_core::MsgCategory;

/// An sRGB colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// `#rrggbb`.
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
    /// Mixed with white by `t` in `[0, 1]` (0 = unchanged).
    pub fn lighten(self, t: f64) -> Rgb {
        let f = |c: u8| (c as f64 + (255.0 - c as f64) * t).round() as u8;
        Rgb(f(self.0), f(self.1), f(self.2))
    }
    /// Mixed with black by `t` in `[0, 1]`.
    pub fn darken(self, t: f64) -> Rgb {
        let f = |c: u8| (c as f64 * (1.0 - t)).round() as u8;
        Rgb(f(self.0), f(self.1), f(self.2))
    }
}

/// The known protocol specs, in legend order, with their colours.
pub const KNOWN: [(&str, Rgb); 10] = [
    ("bully", Rgb(0xd6, 0x27, 0x28)),
    ("bully+quorum", Rgb(0xff, 0x7f, 0x0e)),
    ("bully+epoch", Rgb(0x8c, 0x56, 0x4b)),
    ("ring", Rgb(0x94, 0x67, 0xbd)),
    ("raft", Rgb(0x1f, 0x77, 0xb4)),
    ("raft+pre_vote", Rgb(0x17, 0xbe, 0xcf)),
    ("raft+pre_vote+check_quorum", Rgb(0x2c, 0xa0, 0x2c)),
    ("raft+pre_vote+check_quorum+voters=5", Rgb(0x0b, 0x5d, 0x1e)),
    ("lease", Rgb(0xb8, 0x86, 0x0b)),
    ("k8s-lease", Rgb(0xe6, 0xab, 0x02)),
];

/// Colours for specs not in [`KNOWN`].
const EXTRA: [Rgb; 8] = [
    Rgb(0xe3, 0x77, 0xc2),
    Rgb(0x7f, 0x7f, 0x7f),
    Rgb(0xbc, 0xbd, 0x22),
    Rgb(0x39, 0x3b, 0x79),
    Rgb(0x63, 0x79, 0x39),
    Rgb(0x8c, 0x6d, 0x31),
    Rgb(0x84, 0x3c, 0x39),
    Rgb(0x7b, 0x41, 0x73),
];

/// Epoch colours of a timeline: dark enough for white text, none of them grey (a crashed
/// node's colour there).
const EPOCHS: [Rgb; 6] = [
    Rgb(0x1f, 0x77, 0xb4),
    Rgb(0x94, 0x67, 0xbd),
    Rgb(0x0e, 0x7c, 0x86),
    Rgb(0x8c, 0x56, 0x4b),
    Rgb(0xc2, 0x18, 0x5b),
    Rgb(0x39, 0x3b, 0x79),
];

/// The colour of a leader's epoch (term) in a timeline, the same for the same epoch, so two
/// leaders of one epoch (a safety violation) share a colour and consecutive epochs differ.
pub fn epoch_colour(epoch: Option<u64>) -> Rgb {
    EPOCHS[epoch.map_or(0, |e| (e % EPOCHS.len() as u64) as usize)]
}

/// FNV-1a of `s`: a hash that is the same on every machine and in every version.
pub(crate) fn fnv1a(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The colour of a protocol spec.
pub fn protocol_colour(spec: &str) -> Rgb {
    KNOWN
        .iter()
        .find(|(k, _)| *k == spec)
        .map(|&(_, c)| c)
        .unwrap_or_else(|| EXTRA[(fnv1a(spec) % EXTRA.len() as u64) as usize])
}

/// The colour of the `k`-th variant (parameter combination) of a protocol: the protocol's
/// colour, alternately darkened and lightened a step further for each variant.
pub fn variant_colour(spec: &str, k: usize) -> Rgb {
    let c = protocol_colour(spec);
    match k {
        0 => c,
        k if k % 2 == 1 => c.darken(0.25 * k.div_ceil(2) as f64),
        k => c.lighten(0.3 * (k / 2) as f64),
    }
}

/// Sorts specs into legend order: known specs in [`KNOWN`] order, then the others in the order
/// given.
pub fn sort_protocols(specs: Vec<String>) -> Vec<String> {
    let rank = |s: &str| {
        KNOWN
            .iter()
            .position(|(k, _)| *k == s)
            .unwrap_or(KNOWN.len())
    };
    let mut indexed: Vec<(usize, usize, String)> = specs
        .into_iter()
        .enumerate()
        .map(|(i, s)| (rank(&s), i, s))
        .collect();
    indexed.sort();
    indexed.into_iter().map(|(_, _, s)| s).collect()
}

/// The colour of a message category in traces.
pub fn category_colour(c: MsgCategory) -> Rgb {
    match c {
        MsgCategory::Election => Rgb(0x1f, 0x5f, 0xbf),
        MsgCategory::Reply => Rgb(0x2c, 0x8a, 0x2c),
        MsgCategory::Leader => Rgb(0xc0, 0x4b, 0x00),
        MsgCategory::Heartbeat => Rgb(0xa0, 0xa0, 0xa0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_specs_keep_their_colour_and_order() {
        assert_eq!(protocol_colour("raft").hex(), "#1f77b4");
        let sorted = sort_protocols(vec![
            "zeta".into(),
            "raft".into(),
            "bully".into(),
            "alpha".into(),
            "ring".into(),
        ]);
        assert_eq!(sorted, ["bully", "ring", "raft", "zeta", "alpha"]);
    }

    #[test]
    fn unknown_specs_hash_stably() {
        assert_eq!(
            protocol_colour("bully+quorum+epoch"),
            protocol_colour("bully+quorum+epoch")
        );
        assert_ne!(variant_colour("raft", 1), variant_colour("raft", 0));
    }
}
