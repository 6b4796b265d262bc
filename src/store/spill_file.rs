//! `SpillFile`: one environment slice in a scratch file, written and read in large aligned
//! blocks with `O_DIRECT` where the filesystem allows it (so spills do not flood the page cache).

use super::Throttle;
use crate::error::{Error, Result};
use crate::tensor::{Tensor, C64};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Alignment of direct I/O buffers, offsets and lengths.
const ALIGN: usize = 4096;
/// Bytes moved per system call (and the size of each disk lane's bounce buffer).
pub const BLOCK: usize = 8 << 20;

/// A tensor stored in a scratch file; the file is removed when this handle drops.
#[derive(Debug)]
pub struct SpillFile {
    path: PathBuf,
    shape: Vec<usize>,
}

impl SpillFile {
    /// Writes `tensor` to a new file at `path` at most as fast as `throttle` allows.
    ///
    /// `fault` (tests) replaces the outcome of the first block with an injected error.
    pub fn write(
        path: PathBuf,
        tensor: &Tensor,
        throttle: Throttle,
        fault: Option<std::io::Error>,
    ) -> Result<SpillFile> {
        let spilled = SpillFile {
            path,
            shape: tensor.shape().to_vec(),
        };
        let (file, direct) = open(&spilled.path, true)?;
        let fail = |e| Error::io(&spilled.path, e);
        if let Some(e) = fault {
            return Err(fail(e));
        }
        let bytes = as_bytes(tensor.data());
        let mut buffer = AlignedBlock::new(bytes.len());
        let start = Instant::now();
        for (i, chunk) in bytes.chunks(BLOCK).enumerate() {
            stop_if_interrupted()?;
            let padded = buffer.fill_from(chunk);
            file.write_all_at(padded, (i * BLOCK) as u64)
                .map_err(fail)?;
            throttle.pace(start, (i * BLOCK + chunk.len()) as u64);
        }
        if !direct {
            file.sync_data().map_err(fail)?;
            drop_cache(&file);
        }
        Ok(spilled)
    }

    /// Reads the tensor back at most as fast as `throttle` allows.
    pub fn read(&self, throttle: Throttle) -> Result<Tensor> {
        let (file, direct) = open(&self.path, false)?;
        let fail = |e| Error::io(&self.path, e);
        let len: usize = self.shape.iter().product();
        let mut data = vec![C64::new(0.0, 0.0); len];
        let bytes = as_bytes_mut(&mut data);
        let mut buffer = AlignedBlock::new(bytes.len());
        let start = Instant::now();
        for (i, chunk) in bytes.chunks_mut(BLOCK).enumerate() {
            stop_if_interrupted()?;
            let padded = chunk.len().next_multiple_of(ALIGN);
            file.read_exact_at(&mut buffer.bytes_mut()[..padded], (i * BLOCK) as u64)
                .map_err(fail)?;
            chunk.copy_from_slice(&buffer.bytes_mut()[..chunk.len()]);
            throttle.pace(start, (i * BLOCK + chunk.len()) as u64);
        }
        if !direct {
            drop_cache(&file);
        }
        Tensor::new(self.shape.clone(), data)
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes of the tensor it holds.
    pub fn bytes(&self) -> u64 {
        (self.shape.iter().product::<usize>() * std::mem::size_of::<C64>()) as u64
    }
}

impl Drop for SpillFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Ends a transfer between blocks once the user has pressed Ctrl-C.
fn stop_if_interrupted() -> Result<()> {
    if crate::sched::interrupted() {
        return Err(Error::Interrupted);
    }
    Ok(())
}

/// Opens `path` for writing (a new file) or reading, with `O_DIRECT` unless the filesystem
/// refuses it; says whether the handle is direct.
fn open(path: &Path, write: bool) -> Result<(File, bool)> {
    let attempt = |flags: i32| {
        let mut options = OpenOptions::new();
        if write {
            options.write(true).create_new(true);
        } else {
            options.read(true);
        }
        options.custom_flags(flags).open(path)
    };
    match attempt(libc::O_DIRECT) {
        Ok(file) => Ok((file, true)),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            if write {
                let _ = std::fs::remove_file(path);
            }
            attempt(0)
                .map(|f| (f, false))
                .map_err(|e| Error::io(path, e))
        }
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Asks the kernel to drop the file's cached pages (buffered fallback only).
fn drop_cache(file: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: a plain advisory call on an open descriptor.
    unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
}

/// The bytes of a complex slice.
fn as_bytes(data: &[C64]) -> &[u8] {
    // SAFETY: C64 is two f64 with no padding; any byte view of it is valid.
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast(), std::mem::size_of_val(data)) }
}

/// The bytes of a complex slice, writable.
fn as_bytes_mut(data: &mut [C64]) -> &mut [u8] {
    // SAFETY: C64 is two f64 with no padding, and every bit pattern is a valid f64.
    unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr().cast(), std::mem::size_of_val(data)) }
}

/// A buffer aligned for direct I/O, one block long (less for a smaller file).
struct AlignedBlock {
    ptr: *mut u8,
    layout: Layout,
}

impl AlignedBlock {
    /// A buffer for moving `len` bytes in blocks.
    fn new(len: usize) -> Self {
        let size = len.next_multiple_of(ALIGN).clamp(ALIGN, BLOCK);
        let layout = Layout::from_size_align(size, ALIGN).expect("valid layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBlock { ptr, layout }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` owns `layout.size()` initialised bytes for the buffer's lifetime.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }

    /// Copies `chunk` in, zero-pads it to the alignment and returns the padded bytes.
    fn fill_from(&mut self, chunk: &[u8]) -> &[u8] {
        let padded = chunk.len().next_multiple_of(ALIGN);
        let bytes = self.bytes_mut();
        bytes[..chunk.len()].copy_from_slice(chunk);
        bytes[chunk.len()..padded].fill(0);
        &bytes[..padded]
    }
}

impl Drop for AlignedBlock {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr, self.layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_of_an_unaligned_size() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<C64> = (0..(BLOCK / 16 + 77))
            .map(|i| C64::new(i as f64, -(i as f64)))
            .collect();
        let tensor = Tensor::new(vec![data.len()], data).unwrap();
        let path = dir.path().join("env.bin");
        let file = SpillFile::write(path.clone(), &tensor, Throttle::default(), None).unwrap();
        assert_eq!(
            file.read(Throttle::default()).unwrap().data(),
            tensor.data()
        );
        drop(file);
        assert!(!path.exists(), "the file goes with its handle");
    }
}
