//! `SpillFile`: one environment slice in a scratch file, written and read in large aligned
//! blocks with `O_DIRECT` where the filesystem allows it (so spills do not flood the page cache).

use super::checksum::Checksum;
use super::Throttle;
use crate::cancel::CancelToken;
use crate::error::{Error, Result};
use crate::tensor::{AnyTensor, Array, DType, Scalar, Typed};
use num_complex::{Complex32, Complex64};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Alignment of direct I/O buffers, offsets and lengths.
const ALIGN: usize = 4096;
/// Bytes moved per system call (and the size of each disk lane's bounce buffer).
pub const BLOCK: usize = 8 << 20;

/// A tensor stored in a file: a scratch file, removed when this handle drops, or one a
/// checkpoint keeps ([`SpillFile::kept`]). A read checks the file still holds what was written.
#[derive(Debug)]
pub struct SpillFile {
    path: PathBuf,
    shape: Vec<usize>,
    dtype: DType,
    /// The checksum of the tensor written (its type, shape and bytes).
    checksum: u64,
    /// Whether dropping the handle removes the file (scratch files).
    removed_on_drop: bool,
}

impl SpillFile {
    /// Writes `tensor` to a new file at `path` at most as fast as `throttle` allows, stopping
    /// between blocks once `cancel` is cancelled.
    ///
    /// `fault` (tests) replaces the outcome of the first block with an injected error.
    pub fn write(
        path: PathBuf,
        tensor: &AnyTensor,
        throttle: Throttle,
        fault: Option<std::io::Error>,
        cancel: &CancelToken,
    ) -> Result<SpillFile> {
        let mut spilled = SpillFile {
            path,
            shape: tensor.shape().to_vec(),
            dtype: tensor.dtype(),
            checksum: 0,
            removed_on_drop: true,
        };
        let (file, direct) = open(&spilled.path, true)?;
        let fail = |e| Error::io(&spilled.path, e);
        if let Some(e) = fault {
            return Err(fail(e));
        }
        let bytes = crate::with_array!(tensor, a => as_bytes(a.data()));
        let (straight, tail) = bytes.split_at(straight_from_memory(bytes, direct));
        let mut checksum = Checksum::new(spilled.dtype, &spilled.shape);
        let start = Instant::now();
        for (i, chunk) in straight.chunks(BLOCK).enumerate() {
            cancel.check()?;
            file.write_all_at(chunk, (i * BLOCK) as u64).map_err(fail)?;
            checksum.update(chunk);
            throttle.pace(start, (i * BLOCK + chunk.len()) as u64);
        }
        let mut buffer = AlignedBlock::new(tail.len());
        for (i, chunk) in tail.chunks(BLOCK).enumerate() {
            cancel.check()?;
            let at = straight.len() + i * BLOCK;
            file.write_all_at(buffer.fill_from(chunk), at as u64)
                .map_err(fail)?;
            checksum.update(chunk);
            throttle.pace(start, (at + chunk.len()) as u64);
        }
        if !direct {
            file.sync_data().map_err(fail)?;
            drop_cache(&file);
        }
        spilled.checksum = checksum.digest();
        Ok(spilled)
    }

    /// A handle to a file written before that holds a `dtype` tensor of `shape` whose
    /// checksum was `checksum` ([`SpillFile::checksum`]), left in place when the handle drops.
    pub fn kept(path: PathBuf, shape: Vec<usize>, dtype: DType, checksum: u64) -> SpillFile {
        SpillFile {
            path,
            shape,
            dtype,
            checksum,
            removed_on_drop: false,
        }
    }

    /// The checksum of the tensor written (its element type, shape and bytes).
    pub fn checksum(&self) -> u64 {
        self.checksum
    }

    /// Reads the tensor back at most as fast as `throttle` allows, stopping between blocks
    /// once `cancel` is cancelled; fails with [`Error::Damaged`] when the file no longer holds
    /// what was written.
    pub fn read(&self, throttle: Throttle, cancel: &CancelToken) -> Result<AnyTensor> {
        match self.dtype {
            DType::Float32 => self.read_as::<f32>(throttle, cancel),
            DType::Float64 => self.read_as::<f64>(throttle, cancel),
            DType::Complex64 => self.read_as::<Complex32>(throttle, cancel),
            DType::Complex128 => self.read_as::<Complex64>(throttle, cancel),
        }
    }

