//! The results of a suite run: every timed run kept, reduced to medians per cell, and shown as a
//! text table per benchmark, as JSON, or (see [`super::svg`]) as a bar chart.

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::{Benchmark, Cell, Implementation, MessageSizes, Mode, Options, RunOutcome};

/// All timed runs of one cell.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// The cell.
    pub cell: Cell,
    /// Iterations in each run.
    pub iterations: u64,
    /// Wall-clock seconds of each run, in the order they ran.
    pub run_seconds: Vec<f64>,
    /// Message sizes added up over one run (bytes mode only; identical in every run).
    pub sizes: Option<MessageSizes>,
}

impl Measurement {
    /// The median run, in seconds per iteration.
    pub fn median_seconds_per_iteration(&self) -> f64 {
        let mut sorted = self.run_seconds.clone();
        sorted.sort_by(f64::total_cmp);
        let middle = sorted.len() / 2;
        let median = if sorted.is_empty() {
            f64::NAN
        } else if sorted.len() % 2 == 1 {
            sorted[middle]
        } else {
            (sorted[middle - 1] + sorted[middle]) / 2.0
        };
        median / self.iterations.max(1) as f64
    }
}

/// Mean serialized sizes of one implementation on one benchmark.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeanSizes {
    /// Mean request size in bytes, framing included.
    pub request_bytes: f64,
    /// Mean response size in bytes, framing included.
    pub response_bytes: f64,
}

impl MeanSizes {
    /// Mean over both directions: bytes per message.
    pub fn per_message_bytes(&self) -> f64 {
        (self.request_bytes + self.response_bytes) / 2.0
    }
}

/// The results of [`super::run_suite`].
#[derive(Clone, Debug)]
pub struct Report {
    /// What was asked for.
    pub options: Options,
    /// Every cell that ran, in first-run order.
    pub measurements: Vec<Measurement>,
}

/// Rows of a table: every (mode, reuse) pair, in the spec's order.
fn rows(options: &Options) -> Vec<(Mode, bool)> {
    options
        .modes
        .iter()
        .flat_map(|&mode| [(mode, false), (mode, true)])
        .collect()
}

/// A time per iteration in the unit that keeps three significant figures readable.
pub fn format_seconds(seconds: f64) -> String {
    if !seconds.is_finite() {
        "—".to_string()
    } else if seconds >= 1e-3 {
        format!("{:.3} ms", seconds * 1e3)
    } else if seconds >= 1e-6 {
        format!("{:.3} µs", seconds * 1e6)
    } else {
        format!("{:.1} ns", seconds * 1e9)
    }
}

fn format_ratio(ratio: Option<f64>) -> String {
    ratio.map_or_else(|| "—".to_string(), |ratio| format!("{ratio:.2}"))
}

impl Report {
    /// An empty report for `options`.
    pub fn new(options: &Options) -> Self {
        Self {
            options: options.clone(),
            measurements: Vec::new(),
        }
    }

    /// Adds one timed run.
    pub fn record(&mut self, cell: Cell, iterations: u64, outcome: &RunOutcome) {
        let seconds = outcome.elapsed.as_secs_f64();
        if let Some(measurement) = self.measurements.iter_mut().find(|m| m.cell == cell) {
            measurement.run_seconds.push(seconds);
        } else {
            self.measurements.push(Measurement {
                cell,
                iterations,
                run_seconds: vec![seconds],
                sizes: outcome.sizes,
            });
        }
    }

    /// The measurement of one cell, if it ran.
    pub fn measurement(
        &self,
        benchmark: Benchmark,
        implementation: Implementation,
        mode: Mode,
        reuse: bool,
    ) -> Option<&Measurement> {
        let cell = Cell {
            benchmark,
            implementation,
            mode,
            reuse,
        };
        self.measurements.iter().find(|m| m.cell == cell)
    }

    /// Median seconds per iteration of one cell.
    pub fn seconds_per_iteration(
        &self,
        benchmark: Benchmark,
        implementation: Implementation,
        mode: Mode,
        reuse: bool,
    ) -> Option<f64> {
        self.measurement(benchmark, implementation, mode, reuse)
            .map(Measurement::median_seconds_per_iteration)
    }

    /// Kestrel's median time over `peer`'s on one row (below 1: Kestrel is faster).
    pub fn ratio(
        &self,
        benchmark: Benchmark,
        peer: Implementation,
        mode: Mode,
        reuse: bool,
    ) -> Option<f64> {
        let kestrel =
            self.seconds_per_iteration(benchmark, Implementation::Kestrel, mode, reuse)?;
        let other = self.seconds_per_iteration(benchmark, peer, mode, reuse)?;
        Some(kestrel / other)
    }

    /// Mean message sizes of one implementation, from its bytes-mode runs.
    pub fn sizes(&self, benchmark: Benchmark, implementation: Implementation) -> Option<MeanSizes> {
        self.measurements
            .iter()
            .find(|m| {
                m.cell.benchmark == benchmark
                    && m.cell.implementation == implementation
                    && m.sizes.is_some()
            })
            .and_then(|m| {
                let sizes = m.sizes?;
                let count = m.iterations.max(1) as f64;
                Some(MeanSizes {
                    request_bytes: sizes.request_bytes as f64 / count,
                    response_bytes: sizes.response_bytes as f64 / count,
                })
            })
    }

