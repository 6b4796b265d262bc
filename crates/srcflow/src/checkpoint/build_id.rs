//! The build of srcflow that runs: the hash of the binary or shared library holding its code,
//! so that a checkpoint made by another build (whose arithmetic may differ in the last bits) is
//! never mixed into this one's run.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use xxhash_rust::xxh3::Xxh3;

/// The xxh3 hash, in hex, of the file holding this code (the `srcflow` command, a program
/// linking the library, or the Python extension), taken once per process; the version alone,
/// marked unhashed, where the file cannot be read.
pub(crate) fn build_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let hashed = code_file().and_then(|path| hash_of(&path));
        hashed.unwrap_or_else(|| format!("{} (unhashed build)", env!("CARGO_PKG_VERSION")))
    })
}

/// The file this code was loaded from: the mapping of this process that holds this function
/// (`/proc/self/maps`), or the executable.
fn code_file() -> Option<PathBuf> {
    let here = build_id as *const () as usize;
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let mapped = maps.lines().find_map(|line| file_mapped_at(line, here));
    mapped.or_else(|| std::env::current_exe().ok())
}

/// The file of the mapping that `line` (of `/proc/self/maps`: "start-end perms offset dev
/// inode path", the path the only field with a slash) describes, when it holds `address`.
fn file_mapped_at(line: &str, address: usize) -> Option<PathBuf> {
    let (start, end) = line.split_whitespace().next()?.split_once('-')?;
    let start = usize::from_str_radix(start, 16).ok()?;
    let end = usize::from_str_radix(end, 16).ok()?;
    let path = &line[line.find('/')?..];
    (start <= address && address < end).then(|| PathBuf::from(path))
}

/// The xxh3 hash, in hex, of the file at `path`.
fn hash_of(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    let mut hasher = Xxh3::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        match file.read(&mut buffer).ok()? {
            0 => return Some(format!("{:016x}", hasher.digest())),
            n => hasher.update(&buffer[..n]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_is_the_hash_of_the_file_running_this_code() {
        let exe = std::env::current_exe().unwrap();
        assert_eq!(code_file().unwrap(), exe, "a test binary holds this code");
        assert_eq!(build_id(), hash_of(&exe).unwrap());
        let line = "7f00-7f80 r-xp 00000000 08:01 123 /usr/lib/lib x.so";
        assert_eq!(
            file_mapped_at(line, 0x7f10),
            Some("/usr/lib/lib x.so".into())
        );
        assert_eq!(file_mapped_at(line, 0x7f80), None);
        assert_eq!(
            file_mapped_at("7f00-7f80 rw-p 00000000 00:00 0", 0x7f10),
            None
        );
    }
}
