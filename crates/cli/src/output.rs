//! Output helpers shared by every area: the error type commands return and JSON printing.

use std::process::ExitCode;

/// What a command returns: an exit code, or an error message printed as `error: ...` with exit 1.
pub type CommandResult = Result<ExitCode, String>;

/// Prints `value` as pretty JSON on stdout.
pub fn print_json(value: &serde_json::Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
    );
}

/// `kestrel version`.
pub fn print_version(json: bool) -> CommandResult {
    let version = env!("CARGO_PKG_VERSION");
    if json {
        print_json(&serde_json::json!({ "name": "kestrel", "version": version }));
    } else {
        println!("kestrel {version}");
    }
    Ok(ExitCode::SUCCESS)
}
