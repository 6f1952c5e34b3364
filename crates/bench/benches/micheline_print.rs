//! The Micheline text printer over sizes from 1 KB to 10 MB, in two shapes: a wide list of
//! `Pair n "string"` (a typical storage) and left-nested pairs (the shape whose Octez layout is
//! quadratic: every level indents further). Throughput is in bytes of the value's single-line
//! text; the printer streams into `io::sink()` through `write_indented_to`.
//!
//! Peak memory: before the timings, each (shape, size) is printed once in a child process (this
//! same binary, run with `KESTREL_PRINT_PEAK_CHILD=shape:bytes`), which reports how much its peak
//! resident memory (`VmHWM`) rose above its resident memory before printing (`VmRSS`), for the
//! streaming printer and for printing into one `String`. Reported on stderr as a table.
//!
//! No peer: Octez's printer is OCaml; the figures are the ratio between sizes.

use criterion::{black_box, Criterion, Throughput};
use kestrel_micheline::print::{to_text_single_line, write_indented, write_indented_to, Wrapping};
use kestrel_micheline::{Node, Prim};
use std::time::Duration;

/// The sizes printed, in bytes of single-line text.
const SIZES: [usize; 5] = [1_000, 10_000, 100_000, 1_000_000, 10_000_000];

/// The environment variable that makes this binary a peak-memory child.
const CHILD_VARIABLE: &str = "KESTREL_PRINT_PEAK_CHILD";

/// A value of about `bytes` bytes of single-line text in `shape` (`wide` or `deep`).
fn value(shape: &str, bytes: usize) -> Node {
    if shape == "wide" {
        // `Pair 123 "abcdefgh" ; ` is about 22 bytes.
        let items = (0..bytes / 22)
            .map(|n| {
                Node::prim(
                    Prim::D_Pair,
                    vec![Node::int(n as i64), Node::string("abcdefgh")],
                )
            })
            .collect();
        Node::seq(items)
    } else {
        // `(Pair ` and `) 1` are 9 bytes a level.
        let mut node = Node::int(0);
        for _ in 0..bytes / 9 {
            node = Node::prim(Prim::D_Pair, vec![node, Node::int(1)]);
        }
        node
    }
}

/// A field of `/proc/self/status` in kB.
fn status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                line.strip_prefix(field)
                    .and_then(|rest| rest.trim().trim_end_matches(" kB").parse().ok())
            })
        })
        .unwrap_or(0)
}

/// The child: prints one value (streaming or into a String) and reports the peak memory rise.
fn child(spec: &str) {
    let mut parts = spec.split(':');
    let (shape, bytes, mode) = (
        parts.next().unwrap_or("wide"),
        parts.next().and_then(|b| b.parse().ok()).unwrap_or(1000),
        parts.next().unwrap_or("stream"),
    );
    let node = value(shape, bytes);
    let before = status_kb("VmRSS:");
    let printed = if mode == "stream" {
        let mut counter = CountingWriter(0);
        write_indented_to(&mut counter, &node, Wrapping::Unwrapped, 0).expect("prints");
        counter.0
    } else {
        let mut text = String::new();
        write_indented(&mut text, &node, Wrapping::Unwrapped, 0);
        text.len()
    };
    let peak = status_kb("VmHWM:");
    println!("{} {}", peak.saturating_sub(before), printed);
}

/// An `io::Write` that only counts.
struct CountingWriter(usize);

impl std::io::Write for CountingWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs the children and prints the peak-memory table.
fn peak_memory_table() {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    eprintln!("micheline_print peak memory (rise of VmHWM over VmRSS while printing, kB)");
    eprintln!("shape  input_bytes  output_bytes  streaming_kB  into_String_kB");
    for shape in ["wide", "deep"] {
        for bytes in SIZES {
            let run = |mode: &str| -> Option<(u64, u64)> {
                let output = std::process::Command::new(&exe)
                    .env(CHILD_VARIABLE, format!("{shape}:{bytes}:{mode}"))
                    .output()
                    .ok()?;
                let text = String::from_utf8_lossy(&output.stdout).to_string();
                let mut fields = text.split_whitespace().map(|f| f.parse::<u64>().ok());
                Some((fields.next()??, fields.next()??))
            };
            let (Some((stream_kb, printed)), Some((string_kb, _))) = (run("stream"), run("string"))
            else {
                continue;
            };
            eprintln!("{shape:5}  {bytes:11}  {printed:12}  {stream_kb:12}  {string_kb:14}");
        }
    }
}

fn print_sizes(c: &mut Criterion) {
    for shape in ["wide", "deep"] {
        let mut group = c.benchmark_group(format!("micheline_print_{shape}"));
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(500));
        group.measurement_time(Duration::from_secs(2));
        for bytes in SIZES {
            let node = value(shape, bytes);
            let text_bytes = to_text_single_line(&node).len();
            group.throughput(Throughput::Bytes(text_bytes as u64));
            group.bench_function(format!("{bytes}"), |b| {
                b.iter(|| {
                    write_indented_to(std::io::sink(), black_box(&node), Wrapping::Unwrapped, 0)
                        .expect("prints")
                })
            });
        }
        group.finish();
    }
}

fn main() {
    if let Ok(spec) = std::env::var(CHILD_VARIABLE) {
        child(&spec);
        return;
    }
    peak_memory_table();
    let mut criterion = Criterion::default().configure_from_args();
    print_sizes(&mut criterion);
    criterion.final_summary();
}
