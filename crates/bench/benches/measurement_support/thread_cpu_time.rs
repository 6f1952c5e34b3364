//! The calling thread's CPU time as a criterion measurement, shared by the benchmarks whose
//! peers run on the measuring thread (the machine is shared: CPU time is steadier than wall time).

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use std::time::Duration;

/// The calling thread's CPU time, as a criterion measurement.
pub struct ThreadCpuTime;

impl Measurement for ThreadCpuTime {
    type Intermediate = cpu_time::ThreadTime;
    type Value = Duration;

    fn start(&self) -> Self::Intermediate {
        cpu_time::ThreadTime::now()
    }
    fn end(&self, start: Self::Intermediate) -> Self::Value {
        start.elapsed()
    }
    fn add(&self, first: &Self::Value, second: &Self::Value) -> Self::Value {
        *first + *second
    }
    fn zero(&self) -> Self::Value {
        Duration::ZERO
    }
    fn to_f64(&self, value: &Self::Value) -> f64 {
        value.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        WallTime.formatter()
    }
}