    /// Reads the tensor back as the array of `T` it was written from.
    fn read_as<T: Typed>(&self, throttle: Throttle, cancel: &CancelToken) -> Result<AnyTensor> {
        let (file, direct) = open(&self.path, false)?;
        let fail = |e| Error::io(&self.path, e);
        let len: usize = self.shape.iter().product();
        let mut data = vec![T::zero(); len];
        let bytes = as_bytes_mut(&mut data);
        let mut buffer = AlignedBlock::new(bytes.len());
        let mut checksum = Checksum::new(self.dtype, &self.shape);
        let start = Instant::now();
        for (i, chunk) in bytes.chunks_mut(BLOCK).enumerate() {
            cancel.check()?;
            let padded = chunk.len().next_multiple_of(ALIGN);
            file.read_exact_at(&mut buffer.bytes_mut()[..padded], (i * BLOCK) as u64)
                .map_err(fail)?;
            chunk.copy_from_slice(&buffer.bytes_mut()[..chunk.len()]);
            checksum.update(chunk);
            throttle.pace(start, (i * BLOCK + chunk.len()) as u64);
        }
        if !direct {
            drop_cache(&file);
        }
        self.same_as_written(checksum.digest())?;
        Array::new(self.shape.clone(), data).map(T::wrap)
    }

    /// Fails with [`Error::Damaged`] unless `read` (the checksum of what a read found) is the
    /// checksum of what was written.
    fn same_as_written(&self, read: u64) -> Result<()> {
        if read == self.checksum {
            return Ok(());
        }
        Err(Error::Damaged {
            path: self.path.clone(),
            why: format!(
                "a {} tensor of shape {:?} with checksum {:016x} was written, the file reads \
                 as {read:016x}",
                self.dtype, self.shape, self.checksum
            ),
        })
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The length of a file that holds a tensor of `bytes`: whole blocks of 4 KiB, as
    /// direct I/O reads them back.
    pub fn length_holding(bytes: u64) -> u64 {
        bytes.next_multiple_of(ALIGN as u64)
    }

    /// Bytes of the tensor it holds.
    pub fn bytes(&self) -> u64 {
        (self.shape.iter().product::<usize>() * self.dtype.bytes()) as u64
    }
}

impl Drop for SpillFile {
    fn drop(&mut self) {
        if self.removed_on_drop {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// How many of `bytes` (a tensor's) can go to the file straight from memory, without a copy
/// into an aligned buffer: whole blocks of [`ALIGN`], where a direct handle can take them
/// (the data starts on an aligned address, as the block cache's large blocks do); the rest
/// goes through the buffer, padded.
fn straight_from_memory(bytes: &[u8], direct: bool) -> usize {
    let aligned = bytes.as_ptr() as usize % ALIGN == 0;
    match !direct || aligned {
        true => bytes.len() - bytes.len() % ALIGN,
        false => 0,
    }
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

/// The bytes of a slice of elements.
fn as_bytes<T: Scalar>(data: &[T]) -> &[u8] {
    // SAFETY: every Scalar is one or two f32 or f64 with no padding; any byte view is valid.
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast(), std::mem::size_of_val(data)) }
}

/// The bytes of a slice of elements, writable.
fn as_bytes_mut<T: Scalar>(data: &mut [T]) -> &mut [u8] {
    // SAFETY: every Scalar is one or two f32 or f64 with no padding, and every bit pattern is
    // a valid float.
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
    fn round_trip_of_an_unaligned_size_in_every_type() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<Complex64> = (0..(BLOCK / 16 + 77))
            .map(|i| Complex64::new(i as f64, -(i as f64)))
            .collect();
        let tensor = AnyTensor::from(Array::new(vec![data.len()], data).unwrap());
        for dtype in DType::ALL {
            let tensor = tensor.clone().cast(dtype);
            let path = dir.path().join(format!("env-{dtype}.bin"));
            let cancel = CancelToken::new();
            let file = SpillFile::write(path.clone(), &tensor, Throttle::default(), None, &cancel)
                .unwrap();
            assert_eq!(file.bytes(), tensor.bytes());
            assert_eq!(file.read(Throttle::default(), &cancel).unwrap(), tensor);
            drop(file);
            assert!(!path.exists(), "the file goes with its handle");
        }
    }

    #[test]
    fn a_file_that_no_longer_holds_what_was_written_is_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("env.bin");
        let data: Vec<Complex64> = (0..1000).map(|i| Complex64::new(i as f64, 1.0)).collect();
        let tensor = AnyTensor::from(Array::new(vec![10, 100], data).unwrap());
        let (throttle, cancel) = (Throttle::default(), CancelToken::new());
        let file = SpillFile::write(path.clone(), &tensor, throttle, None, &cancel).unwrap();
        let kept = |shape: Vec<usize>| {
            SpillFile::kept(path.clone(), shape, tensor.dtype(), file.checksum())
        };
        assert_eq!(kept(vec![10, 100]).read(throttle, &cancel).unwrap(), tensor);
        let reshaped = kept(vec![100, 10]).read(throttle, &cancel).unwrap_err();
        assert!(matches!(reshaped, Error::Damaged { .. }), "{reshaped}");
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[777] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let flipped = kept(vec![10, 100]).read(throttle, &cancel).unwrap_err();
        assert!(flipped.to_string().contains("env.bin"), "{flipped}");
        assert!(matches!(flipped, Error::Damaged { .. }), "{flipped}");
    }
}
