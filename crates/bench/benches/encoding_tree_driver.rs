//! An experiment driver for the tree encode benchmark of `encoding.rs` (not a criterion bench):
//! it builds the same 2^20 − 1-node tree and times Kestrel's encode and the hand-written
//! baseline's in one process, in an order and with buffers chosen on the command line, printing
//! nanoseconds per node for every iteration and the median of each side. It exists to explain
//! why the baseline's time in the criterion bench differs between processes (BENCHMARKS.md,
//! `## encoding`), one variable at a time:
//!
//! `cargo bench -p kestrel-bench --bench encoding_tree_driver -- [--order kb|bk|alt]
//! [--iterations N] [--warm-first SECONDS] [--buffers shared|separate] [--fresh-buffer]
//! [--quiet] [--levels N] [--only kestrel|baseline] [--variant NAME] [--header N]`
//!
//! - `--order`: all of Kestrel's iterations then all of the baseline's (`kb`, criterion's order),
//!   the reverse (`bk`), or alternating iteration by iteration (`alt`, the default);
//! - `--warm-first`: before measuring, run the side measured first for this many seconds, as
//!   criterion's warm-up and measurement of Kestrel precede the baseline's;
//! - `--buffers`: one output buffer for both sides (as the bench) or one each;
//! - `--fresh-buffer`: a new buffer for every iteration (each pays its first touch);
//! - `--levels`: a tree of 2^N − 1 nodes instead of the bench's 2^20 − 1;
//! - `--only`: one side only (for `valgrind --tool=callgrind --toggle-collect=*encode_kestrel*`
//!   or `*encode_baseline*`);
//! - `--variant`: also time an experimental variant of the baseline (`prefetch`, `depth`,
//!   `depth-prefetch`; module `variants`);
//! - `--header N`: instead, encode the P2P block header N times (`*encode_header*`).

#![allow(missing_docs)]

use kestrel_encoding::Encoding;
use std::hint::black_box;
use std::time::{Duration, Instant};

#[path = "../../encoding/tests/support/block_header.rs"]
mod block_header;
#[path = "../../encoding/tests/support/tree.rs"]
mod tree;
#[path = "encoding_support/tree_workload.rs"]
mod tree_workload;

use tree::tree_encoding;
use tree_workload::{baseline, build_tree};

/// The bench's tree: 2^20 − 1 nodes.
const LEVELS: u32 = 20;

#[derive(Clone, Copy, PartialEq)]
enum Side {
    Kestrel,
    Baseline,
    /// An experimental variant of the baseline (`--variant`), measured beside both.
    Variant,
}

struct Options {
    order: String,
    iterations: usize,
    warm_first_seconds: f64,
    separate_buffers: bool,
    fresh_buffer: bool,
    quiet: bool,
    levels: u32,
    only: Option<Side>,
    variant: Option<String>,
    header_encodes: usize,
}

/// The next argument parsed as a `T`; `usage` names the option when it is missing or malformed.
fn parsed<T: std::str::FromStr>(arguments: &mut impl Iterator<Item = String>, usage: &str) -> T {
    arguments
        .next()
        .and_then(|text| text.parse().ok())
        .expect(usage)
}

fn parse_options() -> Options {
    let mut options = Options {
        order: "alt".to_owned(),
        iterations: 20,
        warm_first_seconds: 0.0,
        separate_buffers: false,
        fresh_buffer: false,
        quiet: false,
        levels: LEVELS,
        only: None,
        variant: None,
        header_encodes: 0,
    };
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        match argument.as_str() {
            "--order" => options.order = arguments.next().expect("--order kb|bk|alt"),
            "--iterations" => options.iterations = parsed(&mut arguments, "--iterations N"),
            "--warm-first" => {
                options.warm_first_seconds = parsed(&mut arguments, "--warm-first SECONDS")
            }
            "--buffers" => {
                options.separate_buffers = arguments.next().as_deref() == Some("separate")
            }
            "--fresh-buffer" => options.fresh_buffer = true,
            "--quiet" => options.quiet = true,
            "--variant" => options.variant = arguments.next(),
            "--header" => options.header_encodes = parsed(&mut arguments, "--header N"),
            "--only" => {
                options.only = match arguments.next().as_deref() {
                    Some("kestrel") => Some(Side::Kestrel),
                    Some("baseline") => Some(Side::Baseline),
                    Some("variant") => Some(Side::Variant),
                    _ => panic!("--only kestrel|baseline"),
                }
            }
            "--levels" => options.levels = parsed(&mut arguments, "--levels N"),
            // `cargo bench` passes `--bench`.
            _ => {}
        }
    }
    options
}

