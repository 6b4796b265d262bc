//! `MpiRanks`: the transport of a run under a launcher (`mpirun`, `srun`). Values travel as MPI
//! collectives on complex elements (`MPI_C_DOUBLE_COMPLEX`, so one call carries up to 32 GB),
//! started non-blocking and polled, so that a failure notice from another rank ends the wait.

use super::mpi_buffers::{lend_one, lend_vec, WordBuffers, WORD};
use super::{Take, Transport};
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
/// How long polling first sleeps between two tests of a request; each sleep doubles it, up to
/// a longest. Short waits end quickly; long ones (another rank still computing) cost the cores
/// almost nothing, where a fixed 50 µs poll took a quarter of the 2-rank run's time.
const FIRST_POLL: Duration = Duration::from_micros(20);
/// The longest sleep between two tests of a request that waits for other ranks to arrive (the
/// lengths that open every collective), which may still be computing.
const LONGEST_POLL: Duration = Duration::from_millis(1);
/// The longest sleep between two tests of a request once every rank has arrived (the
/// elements, after the lengths): MPI moves a large message only while both ends test it.
const LONGEST_POLL_ARRIVED: Duration = Duration::from_micros(50);

/// One rank of a run under a launcher (`mpirun`, `srun`).
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
    /// The buffers of the collectives on `world`, held for the whole of each (one at a time).
    buffers: Mutex<WordBuffers>,
}

// SAFETY: MPI is initialised with MPI_THREAD_MULTIPLE (`MpiRanks::start` refuses less), which
// lets any thread call MPI; collectives on `world` are serialised by `buffers` (MPI
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
            buffers: Mutex::new(WordBuffers::default()),
        };
        Ok((universe, ranks))
    }

    /// After this rank failed: tells the others it has cleaned up, waits (at most `bound`)
    /// until they say the same, so that none is killed mid-clean-up, and returns; the caller
    /// exits without finalising MPI (collectives are left pending).
    pub fn leave_after_failure(&self, bound: Duration) {
        for other in self.others() {
            let (empty, _) = lend_vec(Vec::<u8>::new());
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

    /// Waits for `request`, sleeping at most `longest` between two tests, and gives up (leaving
    /// it pending) once a rank has failed. After that no collective starts (`check` first):
    /// one left pending would match the next.
    fn wait<D: ?Sized>(
        &self,
        mut request: Request<'static, D, StaticScope>,
        longest: Duration,
    ) -> Result<()> {
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
            pause = (pause * 2).min(longest);
        }
    }

    /// Every rank's `len`, in rank order.
    fn all_lengths(&self, len: u64) -> Result<Vec<u64>> {
        self.check()?;
        let (mine, mine_loan) = lend_vec(vec![len]);
        let (all, all_loan) = lend_vec(vec![0u64; self.ranks]);
        self.wait(
            self.world
                .immediate_all_gather_into(StaticScope, &*mine, all),
            LONGEST_POLL,
        )?;
        // SAFETY: the all-gather that used both has completed.
        unsafe {
            drop(mine_loan.take_back());
            Ok(all_loan.take_back().into_vec())
        }
    }

    /// Runs a gather or all-gather (`start` starts it with this rank's elements and the
    /// partition of the received ones) of every rank's bytes, `lengths` of them, and hands
    /// them to `take`.
    fn gathering(
        &self,
        buffers: &mut WordBuffers,
        mine: &[u8],
        lengths: &[u64],
        start: impl FnOnce(
            &'static [Complex64],
            &'static mut Partition,
        ) -> Request<'static, Partition, StaticScope>,
        take: Take<'_>,
    ) -> Result<()> {
        let (counts, displs) = partition(lengths)?;
        let total = counts.iter().map(|&c| c as usize).sum();
        let (send, send_loan) = buffers.lend_send(mine);
        let (received, received_loan) = buffers.lend_receive(total);
        let (parts, parts_loan) = lend_one(PartitionMut::new(received, counts, displs.clone()));
        self.wait(start(send, parts), LONGEST_POLL_ARRIVED)?;
        // SAFETY: the collective that used them has completed; the partition, which borrows
        // the received elements, goes first.
        let (send, received) = unsafe {
            drop(parts_loan.take_back());
            (send_loan.take_back(), received_loan.take_back())
        };
        let taken = hand_over(&received, &displs, lengths, take);
        buffers.keep_send(send);
        buffers.keep_receive(received);
        taken
    }
}

