//! Fuzzes the Michelson typechecker and interpreter: the input, as text, is run as a TZT test
//! (types, values, code, execution and output comparison) and, split at `\u{1}` into a script, a
//! storage and a parameter, as `run script`. Nothing may panic, whatever the input.

#![no_main]

use kestrel_michelson_conformance::run_script::{run_script, RunScriptOptions};
use kestrel_michelson_conformance::tzt::run_tzt_limited;
use libfuzzer_sys::fuzz_target;

/// A gas budget small enough that every input finishes quickly (10,000 gas).
const FUZZ_GAS_MILLI: u64 = 10_000_000;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = run_tzt_limited(text, false, FUZZ_GAS_MILLI);
    let parts: Vec<&str> = text.splitn(3, '\u{1}').collect();
    if let [script, storage, input] = parts.as_slice() {
        let options = RunScriptOptions {
            storage: (*storage).to_string(),
            input: (*input).to_string(),
            trace_stack: true,
            gas_limit_milli: Some(FUZZ_GAS_MILLI),
            ..RunScriptOptions::default()
        };
        let _ = run_script(script, &options);
    }
});
