//! `kestrel context ...`: Tezos context hashes of files and directories, commit hashes, and the
//! replay benchmark of the context store (crates/context).

use crate::output::{print_json, CommandResult};
use crate::temporary::TemporaryDirectory;
use clap::Subcommand;
use kestrel_context::cache::CachePolicy;
use kestrel_context::{
    CommitInfo, ContextHash, GcPolicy, GcReport, InMemory, Kind, Store, StoreOptions, SyncMode,
    Tree, VerifyScope,
};
use kestrel_context_replay::workload::{self, ReplayOptions};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The verbs of `kestrel context`.
#[derive(Subcommand)]
pub enum ContextCommand {
    /// Print the Tezos context hash of a file (as contents) or a directory (as a tree).
    Hash {
        /// The file or directory (`-`: standard input, hashed as contents).
        path: PathBuf,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the hash of a commit of a tree with parents and metadata.
    CommitHash {
        /// The root tree's hash (`Co...` or 64 hex digits).
        #[arg(long)]
        tree: String,
        /// A parent commit's hash (repeatable).
        #[arg(long)]
        parent: Vec<String>,
        /// The commit date, in seconds since the epoch.
        #[arg(long, allow_negative_numbers = true)]
        date: i64,
        /// The author.
        #[arg(long, allow_hyphen_values = true)]
        author: String,
        /// The message.
        #[arg(long, allow_hyphen_values = true)]
        message: String,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Replay the synthetic Tezos-like workload against a fresh store and report block times.
    Replay {
        /// Blocks to replay after genesis.
        #[arg(long, default_value_t = 1000)]
        blocks: u64,
        /// Operations per block (386: early mainnet; 811: the 2018-2021 average).
        #[arg(long, default_value_t = workload::OPERATIONS_PER_BLOCK_EARLY)]
        ops_per_block: u32,
        /// Workload seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Contracts under data/contracts/index at genesis.
        #[arg(long, default_value_t = workload::INITIAL_CONTRACTS_DEFAULT)]
        initial_contracts: u64,
        /// Store directory (must be empty or absent: a replay starts from genesis); default: a
        /// temporary directory, removed.
        #[arg(long)]
        store: Option<PathBuf>,
        /// When the pack is synced to the disk. `checkpoints` (the default, as Octez's store:
        /// irmin-pack's `use_fsync` is off by default): every commit is written to the OS before
        /// `commit` returns, so it survives the process being killed; `fdatasync` runs every 256
        /// commits and at close, so a power loss may lose the commits since the last checkpoint.
        /// `every-commit`: `fdatasync` before each commit returns, so a commit also survives a
        /// power loss. `none`: never synced (tests only), a power loss may lose anything.
        #[arg(long, value_enum, default_value_t = SyncArgument::Checkpoints)]
        sync: SyncArgument,
        /// Object cache budget in MiB (default: the store's `CACHE_BUDGET_BYTES_DEFAULT`).
        #[arg(long, default_value_t = kestrel_context::CACHE_BUDGET_BYTES_DEFAULT >> 20)]
        cache_mib: usize,
        /// Object cache replacement policy (default: the store's).
        #[arg(long, value_enum)]
        cache_policy: Option<CachePolicyArgument>,
        /// Keep the last commit's tree in memory until this many MiB were written to the pack
        /// since it began to be kept (default: half the cache budget; 0: never keep it).
        #[arg(long)]
        retain_mib: Option<u64>,
        /// When the retained tree is released, move its leaves into the object cache.
        #[arg(long)]
        cache_released_leaves: bool,
        /// Count the retained tree (estimated from the bytes written since it began to be kept)
        /// against the cache budget.
        #[arg(long)]
        cache_includes_retained: bool,
        /// Diagnostics: record every object-cache access to this file (16 bytes each: offset,
        /// estimated size, event), for `examples/cache_simulate.rs` of crates/context.
        #[arg(long)]
        cache_trace: Option<PathBuf>,
        /// Diagnostics: every 1,000 blocks, sample the resident memory and the store's estimates
        /// of what it holds, and write them to this file as CSV.
        #[arg(long)]
        memory_samples: Option<PathBuf>,
        /// Stop after this many seconds of replay (the report covers the blocks done).
        #[arg(long)]
        time_limit_seconds: Option<u64>,
        /// Replay this Irmin replayable trace (`IrmRepBT`) instead of the synthetic workload
        /// (`-`: standard input).
        #[arg(long, conflicts_with = "write_trace")]
        trace: Option<PathBuf>,
        /// Write the synthetic workload to this file as an Irmin replayable trace, and stop (`-`:
        /// standard output).
        #[arg(long)]
        write_trace: Option<PathBuf>,
        /// Write each block's times to this file as CSV
        /// (`level,wall_ns,cpu_ns,commit_ns,objects_read`; objects read = object-cache misses).
        #[arg(long)]
        block_times: Option<PathBuf>,
        /// Collect garbage as the replay goes, keeping the last N commits (a GC runs on the
        /// store's thread beside the blocks; see `kestrel context gc`).
        #[arg(long)]
        keep_commits: Option<u64>,
        /// With --keep-commits: commits between the starts of two GCs.
        #[arg(long, default_value_t = 1000, requires = "keep_commits")]
        gc_every: u64,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Collect garbage: keep the last N commits, drop the older ones and give the pack pages
    /// that only they reach back to the file system (the store must not be open for writing).
    Gc {
        /// The store directory.
        #[arg(long)]
        store: PathBuf,
        /// Commits to keep (the head and the N-1 before it).
        #[arg(long)]
        keep: u64,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Re-hash every object reachable from the head (or from every kept commit) and report the
    /// first mismatch with its file and offset (exit code 1). Opens the store read-only: it may
    /// run while a writer has the store open.
    Verify {
        /// The store directory.
        #[arg(long)]
        store: PathBuf,
        /// Verify from every kept commit, not only the head (also checks each commit's region
        /// checksum after the last GC).
        #[arg(long)]
        all_commits: bool,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print a store's head, commit count, sizes and last GC (read-only).
    Info {
        /// The store directory.
        #[arg(long)]
        store: PathBuf,
        /// Also scan the pack and print each kind of record's count and bytes beside what
        /// irmin-pack's V2 encoding of the same objects would take (on a store never collected).
        #[arg(long)]
        census: bool,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// The `--cache-policy` values of `kestrel context replay` (crates/context/src/cache.rs).
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum CachePolicyArgument {
    /// Two generations of half the budget each.
    TwoGenerations,
    /// Least recently used.
    Lru,
    /// FIFO with a referenced bit (second chance).
    Clock,
    /// S3-FIFO (small FIFO of 10 %, main FIFO, ghost keys).
    S3fifo,
}

impl From<CachePolicyArgument> for CachePolicy {
    fn from(argument: CachePolicyArgument) -> CachePolicy {
        match argument {
            CachePolicyArgument::TwoGenerations => CachePolicy::TwoGenerations,
            CachePolicyArgument::Lru => CachePolicy::Lru,
            CachePolicyArgument::Clock => CachePolicy::Clock,
            CachePolicyArgument::S3fifo => CachePolicy::S3Fifo {
                small_percent: kestrel_context::cache::S3FIFO_SMALL_PERCENT_DEFAULT,
            },
        }
    }
}

/// Blocks between two memory samples of `--memory-samples`.
const MEMORY_SAMPLE_INTERVAL_BLOCKS: u64 = 1000;

/// The `--sync` values of `kestrel context replay`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum SyncArgument {
    /// `fdatasync` before each commit returns: a commit survives a power loss.
    EveryCommit,
    /// `fdatasync` every 256 commits and at close: a commit survives the process being killed.
    Checkpoints,
    /// Never synced: for tests; a commit survives the process being killed, not a power loss.
    None,
}

impl From<SyncArgument> for SyncMode {
    fn from(argument: SyncArgument) -> SyncMode {
        match argument {
            SyncArgument::EveryCommit => SyncMode::EveryCommit,
            SyncArgument::Checkpoints => SyncMode::Checkpoints,
            SyncArgument::None => SyncMode::Never,
        }
    }
}

/// Runs one `kestrel context` verb.
pub fn run(command: ContextCommand) -> CommandResult {
    match command {
        ContextCommand::Hash { path, json } => hash(&path, json),
        ContextCommand::CommitHash {
            tree,
            parent,
            date,
            author,
            message,
            json,
        } => commit_hash(&tree, &parent, date, author, message, json),
        ContextCommand::Replay {
            blocks,
            ops_per_block,
            seed,
            initial_contracts,
            store,
            sync,
            cache_mib,
            cache_policy,
            retain_mib,
            cache_released_leaves,
            cache_includes_retained,
            cache_trace,
            memory_samples,
            time_limit_seconds,
            trace,
            write_trace,
            block_times,
            keep_commits,
            gc_every,
            json,
        } => {
            let options = ReplayOptions {
                blocks,
                operations_per_block: ops_per_block,
                seed,
                initial_contracts,
                store_options: StoreOptions {
                    sync_mode: sync.into(),
                    cache_budget_bytes: cache_mib
                        .checked_mul(1 << 20)
                        .ok_or_else(|| format!("--cache-mib {cache_mib} is too large"))?,
                    cache_policy: cache_policy
                        .map_or(kestrel_context::CACHE_POLICY_DEFAULT, CachePolicy::from),
                    retained_written_bytes_max: retain_mib
                        .map(|mib| {
                            mib.checked_mul(1 << 20)
                                .ok_or_else(|| format!("--retain-mib {mib} is too large"))
                        })
                        .transpose()?,
                    cache_released_leaves,
                    cache_budget_includes_retained: cache_includes_retained,
                    cache_trace,
                    gc: keep_commits.map(|keep_commits| GcPolicy {
                        keep_commits,
                        every_commits: gc_every.max(1),
                    }),
                    gc_abort_at: None,
                },
                time_limit: time_limit_seconds.map(std::time::Duration::from_secs),
                memory_sample_interval_blocks: memory_samples
                    .is_some()
                    .then_some(MEMORY_SAMPLE_INTERVAL_BLOCKS),
            };
            if let Some(output) = write_trace {
                return write_trace_file(&options, &output);
            }
            if let Some(input) = trace {
                return replay_trace_file(&options, &input, store, json);
            }
            replay(
                &options,
                store,
                block_times.as_deref(),
                memory_samples.as_deref(),
                json,
            )
        }
        ContextCommand::Gc { store, keep, json } => gc(&store, keep, json),
        ContextCommand::Verify {
            store,
            all_commits,
            json,
        } => verify(&store, all_commits, json),
        ContextCommand::Info {
            store,
            census,
            json,
        } => info(&store, census, json),
    }
}

fn verify(directory: &Path, all_commits: bool, json: bool) -> CommandResult {
    let store = open_store(directory, false)?;
    let scope = if all_commits {
        VerifyScope::AllCommits
    } else {
        VerifyScope::Head
    };
    let started = std::time::Instant::now();
    let result = store.verify(scope);
    let seconds = started.elapsed().as_secs_f64();
    match (result, json) {
        (Ok(report), true) => print_json(&serde_json::json!({
            "ok": true,
            "commits": report.commits,
            "objects": report.objects,
            "bytes": report.bytes,
            "regions": report.regions,
            "seconds": seconds,
        })),
        (Ok(report), false) => println!(
            "ok: {} commit(s), {} objects ({:.1} MiB) re-hashed, {} region checksum(s), {seconds:.1} s",
            report.commits,
            report.objects,
            report.bytes as f64 / 1048576.0,
            report.regions
        ),
        (Err(error), true) => {
            let (file, offset) = match &error {
                kestrel_context::ContextError::Corrupt {
                    file, offset_bytes, ..
                } => (Some(file.to_string()), Some(*offset_bytes)),
                _ => (None, None),
            };
            print_json(&serde_json::json!({
                "ok": false,
                "error": error.to_string(),
                "file": file,
                "offset": offset,
            }));
            return Ok(ExitCode::from(1));
        }
        (Err(error), false) => return Err(error.to_string()),
    }
    Ok(ExitCode::SUCCESS)
}

/// The names of the census rows (by pack tag; 0: inline contents).
const CENSUS_KINDS: [&str; 8] = [
    "inline contents",
    "flat node",
    "inode values",
    "inode tree",
    "contents",
    "commit",
    "split flat root",
    "split flat part",
];

fn info(directory: &Path, census: bool, json: bool) -> CommandResult {
    let store = open_store(directory, false)?;
    let census = if census {
        Some(store.census().map_err(|error| error.to_string())?)
    } else {
        None
    };
    let commits = store.commit_count().max(1) as f64;
    let (gc_count, gc_boundary, gc_time) = store.gc_history();
    let file_sizes = |name: &str| {
        std::fs::metadata(directory.join(name)).map_or((0, 0), |metadata| {
            use std::os::unix::fs::MetadataExt;
            (metadata.len(), metadata.blocks() * 512)
        })
    };
    let pack = file_sizes(kestrel_context::PACK_FILE_NAME);
    let index = file_sizes(kestrel_context::INDEX_FILE_NAME);
    let control = file_sizes(kestrel_context::CONTROL_FILE_NAME);
    // The last GC's prefix and mapping (none for a store never collected, or collected by a
    // version that punched in place).
    let prefix = file_sizes(&format!(
        "{}{gc_count}",
        kestrel_context::store_constants::PREFIX_FILE_STEM
    ));
    let mapping = file_sizes(&format!(
        "{}{gc_count}",
        kestrel_context::store_constants::MAPPING_FILE_STEM
    ));
    if json {
        print_json(&serde_json::json!({
            "head": store.head().map(|hash| hash.to_base58()),
            "commits": store.commit_count(),
            "pack_length_bytes": store.pack_length_bytes(),
            "pack_file_bytes": pack.0,
            "pack_allocated_bytes": pack.1,
            "index_file_bytes": index.0,
            "index_allocated_bytes": index.1,
            "control_file_bytes": control.0,
            "prefix_file_bytes": prefix.0,
            "mapping_file_bytes": mapping.0,
            "disk_bytes": store.disk_bytes(),
            "gc_count": gc_count,
            "gc_boundary_bytes": gc_boundary,
            "gc_time_seconds": gc_time,
            "recovery": store.recovery().map(|recovery| recovery.to_string()),
            "census": census.map(|census| serde_json::json!({
                "kinds": CENSUS_KINDS.iter().zip(census.by_tag.iter()).map(|(kind, cost)| serde_json::json!({
                    "kind": kind,
                    "count": cost.count,
                    "bytes": cost.bytes,
                    "irmin_v2_bytes": cost.irmin_bytes,
                })).collect::<Vec<_>>(),
                "total_bytes": census.total().bytes,
                "total_irmin_v2_bytes": census.total().irmin_bytes,
                "irmin_names_bytes": census.irmin_names_bytes,
                "child_hash_bytes": census.child_hash_bytes,
                "inline_child_hash_bytes": census.inline_child_hash_bytes,
            })),
        }));
    } else {
        match store.head() {
            Some(head) => println!("head:      {head}"),
            None => println!("head:      none (empty store)"),
        }
        println!("commits:   {}", store.commit_count());
        println!(
            "pack:      {} bytes ({} in the file, {:.1} MiB on disk)",
            store.pack_length_bytes(),
            pack.0,
            pack.1 as f64 / 1048576.0
        );
        println!(
            "index:     {} bytes ({:.1} MiB on disk); control {} bytes",
            index.0,
            index.1 as f64 / 1048576.0,
            control.0
        );
        if prefix.0 > 0 || mapping.0 > 0 {
            println!(
                "prefix:    {} bytes, mapping {} bytes (generation {gc_count})",
                prefix.0, mapping.0
            );
        }
        println!(
            "disk:      {:.1} MiB",
            store.disk_bytes() as f64 / 1048576.0
        );
        if gc_count == 0 {
            println!("last GC:   never");
        } else {
            println!(
                "last GC:   {gc_count} GC(s); the last at {gc_time} s since the epoch, boundary {gc_boundary}"
            );
        }
        if let Some(recovery) = store.recovery() {
            println!("a writer would recover: {recovery}");
        }
        if let Some(census) = census {
            println!(
                "{:<18} {:>12} {:>14} {:>14} {:>10} {:>10}",
                "record", "count", "bytes", "irmin V2", "/commit", "irmin"
            );
            let total = census.total();
            for (kind, cost) in CENSUS_KINDS
                .iter()
                .zip(census.by_tag.iter())
                .chain([("total", &total)].iter().map(|(kind, cost)| (kind, *cost)))
            {
                println!(
                    "{kind:<18} {:>12} {:>14} {:>14} {:>10.0} {:>10.0}",
                    cost.count,
                    cost.bytes,
                    cost.irmin_bytes,
                    cost.bytes as f64 / commits,
                    cost.irmin_bytes as f64 / commits
                );
            }
            println!(
                "child hashes held by directory entries: {} bytes ({} of inline contents); names in irmin's total: {} bytes",
                census.child_hash_bytes, census.inline_child_hash_bytes, census.irmin_names_bytes
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Opens the store that `directory` holds (never creating one): for writing, or read-only.
fn open_store(directory: &Path, writable: bool) -> Result<Store, String> {
    if !directory.join(kestrel_context::CONTROL_FILE_NAME).exists()
        && !directory.join(kestrel_context::PACK_FILE_NAME).exists()
    {
        return Err(format!("{} holds no store", directory.display()));
    }
    let store = if writable {
        Store::open(directory, StoreOptions::default())
    } else {
        Store::open_read_only(directory, StoreOptions::default())
    };
    store.map_err(|error| error.to_string())
}

/// Prints what a writer's open recovered, if anything (on stderr: it is not the command's
/// output, but an operator wants to know).
fn report_recovery(store: &kestrel_context::Store) {
    if let Some(recovery) = store.recovery() {
        eprintln!("{recovery}");
    }
}

/// A GC report as JSON.
fn gc_report_json(report: &GcReport) -> serde_json::Value {
    serde_json::json!({
        "kept_commit": report.kept_commit.to_base58(),
        "boundary_bytes": report.boundary_bytes,
        "commits_dropped": report.commits_dropped,
        "live_objects": report.live_objects,
        "live_bytes": report.live_bytes,
        "prefix_bytes": report.prefix_bytes,
        "prefix_runs": report.prefix_runs,
        "pack_bytes_punched": report.pack_bytes_punched,
        "index_bytes_punched": report.index_bytes_punched,
        "mark_frontier_peak": report.mark_frontier_peak,
        "mark_ms": report.mark_duration.as_secs_f64() * 1e3,
        "copy_ms": report.copy_duration.as_secs_f64() * 1e3,
        "publish_ms": report.publish_duration.as_secs_f64() * 1e3,
        "total_ms": report.total_duration.as_secs_f64() * 1e3,
    })
}

fn gc(directory: &Path, keep: u64, json: bool) -> CommandResult {
    let mut store = open_store(directory, true)?;
    report_recovery(&store);
    let disk_before = store.disk_bytes();
    let started = store
        .gc_keep_last(keep)
        .map_err(|error| error.to_string())?;
    let report = store.wait_for_gc().map_err(|error| error.to_string())?;
    let disk_after = store.disk_bytes();
    let commits = store.commit_count();
    store.close().map_err(|error| error.to_string())?;
    let report = report.filter(|_| started);
    if json {
        print_json(&serde_json::json!({
            "collected": started,
            "commits_kept": commits,
            "disk_bytes_before": disk_before,
            "disk_bytes_after": disk_after,
            "gc": report.as_ref().map(gc_report_json),
        }));
    } else if let Some(report) = report {
        println!(
            "kept {commits} commits from {}; dropped {}",
            report.kept_commit, report.commits_dropped
        );
        println!(
            "live:   {} objects, {:.1} MiB; below the boundary at {}: {:.1} MiB in the prefix \
             ({} runs)",
            report.live_objects,
            report.live_bytes as f64 / 1048576.0,
            report.boundary_bytes,
            report.prefix_bytes as f64 / 1048576.0,
            report.prefix_runs
        );
        println!(
            "freed:  {:.1} MiB of the pack, {:.1} MiB of the index",
            report.pack_bytes_punched as f64 / 1048576.0,
            report.index_bytes_punched as f64 / 1048576.0
        );
        println!(
            "disk:   {:.1} MiB before, {:.1} MiB after; mark {:.0} ms, copy {:.0} ms, total {:.0} ms",
            disk_before as f64 / 1048576.0,
            disk_after as f64 / 1048576.0,
            report.mark_duration.as_secs_f64() * 1e3,
            report.copy_duration.as_secs_f64() * 1e3,
            report.total_duration.as_secs_f64() * 1e3
        );
    } else {
        println!("nothing to collect: the store holds {commits} commit(s)");
    }
    Ok(ExitCode::SUCCESS)
}

/// Builds the tree of a directory with an explicit stack (no recursion on the directory depth).
fn tree_of_directory(root: &Path) -> Result<(Tree, u64), String> {
    let mut tree = Tree::empty();
    let mut files = 0u64;
    let mut pending: Vec<(PathBuf, Vec<Vec<u8>>)> = vec![(root.to_path_buf(), Vec::new())];
    while let Some((directory, key)) = pending.pop() {
        let entries = std::fs::read_dir(&directory)
            .map_err(|error| format!("read {}: {error}", directory.display()))?;
        for entry in entries {
            let entry = entry.map_err(|error| format!("read {}: {error}", directory.display()))?;
            let path = entry.path();
            let metadata = std::fs::symlink_metadata(&path)
                .map_err(|error| format!("stat {}: {error}", path.display()))?;
            let mut child = key.clone();
            child.push(entry.file_name().as_encoded_bytes().to_vec());
            if metadata.is_dir() {
                pending.push((path, child));
            } else if metadata.is_file() {
                let bytes = std::fs::read(&path)
                    .map_err(|error| format!("read {}: {error}", path.display()))?;
                tree = tree
                    .add(&InMemory, &child, &bytes)
                    .map_err(|error| error.to_string())?;
                files += 1;
            } else {
                return Err(format!(
                    "{}: only files and directories can be hashed",
                    path.display()
                ));
            }
        }
    }
    Ok((tree, files))
}

fn hash(path: &Path, json: bool) -> CommandResult {
    let (hash, kind, files) = if path.is_dir() {
        let (tree, files) = tree_of_directory(path)?;
        (tree.hash(), Kind::Node, files)
    } else {
        // `-` is standard input; a path must be a regular file (a FIFO would never end).
        let bytes = crate::input::read_bytes(&path.display().to_string())
            .map_err(|error| error.to_string())?;
        (Tree::of_contents(&bytes).hash(), Kind::Contents, 1)
    };
    let kind_name = match kind {
        Kind::Contents => "contents",
        Kind::Node => "tree",
    };
    if json {
        print_json(&serde_json::json!({
            "path": path.display().to_string(),
            "kind": kind_name,
            "files": files,
            "hash": hash.to_base58(),
            "hex": hash.to_hex(),
        }));
    } else {
        println!("{}", hash.to_base58());
        println!("hex:  {}", hash.to_hex());
        println!("kind: {kind_name} ({files} file(s))");
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_hash(text: &str, what: &str) -> Result<ContextHash, String> {
    ContextHash::try_from_text(text)
        .ok_or_else(|| format!("{what} {text:?} is neither a Co... hash nor 64 hex digits"))
}

fn commit_hash(
    tree: &str,
    parents: &[String],
    date_seconds: i64,
    author: String,
    message: String,
    json: bool,
) -> CommandResult {
    let tree = parse_hash(tree, "--tree")?;
    let parents = parents
        .iter()
        .map(|parent| parse_hash(parent, "--parent"))
        .collect::<Result<Vec<_>, _>>()?;
    let info = CommitInfo {
        date_seconds,
        author,
        message,
    };
    let hash = kestrel_context::hash::commit_hash(&tree, &parents, &info);
    if json {
        print_json(&serde_json::json!({ "hash": hash.to_base58(), "hex": hash.to_hex() }));
    } else {
        println!("{}", hash.to_base58());
        println!("hex:  {}", hash.to_hex());
    }
    Ok(ExitCode::SUCCESS)
}

/// A replay's progress on stderr: while genesis writes the initial contracts (seconds before the
/// first block), a line a second saying so; then a one-line progress bar when stderr is a
/// terminal, otherwise a plain line per percent.
struct Progress {
    total: u64,
    enabled: bool,
    last_percent: u64,
    start: std::time::Instant,
    /// The thread printing genesis's lines, and the flag that stops it at the first block.
    genesis: Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>,
}

/// How often the genesis line is printed.
const GENESIS_TICK: std::time::Duration = std::time::Duration::from_secs(1);

impl Progress {
    fn new(total: u64, initial_contracts: u64) -> Progress {
        let enabled = std::io::stderr().is_terminal();
        let genesis_line = move |seconds: u64| {
            let line = format!("genesis: {initial_contracts} contracts, {seconds} s");
            let mut stderr = std::io::stderr();
            let _ = if enabled {
                write!(stderr, "\r{line} ")
            } else {
                writeln!(stderr, "{line}")
            };
            let _ = stderr.flush();
        };
        // The first line before anything else is written, then one a tick from a thread.
        genesis_line(0);
        let finished = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&finished);
        let ticker = std::thread::Builder::new()
            .name("genesis-progress".into())
            .spawn(move || {
                let start = std::time::Instant::now();
                let mut ticks: u32 = 1;
                loop {
                    // Sleep a tick in small steps, so the first block is not kept waiting.
                    while !seen.load(Ordering::Relaxed) && start.elapsed() < GENESIS_TICK * ticks {
                        std::thread::sleep(std::time::Duration::from_millis(20));
                    }
                    if seen.load(Ordering::Relaxed) {
                        break;
                    }
                    genesis_line(start.elapsed().as_secs());
                    ticks = ticks.saturating_add(1);
                }
                if enabled {
                    let _ = writeln!(std::io::stderr());
                }
            })
            .ok();
        Progress {
            total,
            enabled,
            last_percent: u64::MAX,
            start: std::time::Instant::now(),
            genesis: ticker.map(|thread| (finished, thread)),
        }
    }

    /// Stops the genesis line (at the first block, or when the replay ends before it).
    fn end_genesis(&mut self) {
        if let Some((finished, thread)) = self.genesis.take() {
            finished.store(true, Ordering::Relaxed);
            let _ = thread.join();
            // Block times and the time left count from the first block.
            self.start = std::time::Instant::now();
        }
    }

    fn update(&mut self, done: u64) {
        self.end_genesis();
        let percent = done * 100 / self.total.max(1);
        if percent == self.last_percent && done != self.total {
            return;
        }
        self.last_percent = percent;
        if !self.enabled {
            // Not a terminal (a log file): one plain line per percent, so a run that is stopped
            // still says how far it got.
            let _ = writeln!(
                std::io::stderr(),
                "{done}/{} blocks, {:.0} s",
                self.total,
                self.start.elapsed().as_secs_f64()
            );
            return;
        }
        let width = 40;
        let filled = (percent as usize * width / 100).min(width);
        let elapsed = self.start.elapsed().as_secs_f64();
        let remaining = if done > 0 {
            elapsed / done as f64 * (self.total - done) as f64
        } else {
            0.0
        };
        let mut stderr = std::io::stderr();
        let _ = write!(
            stderr,
            "\r[{}{}] {percent:3}% {done}/{} blocks, {remaining:.0} s left ",
            "#".repeat(filled),
            "-".repeat(width - filled),
            self.total
        );
        if done == self.total {
            let _ = writeln!(stderr);
        }
        let _ = stderr.flush();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.end_genesis();
    }
}

/// A replay starts from genesis: its `--store` must be absent or an empty directory (checked
/// before anything is opened, so a store in use or a damaged one is left as it is).
fn require_empty_directory(directory: &Path) -> Result<(), String> {
    match std::fs::read_dir(directory) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(format!("read {}: {error}", directory.display())),
        Ok(mut entries) => match entries.next() {
            None => Ok(()),
            Some(_) => Err(format!(
                "{} is not empty; a replay needs an empty or absent --store directory",
                directory.display()
            )),
        },
    }
}

/// The store a replay writes: `--store` (which must be empty or absent), or a temporary directory
/// named after `prefix`, removed when the guard returned with it is dropped or a signal ends the
/// process.
fn store_directory(
    store: Option<PathBuf>,
    prefix: &str,
) -> Result<(PathBuf, Option<TemporaryDirectory>), String> {
    match store {
        Some(directory) => {
            require_empty_directory(&directory)?;
            Ok((directory, None))
        }
        None => {
            let temporary = TemporaryDirectory::try_new(prefix)?;
            Ok((temporary.path().to_path_buf(), Some(temporary)))
        }
    }
}

fn replay(
    options: &ReplayOptions,
    store: Option<PathBuf>,
    block_times: Option<&Path>,
    memory_samples: Option<&Path>,
    json: bool,
) -> CommandResult {
    let (directory, temporary) = store_directory(store, "kestrel-replay")?;
    let mut progress = Progress::new(options.blocks, options.initial_contracts);
    let result = workload::replay(&directory, options, |done| progress.update(done));
    drop(temporary);
    let report = result.map_err(|error| error.to_string())?;
    if let Some(path) = block_times {
        write_block_times(&report, path)?;
    }
    if let Some(path) = memory_samples {
        write_memory_samples(&report, path)?;
    }
    let summary = report.summary();
    let cpu = (!report.block_cpu_nanoseconds.is_empty())
        .then(|| workload::BlockTimeSummary::of(&report.block_cpu_nanoseconds));
    let commit = workload::BlockTimeSummary::of(&report.commit_nanoseconds);
    let peak_resident_bytes = workload::peak_resident_bytes();
    let sync = match options.store_options.sync_mode {
        SyncMode::EveryCommit => "fdatasync every commit",
        SyncMode::Checkpoints => "fdatasync at checkpoints (every 256 commits) and close",
        SyncMode::Never => "no sync",
    };
    if json {
        let mut value = serde_json::json!({
            "blocks": report.blocks,
            "operations_per_block": report.operations_per_block,
            "seed": options.seed,
            "initial_contracts": options.initial_contracts,
            "sync": sync,
            "genesis_ms": report.genesis_milliseconds,
            "block_ms_mean": summary.mean_milliseconds,
            "block_ms_sd": summary.standard_deviation_milliseconds,
            "block_ms_p99": summary.p99_milliseconds,
            "block_ms_max": summary.max_milliseconds,
            "block_cpu_ms_mean": cpu.map(|cpu| cpu.mean_milliseconds),
            "block_cpu_ms_sd": cpu.map(|cpu| cpu.standard_deviation_milliseconds),
            "block_cpu_ms_p99": cpu.map(|cpu| cpu.p99_milliseconds),
            "block_cpu_ms_max": cpu.map(|cpu| cpu.max_milliseconds),
            "commit_ms_mean": commit.mean_milliseconds,
            "commit_ms_p99": commit.p99_milliseconds,
            "commit_ms_max": commit.max_milliseconds,
            "slowest_blocks": slowest_blocks(&report, 10),
            "slowest_blocks_cpu": slowest_blocks_by(&report, &report.block_cpu_nanoseconds, 10),
            "operations_per_second": report.operations_per_second(),
            "tps_equivalent": report.tps_equivalent(),
            "peak_rss_bytes": peak_resident_bytes,
            "disk_bytes": report.disk_bytes,
            "disk_bytes_per_block": report.disk_bytes_per_block(),
            "reads_found": report.reads_found,
            "cpu_ms_per_block": report.scheduler_nanoseconds.map(|(cpu, _)| cpu as f64 / 1e6 / report.blocks.max(1) as f64),
            "runqueue_wait_ms_per_block": report.scheduler_nanoseconds.map(|(_, wait)| wait as f64 / 1e6 / report.blocks.max(1) as f64),
            "objects_read": report.statistics.objects_read,
            "device_read_bytes": report.device_read_bytes,
            "device_read_bytes_per_block": report.device_read_bytes.map(|bytes| bytes as f64 / report.blocks.max(1) as f64),
            "cache_hits": report.statistics.cache_hits,
            "objects_read_by_tag": report.statistics.objects_read_by_tag,
            "bytes_read": report.statistics.bytes_read,
            "cache_inserted_bytes": report.statistics.cache_inserted_bytes,
            "released_leaves_cached": report.statistics.released_leaves_cached,
            "cache_policy": format!("{:?}", options.store_options.cache_policy),
            "cache_budget_bytes": options.store_options.cache_budget_bytes,
            "objects_written": report.statistics.objects_written,
            "head": report.head.map(|hash| hash.to_base58()),
            "disk_samples": report.disk_samples,
            "gc": report.gc_reports.iter().map(|(level, gc)| {
                let mut value = gc_report_json(gc);
                value["level"] = serde_json::json!(level);
                value
            }).collect::<Vec<_>>(),
        });
        // Beside the others (one `json!` of them all passes the macro's recursion limit).
        value["child_hashes_read"] = serde_json::json!(report.statistics.child_hashes_read);
        value["child_hashes_cached"] = serde_json::json!(report.statistics.child_hashes_cached);
        print_json(&value);
    } else {
        println!(
            "replayed {} blocks of {} operations (seed {}, {} contracts at genesis, {sync})",
            report.blocks, report.operations_per_block, options.seed, options.initial_contracts
        );
        println!("genesis:         {:.0} ms", report.genesis_milliseconds);
        println!(
            "block time:      {:.3} ± {:.3} ms (p99 {:.3} ms, max {:.3} ms)",
            summary.mean_milliseconds,
            summary.standard_deviation_milliseconds,
            summary.p99_milliseconds,
            summary.max_milliseconds
        );
        if let Some((cpu, wait)) = report.scheduler_nanoseconds {
            let blocks = report.blocks.max(1) as f64;
            println!(
                "of which:        {:.3} ms on CPU, {:.3} ms waiting for a CPU per block (the rest is I/O wait)",
                cpu as f64 / 1e6 / blocks,
                wait as f64 / 1e6 / blocks
            );
        }
        if let Some(cpu) = cpu {
            println!(
                "CPU per block:   {:.3} ± {:.3} ms (p99 {:.3} ms, max {:.3} ms)",
                cpu.mean_milliseconds,
                cpu.standard_deviation_milliseconds,
                cpu.p99_milliseconds,
                cpu.max_milliseconds
            );
        }
        println!(
            "commit:          {:.3} ms mean (p99 {:.3} ms, max {:.3} ms)",
            commit.mean_milliseconds, commit.p99_milliseconds, commit.max_milliseconds
        );
        println!("operations/s:    {:.0}", report.operations_per_second());
        println!(
            "TPS-equivalent:  {:.0} ({} transactions per block)",
            report.tps_equivalent(),
            workload::TRANSACTIONS_PER_BLOCK
        );
        match peak_resident_bytes {
            Some(bytes) => println!("peak RSS:        {:.1} MiB", bytes as f64 / 1048576.0),
            None => println!("peak RSS:        unavailable (/proc/self/status)"),
        }
        println!(
            "disk:            {:.1} MiB, {:.0} bytes per block after genesis",
            report.disk_bytes as f64 / 1048576.0,
            report.disk_bytes_per_block()
        );
        if let Some(bytes) = report.device_read_bytes {
            println!(
                "read from disk:  {:.1} MiB, {:.0} bytes per block (page-cache misses)",
                bytes as f64 / 1048576.0,
                bytes as f64 / report.blocks.max(1) as f64
            );
        }
        if !report.gc_reports.is_empty() {
            let count = report.gc_reports.len();
            let total = |f: fn(&GcReport) -> f64| {
                report.gc_reports.iter().map(|(_, gc)| f(gc)).sum::<f64>() / count as f64
            };
            let max_disk = report.disk_samples.iter().map(|(_, bytes)| *bytes).max();
            println!(
                "GC:              {count} runs, mark {:.0} ms and total {:.0} ms on average; \
                 disk at most {:.1} MiB over the samples",
                total(|gc| gc.mark_duration.as_secs_f64() * 1e3),
                total(|gc| gc.total_duration.as_secs_f64() * 1e3),
                max_disk.unwrap_or(0) as f64 / 1048576.0
            );
        }
        if let Some(head) = report.head {
            println!("head:            {head}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes one CSV line per block: level, wall, CPU (empty where unknown) and commit nanoseconds,
/// and the objects read from the pack (object-cache misses).
fn write_block_times(report: &workload::ReplayReport, path: &Path) -> Result<(), String> {
    let mut text = String::from("level,wall_ns,cpu_ns,commit_ns,objects_read\n");
    for (index, wall) in report.block_nanoseconds.iter().enumerate() {
        let cpu = report
            .block_cpu_nanoseconds
            .get(index)
            .map(u64::to_string)
            .unwrap_or_default();
        let commit = report.commit_nanoseconds.get(index).copied().unwrap_or(0);
        let objects_read = report.block_objects_read.get(index).copied().unwrap_or(0);
        text.push_str(&format!(
            "{},{wall},{cpu},{commit},{objects_read}\n",
            index + 1
        ));
    }
    std::fs::write(path, text).map_err(|error| format!("write {}: {error}", path.display()))
}

/// Writes one CSV line per memory sample: the process's resident memory and the store's estimates.
fn write_memory_samples(report: &workload::ReplayReport, path: &Path) -> Result<(), String> {
    let mut text = String::from(
        "level,rss_bytes,rss_anonymous_bytes,cache_objects,cache_held_bytes,\
         cache_retired_objects,cache_retired_bytes,retained_objects,retained_estimated_bytes,\
         read_buffer_bytes,write_buffer_bytes,hash_buffer_bytes\n",
    );
    for sample in &report.memory_samples {
        let store = &sample.store;
        text.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{}\n",
            sample.level,
            sample.resident_bytes,
            sample.resident_anonymous_bytes,
            store.cache.objects,
            store.cache.held_bytes,
            store.cache.retired_objects,
            store.cache.retired_bytes,
            store.retained_objects,
            store.retained_estimated_bytes,
            store.read_buffer_bytes,
            store.write_buffer_bytes,
            store.hash_buffer_bytes,
        ));
    }
    std::fs::write(path, text).map_err(|error| format!("write {}: {error}", path.display()))
}

/// The `count` slowest blocks by wall time: level, wall, CPU and commit milliseconds (to tell
/// checkpoints, cache turnover and run-queue waits apart).
fn slowest_blocks(report: &workload::ReplayReport, count: usize) -> serde_json::Value {
    slowest_blocks_by(report, &report.block_nanoseconds, count)
}

/// The `count` blocks with the largest `key` (wall or CPU nanoseconds per block), as
/// [`slowest_blocks`] lists them.
fn slowest_blocks_by(
    report: &workload::ReplayReport,
    key: &[u64],
    count: usize,
) -> serde_json::Value {
    let mut order: Vec<usize> = (0..key.len()).collect();
    order.sort_by_key(|index| std::cmp::Reverse(key[*index]));
    let milliseconds =
        |values: &[u64], index: usize| values.get(index).map(|value| *value as f64 / 1e6);
    serde_json::Value::Array(
        order
            .into_iter()
            .take(count)
            .map(|index| {
                serde_json::json!({
                    "level": index + 1,
                    "wall_ms": milliseconds(&report.block_nanoseconds, index),
                    "cpu_ms": milliseconds(&report.block_cpu_nanoseconds, index),
                    "commit_ms": milliseconds(&report.commit_nanoseconds, index),
                })
            })
            .collect(),
    )
}

fn write_trace_file(options: &ReplayOptions, output: &Path) -> CommandResult {
    let to_stdout = output == Path::new("-");
    let sink: Box<dyn Write> = if to_stdout {
        Box::new(std::io::stdout().lock())
    } else {
        Box::new(
            std::fs::File::create(output)
                .map_err(|error| format!("create {}: {error}", output.display()))?,
        )
    };
    let mut writer =
        kestrel_context_replay::trace::TraceWriter::try_new(std::io::BufWriter::new(sink))
            .map_err(|error| format!("write {}: {error}", output.display()))?;
    kestrel_context_replay::trace::write_synthetic_trace(
        &mut writer,
        options.seed,
        options.initial_contracts,
        options.blocks,
        options.operations_per_block,
    )
    .map_err(|error| error.to_string())?;
    writer
        .finish()
        .map_err(|error| format!("write {}: {error}", output.display()))?;
    let message = format!(
        "wrote {} blocks of {} operations to {}",
        options.blocks,
        options.operations_per_block,
        if to_stdout {
            "standard output".to_string()
        } else {
            output.display().to_string()
        }
    );
    // Standard output carries the trace itself when it is the destination.
    if to_stdout {
        eprintln!("{message}");
    } else {
        println!("{message}");
    }
    Ok(ExitCode::SUCCESS)
}

fn replay_trace_file(
    options: &ReplayOptions,
    input: &Path,
    store: Option<PathBuf>,
    json: bool,
) -> CommandResult {
    let (directory, temporary) = store_directory(store, "kestrel-trace-replay")?;
    let source: Box<dyn std::io::Read> = if input == Path::new("-") {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(
            std::fs::File::open(input)
                .map_err(|error| format!("open {}: {error}", input.display()))?,
        )
    };
    let result = (|| {
        let mut store = kestrel_context::Store::open(&directory, options.store_options.clone())?;
        let mut reader = kestrel_context_replay::trace::TraceReader::try_new(
            std::io::BufReader::new(source),
            input.to_path_buf(),
        )?;
        let report = kestrel_context_replay::trace::replay_trace(&mut store, &mut reader, |_| {})?;
        store.close()?;
        Ok::<_, kestrel_context::ContextError>(report)
    })();
    drop(temporary);
    let report = result.map_err(|error| error.to_string())?;
    let as_replay = workload::ReplayReport {
        blocks: report.commits,
        operations_per_block: 0,
        genesis_milliseconds: 0.0,
        block_nanoseconds: report.block_nanoseconds.clone(),
        commit_nanoseconds: Vec::new(),
        block_cpu_nanoseconds: Vec::new(),
        block_objects_read: Vec::new(),
        reads_found: 0,
        disk_bytes: 0,
        genesis_disk_bytes: 0,
        head: report.head,
        statistics: Default::default(),
        scheduler_nanoseconds: None,
        device_read_bytes: None,
        memory_samples: Vec::new(),
        disk_samples: Vec::new(),
        gc_reports: Vec::new(),
    };
    let summary = as_replay.summary();
    let seconds = report.block_nanoseconds.iter().sum::<u64>() as f64 / 1e9;
    if json {
        print_json(&serde_json::json!({
            "trace": input.display().to_string(),
            "commits": report.commits,
            "rows": report.rows,
            "read_mismatches": report.read_mismatches,
            "block_ms_mean": summary.mean_milliseconds,
            "block_ms_sd": summary.standard_deviation_milliseconds,
            "block_ms_p99": summary.p99_milliseconds,
            "block_ms_max": summary.max_milliseconds,
            "rows_per_second": report.rows as f64 / seconds.max(1e-9),
            "peak_rss_bytes": workload::peak_resident_bytes(),
            "head": report.head.map(|hash| hash.to_base58()),
        }));
    } else {
        println!(
            "replayed {} ({} commits, {} rows, {} read mismatches)",
            input.display(),
            report.commits,
            report.rows,
            report.read_mismatches
        );
        println!(
            "block time:      {:.3} ± {:.3} ms (p99 {:.3} ms, max {:.3} ms)",
            summary.mean_milliseconds,
            summary.standard_deviation_milliseconds,
            summary.p99_milliseconds,
            summary.max_milliseconds
        );
        if let Some(head) = report.head {
            println!("head:            {head}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
