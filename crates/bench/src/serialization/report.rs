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
    /// Client CPU seconds (user + system) of each run, pipe modes only.
    pub run_client_cpu_seconds: Vec<f64>,
    /// Server CPU seconds (user + system, start-up included) of each run, pipe modes only.
    pub run_server_cpu_seconds: Vec<f64>,
}

/// The median of `values` (the mean of the middle two for an even count); NaN if empty.
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    if sorted.is_empty() {
        f64::NAN
    } else if sorted.len() % 2 == 1 {
        sorted[middle]
    } else {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    }
}

/// Median CPU time per iteration of a pipe cell's client and server.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuPerIteration {
    /// Client seconds per iteration.
    pub client_seconds: f64,
    /// Server seconds per iteration.
    pub server_seconds: f64,
}

impl CpuPerIteration {
    /// Client plus server.
    pub fn total_seconds(&self) -> f64 {
        self.client_seconds + self.server_seconds
    }
}

impl Measurement {
    /// The median run, in seconds per iteration.
    pub fn median_seconds_per_iteration(&self) -> f64 {
        median(&self.run_seconds) / self.iterations.max(1) as f64
    }

    /// The medians, over the runs, of client and server CPU time per iteration (pipe modes,
    /// when every run measured them).
    pub fn median_cpu_per_iteration(&self) -> Option<CpuPerIteration> {
        if self.run_client_cpu_seconds.is_empty()
            || self.run_client_cpu_seconds.len() != self.run_seconds.len()
        {
            return None;
        }
        let iterations = self.iterations.max(1) as f64;
        Some(CpuPerIteration {
            client_seconds: median(&self.run_client_cpu_seconds) / iterations,
            server_seconds: median(&self.run_server_cpu_seconds) / iterations,
        })
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
        .flat_map(|&mode| options.reuse.iter().map(move |&reuse| (mode, reuse)))
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

/// The column layout of one of the report's text tables.
struct Columns {
    /// The heading of the first (mode) column.
    first: &'static str,
    /// Width of each implementation's column.
    implementation_width: usize,
    /// What follows `k/PEER` in the heading of a ratio column.
    ratio_suffix: &'static str,
    /// Width of each ratio column.
    ratio_width: usize,
}

/// The time table: time per iteration, ratio of the medians with the rounds' range.
const TIME_COLUMNS: Columns = Columns {
    first: "mode",
    implementation_width: 13,
    ratio_suffix: "",
    ratio_width: 20,
};

/// The CPU table of the pipe rows: client + server CPU per iteration, ratio of the totals.
const CPU_COLUMNS: Columns = Columns {
    first: "cpu/iter",
    implementation_width: 20,
    ratio_suffix: " cpu",
    ratio_width: 15,
};

fn format_ratio(ratio: Option<f64>) -> String {
    ratio.map_or_else(|| "—".to_string(), |ratio| format!("{ratio:.2}"))
}

/// A ratio of medians with the range of the rounds' ratios: `0.96 (0.91-1.03)`.
fn format_ratio_with_range(ratio: Option<f64>, range: Option<(f64, f64)>) -> String {
    match (ratio, range) {
        (Some(ratio), Some((low, high))) => format!("{ratio:.2} ({low:.2}-{high:.2})"),
        _ => format_ratio(ratio),
    }
}

/// Client and server CPU per iteration: `3.10 + 4.52 µs`, in the unit of the larger.
fn format_cpu(cpu: CpuPerIteration) -> String {
    let larger = cpu.client_seconds.max(cpu.server_seconds);
    let (scale, unit) = if larger >= 1e-3 {
        (1e3, "ms")
    } else {
        (1e6, "µs")
    };
    format!(
        "{:.2} + {:.2} {unit}",
        cpu.client_seconds * scale,
        cpu.server_seconds * scale
    )
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
        let index = match self.measurements.iter().position(|m| m.cell == cell) {
            Some(index) => index,
            None => {
                self.measurements.push(Measurement {
                    cell,
                    iterations,
                    run_seconds: Vec::new(),
                    sizes: outcome.sizes,
                    run_client_cpu_seconds: Vec::new(),
                    run_server_cpu_seconds: Vec::new(),
                });
                self.measurements.len() - 1
            }
        };
        let measurement = &mut self.measurements[index];
        measurement.run_seconds.push(seconds);
        if let Some(cpu) = outcome.cpu {
            measurement
                .run_client_cpu_seconds
                .push(cpu.client.as_secs_f64());
            measurement
                .run_server_cpu_seconds
                .push(cpu.server.as_secs_f64());
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

    /// Kestrel's time over `peer`'s in each round, in round order: the spread behind
    /// [`Report::ratio`]. Round `i` of both ran one right after the other.
    pub fn round_ratios(
        &self,
        benchmark: Benchmark,
        peer: Implementation,
        mode: Mode,
        reuse: bool,
    ) -> Vec<f64> {
        let (Some(kestrel), Some(other)) = (
            self.measurement(benchmark, Implementation::Kestrel, mode, reuse),
            self.measurement(benchmark, peer, mode, reuse),
        ) else {
            return Vec::new();
        };
        kestrel
            .run_seconds
            .iter()
            .zip(&other.run_seconds)
            .map(|(kestrel, other)| kestrel / other)
            .collect()
    }

    /// The lowest and highest of [`Report::round_ratios`].
    pub fn round_ratio_range(
        &self,
        benchmark: Benchmark,
        peer: Implementation,
        mode: Mode,
        reuse: bool,
    ) -> Option<(f64, f64)> {
        let ratios = self.round_ratios(benchmark, peer, mode, reuse);
        let low = ratios.iter().copied().min_by(f64::total_cmp)?;
        let high = ratios.iter().copied().max_by(f64::total_cmp)?;
        Some((low, high))
    }

    /// Mean message sizes of one implementation, from its first bytes-mode cell (without
    /// reuse when both ran).
    pub fn sizes(&self, benchmark: Benchmark, implementation: Implementation) -> Option<MeanSizes> {
        self.measurements
            .iter()
            .find(|m| {
                m.cell.benchmark == benchmark
                    && m.cell.implementation == implementation
                    && m.sizes.is_some()
            })
            .and_then(Self::mean_sizes)
    }

    /// Mean message sizes of one implementation in bytes mode with the given reuse setting:
    /// Cap'n Proto's differ (a message built in one large reused segment needs no far pointers
    /// nor segment-table entries for further segments), Kestrel's do not.
    pub fn sizes_with_reuse(
        &self,
        benchmark: Benchmark,
        implementation: Implementation,
        reuse: bool,
    ) -> Option<MeanSizes> {
        self.measurement(benchmark, implementation, Mode::Bytes, reuse)
            .and_then(Self::mean_sizes)
    }

    fn mean_sizes(measurement: &Measurement) -> Option<MeanSizes> {
        let sizes = measurement.sizes?;
        let count = measurement.iterations.max(1) as f64;
        Some(MeanSizes {
            request_bytes: sizes.request_bytes as f64 / count,
            response_bytes: sizes.response_bytes as f64 / count,
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

    /// A table's header line: the row label columns, one column per implementation, then,
    /// when Kestrel ran, one per peer for Kestrel's ratio to it.
    fn table_header(&self, columns: &Columns) -> String {
        let implementations = &self.options.implementations;
        let mut header = format!("{:<11} {:<6}", columns.first, "reuse");
        for implementation in implementations {
            let width = columns.implementation_width;
            let _ = write!(header, " {:>width$}", implementation.name());
        }
        if implementations.contains(&Implementation::Kestrel) {
            for peer in self.peers() {
                let label = format!("k/{}{}", peer.name(), columns.ratio_suffix);
                let _ = write!(header, " {label:>width$}", width = columns.ratio_width);
            }
        }
        header
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
                "{} — {} iterations, median of {} round(s); time per iteration; ratio = kestrel / peer of the medians (below 1: Kestrel faster), with the lowest and highest ratio of a round",
                benchmark.name(),
                iterations,
                self.options.rounds
            );
            let _ = writeln!(out, "{}", self.table_header(&TIME_COLUMNS));
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
                            " {:>20}",
                            format_ratio_with_range(
                                self.ratio(benchmark, peer, mode, reuse),
                                self.round_ratio_range(benchmark, peer, mode, reuse)
                            )
                        );
                    }
                }
                let _ = writeln!(out, "{line}");
            }
            self.write_cpu_table(&mut out, benchmark);
            // Each implementation's sizes, and again with reuse where those differ.
            let mut sized: Vec<(String, MeanSizes)> = Vec::new();
            for &implementation in implementations {
                let Some(first) = self.sizes(benchmark, implementation) else {
                    continue;
                };
                sized.push((implementation.name().to_string(), first));
                if let Some(reused) = self.sizes_with_reuse(benchmark, implementation, true) {
                    if reused != first {
                        sized.push((format!("{}, reuse", implementation.name()), reused));
                    }
                }
            }
            if !sized.is_empty() {
                let _ = writeln!(
                    out,
                    "{:<19} {:>14} {:>14} {:>14}",
                    "bytes/message", "request", "response", "mean"
                );
                for (name, sizes) in &sized {
                    let _ = writeln!(
                        out,
                        "{:<19} {:>14.1} {:>14.1} {:>14.1}",
                        name,
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

    /// The pipe rows' CPU time per iteration (client + server, user + system, medians over the
    /// rounds) and Kestrel's ratio of total CPU time to each peer's; nothing if no pipe row ran.
    fn write_cpu_table(&self, out: &mut String, benchmark: Benchmark) {
        let implementations = &self.options.implementations;
        let rows: Vec<(Mode, bool)> = rows(&self.options)
            .into_iter()
            .filter(|&(mode, reuse)| {
                implementations.iter().any(|&implementation| {
                    self.measurement(benchmark, implementation, mode, reuse)
                        .and_then(Measurement::median_cpu_per_iteration)
                        .is_some()
                })
            })
            .collect();
        if rows.is_empty() {
            return;
        }
        let has_kestrel = implementations.contains(&Implementation::Kestrel);
        let peers = self.peers();
        let header = self.table_header(&CPU_COLUMNS);
        let _ = writeln!(
            out,
            "CPU time per iteration, user + system, client + server (server start-up included), median round:"
        );
        let _ = writeln!(out, "{header}");
        for (mode, reuse) in rows {
            let mut line = format!(
                "{:<11} {:<6}",
                mode.name(),
                if reuse { "yes" } else { "no" }
            );
            let cpu_of = |implementation| {
                self.measurement(benchmark, implementation, mode, reuse)
                    .and_then(Measurement::median_cpu_per_iteration)
            };
            for &implementation in implementations {
                let cell = cpu_of(implementation).map_or_else(|| "—".to_string(), format_cpu);
                let _ = write!(line, " {cell:>20}");
            }
            if has_kestrel {
                for &peer in &peers {
                    let ratio = cpu_of(Implementation::Kestrel)
                        .zip(cpu_of(peer))
                        .map(|(kestrel, other)| kestrel.total_seconds() / other.total_seconds());
                    let _ = write!(line, " {:>15}", format_ratio(ratio));
                }
            }
            let _ = writeln!(out, "{line}");
        }
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
                        let mut cpu = serde_json::Map::new();
                        let mut cpu_runs = serde_json::Map::new();
                        for &implementation in &self.options.implementations {
                            if let Some(m) =
                                self.measurement(benchmark, implementation, mode, reuse)
                            {
                                times.insert(
                                    implementation.name().into(),
                                    json!(m.median_seconds_per_iteration()),
                                );
                                runs.insert(implementation.name().into(), json!(m.run_seconds));
                                if let Some(median) = m.median_cpu_per_iteration() {
                                    cpu.insert(
                                        implementation.name().into(),
                                        json!({
                                            "client": median.client_seconds,
                                            "server": median.server_seconds,
                                        }),
                                    );
                                    cpu_runs.insert(
                                        implementation.name().into(),
                                        json!({
                                            "client": m.run_client_cpu_seconds,
                                            "server": m.run_server_cpu_seconds,
                                        }),
                                    );
                                }
                            }
                        }
                        let mut ratios = serde_json::Map::new();
                        let mut round_ratios = serde_json::Map::new();
                        for peer in self.peers() {
                            if let Some(ratio) = self.ratio(benchmark, peer, mode, reuse) {
                                let key = format!("kestrel/{}", peer.name());
                                ratios.insert(key.clone(), json!(ratio));
                                round_ratios.insert(
                                    key,
                                    json!(self.round_ratios(benchmark, peer, mode, reuse)),
                                );
                            }
                        }
                        let mut row = json!({
                            "mode": mode.name(),
                            "reuse": reuse,
                            "seconds_per_iteration": times,
                            "run_seconds": runs,
                            "ratios": ratios,
                            "round_ratios": round_ratios,
                        });
                        if !cpu.is_empty() {
                            row["cpu_seconds_per_iteration"] = json!(cpu);
                            row["run_cpu_seconds"] = json!(cpu_runs);
                        }
                        row
                    })
                    .collect();
                let mut sizes = serde_json::Map::new();
                let mut sizes_reuse = serde_json::Map::new();
                for &implementation in &self.options.implementations {
                    if let Some(s) = self.sizes_with_reuse(benchmark, implementation, true) {
                        sizes_reuse.insert(
                            implementation.name().into(),
                            json!({
                                "request_bytes": s.request_bytes,
                                "response_bytes": s.response_bytes,
                                "per_message_bytes": s.per_message_bytes(),
                            }),
                        );
                    }
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
                    "mean_sizes_reuse": sizes_reuse,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serialization::PipeCpu;
    use std::time::Duration;

    /// A report of one pipe row, Kestrel against capnp, from per-round seconds and CPU times.
    fn pipe_report(kestrel: &[(f64, f64, f64)], capnp: &[(f64, f64, f64)]) -> Report {
        let options = Options {
            benchmarks: vec![Benchmark::Eval],
            modes: vec![Mode::Pipe],
            implementations: vec![Implementation::Kestrel, Implementation::Capnp],
            scale: 1.0,
            rounds: kestrel.len() as u32,
            reuse: vec![true],
        };
        let mut report = Report::new(&options);
        for (implementation, runs) in [
            (Implementation::Kestrel, kestrel),
            (Implementation::Capnp, capnp),
        ] {
            for &(wall, client, server) in runs {
                let cell = Cell {
                    benchmark: Benchmark::Eval,
                    implementation,
                    mode: Mode::Pipe,
                    reuse: true,
                };
                let outcome = RunOutcome {
                    elapsed: Duration::from_secs_f64(wall),
                    sizes: None,
                    cpu: Some(PipeCpu {
                        client: Duration::from_secs_f64(client),
                        server: Duration::from_secs_f64(server),
                    }),
                };
                report.record(cell, 10, &outcome);
            }
        }
        report
    }

    #[test]
    fn round_ratios_pair_rounds_and_show_their_range() {
        let report = pipe_report(
            &[(1.0, 0.1, 0.2), (3.0, 0.3, 0.4), (2.0, 0.2, 0.3)],
            &[(2.0, 0.2, 0.2), (2.0, 0.2, 0.2), (4.0, 0.4, 0.4)],
        );
        let ratios = report.round_ratios(Benchmark::Eval, Implementation::Capnp, Mode::Pipe, true);
        assert_eq!(ratios, vec![0.5, 1.5, 0.5]);
        assert_eq!(
            report.round_ratio_range(Benchmark::Eval, Implementation::Capnp, Mode::Pipe, true),
            Some((0.5, 1.5))
        );
        // Ratio of the medians: 2.0 / 2.0.
        let table = report.to_table();
        assert!(table.contains("1.00 (0.50-1.50)"), "{table}");
    }

    #[test]
    fn cpu_medians_are_per_iteration_and_shown_for_pipe_rows() {
        let report = pipe_report(
            &[
                (1.0, 0.010, 0.020),
                (1.0, 0.030, 0.060),
                (1.0, 0.020, 0.040),
            ],
            &[
                (1.0, 0.040, 0.040),
                (1.0, 0.040, 0.040),
                (1.0, 0.040, 0.040),
            ],
        );
        let kestrel = report
            .measurement(Benchmark::Eval, Implementation::Kestrel, Mode::Pipe, true)
            .and_then(Measurement::median_cpu_per_iteration)
            .expect("cpu");
        // Medians 0.020 s and 0.040 s over 10 iterations.
        assert!(
            (kestrel.client_seconds - 0.002).abs() < 1e-12,
            "{kestrel:?}"
        );
        assert!(
            (kestrel.server_seconds - 0.004).abs() < 1e-12,
            "{kestrel:?}"
        );
        let table = report.to_table();
        assert!(table.contains("2.00 + 4.00 ms"), "{table}");
        // Total CPU 6 ms against 8 ms per iteration.
        assert!(table.contains("0.75"), "{table}");
        let json = report.to_json();
        let row = &json["benchmarks"][0]["rows"][0];
        assert_eq!(row["round_ratios"]["kestrel/capnp"], json!([1.0, 1.0, 1.0]));
        assert_eq!(
            row["run_cpu_seconds"]["kestrel"]["client"],
            json!([0.010, 0.030, 0.020])
        );
    }

    #[test]
    fn sizes_that_change_with_reuse_get_their_own_line() {
        let options = Options {
            benchmarks: vec![Benchmark::Catrank],
            modes: vec![Mode::Bytes],
            implementations: vec![Implementation::Kestrel, Implementation::Capnp],
            scale: 1.0,
            rounds: 1,
            reuse: vec![false, true],
        };
        let mut report = Report::new(&options);
        for (implementation, reuse, request_bytes) in [
            (Implementation::Kestrel, false, 900),
            (Implementation::Kestrel, true, 900),
            (Implementation::Capnp, false, 1100),
            (Implementation::Capnp, true, 1000),
        ] {
            let cell = Cell {
                benchmark: Benchmark::Catrank,
                implementation,
                mode: Mode::Bytes,
                reuse,
            };
            let outcome = RunOutcome {
                elapsed: Duration::from_secs(1),
                sizes: Some(MessageSizes {
                    request_bytes,
                    response_bytes: request_bytes,
                }),
                cpu: None,
            };
            report.record(cell, 10, &outcome);
        }
        let table = report.to_table();
        assert!(table.contains("capnp, reuse"), "{table}");
        assert!(!table.contains("kestrel, reuse"), "{table}");
        assert!(!table.contains("CPU time"), "{table}");
        let json = report.to_json();
        let benchmark = &json["benchmarks"][0];
        assert_eq!(
            benchmark["mean_sizes"]["capnp"]["request_bytes"],
            json!(110.0)
        );
        assert_eq!(
            benchmark["mean_sizes_reuse"]["capnp"]["request_bytes"],
            json!(100.0)
        );
    }
}
