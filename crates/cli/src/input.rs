//! Reading the files commands take: `-` is standard input everywhere; a path must name a
//! regular file (a FIFO or a device such as `/dev/zero` would block or never end); and what is
//! read whole is bounded by [`MAX_INPUT_BYTES`], so no input makes the process read without end.
//! A command that reads its input as a stream (`solana pack`) opens it with [`open_stream`] and
//! bounds its own memory.

use std::io::Read;
use std::path::Path;

/// The most bytes read from one input: far above any Michelson script (Octez bounds an
/// operation at 32 KiB) or a file of transactions a person checks, small enough to hold.
pub const MAX_INPUT_BYTES: u64 = 256 * 1024 * 1024;

/// Why an input could not be read.
#[derive(Debug)]
pub enum InputError {
    /// The file cannot be opened or read.
    Io {
        /// The path given.
        path: String,
        /// The system's reason.
        error: std::io::Error,
    },
    /// The path names a FIFO, a device or a directory.
    NotARegularFile {
        /// The path given.
        path: String,
    },
    /// The input exceeds [`MAX_INPUT_BYTES`].
    TooLarge {
        /// The path given (`-` for standard input).
        path: String,
    },
    /// The input is not UTF-8 text.
    NotText {
        /// The path given.
        path: String,
        /// The offset of the first byte that is not UTF-8.
        offset: usize,
    },
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputError::Io { path, error } => write!(f, "cannot read {path}: {error}"),
            InputError::NotARegularFile { path } => write!(
                f,
                "cannot read {path}: not a regular file (give - to read standard input)"
            ),
            InputError::TooLarge { path } => {
                write!(f, "cannot read {path}: larger than {MAX_INPUT_BYTES} bytes")
            }
            InputError::NotText { path, offset } => {
                write!(f, "cannot read {path}: not UTF-8 text at byte {offset}")
            }
        }
    }
}

/// Opens `path` (or standard input for `-`) for reading without a bound, with the file's length
/// when it is a file: for commands that read their input as a stream in bounded memory.
pub fn open_stream(path: &str) -> Result<(Box<dyn Read>, Option<u64>), InputError> {
    if path == "-" {
        return Ok((Box::new(std::io::stdin().lock()), None));
    }
    let io = |error| InputError::Io {
        path: path.to_string(),
        error,
    };
    let metadata = std::fs::metadata(Path::new(path)).map_err(io)?;
    if !metadata.is_file() {
        return Err(InputError::NotARegularFile {
            path: path.to_string(),
        });
    }
    let file = std::fs::File::open(path).map_err(io)?;
    Ok((Box::new(file), Some(metadata.len())))
}

/// Reads `path` (or standard input for `-`) as bytes, at most [`MAX_INPUT_BYTES`].
pub fn read_bytes(path: &str) -> Result<Vec<u8>, InputError> {
    let too_large = || InputError::TooLarge {
        path: path.to_string(),
    };
    let (stream, length) = open_stream(path)?;
    if length.is_some_and(|length| length > MAX_INPUT_BYTES) {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    stream
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| InputError::Io {
            path: path.to_string(),
            error,
        })?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Reads `path` (or standard input for `-`) as UTF-8 text, at most [`MAX_INPUT_BYTES`].
pub fn read_text(path: &str) -> Result<String, InputError> {
    String::from_utf8(read_bytes(path)?).map_err(|error| InputError::NotText {
        path: path.to_string(),
        offset: error.utf8_error().valid_up_to(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_directories_are_refused_without_reading() {
        for path in ["/dev/zero", "/", "/dev/null"] {
            assert!(
                matches!(read_bytes(path), Err(InputError::NotARegularFile { .. })),
                "{path}"
            );
        }
    }

    #[test]
    fn missing_files_and_binary_text_are_typed_errors() {
        assert!(matches!(
            read_text("/nonexistent/kestrel-input"),
            Err(InputError::Io { .. })
        ));
        let path = std::env::temp_dir().join(format!("kestrel-input-{}", std::process::id()));
        std::fs::write(&path, b"ok\xff").expect("temporary file");
        let result = read_text(&path.display().to_string());
        let _ = std::fs::remove_file(&path);
        assert!(matches!(result, Err(InputError::NotText { offset: 2, .. })));
    }
}