    /// The benchmarks that have at least one measurement, in option order.
    pub fn benchmarks(&self) -> Vec<Benchmark> {
        self.options
            .benchmarks
            .iter()
            .copied()
            .filter(|&b| self.measurements.iter().any(|m| m.cell.benchmark == b))
            .collect()
    }

    /// The peers (every implementation but Kestrel) that ran.
    fn peers(&self) -> Vec<Implementation> {
        self.options
            .implementations
            .iter()
            .copied()
            .filter(|&i| i != Implementation::Kestrel)
            .collect()
    }

    /// One text table per benchmark: time per iteration of each implementation, Kestrel's ratio
    /// to each peer, then the mean message sizes.
    pub fn to_table(&self) -> String {
        let mut out = String::new();
        let implementations = &self.options.implementations;
        let peers = self.peers();
        let has_kestrel = implementations.contains(&Implementation::Kestrel);
        for benchmark in self.benchmarks() {
            let iterations = self.options.iterations(benchmark);
            let _ = writeln!(
                out,
                "{} — {} iterations, median of {} round(s); time per iteration; ratio = kestrel / peer (below 1: Kestrel faster)",
                benchmark.name(),
                iterations,
                self.options.rounds
            );
            let mut header = format!("{:<11} {:<6}", "mode", "reuse");
            for implementation in implementations {
                let _ = write!(header, " {:>13}", implementation.name());
            }
            if has_kestrel {
                for peer in &peers {
                    let _ = write!(header, " {:>15}", format!("k/{}", peer.name()));
                }
            }
            let _ = writeln!(out, "{header}");
            for (mode, reuse) in rows(&self.options) {
                let mut line = format!(
                    "{:<11} {:<6}",
                    mode.name(),
                    if reuse { "yes" } else { "no" }
                );
                for &implementation in implementations {
                    let cell = self
                        .seconds_per_iteration(benchmark, implementation, mode, reuse)
                        .map_or_else(|| "—".to_string(), format_seconds);
                    let _ = write!(line, " {cell:>13}");
                }
                if has_kestrel {
                    for &peer in &peers {
                        let _ = write!(
                            line,
                            " {:>15}",
                            format_ratio(self.ratio(benchmark, peer, mode, reuse))
                        );
                    }
                }
                let _ = writeln!(out, "{line}");
            }
            let sized: Vec<(Implementation, MeanSizes)> = implementations
                .iter()
                .filter_map(|&i| self.sizes(benchmark, i).map(|s| (i, s)))
                .collect();
            if !sized.is_empty() {
                let _ = writeln!(
                    out,
                    "{:<13} {:>14} {:>14} {:>14}",
                    "bytes/message", "request", "response", "mean"
                );
                for (implementation, sizes) in &sized {
                    let _ = writeln!(
                        out,
                        "{:<13} {:>14.1} {:>14.1} {:>14.1}",
                        implementation.name(),
                        sizes.request_bytes,
                        sizes.response_bytes,
                        sizes.per_message_bytes()
                    );
                }
            }
            let _ = writeln!(out);
        }
        out
    }

    /// The whole report as JSON: per benchmark, every row with times, raw runs and ratios, and
    /// the mean message sizes.
    pub fn to_json(&self) -> Value {
        let benchmarks: Vec<Value> = self
            .benchmarks()
            .into_iter()
            .map(|benchmark| {
                let rows: Vec<Value> = rows(&self.options)
                    .into_iter()
                    .map(|(mode, reuse)| {
                        let mut times = serde_json::Map::new();
                        let mut runs = serde_json::Map::new();
                        for &implementation in &self.options.implementations {
                            if let Some(m) =
                                self.measurement(benchmark, implementation, mode, reuse)
                            {
                                times.insert(
                                    implementation.name().into(),
                                    json!(m.median_seconds_per_iteration()),
                                );
                                runs.insert(implementation.name().into(), json!(m.run_seconds));
                            }
                        }
                        let mut ratios = serde_json::Map::new();
                        for peer in self.peers() {
                            if let Some(ratio) = self.ratio(benchmark, peer, mode, reuse) {
                                ratios.insert(format!("kestrel/{}", peer.name()), json!(ratio));
                            }
                        }
                        json!({
                            "mode": mode.name(),
                            "reuse": reuse,
                            "seconds_per_iteration": times,
                            "run_seconds": runs,
                            "ratios": ratios,
                        })
                    })
                    .collect();
                let mut sizes = serde_json::Map::new();
                for &implementation in &self.options.implementations {
                    if let Some(s) = self.sizes(benchmark, implementation) {
                        sizes.insert(
                            implementation.name().into(),
                            json!({
                                "request_bytes": s.request_bytes,
                                "response_bytes": s.response_bytes,
                                "per_message_bytes": s.per_message_bytes(),
                            }),
                        );
                    }
                }
                json!({
                    "benchmark": benchmark.name(),
                    "iterations": self.options.iterations(benchmark),
                    "rows": rows,
                    "mean_sizes": sizes,
                })
            })
            .collect();
        json!({
            "suite": "serialization",
            "scale": self.options.scale,
            "rounds": self.options.rounds,
            "benchmarks": benchmarks,
        })
    }
}
