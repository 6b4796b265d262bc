//! `SpillFile`: one environment slice in a scratch file, written and read in large aligned
//! requests, several in flight (`--io-depth`), with `O_DIRECT` where the filesystem allows it
//! (so spills neither flood nor hide in the page cache).

use super::checksum::Checksum;
use super::{DirectIo, DiskAccess};
use num_complex::{Complex32, Complex64};
use srcflow_tensor::cancel::CancelToken;
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::tensor::{AnyTensor, Array, DType, Scalar, Typed};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Alignment of direct I/O buffers, offsets and lengths.
const ALIGN: usize = 4096;
/// Bytes moved per request at most (and the size of a request's bounce buffer).
pub const BLOCK: usize = 8 << 20;
/// Bytes moved per request at least (a smaller file takes one request).
const LEAST_REQUEST: usize = 1 << 20;

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
    /// Writes `tensor` to a new file at `path` as `access` says (requests in flight, direct
    /// I/O, rate cap, emulated filesystem), stopping between requests once `cancel` is
    /// cancelled.
    ///
    /// `fault` (tests) replaces the outcome of the first request with an injected error.
    pub fn write(
        path: PathBuf,
        tensor: &AnyTensor,
        access: &DiskAccess,
        fault: Option<std::io::Error>,
        cancel: &CancelToken,
    ) -> Result<SpillFile> {
        // Opened before the handle is made: a file already at `path` is not the handle's to
        // remove.
        let (file, direct) = open(&path, true, access.direct)?;
        let mut spilled = SpillFile {
            path,
            shape: tensor.shape().to_vec(),
            dtype: tensor.dtype(),
            checksum: 0,
            removed_on_drop: true,
        };
        if let Some(e) = fault {
            return Err(Error::io(&spilled.path, e));
        }
        let bytes = srcflow_tensor::with_array!(tensor, a => as_bytes(a.data()));
        let straight = straight_from_memory(bytes, direct);
        let size = SpillFile::request_bytes(bytes.len() as u64, access.depth);
        let write = |offset: usize, chunk: &[u8], bounce: &mut Bounce| {
            let padded = match offset + chunk.len() <= straight {
                true => chunk,
                false => bounce
                    .get(chunk.len().next_multiple_of(ALIGN))
                    .fill_from(chunk),
            };
            file.write_all_at(padded, offset as u64)
        };
        let mut checksum = Checksum::new(spilled.dtype, &spilled.shape);
        let hash = || checksum.update(bytes);
        in_requests(
            &spilled.path,
            bytes.chunks(size),
            size,
            access,
            cancel,
            write,
            hash,
        )?;
        if !direct {
            file.sync_data().map_err(|e| Error::io(&spilled.path, e))?;
            drop_cache(&file);
        }
        spilled.checksum = checksum.digest();
        Ok(spilled)
    }

    /// The bytes of each request of a transfer of `bytes` with `depth` requests in flight
    /// (the last may be shorter): the transfer cut into `depth` aligned shares or more, none
    /// under 1 MiB or over 8 MiB.
    pub fn request_bytes(bytes: u64, depth: usize) -> usize {
        let share = (bytes as usize).div_ceil(depth.max(1));
        share.next_multiple_of(ALIGN).clamp(LEAST_REQUEST, BLOCK)
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

    /// Reads the tensor back as `access` says, stopping between requests once `cancel` is
    /// cancelled; fails with [`Error::Damaged`] when the file no longer holds what was
    /// written.
    pub fn read(&self, access: &DiskAccess, cancel: &CancelToken) -> Result<AnyTensor> {
        match self.dtype {
            DType::Float32 => self.read_as::<f32>(access, cancel),
            DType::Float64 => self.read_as::<f64>(access, cancel),
            DType::Complex64 => self.read_as::<Complex32>(access, cancel),
            DType::Complex128 => self.read_as::<Complex64>(access, cancel),
        }
    }

    /// Reads the tensor back as the array of `T` it was written from: straight into the
    /// array where it is aligned (a large one, from the block cache), else through a buffer.
    fn read_as<T: Typed>(&self, access: &DiskAccess, cancel: &CancelToken) -> Result<AnyTensor> {
        let (file, direct) = open(&self.path, false, access.direct)?;
        let len: usize = self.shape.iter().product();
        let mut data = vec![T::zero(); len];
        let bytes = as_bytes_mut(&mut data);
        let straight = straight_from_memory(bytes, direct);
        let size = SpillFile::request_bytes(bytes.len() as u64, access.depth);
        let read = |offset: usize, chunk: &mut [u8], bounce: &mut Bounce| {
            if offset + chunk.len() <= straight {
                return file.read_exact_at(chunk, offset as u64);
            }
            let padded_len = chunk.len().next_multiple_of(ALIGN);
            let padded = &mut bounce.get(padded_len).bytes_mut()[..padded_len];
            file.read_exact_at(padded, offset as u64)?;
            chunk.copy_from_slice(&padded[..chunk.len()]);
            Ok(())
        };
        in_requests(
            &self.path,
            bytes.chunks_mut(size),
            size,
            access,
            cancel,
            read,
            || (),
        )?;
        if !direct {
            drop_cache(&file);
        }
        let mut checksum = Checksum::new(self.dtype, &self.shape);
        checksum.update(as_bytes(&data));
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

/// Runs `request(offset, chunk, bounce)` for each of `chunks` (the requests of a transfer, each
/// `size` bytes but the last), `access.depth` at a time on threads of their own with a
/// bounce buffer each, while the calling thread runs `alongside`. Each request waits out the
/// emulated filesystem, if any, and the rate cap; the first error (or cancellation) stops the
/// rest and is returned, naming `path`.
fn in_requests<C: AsRef<[u8]> + Send>(
    path: &Path,
    chunks: impl ExactSizeIterator<Item = C> + Send,
    size: usize,
    access: &DiskAccess,
    cancel: &CancelToken,
    request: impl Fn(usize, C, &mut Bounce) -> std::io::Result<()> + Sync,
    alongside: impl FnOnce(),
) -> Result<()> {
    let workers = access.depth.clamp(1, chunks.len().max(1));
    let chunks = Mutex::new(chunks.enumerate());
    let failed: Mutex<Option<Error>> = Mutex::new(None);
    let (moved, start) = (AtomicU64::new(0), Instant::now());
    let one = |index: usize, chunk: C, bounce: &mut Bounce| -> Result<()> {
        cancel.check()?;
        let len = chunk.as_ref().len();
        let end = access.emulated.as_ref().map(|disk| disk.issue(len as u64));
        request(index * size, chunk, bounce).map_err(|e| Error::io(path, e))?;
        if let Some(end) = end {
            cancel.sleep_until(end)?;
        }
        let moved = moved.fetch_add(len as u64, Ordering::Relaxed) + len as u64;
        access.throttle.pace(start, moved, cancel)
    };
    let worker = || {
        let mut bounce = Bounce::default();
        while lock(&failed).is_none() {
            let Some((index, chunk)) = lock(&chunks).next() else {
                return;
            };
            if let Err(e) = one(index, chunk, &mut bounce) {
                lock(&failed).get_or_insert(e);
            }
        }
    };
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(worker);
        }
        alongside();
    });
    failed
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .map_or(Ok(()), Err)
}

