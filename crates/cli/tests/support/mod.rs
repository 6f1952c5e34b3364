//! Shared by the CLI integration tests: runs the `kestrel` binary as a user would.

use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `kestrel` with `arguments`, writing `stdin` to its standard input, and returns
/// (exit code, stdout, stderr). Panics (failing the test) when the binary cannot be run.
pub fn run_kestrel(arguments: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(arguments)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot run kestrel: {error}"));
    if let Some(mut input) = child.stdin.take() {
        input
            .write_all(stdin.as_bytes())
            .unwrap_or_else(|error| panic!("cannot write kestrel's stdin: {error}"));
    }
    let output = child
        .wait_with_output()
        .unwrap_or_else(|error| panic!("kestrel did not finish: {error}"));
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
