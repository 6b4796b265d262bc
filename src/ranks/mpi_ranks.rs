//! `MpiRanks`: the transport of a run under `mpirun`. Values travel as MPI collectives on
//! complex elements (`MPI_C_DOUBLE_COMPLEX`, so one call carries up to 32 GB), started
//! non-blocking and polled, so that a failure notice from another rank ends the wait.

use super::Transport;
use crate::error::{Error, Result};
use mpi::collective::{CommunicatorCollectives, Root};
use mpi::datatype::PartitionMut;
use mpi::environment::{Threading, Universe};
use mpi::point_to_point::{Destination, Source};
use mpi::request::{Request, StaticScope};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::{Count, Tag};
use num_complex::Complex64;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The tag of a failure notice (its message says why).
const FAILED: Tag = 1;
/// The tag of the notice a failed rank sends once it has cleaned up.
const CLEANED: Tag = 2;
/// Bytes per element on the wire.
const WORD: usize = std::mem::size_of::<Complex64>();
/// How long polling first sleeps between two tests of a request; each sleep doubles it, up to
/// [`LONGEST_POLL`]. Short waits end quickly; long ones (another rank still computing) cost
/// the cores almost nothing, where a fixed 50 µs poll took a quarter of the 2-rank run's time.
const FIRST_POLL: Duration = Duration::from_micros(20);
/// The longest sleep between two tests of a request.
const LONGEST_POLL: Duration = Duration::from_millis(1);

/// One rank of a run under `mpirun`.
pub struct MpiRanks {
    /// The communicator of the collectives.
    world: SimpleCommunicator,
    /// A duplicate, for failure notices only (they never match a collective's messages).
    notices: SimpleCommunicator,
    /// This process's rank.
    rank: usize,
    /// Ranks in the run.
    ranks: usize,
    /// The first failure this rank knows of: its own, or one another rank announced.
    failed: Mutex<Option<(usize, String)>>,
    /// Held for the whole of each collective on `world`.
    one_at_a_time: Mutex<()>,
}

// SAFETY: MPI is initialised with MPI_THREAD_MULTIPLE (`MpiRanks::start` refuses less), which
// lets any thread call MPI; collectives on `world` are serialised by `one_at_a_time` (MPI
// forbids two threads running collectives on one communicator at once), and notices on
// `notices` are read under `failed`.
unsafe impl Send for MpiRanks {}
// SAFETY: as for `Send`.
unsafe impl Sync for MpiRanks {}

impl MpiRanks {
    /// Initialises MPI for a run whose threads all call it; the universe finalises MPI when
    /// dropped (after a failure, leak it: [`MpiRanks::leave_after_failure`]).
    pub fn start() -> Result<(Universe, MpiRanks)> {
        let (universe, level) = mpi::initialize_with_threading(Threading::Multiple)
            .ok_or_else(|| Error::Invalid("MPI was initialised already".into()))?;
        if level != Threading::Multiple {
            return Err(Error::Invalid(format!(
                "this MPI library gives threads {level:?} access; srcflow's ranks need \
                 MPI_THREAD_MULTIPLE (Open MPI and MPICH builds provide it)"
            )));
        }
        let world = universe.world();
        let notices = world.duplicate();
        let (rank, ranks) = (world.rank() as usize, world.size() as usize);
        let ranks = MpiRanks {
            world,
            notices,
            rank,
            ranks,
            failed: Mutex::new(None),
            one_at_a_time: Mutex::new(()),
        };
        Ok((universe, ranks))
    }

    /// After this rank failed: tells the others it has cleaned up, waits (at most `bound`)
    /// until they say the same, so that none is killed mid-clean-up, and returns; the caller
    /// exits without finalising MPI (collectives are left pending).
    pub fn leave_after_failure(&self, bound: Duration) {
        for other in self.others() {
            let (empty, _) = lend(Vec::<u8>::new());
            let request = self
                .notices
                .process_at_rank(other as i32)
                .immediate_send_with_tag(StaticScope, &*empty, CLEANED);
            std::mem::forget(request);
        }
        let deadline = Instant::now() + bound;
        let mut cleaned = 0;
        while cleaned < self.ranks - 1 && Instant::now() < deadline {
            match self.notices.any_process().immediate_probe_with_tag(CLEANED) {
                Some(_) => {
                    let _ = self
                        .notices
                        .any_process()
                        .receive_vec_with_tag::<u8>(CLEANED);
                    cleaned += 1;
                }
                None => std::thread::sleep(Duration::from_millis(1)),
            }
        }
    }

