//! A temporary directory that goes away however the command ends: when dropped (success or
//! error) and when SIGINT, SIGTERM or SIGHUP arrives, since an interrupted `context replay`
//! would otherwise leave its ~100 MB store in the temporary directory. SIGKILL cannot be caught.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::path::{Path, PathBuf};

/// A directory under the system's temporary directory (`$TMPDIR`), named after the process.
pub struct TemporaryDirectory {
    path: PathBuf,
}

impl TemporaryDirectory {
    /// Names `<temp>/<prefix>-<pid>` (created by whoever writes into it) and starts the thread
    /// that, on SIGINT, SIGTERM or SIGHUP, removes it and exits with 128 + the signal's number, as
    /// a shell reports a process the signal ended. The thread lives as long as the process, so a
    /// signal after the directory is gone still ends the process.
    pub fn try_new(prefix: &str) -> Result<TemporaryDirectory, String> {
        let path = std::env::temp_dir().join(format!("{prefix}-{}", std::process::id()));
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
            .map_err(|error| format!("cannot watch for signals: {error}"))?;
        let watched = path.clone();
        std::thread::Builder::new()
            .name("remove-on-signal".into())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    remove(&watched);
                    std::process::exit(128 + signal);
                }
            })
            .map_err(|error| format!("cannot start the signal thread: {error}"))?;
        Ok(TemporaryDirectory { path })
    }

    /// Names `<temp>/<prefix>-<pid>` as [`TemporaryDirectory::try_new`] does, for a caller that
    /// handles the signals itself and drops this before it exits.
    pub fn without_signal_thread(prefix: &str) -> TemporaryDirectory {
        let path = std::env::temp_dir().join(format!("{prefix}-{}", std::process::id()));
        TemporaryDirectory { path }
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TemporaryDirectory {
    fn drop(&mut self) {
        remove(&self.path);
    }
}

/// Removes `path` and everything under it; a writer still running may add a file while it is
/// emptied, so a directory found not empty is tried again a few times.
fn remove(path: &Path) {
    const ATTEMPTS: usize = 5;
    for _ in 0..ATTEMPTS {
        match std::fs::remove_dir_all(path) {
            Err(error) if error.kind() == std::io::ErrorKind::DirectoryNotEmpty => continue,
            _ => return,
        }
    }
}
