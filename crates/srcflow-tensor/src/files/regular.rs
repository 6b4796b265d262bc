//! Files opened for reading only when they are regular files: a FIFO, a device or a socket
//! named where a file is expected is refused by name at once, never waited on.

use std::fs::File;
use std::io::{Error, ErrorKind};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// `path` opened for reading, or an error saying what it is when it is not a regular file
/// (a symbolic link to one is followed). Opened without blocking, so that a FIFO with no
/// writer is refused rather than waited on.
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    let what = match () {
        _ if kind.is_dir() => "a folder",
        _ if kind.is_fifo() => "a FIFO (named pipe)",
        _ if kind.is_socket() => "a socket",
        _ if kind.is_char_device() || kind.is_block_device() => "a device",
        _ => "not a file",
    };
    Err(Error::new(
        ErrorKind::InvalidInput,
        format!("{what}, not a regular file; srcflow reads regular files only"),
    ))
}

/// The text of the regular file at `path` ([`open_regular`]).
pub fn read_regular_to_string(path: &Path) -> std::io::Result<String> {
    std::io::read_to_string(open_regular(path)?)
}

/// The bytes of the regular file at `path` ([`open_regular`]).
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = vec![];
    std::io::Read::read_to_end(&mut open_regular(path)?, &mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_or_a_folder_is_refused_at_once_and_a_file_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("core.npy");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: makes a FIFO at a path of our temporary folder.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let refused = open_regular(&fifo).unwrap_err().to_string();
        assert!(refused.contains("FIFO"), "{refused}");
        let refused = open_regular(dir.path()).unwrap_err().to_string();
        assert!(refused.contains("a folder"), "{refused}");
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert_eq!(
            std::io::read_to_string(open_regular(&file).unwrap()).unwrap(),
            "x"
        );
    }
}