    /// Every other rank.
    fn others(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.ranks).filter(move |&r| r != self.rank)
    }

    /// The failure this rank knows of, reading a notice another rank sent if there is one.
    fn failure(&self) -> Option<Error> {
        let mut failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        if failed.is_none() {
            if let Some(status) = self.notices.any_process().immediate_probe_with_tag(FAILED) {
                let from = self.notices.process_at_rank(status.source_rank());
                let (why, _) = from.receive_vec_with_tag::<u8>(FAILED);
                let why = String::from_utf8_lossy(&why).into_owned();
                *failed = Some((status.source_rank() as usize, why));
            }
        }
        failed
            .as_ref()
            .map(|(rank, why)| Error::Invalid(format!("rank {rank} failed: {why}")))
    }

    /// Waits for `request`, giving up (and leaving it pending) once a rank has failed. After
    /// that no collective starts (`check` first): one left pending would match the next.
    fn wait<D: ?Sized>(&self, mut request: Request<'static, D, StaticScope>) -> Result<()> {
        let mut pause = FIRST_POLL;
        loop {
            match request.test() {
                Ok(_) => return Ok(()),
                Err(pending) => request = pending,
            }
            if let Some(error) = self.failure() {
                std::mem::forget(request);
                return Err(error);
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(LONGEST_POLL);
        }
    }

    /// Every rank's `len`, in rank order.
    fn all_lengths(&self, len: u64) -> Result<Vec<u64>> {
        self.check()?;
        let (mine, mine_ptr) = lend(vec![len]);
        let (all, all_ptr) = lend(vec![0u64; self.ranks]);
        self.wait(
            self.world
                .immediate_all_gather_into(StaticScope, &*mine, all),
        )?;
        // SAFETY: both came from `lend` and the request that used them has completed.
        unsafe {
            drop(take_back(mine_ptr));
            Ok(take_back(all_ptr).into_vec())
        }
    }

    /// A partition of received elements for contributions of `lengths` bytes, lent to MPI,
    /// with what [`MpiRanks::take_partition`] needs to reclaim it.
    fn lend_partition(&self, lengths: &[u64]) -> Result<(&'static mut Partition, Lent)> {
        let (counts, displs) = partition(lengths)?;
        let total = counts.iter().map(|&c| c as usize).sum();
        let (received, received_ptr) = lend(vec![Complex64::default(); total]);
        let (parts, parts_ptr) = lend_one(PartitionMut::new(received, counts, displs.clone()));
        let lent = Lent {
            parts_ptr,
            received_ptr,
            displs,
        };
        Ok((parts, lent))
    }

    /// Each rank's bytes from a partition whose request has completed.
    ///
    /// # Safety
    /// No MPI request may use `lent` any more.
    unsafe fn take_partition(lent: Lent, lengths: &[u64]) -> Vec<Vec<u8>> {
        // SAFETY: the caller's contract; the partition, which borrows the elements, goes first.
        let received = unsafe {
            drop(take_back(lent.parts_ptr));
            take_back(lent.received_ptr)
        };
        split(&received, &lent.displs, lengths)
    }
}

/// What reclaims a receive partition lent to MPI ([`MpiRanks::lend_partition`]).
struct Lent {
    parts_ptr: *mut Partition,
    received_ptr: *mut [Complex64],
    displs: Vec<Count>,
}

/// Received elements, partitioned by rank.
type Partition = PartitionMut<'static, [Complex64], Vec<Count>, Vec<Count>>;

/// Element counts and offsets of contributions of `lengths` bytes, or an error when one is
/// past what one MPI call can carry.
fn partition(lengths: &[u64]) -> Result<(Vec<Count>, Vec<Count>)> {
    let mut counts = Vec::with_capacity(lengths.len());
    let mut displs = Vec::with_capacity(lengths.len());
    let mut at: u64 = 0;
    for (rank, &len) in lengths.iter().enumerate() {
        let words = len.div_ceil(WORD as u64);
        let fits = |n: u64| Count::try_from(n).ok();
        let (Some(count), Some(displ)) = (fits(words), fits(at)) else {
            return Err(Error::Invalid(format!(
                "an exchange of {} bytes (rank {rank}: {len}) is past what one MPI call \
                 carries, {} (use more ranks or devices)",
                lengths.iter().sum::<u64>(),
                Count::MAX as u64 * WORD as u64
            )));
        };
        counts.push(count);
        displs.push(displ);
        at += words;
    }
    Ok((counts, displs))
}

/// The bytes of each rank's contribution in `received`.
fn split(received: &[Complex64], displs: &[Count], lengths: &[u64]) -> Vec<Vec<u8>> {
    let bytes: &[u8] = bytemuck::cast_slice(received);
    displs
        .iter()
        .zip(lengths)
        .map(|(&at, &len)| {
            let start = at as usize * WORD;
            bytes[start..start + len as usize].to_vec()
        })
        .collect()
}

/// `bytes` as whole elements (the last padded with zeros).
fn words(bytes: &[u8]) -> Vec<Complex64> {
    let mut words = vec![Complex64::default(); bytes.len().div_ceil(WORD)];
    bytemuck::cast_slice_mut::<Complex64, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
    words
}

