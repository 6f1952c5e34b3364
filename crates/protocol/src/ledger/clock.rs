//! Where an operation's application time goes: a clock that is always in exactly one
//! [`ApplyStage`] and charges the time since its last switch to the stage it leaves, so the
//! stages add up to the time it ran. The ledger switches it around its tree reads and writes, a
//! contract call around `kestrel_michelson::execute` (whose host reads switch it again, so a
//! run's reads are not counted as execution).
//!
//! Each switch reads the monotonic clock once (`Instant::now`, some 20-40 ns), so the clock is
//! off unless asked for ([`StageClock::enable`]); off, a switch is a flag test.

use std::cell::Cell;
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

/// The stages' count.
const STAGES: usize = 4;

/// The time spent in each [`ApplyStage`] since the clock started, and how often it read the time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StageSplit {
    /// Indexed by `ApplyStage as usize`.
    pub spent: [Duration; STAGES],
    /// `Instant::now` calls the clock made.
    pub clock_reads: u64,
}

/// See the module documentation.
#[derive(Debug, Clone, Default)]
pub struct StageClock {
    enabled: bool,
    running: Cell<Option<(ApplyStage, Instant)>>,
    split: Cell<StageSplit>,
}

impl StageClock {
    /// Turns the clock on (`true`) or off for the next [`StageClock::start`]s.
    pub fn enable(&mut self, enabled: bool) {
        self.enabled = enabled;
    }

    /// Starts timing at `now` in [`ApplyStage::Bookkeeping`], when enabled.
    pub fn start(&self, now: Instant) {
        if self.enabled {
            self.running.set(Some((ApplyStage::Bookkeeping, now)));
            self.split.set(StageSplit::default());
        }
    }

    /// Stops the clock at `now`: the time in each stage since [`StageClock::start`] (all zero
    /// when the clock is off).
    pub fn stop(&self, now: Instant) -> StageSplit {
        if let Some((stage, since)) = self.running.take() {
            self.charge(stage, now.saturating_duration_since(since));
        }
        self.split.take()
    }

    /// Enters `stage`, charging the time since the last switch to the stage left; the stage
    /// left, to switch back to.
    #[inline]
    pub fn switch(&self, stage: ApplyStage) -> ApplyStage {
        let Some((left, since)) = self.running.get() else {
            return stage;
        };
        let now = Instant::now();
        self.charge(left, now.saturating_duration_since(since));
        self.running.set(Some((stage, now)));
        let mut split = self.split.get();
        split.clock_reads += 1;
        self.split.set(split);
        left
    }

    fn charge(&self, stage: ApplyStage, spent: Duration) {
        let mut split = self.split.get();
        split.spent[stage as usize] += spent;
        self.split.set(split);
    }
}
