//! Output shared by every area: the error type commands return, JSON printing, the error object
//! `--json` prints on failure, the exit codes, quiet exit on a closed pipe, and `version`.
//!
//! Exit codes: 0 success, 1 failure (the command ran and failed, or its input is invalid),
//! 2 usage error (the command line is not a valid command).

use std::process::ExitCode;

/// What a command returns: an exit code, or an error message printed as `error: ...` with exit 1.
pub type CommandResult = Result<ExitCode, String>;

/// Exit code of a failed command.
pub const EXIT_FAILURE: u8 = 1;
/// Exit code of an invalid command line.
pub const EXIT_USAGE: u8 = 2;

/// Prints `value` as pretty JSON on stdout.
pub fn print_json(value: &serde_json::Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
    );
}

/// Whether the command line asks for JSON output.
fn json_requested() -> bool {
    std::env::args().skip(1).any(|a| a == "--json")
}

/// The stable error object `--json` prints on failure: `{"error": {"kind", "message",
/// "exit_code"}}`.
pub fn error_object(kind: &str, message: &str, exit_code: u8) -> serde_json::Value {
    serde_json::json!({ "error": { "kind": kind, "message": message, "exit_code": exit_code } })
}

/// Reports a failed command (exit code 1): `error: MESSAGE` on stderr, or the error object on
/// stdout with `--json`.
pub fn failure(message: &str) -> ExitCode {
    if json_requested() {
        print_json(&error_object("failure", message, EXIT_FAILURE));
    } else {
        eprintln!("error: {message}");
    }
    ExitCode::from(EXIT_FAILURE)
}

/// Reports a command line clap rejected (exit code 2), or prints the help or version asked for
/// (exit code 0).
pub fn usage_error(error: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = error.print();
        let code = if error.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
            EXIT_USAGE
        } else {
            0
        };
        return ExitCode::from(code);
    }
    if json_requested() {
        let message = error.render().to_string();
        print_json(&error_object("usage", message.trim_end(), EXIT_USAGE));
    } else {
        let _ = error.print();
    }
    ExitCode::from(EXIT_USAGE)
}

/// Makes a write to a closed pipe (`kestrel ... | head -1`) end the process quietly with exit
/// code 0 instead of panicking: Rust ignores `SIGPIPE`, so `println!` fails with `EPIPE` and
/// panics with "failed printing to stdout"; the hook recognises that panic alone.
pub fn exit_quietly_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to std") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

/// The result of streaming output: a closed pipe ends the process quietly (exit code 0), as
/// [`exit_quietly_on_broken_pipe`] does for `println!`; any other write error is an error.
pub fn written(result: std::io::Result<()>) -> Result<(), String> {
    match result {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(error) => Err(format!("cannot write standard output: {error}")),
        Ok(()) => Ok(()),
    }
}

/// `kestrel version`: the version and how this binary was built.
pub fn print_version(json: bool) -> CommandResult {
    let version = env!("CARGO_PKG_VERSION");
    let commit = env!("KESTREL_GIT_COMMIT");
    let rustc = env!("KESTREL_RUSTC_VERSION");
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let target = format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS);
    let peers = cfg!(feature = "peers");
    if json {
        print_json(&serde_json::json!({
            "name": "kestrel",
            "version": version,
            "commit": commit,
            "rustc": rustc,
            "profile": profile,
            "target": target,
            "features": { "peers": peers },
        }));
    } else {
        println!("kestrel {version}");
        println!("commit: {commit}");
        println!("rustc: {rustc}");
        println!("profile: {profile}");
        println!("target: {target}");
        println!("features: {}", if peers { "peers" } else { "none" });
    }
    Ok(ExitCode::SUCCESS)
}