/// Encodes the P2P test data's block header `count` times (for callgrind's
/// `--toggle-collect=*encode_header*`: instructions per header encode, which the writer's
/// changes also reach).
fn encode_headers(count: usize) {
    let Some(path) = kestrel_testdata::require("encoding/p2p/block-header.msg", "encode_headers")
    else {
        return;
    };
    let input = std::fs::read(path).expect("block header readable");
    let encoding = block_header::block_header_encoding().expect("builds");
    let header = encoding.decode(&input).expect("decodes");
    let mut buffer = Vec::with_capacity(input.len());
    for _ in 0..count {
        buffer.clear();
        encode_header(&encoding, black_box(&header), &mut buffer);
        assert_eq!(buffer, input);
    }
    println!("{count} header encodes");
}

/// One header encode, behind a call that callgrind's `--toggle-collect` can name.
#[inline(never)]
fn encode_header<E>(encoding: &E, header: &block_header::BlockHeader<'_>, buffer: &mut Vec<u8>)
where
    E: for<'a> Encoding<Value<'a> = block_header::BlockHeader<'a>>,
{
    encoding.encode_into(header, buffer).expect("encodes")
}

/// Kestrel's encode, behind a call that callgrind's `--toggle-collect` can name.
#[inline(never)]
fn encode_kestrel(
    encoding: &kestrel_encoding::Mu<tree::Tree>,
    tree: &tree::Tree,
    buffer: &mut Vec<u8>,
) {
    encoding.encode_into(tree, buffer).expect("encodes")
}

/// The baseline's encode, behind a call that callgrind's `--toggle-collect` can name.
#[inline(never)]
fn encode_baseline(tree: &tree::Tree, buffer: &mut Vec<u8>) {
    baseline::encode(tree, buffer)
}

fn first_child(tree: &tree::Tree) -> *const tree::Tree {
    match tree {
        tree::Tree::Node((left, _)) => &**left as *const _,
        tree::Tree::Leaf(_) => tree as *const _,
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let options = parse_options();
    if options.header_encodes > 0 {
        encode_headers(options.header_encodes);
        return;
    }
    let encoding = tree_encoding().expect("tree encoding builds");
    let tree = build_tree(options.levels, &mut 0);
    let node_count = (1u64 << options.levels) - 1;
    let bytes = encoding.encode(&tree).expect("tree encodes");
    let capacity = bytes.len();
    let mut shared = Vec::with_capacity(capacity);
    let mut own = Vec::with_capacity(if options.separate_buffers {
        capacity
    } else {
        0
    });

    let variant = options.variant.clone().unwrap_or_default();
    let mut run = |side: Side| -> f64 {
        let mut fresh;
        let buffer = if options.fresh_buffer {
            fresh = Vec::with_capacity(capacity);
            &mut fresh
        } else if side == Side::Baseline && options.separate_buffers {
            &mut own
        } else {
            &mut shared
        };
        buffer.clear();
        let start = Instant::now();
        match side {
            Side::Kestrel => encode_kestrel(&encoding, black_box(&tree), buffer),
            Side::Baseline => encode_baseline(black_box(&tree), buffer),
            Side::Variant => match variant.as_str() {
                "prefetch" => variants::encode_prefetch(black_box(&tree), buffer),
                "depth" => variants::encode_depth(black_box(&tree), buffer),
                "depth-prefetch" => variants::encode_depth_prefetch(black_box(&tree), buffer),
                other => panic!("unknown variant {other}"),
            },
        }
        black_box(buffer.len());
        let elapsed = start.elapsed();
        assert_eq!(buffer.len(), capacity);
        elapsed.as_nanos() as f64 / node_count as f64
    };

    let (first, second) = if let Some(only) = options.only {
        (only, only)
    } else if options.order == "bk" {
        (Side::Baseline, Side::Kestrel)
    } else {
        (Side::Kestrel, Side::Baseline)
    };
    if options.warm_first_seconds > 0.0 {
        let until = Instant::now() + Duration::from_secs_f64(options.warm_first_seconds);
        while Instant::now() < until {
            run(first);
        }
    }
    let schedule: Vec<Side> = match options.order.as_str() {
        _ if options.only.is_some() => std::iter::repeat_n(first, options.iterations).collect(),
        "alt" if options.variant.is_some() => (0..options.iterations)
            .flat_map(|_| [first, second, Side::Variant])
            .collect(),
        "alt" => (0..options.iterations)
            .flat_map(|_| [first, second])
            .collect(),
        _ => std::iter::repeat_n(first, options.iterations)
            .chain(std::iter::repeat_n(second, options.iterations))
            .collect(),
    };
    let (mut kestrel, mut base, mut other) = (Vec::new(), Vec::new(), Vec::new());
    for side in schedule {
        let ns_per_node = run(side);
        let name = match side {
            Side::Kestrel => "kestrel",
            Side::Baseline => "baseline",
            Side::Variant => "variant",
        };
        if !options.quiet {
            println!("{name} {ns_per_node:.2}");
        }
        match side {
            Side::Kestrel => kestrel.push(ns_per_node),
            Side::Baseline => base.push(ns_per_node),
            Side::Variant => other.push(ns_per_node),
        }
    }
    if options.only.is_some() {
        let times = if kestrel.is_empty() {
            &mut base
        } else {
            &mut kestrel
        };
        println!("median ns/node: {:.2}", median(times));
        return;
    }
    if !other.is_empty() {
        println!(
            "median ns/node: variant {:.2} (variant/baseline {:.3})",
            median(&mut other),
            median(&mut other) / median(&mut base)
        );
    }
    // In the alternating order each Kestrel iteration is paired with the baseline's next to it
    // (tens of milliseconds apart), so a change of the machine's state between seconds moves
    // both sides of a pair alike.
    let mut pair_ratios: Vec<f64> = kestrel
        .iter()
        .zip(&base)
        .map(|(kestrel, base)| kestrel / base)
        .collect();
    let pair_ratio = median(&mut pair_ratios);
    let (kestrel, base) = (median(&mut kestrel), median(&mut base));
    println!(
        "median ns/node: kestrel {kestrel:.2} baseline {base:.2} ratio {:.3} median pair ratio {pair_ratio:.3} (node size {} bytes, left child at {:p}, buffer at {:p})",
        kestrel / base,
        std::mem::size_of::<tree::Tree>(),
        first_child(&tree),
        shared.as_ptr()
    );
}

/// Experimental variants of the baseline, to measure what the memory-bound walk is sensitive to.
mod variants {
    use super::tree::Tree;

    /// The baseline with a prefetch of the right child before the left subtree is written.
    pub fn encode_prefetch(tree: &Tree, out: &mut Vec<u8>) {
        match tree {
            Tree::Leaf(value) => {
                out.push(0);
                out.extend_from_slice(&value.to_be_bytes());
            }
            Tree::Node((left, right)) => {
                prefetch(right);
                out.push(1);
                encode_prefetch(left, out);
                encode_prefetch(right, out);
            }
        }
    }

    /// A writer like Kestrel's: the buffer behind a reference, and a depth counted per level.
    pub struct Writer<'b> {
        out: &'b mut Vec<u8>,
        depth: usize,
    }

    /// The baseline writing through a `Writer` that counts depth as Kestrel's does.
    pub fn encode_depth(tree: &Tree, out: &mut Vec<u8>) {
        let mut writer = Writer { out, depth: 0 };
        depth_level(tree, &mut writer, false).expect("not too deep");
    }

    /// `encode_depth` with the prefetch of `encode_prefetch`.
    pub fn encode_depth_prefetch(tree: &Tree, out: &mut Vec<u8>) {
        let mut writer = Writer { out, depth: 0 };
        depth_level(tree, &mut writer, true).expect("not too deep");
    }

    fn depth_level(mut tree: &Tree, writer: &mut Writer<'_>, fetch: bool) -> Result<(), ()> {
        let depth_at_entry = writer.depth;
        loop {
            if writer.depth >= kestrel_encoding::recursive::DEFAULT_MAX_DEPTH {
                return Err(());
            }
            writer.depth += 1;
            match tree {
                Tree::Leaf(value) => {
                    writer.out.push(0);
                    writer.out.extend_from_slice(&value.to_be_bytes());
                    break;
                }
                Tree::Node((left, right)) => {
                    if fetch {
                        prefetch(right);
                    }
                    writer.out.push(1);
                    depth_level(left, writer, fetch)?;
                    tree = right;
                }
            }
        }
        writer.depth = depth_at_entry;
        Ok(())
    }

    #[inline(always)]
    fn prefetch(tree: &Tree) {
        // SAFETY: a prefetch never faults and reads nothing into the program's state.
        #[allow(unsafe_code)]
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                tree as *const Tree as *const i8,
            );
        }
    }
}
