//! A deterministic mutation smoke test (the `cargo fuzz` target `michelson` does the same with
//! coverage guidance): every TZT file of the suite, mutated by a seeded generator (byte flips,
//! deletions, duplications, token swaps), must run to a result or an error — never a panic.

use kestrel_michelson_conformance::tzt::run_tzt_limited;

/// Mutants per TZT file.
const MUTANTS_PER_FILE: usize = 8;
/// A small gas budget so that mutated loops end quickly.
const GAS_MILLI: u64 = 2_000_000;

/// xorshift64*: a tiny deterministic generator, enough to vary mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const TOKENS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    ";",
    "0",
    "-1",
    "\"\"",
    "0x",
    "Unit",
    "Pair",
    "DUP",
    "DROP",
    "SWAP",
    "CAR",
    "CDR",
    "PAIR",
    "LAMBDA",
    "EXEC",
    "APPLY",
    "IF",
    "LOOP",
    "ITER",
    "MAP",
    "DIP",
    "int",
    "nat",
    "pair",
    "list",
    "lambda",
    "big_map",
    "ticket",
    "99999999999999999999",
];

fn mutate(source: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = source.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(4) {
            0 if !out.is_empty() => {
                let index = at.min(out.len() - 1);
                out[index] ^= 1 << rng.below(8);
            }
            1 if at < out.len() => {
                let end = (at + 1 + rng.below(8)).min(out.len());
                out.drain(at..end);
            }
            2 => {
                let token = TOKENS[rng.below(TOKENS.len())];
                out.splice(at..at, format!(" {token} ").into_bytes());
            }
            _ => {
                let end = (at + rng.below(16)).min(out.len());
                let copy = out[at.min(end)..end].to_vec();
                out.splice(at..at, copy);
            }
        }
    }
    out
}

fn run_mutants() {
    let Some(dir) = kestrel_testdata::require("tzt", "mutated_tzt_files_never_panic") else {
        return;
    };
    let mut files = kestrel_testdata::files_with_suffix(&dir, ".tzt");
    files.sort();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut runs = 0;
    for file in &files {
        let source = std::fs::read(file).expect("TZT file is readable");
        if source.len() > 100_000 {
            continue;
        }
        for _ in 0..MUTANTS_PER_FILE {
            let mutant = mutate(&source, &mut rng);
            if let Ok(text) = std::str::from_utf8(&mutant) {
                let _ = run_tzt_limited(text, false, GAS_MILLI);
                runs += 1;
            }
        }
    }
    println!("{runs} mutated TZT files ran without panicking");
}

#[test]
fn mutated_tzt_files_never_panic() {
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(run_mutants)
        .expect("spawn")
        .join()
        .expect("no panic");
}