/// The value behind `mutex`, even if a thread panicked holding it.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Opens `path` for writing (a new file) or reading, with `O_DIRECT` as `direct` says (`Auto`:
/// unless the filesystem refuses it); says whether the handle is direct.
fn open(path: &Path, write: bool, direct: DirectIo) -> Result<(File, bool)> {
    let attempt = |flags: i32| {
        let mut options = OpenOptions::new();
        if write {
            options.write(true).create_new(true);
        } else {
            options.read(true);
        }
        options.custom_flags(flags).open(path)
    };
    if direct == DirectIo::Never {
        return attempt(0)
            .map(|f| (f, false))
            .map_err(|e| Error::io(path, e));
    }
    match attempt(libc::O_DIRECT) {
        Ok(file) => Ok((file, true)),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) && direct == DirectIo::Always => {
            Err(Error::Invalid(format!(
                "direct I/O was asked for (`DiskIo::direct`), and the filesystem of {} does not \
                 take O_DIRECT",
                path.display()
            )))
        }
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

/// A worker's bounce buffer for requests that cannot go straight to or from the tensor's
/// memory, allocated on first use.
#[derive(Default)]
struct Bounce(Option<AlignedBlock>);

impl Bounce {
    /// The buffer, of at least `size` bytes (a request's, padded): made, or made anew when
    /// the one there is smaller.
    fn get(&mut self, size: usize) -> &mut AlignedBlock {
        if self.0.as_ref().is_none_or(|b| b.layout.size() < size) {
            self.0 = Some(AlignedBlock::new(size));
        }
        self.0.as_mut().expect("made above")
    }
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
            let access = DiskAccess::default();
            let file = SpillFile::write(path.clone(), &tensor, &access, None, &cancel).unwrap();
            assert_eq!(file.bytes(), tensor.bytes());
            assert_eq!(file.read(&access, &cancel).unwrap(), tensor);
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
        let (access, cancel) = (DiskAccess::default(), CancelToken::new());
        let file = SpillFile::write(path.clone(), &tensor, &access, None, &cancel).unwrap();
        let kept = |shape: Vec<usize>| {
            SpillFile::kept(path.clone(), shape, tensor.dtype(), file.checksum())
        };
        assert_eq!(kept(vec![10, 100]).read(&access, &cancel).unwrap(), tensor);
        let reshaped = kept(vec![100, 10]).read(&access, &cancel).unwrap_err();
        assert!(matches!(reshaped, Error::Damaged { .. }), "{reshaped}");
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[777] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let flipped = kept(vec![10, 100]).read(&access, &cancel).unwrap_err();
        assert!(flipped.to_string().contains("env.bin"), "{flipped}");
        assert!(matches!(flipped, Error::Damaged { .. }), "{flipped}");
    }

    /// A complex tensor of `len` elements.
    fn tensor_of(len: usize) -> AnyTensor {
        let data: Vec<Complex64> = (0..len).map(|i| Complex64::new(i as f64, 0.5)).collect();
        AnyTensor::from(Array::new(vec![len], data).unwrap())
    }

    #[test]
    fn every_depth_and_direct_choice_reads_back_what_it_wrote() {
        let dir = tempfile::tempdir().unwrap();
        // 5 MiB and a bit: five 1 MiB requests and a tail at depth 8, one request and a tail
        // at depth 1.
        let tensor = tensor_of((5 << 20) / 16 + 333);
        let cancel = CancelToken::new();
        for (depth, direct) in [
            (1, DirectIo::Auto),
            (3, DirectIo::Never),
            (8, DirectIo::Auto),
        ] {
            let access = DiskAccess {
                depth,
                direct,
                ..DiskAccess::default()
            };
            let path = dir.path().join(format!("env-{depth}.bin"));
            let file = SpillFile::write(path.clone(), &tensor, &access, None, &cancel).unwrap();
            let length = std::fs::metadata(&path).unwrap().len();
            assert_eq!(length, SpillFile::length_holding(tensor.bytes()));
            // Written at one depth, read at another: the file is the same either way.
            let other = DiskAccess {
                depth: 9 - depth,
                ..access
            };
            assert_eq!(file.read(&other, &cancel).unwrap(), tensor, "depth {depth}");
        }
    }

    #[test]
    fn requests_are_aligned_shares_of_one_to_eight_mebibytes() {
        assert_eq!(SpillFile::request_bytes(100, 4), LEAST_REQUEST);
        assert_eq!(SpillFile::request_bytes(64 << 20, 4), BLOCK);
        assert_eq!(SpillFile::request_bytes(12 << 20, 4), 3 << 20);
        assert_eq!(SpillFile::request_bytes((12 << 20) + 1, 4) % ALIGN, 0);
    }

    #[test]
    fn an_emulated_filesystem_makes_each_transfer_last_at_least_its_model() {
        let dir = tempfile::tempdir().unwrap();
        let tensor = tensor_of((16 << 20) / 16);
        let requests: super::super::DiskRequests = "10ms,32MiB/s,64MiB/s".parse().unwrap();
        let cancel = CancelToken::new();
        for depth in [1, 4] {
            let io = super::super::DiskIo {
                depth,
                emulate: Some(requests),
                ..Default::default()
            };
            let (reads, writes) = io.accesses();
            let path = dir.path().join(format!("env-{depth}.bin"));
            let start = Instant::now();
            let file = SpillFile::write(path, &tensor, &writes, None, &cancel).unwrap();
            let wrote = start.elapsed().as_secs_f64();
            let start = Instant::now();
            assert_eq!(file.read(&reads, &cancel).unwrap(), tensor);
            let read = start.elapsed().as_secs_f64();
            let model = requests.transfer_seconds(tensor.bytes(), depth);
            assert!(wrote >= model && read >= model, "{wrote} {read} {model}");
        }
        let (one, four) = (
            requests.transfer_seconds(16 << 20, 1),
            requests.transfer_seconds(16 << 20, 4),
        );
        assert!(
            (one - 0.52).abs() < 1e-9 && (four - 0.26).abs() < 1e-9,
            "{one} {four}"
        );
    }

    #[test]
    fn a_cancelled_transfer_stops_with_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = CancelToken::new();
        cancel.cancel();
        let path = dir.path().join("env.bin");
        let access = DiskAccess::default();
        let err = SpillFile::write(path, &tensor_of(1 << 18), &access, None, &cancel).unwrap_err();
        assert!(matches!(err, Error::Interrupted), "{err}");
    }

    #[test]
    fn a_transfer_waiting_on_a_slow_filesystem_stops_soon_after_a_cancel() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("env.bin");
        // Four requests of 1 MiB at 1 MB/s in all: about four seconds.
        let io = super::super::DiskIo {
            depth: 4,
            emulate: Some("0ms,1MB/s,1MB/s".parse().unwrap()),
            ..Default::default()
        };
        let (_, writes) = io.accesses();
        let cancel = CancelToken::new();
        let start = Instant::now();
        let cancelled = std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(200));
                cancel.cancel();
            });
            SpillFile::write(
                path.clone(),
                &tensor_of((4 << 20) / 16),
                &writes,
                None,
                &cancel,
            )
        });
        assert!(
            matches!(cancelled, Err(Error::Interrupted)),
            "{cancelled:?}"
        );
        assert!(start.elapsed().as_secs_f64() < 2.0, "{:?}", start.elapsed());
        assert!(
            !path.exists(),
            "the half-written file goes with the failed write"
        );
    }
}