/// The elements of `values`, lent to MPI for a non-blocking call, with the pointer that
/// [`take_back`] reclaims them by; they live for the rest of the process when a failure leaves
/// the call pending.
fn lend<T>(values: Vec<T>) -> (&'static mut [T], *mut [T]) {
    let ptr = Box::into_raw(values.into_boxed_slice());
    // SAFETY: `ptr` is a fresh box's, valid until `take_back`; the reference is derived from
    // it, so taking the box back later does not invalidate a pointer MPI was given.
    (unsafe { &mut *ptr }, ptr)
}

/// `value`, lent as [`lend`] lends elements.
fn lend_one<T>(value: T) -> (&'static mut T, *mut T) {
    let ptr = Box::into_raw(Box::new(value));
    // SAFETY: as in `lend`.
    (unsafe { &mut *ptr }, ptr)
}

/// What [`lend`] or [`lend_one`] lent, back in a box.
///
/// # Safety
/// `ptr` must come from [`lend`] or [`lend_one`], be taken back once, and no MPI request may
/// use it any more.
unsafe fn take_back<T: ?Sized>(ptr: *mut T) -> Box<T> {
    // SAFETY: the caller's contract: `ptr` is a leaked box nothing else uses.
    unsafe { Box::from_raw(ptr) }
}

impl Transport for MpiRanks {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.ranks
    }

    fn broadcast(&self, root: usize, bytes: Vec<u8>) -> Result<Vec<u8>> {
        let _one = self.one_at_a_time.lock().unwrap_or_else(|e| e.into_inner());
        self.check()?;
        let root_process = self.world.process_at_rank(root as i32);
        let (len, len_ptr) = lend(vec![bytes.len() as u64]);
        self.wait(root_process.immediate_broadcast_into(StaticScope, len))?;
        // SAFETY: from `lend`; the broadcast has completed.
        let len = unsafe { take_back(len_ptr) }[0];
        partition(&[len])?;
        let (buffer, buffer_ptr) = lend(if self.rank == root {
            words(&bytes)
        } else {
            vec![Complex64::default(); (len as usize).div_ceil(WORD)]
        });
        self.wait(root_process.immediate_broadcast_into(StaticScope, buffer))?;
        // SAFETY: from `lend`; the broadcast has completed.
        let buffer = unsafe { take_back(buffer_ptr) };
        Ok(bytemuck::cast_slice::<Complex64, u8>(&buffer)[..len as usize].to_vec())
    }

    fn gather(&self, root: usize, bytes: Vec<u8>) -> Result<Vec<Vec<u8>>> {
        let _one = self.one_at_a_time.lock().unwrap_or_else(|e| e.into_inner());
        let lengths = self.all_lengths(bytes.len() as u64)?;
        partition(&lengths)?;
        let root_process = self.world.process_at_rank(root as i32);
        let (mine, mine_ptr) = lend(words(&bytes));
        let gathered = if self.rank == root {
            let (parts, taken) = self.lend_partition(&lengths)?;
            let request =
                root_process.immediate_gather_varcount_into_root(StaticScope, &*mine, parts);
            self.wait(request)?;
            // SAFETY: the gather has completed.
            unsafe { Self::take_partition(taken, &lengths) }
        } else {
            self.wait(root_process.immediate_gather_varcount_into(StaticScope, &*mine))?;
            vec![]
        };
        // SAFETY: from `lend`; the gather has completed.
        drop(unsafe { take_back(mine_ptr) });
        Ok(gathered)
    }

    fn all_gather(&self, bytes: Vec<u8>) -> Result<Vec<Vec<u8>>> {
        let _one = self.one_at_a_time.lock().unwrap_or_else(|e| e.into_inner());
        let lengths = self.all_lengths(bytes.len() as u64)?;
        let (mine, mine_ptr) = lend(words(&bytes));
        let (parts, taken) = self.lend_partition(&lengths)?;
        self.wait(
            self.world
                .immediate_all_gather_varcount_into(StaticScope, &*mine, parts),
        )?;
        // SAFETY: from `lend`; the all-gather has completed.
        unsafe {
            drop(take_back(mine_ptr));
            Ok(Self::take_partition(taken, &lengths))
        }
    }

    fn check(&self) -> Result<()> {
        self.failure().map_or(Ok(()), Err)
    }

    fn abort(&self, why: &str) {
        let mut failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        if failed.is_some() {
            return;
        }
        *failed = Some((self.rank, why.to_string()));
        for other in self.others() {
            let (message, _) = lend(why.as_bytes().to_vec());
            let request = self
                .notices
                .process_at_rank(other as i32)
                .immediate_send_with_tag(StaticScope, &*message, FAILED);
            std::mem::forget(request);
        }
    }
}
