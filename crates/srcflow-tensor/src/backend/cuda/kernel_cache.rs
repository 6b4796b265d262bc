//! `KernelCache`: the CUBINs of `kernels/`, compiled once per process and architecture (kept in
//! memory for every later CUDA backend) and kept on disk across processes, keyed by the
//! source's hash, NVRTC's version and the architecture, as CuPy's kernel cache is: a process
//! on a machine that ran srcflow before loads its kernels without compiling them.

use super::kernels::{self, KernelFile};
use crate::error::Result;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Compiled kernels in memory, and the folder that keeps them on disk (`None`: memory only).
pub(crate) struct KernelCache {
    dir: Option<PathBuf>,
    compiled: Mutex<Vec<(String, Arc<Vec<u8>>)>>,
}

/// The start of every CUBIN (an ELF file): a cached file without it is compiled again.
const ELF_MAGIC: &[u8] = b"\x7fELF";

impl KernelCache {
    /// A cache keeping its CUBINs in `dir` (made when first written), or in memory only.
    pub fn new(dir: Option<PathBuf>) -> Self {
        KernelCache {
            dir,
            compiled: Mutex::new(Vec::new()),
        }
    }

    /// The process's cache, on disk in [`default_dir`].
    pub fn process() -> &'static KernelCache {
        static PROCESS: OnceLock<KernelCache> = OnceLock::new();
        PROCESS.get_or_init(|| KernelCache::new(default_dir()))
    }

    /// The CUBIN of `file` for `arch`: the one compiled before in this process, else the disk
    /// cache's, else compiled now by NVRTC (and kept in both; a folder that cannot be written
    /// only costs the next process a compile).
    pub fn cubin(&self, file: KernelFile, arch: &str) -> Result<Arc<Vec<u8>>> {
        let key = kernels::cache_key(file, arch)?;
        let mut compiled = self.compiled.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, cubin)) = compiled.iter().find(|(k, _)| *k == key) {
            return Ok(Arc::clone(cubin));
        }
        let path = self.dir.as_ref().map(|dir| dir.join(&key));
        let cubin = match path.as_deref().and_then(read_cubin) {
            Some(cubin) => cubin,
            None => {
                let cubin = kernels::compile(file, arch)?;
                if let Some(path) = &path {
                    write_cubin(path, &cubin);
                }
                cubin
            }
        };
        let cubin = Arc::new(cubin);
        compiled.push((key, Arc::clone(&cubin)));
        Ok(cubin)
    }
}

/// Where compiled kernels are kept between processes: `SRCFLOW_KERNEL_CACHE`, else
/// `$XDG_CACHE_HOME/srcflow/kernels`, else `~/.cache/srcflow/kernels` (`None` without a home).
pub(crate) fn default_dir() -> Option<PathBuf> {
    let var = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("SRCFLOW_KERNEL_CACHE")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("srcflow/kernels")))
        .or_else(|| var("HOME").map(|d| d.join(".cache/srcflow/kernels")))
}

/// The CUBIN kept at `path`, if it is there and looks like one.
fn read_cubin(path: &Path) -> Option<Vec<u8>> {
    std::fs::read(path)
        .ok()
        .filter(|bytes| bytes.starts_with(ELF_MAGIC))
}

/// Keeps `cubin` at `path`: written beside it, then renamed into place, so that a process that
/// dies meanwhile or another writing the same key leaves no partial file. Failures are logged.
fn write_cubin(path: &Path, cubin: &[u8]) {
    let partial = path.with_extension(format!("partial-{}", std::process::id()));
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&partial, cubin))
        .and_then(|()| std::fs::rename(&partial, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&partial);
        tracing::warn!("cannot keep a compiled kernel at {}: {e}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cuda::kernels::{test_nvrtc::load_nvrtc, FILES};

    #[test]
    fn a_kernel_is_compiled_once_then_read_from_memory_or_disk() {
        load_nvrtc();
        let dir = tempfile::tempdir().unwrap();
        let file = FILES[0];
        let first = KernelCache::new(Some(dir.path().to_path_buf()));
        let compiled = first.cubin(file, "sm_90").unwrap();
        let kept: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(kept.len(), 1, "one file on disk, no partial one");
        let path = kept[0].as_ref().unwrap().path();
        assert_eq!(std::fs::read(&path).unwrap(), *compiled);
        assert!(Arc::ptr_eq(&first.cubin(file, "sm_90").unwrap(), &compiled));

        let marked = [ELF_MAGIC, b"kept on disk"].concat();
        std::fs::write(&path, &marked).unwrap();
        let second = KernelCache::new(Some(dir.path().to_path_buf()));
        assert_eq!(
            *second.cubin(file, "sm_90").unwrap(),
            marked,
            "read, not compiled"
        );

        std::fs::write(&path, b"not a cubin").unwrap();
        let third = KernelCache::new(Some(dir.path().to_path_buf()));
        assert_eq!(
            third.cubin(file, "sm_90").unwrap(),
            compiled,
            "compiled again"
        );
        assert_eq!(std::fs::read(&path).unwrap(), *compiled, "and kept again");
    }

    #[test]
    fn the_key_names_the_file_architecture_and_nvrtc_and_changes_with_them() {
        load_nvrtc();
        let [a, b] = FILES;
        let key = kernels::cache_key(a, "sm_90").unwrap();
        assert!(key.starts_with("strided_copy-sm_90-nvrtc12."), "{key}");
        assert_ne!(key, kernels::cache_key(a, "sm_80").unwrap());
        assert_ne!(key, kernels::cache_key(b, "sm_90").unwrap());
    }

    #[test]
    fn an_unwritable_folder_still_compiles() {
        load_nvrtc();
        let dir = tempfile::tempdir().unwrap();
        let blocked = dir.path().join("a-file");
        std::fs::write(&blocked, b"").unwrap();
        let cache = KernelCache::new(Some(blocked.join("kernels")));
        assert!(cache
            .cubin(FILES[1], "sm_80")
            .unwrap()
            .starts_with(ELF_MAGIC));
    }
}
