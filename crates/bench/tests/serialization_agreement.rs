//! The serialization suite's implementations agree: at a small scale, Kestrel's encoding and
//! Cap'n Proto (plain and packed) build the same requests from the generator, and every
//! response — checked by the client built into each benchmark, then digested whole — is the same
//! across implementations. Every mode, including the two-process pipe modes, runs its client
//! checks for every implementation.
//!
//! Needs the Cap'n Proto schema compiler (`apt-get install -y capnproto`) to build, like the rest
//! of `kestrel-bench`; run with `cargo test -p kestrel-bench --test serialization_agreement`.

use kestrel_bench::serialization::harness::Contender;
use kestrel_bench::serialization::rng::Xorshift128;
use kestrel_bench::serialization::{
    exchange_summaries, run_cell, BenchError, Benchmark, Cell, Implementation, Mode, Scratch,
    ServerCommand, Setup,
};

/// Iterations per benchmark: enough to cover empty and large requests, quick in a debug build.
fn iterations(benchmark: Benchmark) -> u64 {
    match benchmark {
        Benchmark::Carsales => 60,
        Benchmark::Catrank => 12,
        Benchmark::Eval => 2_000,
    }
}

fn server_command() -> ServerCommand {
    ServerCommand {
        program: env!("CARGO_BIN_EXE_kestrel-serialization-bench").into(),
        leading_args: vec!["server".into()],
    }
}

#[test]
fn every_implementation_gives_the_same_responses() {
    for benchmark in Benchmark::ALL {
        let count = iterations(benchmark);
        let reference = exchange_summaries(benchmark, Implementation::Capnp, false, count)
            .unwrap_or_else(|error| panic!("{} capnp: {error}", benchmark.name()));
        assert_eq!(reference.len() as u64, count);
        // The expectations vary, so equal summaries are not equal by accident.
        let distinct: std::collections::HashSet<_> = reference
            .iter()
            .map(|summary| summary.response_digest)
            .collect();
        assert!(
            distinct.len() > 1,
            "{}: responses all alike",
            benchmark.name()
        );
        for implementation in Implementation::ALL {
            for reuse in [false, true] {
                let summaries = exchange_summaries(benchmark, implementation, reuse, count)
                    .unwrap_or_else(|error| {
                        panic!("{} {}: {error}", benchmark.name(), implementation.name())
                    });
                for (index, (got, want)) in summaries.iter().zip(&reference).enumerate() {
                    assert_eq!(
                        got,
                        want,
                        "{} {} reuse={reuse}: exchange {index} differs from capnp",
                        benchmark.name(),
                        implementation.name()
                    );
                }
            }
        }
    }
}

