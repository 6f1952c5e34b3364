//! CPU time of this process and of its waited-for children, from `getrusage(2)`, so that the
//! pipe modes can report the client's and the server's codec work (user + system time) beside
//! the wall time, which on a pipe is mostly the two processes waking each other.
//!
//! This is the one module of the suite with `unsafe`: a single call of the C library's
//! `getrusage`, which only writes the `rusage` it is given. Callers must read
//! [`CpuClock::Children`] only around children they have waited for (the kernel adds a child's
//! times to `RUSAGE_CHILDREN` when the parent waits for it).
#![allow(unsafe_code)]

use std::time::Duration;

/// Whose CPU time to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuClock {
    /// This process, all its threads (`RUSAGE_SELF`).
    SelfProcess,
    /// This process's children that have ended and been waited for (`RUSAGE_CHILDREN`).
    Children,
}

/// User plus system CPU time used so far by `clock`'s processes; `None` if the call fails
/// (it cannot for these arguments on Linux, but the suite reports no figure rather than a wrong
/// one).
pub fn cpu_time(clock: CpuClock) -> Option<Duration> {
    let who = match clock {
        CpuClock::SelfProcess => libc::RUSAGE_SELF,
        CpuClock::Children => libc::RUSAGE_CHILDREN,
    };
    let mut usage = zeroed_rusage();
    // SAFETY: `usage` is a valid, exclusively borrowed `rusage` for the whole call, and `who`
    // is one of the two values getrusage(2) accepts; the call writes only into `usage`.
    let status = unsafe { libc::getrusage(who, &mut usage) };
    if status != 0 {
        return None;
    }
    Some(timeval_duration(usage.ru_utime)? + timeval_duration(usage.ru_stime)?)
}

/// An all-zero `rusage` for getrusage(2) to fill (`libc::rusage` has no `Default`).
fn zeroed_rusage() -> libc::rusage {
    // SAFETY: `libc::rusage` is a C struct of integers and `timeval`s (integers); all-zero bytes
    // are a valid value of it.
    unsafe { std::mem::zeroed() }
}

/// A `timeval` as a duration; `None` if the kernel returned a negative or out-of-range field.
fn timeval_duration(time: libc::timeval) -> Option<Duration> {
    let seconds = u64::try_from(time.tv_sec).ok()?;
    let microseconds = u32::try_from(time.tv_usec).ok()?;
    if microseconds >= 1_000_000 {
        return None;
    }
    Some(Duration::new(seconds, microseconds * 1_000))
}

/// CPU time measured over a span: the difference of two readings of one clock.
#[derive(Clone, Copy, Debug)]
pub struct CpuSpan {
    clock: CpuClock,
    start: Option<Duration>,
}

impl CpuSpan {
    /// Starts measuring `clock`.
    pub fn start(clock: CpuClock) -> Self {
        Self {
            clock,
            start: cpu_time(clock),
        }
    }

    /// The CPU time used since [`CpuSpan::start`].
    pub fn elapsed(&self) -> Option<Duration> {
        let now = cpu_time(self.clock)?;
        now.checked_sub(self.start?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_clocks_read_and_never_run_backwards() {
        for clock in [CpuClock::SelfProcess, CpuClock::Children] {
            let first = cpu_time(clock).expect("getrusage");
            let span = CpuSpan::start(clock);
            let second = cpu_time(clock).expect("getrusage");
            assert!(second >= first, "{clock:?}: {second:?} < {first:?}");
            assert!(span.elapsed().is_some(), "{clock:?}");
        }
    }

    #[test]
    fn timeval_conversion_rejects_bad_fields() {
        let check = |tv_sec, tv_usec, expected: Option<Duration>| {
            let time = libc::timeval { tv_sec, tv_usec };
            assert_eq!(timeval_duration(time), expected, "{tv_sec} s {tv_usec} µs");
        };
        check(0, 0, Some(Duration::ZERO));
        check(2, 500_000, Some(Duration::from_micros(2_500_000)));
        check(-1, 0, None);
        check(0, -1, None);
        check(0, 1_000_000, None);
    }
}
