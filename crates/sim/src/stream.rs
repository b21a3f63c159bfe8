//! The random streams of a trial. Everything random in a trial comes from its seed through
//! ChaCha8 streams, one per consumer, so that switching one consumer on or off (the workload,
//! noise, node time) changes none of the others' draws. This is the one list of them; the
//! runner prints it in every manifest (`config.streams`).

use election_core::{Rng, SeedableRng};

/// A consumer of randomness and its ChaCha8 stream number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// The ring's `random` arrangement: the ring crate draws it from the seed it is given
    /// (the trial seed), on ChaCha's default stream 0.
    RingOrder,
    /// The network: latency, loss, duplication (the live driver: per node and incarnation).
    Net,
    /// The protocols' own draws (`Io::rng`; the live driver: per node and incarnation).
    Protocol,
    /// Fault selectors resolved when a fault fires.
    Faults,
    /// The workload: its messages' latency and loss.
    Workload,
    /// Node time: processing times, storage latencies, timer jitter.
    NodeTime,
    /// Each node's clock rate and offset, drawn once at the start in node order.
    Clocks,
    /// Noise: GC-like pauses.
    NoisePause,
    /// Noise: disk stalls.
    NoiseStall,
    /// Noise: latency spikes.
    NoiseSpike,
    /// The runner: the fault instant's offset `U[0, fault_jitter_ms]`.
    FaultTime,
}

impl Stream {
    /// Every stream, in number order.
    pub const ALL: [Stream; 11] = [
        Stream::RingOrder,
        Stream::Net,
        Stream::Protocol,
        Stream::Faults,
        Stream::Workload,
        Stream::NodeTime,
        Stream::Clocks,
        Stream::NoisePause,
        Stream::NoiseStall,
        Stream::NoiseSpike,
        Stream::FaultTime,
    ];

    /// The ChaCha8 stream number (fixed forever: changing one changes every result).
    pub const fn id(self) -> u64 {
        match self {
            Stream::RingOrder => 0,
            Stream::Net => 1,
            Stream::Protocol => 2,
            Stream::Faults => 3,
            Stream::Workload => 4,
            Stream::NodeTime => 5,
            Stream::Clocks => 6,
            Stream::NoisePause => 7,
            Stream::NoiseStall => 8,
            Stream::NoiseSpike => 9,
            Stream::FaultTime => 11,
        }
    }

    /// Its name in the manifest.
    pub const fn name(self) -> &'static str {
        match self {
            Stream::RingOrder => "ring_order",
            Stream::Net => "net",
            Stream::Protocol => "protocol",
            Stream::Faults => "faults",
            Stream::Workload => "workload",
            Stream::NodeTime => "node_time",
            Stream::Clocks => "clocks",
            Stream::NoisePause => "noise_pause",
            Stream::NoiseStall => "noise_stall",
            Stream::NoiseSpike => "noise_spike",
            Stream::FaultTime => "fault_time",
        }
    }

    /// The generator of this stream of `seed`.
    pub fn rng(self, seed: u64) -> Rng {
        self.rng_at(seed, 0)
    }

    /// The generator of this stream of `seed` for one node and incarnation (the live driver,
    /// whose nodes draw independently): the stream number with the node id at bit 16 and the
    /// incarnation at bit 48.
    pub fn rng_at(self, seed: u64, sub: u64) -> Rng {
        let mut r = Rng::seed_from_u64(seed);
        r.set_stream(self.id() | sub);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_numbers_and_names_are_distinct() {
        for (i, a) in Stream::ALL.iter().enumerate() {
            for b in &Stream::ALL[i + 1..] {
                assert_ne!(a.id(), b.id());
                assert_ne!(a.name(), b.name());
            }
            // Below bit 16, where the live driver's node ids start.
            assert!(a.id() < 1 << 16);
        }
    }
}
