//! Where an operation's application time goes: a clock that is always in exactly one
//! [`ApplyStage`] and charges the time since its last switch to the stage it leaves, so the
//! stages add up to the time it ran. The ledger switches it around its tree reads and writes, a
//! contract call around `kestrel_michelson::execute` (whose host reads switch it again, so a
//! run's reads are not counted as execution).
//!
//! Each switch reads the monotonic clock once (`Instant::now`, some 20-40 ns), so the clock is
//! off unless asked for ([`StageClock::enable`]); off, a switch is a flag test.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// A stage of an operation's application.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyStage {
    /// Anything not below: fees, counters, gas accounting, scripts from the cache, receipts.
    Bookkeeping = 0,
    /// Inside the Michelson interpreter.
    Execution = 1,
    /// Finding values in the state's tree (loading its nodes from the store when needed).
    StateReads = 2,
    /// Changing the state's tree, with the undo records of the open checkpoints.
    StateWrites = 3,
}

impl ApplyStage {
    const ALL: [ApplyStage; STAGES] = [
        ApplyStage::Bookkeeping,
        ApplyStage::Execution,
        ApplyStage::StateReads,
        ApplyStage::StateWrites,
    ];
}

/// The stages' count.
const STAGES: usize = 4;

/// [`StageClock::running`] when the clock is stopped.
const STOPPED: u8 = u8::MAX;

/// The time spent in each [`ApplyStage`] since the clock started, and how often it read the time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StageSplit {
    /// Indexed by `ApplyStage as usize`.
    pub spent: [Duration; STAGES],
    /// `Instant::now` calls the clock made.
    pub clock_reads: u64,
}

/// See the module documentation. Its counters are atomics only so that a ledger can be shared
/// between threads (read-only); one thread applies operations, so plain loads and stores
/// suffice.
#[derive(Debug)]
pub struct StageClock {
    enabled: bool,
    /// What nanosecond counts are measured from.
    origin: Instant,
    /// The current stage, or [`STOPPED`].
    running: AtomicU8,
    /// When the current stage was entered, nanoseconds since `origin`.
    since: AtomicU64,
    /// Nanoseconds spent in each stage.
    spent: [AtomicU64; STAGES],
    clock_reads: AtomicU64,
}

impl Default for StageClock {
    fn default() -> StageClock {
        StageClock {
            enabled: false,
            origin: Instant::now(),
            running: AtomicU8::new(STOPPED),
            since: AtomicU64::new(0),
            spent: Default::default(),
            clock_reads: AtomicU64::new(0),
        }
    }
}

impl Clone for StageClock {
    fn clone(&self) -> StageClock {
        StageClock {
            enabled: self.enabled,
            origin: self.origin,
            running: AtomicU8::new(self.running.load(Relaxed)),
            since: AtomicU64::new(self.since.load(Relaxed)),
            spent: std::array::from_fn(|stage| AtomicU64::new(self.spent[stage].load(Relaxed))),
            clock_reads: AtomicU64::new(self.clock_reads.load(Relaxed)),
        }
    }
}

impl StageClock {
    /// Turns the clock on (`true`) or off for the next [`StageClock::start`]s.
    pub fn enable(&mut self, enabled: bool) {
        self.enabled = enabled;
    }

    /// Starts timing at `now` in [`ApplyStage::Bookkeeping`], when enabled.
    pub fn start(&self, now: Instant) {
        if self.enabled {
            self.running.store(ApplyStage::Bookkeeping as u8, Relaxed);
            self.since.store(self.nanos(now), Relaxed);
            self.spent.iter().for_each(|spent| spent.store(0, Relaxed));
            self.clock_reads.store(0, Relaxed);
        }
    }

    /// Stops the clock at `now`: the time in each stage since [`StageClock::start`] (all zero
    /// when the clock is off).
    pub fn stop(&self, now: Instant) -> StageSplit {
        let running = self.running.swap(STOPPED, Relaxed);
        if running == STOPPED {
            return StageSplit::default();
        }
        self.charge(usize::from(running), self.nanos(now));
        StageSplit {
            spent: std::array::from_fn(|stage| {
                Duration::from_nanos(self.spent[stage].load(Relaxed))
            }),
            clock_reads: self.clock_reads.load(Relaxed),
        }
    }

    /// Enters `stage`, charging the time since the last switch to the stage left; the stage
    /// left, to switch back to.
    #[inline]
    pub fn switch(&self, stage: ApplyStage) -> ApplyStage {
        let left = self.running.load(Relaxed);
        if left == STOPPED {
            return stage;
        }
        self.charge(usize::from(left), self.nanos(Instant::now()));
        self.running.store(stage as u8, Relaxed);
        let reads = self.clock_reads.load(Relaxed);
        self.clock_reads.store(reads + 1, Relaxed);
        ApplyStage::ALL[usize::from(left)]
    }

    fn nanos(&self, now: Instant) -> u64 {
        let nanos = now.saturating_duration_since(self.origin).as_nanos();
        u64::try_from(nanos).unwrap_or(u64::MAX)
    }

    /// Charges the time from the last switch to `now` (nanoseconds) to `stage`, and makes `now`
    /// the last switch.
    fn charge(&self, stage: usize, now: u64) {
        let since = self.since.load(Relaxed);
        self.since.store(now, Relaxed);
        let spent = self.spent[stage].load(Relaxed);
        self.spent[stage].store(spent + now.saturating_sub(since), Relaxed);
    }
}