#[test]
fn every_mode_passes_its_client_checks() {
    let command = server_command();
    for benchmark in Benchmark::ALL {
        let count = (iterations(benchmark) / 4).max(1);
        for implementation in Implementation::ALL {
            for mode in Mode::ALL {
                if !implementation.runs(mode) {
                    continue;
                }
                for reuse in [false, true] {
                    let cell = Cell {
                        benchmark,
                        implementation,
                        mode,
                        reuse,
                    };
                    let outcome = run_cell(cell, &command, count).unwrap_or_else(|error| {
                        panic!(
                            "{} {} {} reuse={reuse}: {error}",
                            benchmark.name(),
                            implementation.name(),
                            mode.name()
                        )
                    });
                    if mode == Mode::Bytes {
                        let sizes = outcome.sizes.expect("bytes mode reports sizes");
                        assert!(sizes.request_bytes > 0 && sizes.response_bytes > 0);
                    }
                    // The pipe modes report the CPU time of both processes; the server's
                    // includes at least its own start-up, so it cannot be zero.
                    let pipe = matches!(mode, Mode::Pipe | Mode::PipeAsync);
                    assert_eq!(outcome.cpu.is_some(), pipe, "{} cpu", mode.name());
                    if let Some(cpu) = outcome.cpu {
                        assert!(cpu.server > std::time::Duration::ZERO, "{cpu:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn unknown_server_arguments_are_rejected() {
    // The server role rejects arguments that name nothing, rather than serving garbage.
    let error = kestrel_bench::serialization::run_server_role(&[
        "carsales".into(),
        "protobuf".into(),
        "reuse".into(),
    ])
    .expect_err("unknown implementation");
    assert!(error.to_string().contains("protobuf"), "{error}");
}

/// The first request of the generator written by `contender` and served by it (in memory):
/// the request's bytes, the response's bytes and what the client expects.
fn first_exchange<'s, C: Contender<'s>>(contender: &mut C) -> (Vec<u8>, Vec<u8>, C::Expectation) {
    let mut rng = Xorshift128::new();
    let mut request = Vec::new();
    let expected = contender
        .write_request(&mut rng, &mut request)
        .expect("request");
    let mut response = Vec::new();
    assert!(contender
        .serve_request(&mut &request[..], &mut response)
        .expect("serve"));
    (request, response, expected)
}

/// Runs one exchange through `C` with a wrong expectation: the client check must fail.
fn wrong_expectation_fails<'s, C>(
    setup: Setup,
    scratch: &'s mut Scratch,
    tweak: fn(C::Expectation) -> C::Expectation,
) where
    C: Contender<'s>,
{
    let mut contender = C::new(setup, scratch).expect("contender");
    let (_request, response, expected) = first_exchange(&mut contender);
    let error = contender
        .read_response(&mut &response[..], tweak(expected))
        .expect_err("a wrong expectation must fail the check");
    assert!(matches!(error, BenchError::CheckFailed { .. }), "{error}");
}

#[test]
fn client_checks_reject_wrong_responses() {
    use kestrel_bench::serialization::{capnp_side, kestrel_side};
    let plain = Setup {
        reuse: false,
        packed: false,
    };
    let packed = Setup {
        reuse: true,
        packed: true,
    };
    let mut scratch = Scratch::new();
    wrong_expectation_fails::<kestrel_side::KestrelContender<kestrel_side::Carsales>>(
        plain,
        &mut scratch,
        |e| e + 1,
    );
    wrong_expectation_fails::<kestrel_side::KestrelContender<kestrel_side::Catrank>>(
        plain,
        &mut scratch,
        |e| e + 1,
    );
    wrong_expectation_fails::<kestrel_side::KestrelContender<kestrel_side::Eval>>(
        plain,
        &mut scratch,
        |e| e ^ 1,
    );
    wrong_expectation_fails::<capnp_side::CapnpContender<'_, capnp_side::Carsales>>(
        plain,
        &mut scratch,
        |e| e + 1,
    );
    wrong_expectation_fails::<capnp_side::CapnpContender<'_, capnp_side::Catrank>>(
        packed,
        &mut scratch,
        |e| e + 1,
    );
    wrong_expectation_fails::<capnp_side::CapnpContender<'_, capnp_side::Eval>>(
        packed,
        &mut scratch,
        |e| e ^ 1,
    );
}

#[test]
fn eval_requests_are_the_bytes_mu_writes() {
    // The Kestrel side builds and writes eval requests from an arena; the bytes must be those
    // of the `mu` encoding over boxes, request by request, and `mu` must read them back.
    let compared_bytes = kestrel_bench::serialization::kestrel_side::eval_request_matches_mu(2_000)
        .unwrap_or_else(|error| panic!("eval: {error}"));
    assert!(compared_bytes > 2_000 * 12, "{compared_bytes}");
}

#[test]
fn kestrel_frames_cut_short_or_too_large_are_errors() {
    use kestrel_bench::serialization::kestrel_side::{Catrank, KestrelContender, MAX_FRAME_BYTES};
    for reuse in [false, true] {
        let setup = Setup {
            reuse,
            packed: false,
        };
        let mut scratch = Scratch::new();
        let mut contender =
            KestrelContender::<Catrank>::new(setup, &mut scratch).expect("contender");
        // Served whole first, so that a reused buffer holds a frame when the short one comes.
        let (request, _response, _expected) = first_exchange(&mut contender);
        let short = &request[..request.len() - 1];
        let error = contender
            .serve_request(&mut &short[..], &mut Vec::new())
            .expect_err("a frame cut short");
        assert!(
            matches!(&error, BenchError::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof),
            "reuse={reuse}: {error}"
        );
        let too_large = ((MAX_FRAME_BYTES + 1) as u32).to_be_bytes();
        let error = contender
            .serve_request(&mut &too_large[..], &mut Vec::new())
            .expect_err("a frame over the limit");
        assert!(
            matches!(error, BenchError::FrameTooLarge { .. }),
            "reuse={reuse}: {error}"
        );
    }
}