/// Received elements, partitioned by rank.
type Partition = PartitionMut<'static, [Complex64], Vec<Count>, Vec<Count>>;

/// Element counts and offsets of contributions of `lengths` bytes, or an error when all of
/// them together are past what one MPI call can carry (then so may be one of them).
fn partition(lengths: &[u64]) -> Result<(Vec<Count>, Vec<Count>)> {
    let words: Vec<u64> = lengths
        .iter()
        .map(|len| len.div_ceil(WORD as u64))
        .collect();
    let total: u64 = words.iter().sum();
    if Count::try_from(total).is_err() {
        let (rank, most) = lengths
            .iter()
            .enumerate()
            .max_by_key(|(_, &len)| len)
            .expect("ranks");
        return Err(Error::Invalid(format!(
            "an exchange of {} bytes (rank {rank}: {most}) is past what one MPI call carries, \
             {} (use more ranks or devices)",
            lengths.iter().sum::<u64>(),
            Count::MAX as u64 * WORD as u64
        )));
    }
    let displs = words
        .iter()
        .scan(0, |at, &w| {
            let displ = *at;
            *at += w;
            Some(displ as Count)
        })
        .collect();
    Ok((words.iter().map(|&w| w as Count).collect(), displs))
}

/// Hands each rank's bytes in `received` (at `displs`, `lengths` long) to `take`.
fn hand_over(
    received: &[Complex64],
    displs: &[Count],
    lengths: &[u64],
    take: Take<'_>,
) -> Result<()> {
    let bytes: &[u8] = bytemuck::cast_slice(received);
    for (rank, (&at, &len)) in displs.iter().zip(lengths).enumerate() {
        let start = at as usize * WORD;
        take(rank, &bytes[start..start + len as usize])?;
    }
    Ok(())
}

impl Transport for MpiRanks {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.ranks
    }

    fn broadcast(&self, root: usize, mine: &[u8], take: Take<'_>) -> Result<()> {
        let mut buffers = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        // Every rank's length, not only root's: once it completes every rank has arrived, so
        // the elements are polled closely (a broadcast alone completes on root when sent).
        let len = self.all_lengths(mine.len() as u64)?[root];
        partition(&[len])?;
        let (elements, loan) = if self.rank == root {
            buffers.lend_send(mine)
        } else {
            buffers.lend_receive((len as usize).div_ceil(WORD))
        };
        let root_process = self.world.process_at_rank(root as i32);
        let request = root_process.immediate_broadcast_into(StaticScope, elements);
        self.wait(request, LONGEST_POLL_ARRIVED)?;
        // SAFETY: the broadcast that used it has completed.
        let elements = unsafe { loan.take_back() };
        let taken = match self.rank == root {
            true => take(root, mine),
            false => take(root, &bytemuck::cast_slice(&elements)[..len as usize]),
        };
        match self.rank == root {
            true => buffers.keep_send(elements),
            false => buffers.keep_receive(elements),
        }
        taken
    }

    fn gather(&self, root: usize, mine: &[u8], take: Take<'_>) -> Result<()> {
        let mut buffers = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        let lengths = self.all_lengths(mine.len() as u64)?;
        let root_process = self.world.process_at_rank(root as i32);
        if self.rank == root {
            let start = |send, parts| {
                root_process.immediate_gather_varcount_into_root(StaticScope, send, parts)
            };
            return self.gathering(&mut buffers, mine, &lengths, start, take);
        }
        partition(&lengths)?;
        let (send, loan) = buffers.lend_send(mine);
        let request = root_process.immediate_gather_varcount_into(StaticScope, &*send);
        self.wait(request, LONGEST_POLL_ARRIVED)?;
        // SAFETY: the gather that used it has completed.
        buffers.keep_send(unsafe { loan.take_back() });
        Ok(())
    }

    fn all_gather(&self, mine: &[u8], take: Take<'_>) -> Result<()> {
        let mut buffers = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        let lengths = self.all_lengths(mine.len() as u64)?;
        let start = |send, parts| {
            self.world
                .immediate_all_gather_varcount_into(StaticScope, send, parts)
        };
        self.gathering(&mut buffers, mine, &lengths, start, take)
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
            let (message, _) = lend_vec(why.as_bytes().to_vec());
            let request = self
                .notices
                .process_at_rank(other as i32)
                .immediate_send_with_tag(StaticScope, &*message, FAILED);
            std::mem::forget(request);
        }
    }
}
