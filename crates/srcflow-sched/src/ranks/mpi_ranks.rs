//! `MpiRanks`: the transport of a run under a launcher (`mpirun`, `srun`). Each collective
//! opens with an MPI all-gather of every rank's length; the values then travel as
//! point-to-point messages of complex elements (`MPI_C_DOUBLE_COMPLEX`, so one message carries
//! up to 32 GB) between the ranks' slots of one buffer, so that a rank's own part is written
//! once and never copied by MPI. Every call is started non-blocking and polled, so that a
//! failure notice from another rank ends the wait.

use super::mpi_buffers::{lend_slice, lend_vec, slots, write_payload, WordBuffer};
use super::transport::{check_in_place, slot};
use super::{Payload, Take, Transport};
use mpi::collective::CommunicatorCollectives;
use mpi::environment::{Threading, Universe};
use mpi::point_to_point::{Destination, Source};
use mpi::request::{Request, StaticScope};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::{Count, Tag};
use num_complex::Complex64;
use srcflow_tensor::error::{Error, Result};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Bytes per element on the wire (MPI moves `MPI_C_DOUBLE_COMPLEX` elements).
const WORD: usize = std::mem::size_of::<Complex64>();
/// The tag of the elements of a collective (on `world`).
const ELEMENTS: Tag = 0;
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
    /// The buffer of the collectives on `world`, held for the whole of each (one at a time).
    buffer: Mutex<WordBuffer>,
}

// SAFETY: MPI is initialised with MPI_THREAD_MULTIPLE (`MpiRanks::start` refuses less), which
// lets any thread call MPI; collectives on `world` are serialised by `buffer` (MPI
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
            buffer: Mutex::new(WordBuffer::default()),
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

    /// Waits for `requests`, sleeping at most `longest` between two tests, and gives up
    /// (leaving them pending) once a rank has failed. After that no collective starts (`check`
    /// first): one left pending would match the next.
    fn wait<D: ?Sized>(
        &self,
        mut requests: Vec<Request<'static, D, StaticScope>>,
        longest: Duration,
    ) -> Result<()> {
        let mut pause = FIRST_POLL;
        loop {
            requests = requests
                .into_iter()
                .filter_map(|request| request.test().err())
                .collect();
            if requests.is_empty() {
                return Ok(());
            }
            if let Some(error) = self.failure() {
                std::mem::forget(requests);
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
            vec![self
                .world
                .immediate_all_gather_into(StaticScope, &*mine, all)],
            LONGEST_POLL,
        )?;
        // SAFETY: the all-gather that used both has completed.
        unsafe {
            drop(mine_loan.take_back());
            Ok(all_loan.take_back().into_vec())
        }
    }

    /// Runs a collective of every rank's bytes, `lengths` of them, each in its slot of the
    /// kept buffer: writes `mine` into this rank's, sends it to `send_to`, receives the slots
    /// of `receive_from`, and hands the bytes of `take_from` to `take`.
    fn swap(
        &self,
        buffer: &mut WordBuffer,
        mine: &dyn Payload,
        lengths: &[u64],
        [send_to, receive_from, take_from]: [&[usize]; 3],
        take: Take<'_>,
    ) -> Result<()> {
        let (counts, displs) = partition(lengths)?;
        let mut all = buffer.take(counts.iter().sum());
        write_payload(&mut all[slot(&counts, self.rank)], mine);
        let all = self.move_slots(all, &counts, send_to, receive_from)?;
        let taken = hand_over(&all, &displs, lengths, take_from, take);
        buffer.keep(all);
        taken
    }
}

impl MpiRanks {
    /// Moves the slots of `buffer` (`counts` elements each, in rank order, from its start):
    /// sends this rank's to `send_to` and receives those of `receive_from` into theirs; the
    /// buffer back once every move has completed (lent for good if one fails).
    fn move_slots(
        &self,
        buffer: Box<[Complex64]>,
        counts: &[usize],
        send_to: &[usize],
        receive_from: &[usize],
    ) -> Result<Box<[Complex64]>> {
        let (words, loan) = lend_slice(buffer, counts.iter().sum());
        let mut parts = slots(words, counts);
        let requests = self.start_moves(&mut parts, send_to, receive_from);
        self.wait(requests, LONGEST_POLL_ARRIVED)?;
        drop(parts);
        // SAFETY: every request that used the buffer has completed, and the slots lent from
        // it are dropped.
        Ok(unsafe { loan.take_back() })
    }

    /// Starts sending this rank's slot of `parts` to `send_to` and receiving the slots of
    /// `receive_from` into theirs (both taken out of `parts`).
    fn start_moves(
        &self,
        parts: &mut [&'static mut [Complex64]],
        send_to: &[usize],
        receive_from: &[usize],
    ) -> Vec<Request<'static, [Complex64], StaticScope>> {
        let own_slot: &'static mut [Complex64] = std::mem::take(&mut parts[self.rank]);
        let own: &'static [Complex64] = own_slot;
        let sends = send_to.iter().map(|&to| {
            let process = self.world.process_at_rank(to as i32);
            process.immediate_send_with_tag(StaticScope, own, ELEMENTS)
        });
        let mut requests: Vec<_> = sends.collect();
        for &from in receive_from {
            let slot = std::mem::take(&mut parts[from]);
            let process = self.world.process_at_rank(from as i32);
            requests.push(process.immediate_receive_into_with_tag(StaticScope, slot, ELEMENTS));
        }
        requests
    }
}

/// Each rank's slot in the buffer, in elements (counts and offsets), for contributions of
/// `lengths` bytes; an error when one is past what one MPI message carries.
fn partition(lengths: &[u64]) -> Result<(Vec<usize>, Vec<usize>)> {
    let too_long = |len: u64| Count::try_from(len.div_ceil(WORD as u64)).is_err();
    if let Some((rank, len)) = lengths.iter().enumerate().find(|(_, &len)| too_long(len)) {
        return Err(Error::Invalid(format!(
            "rank {rank}'s part of an exchange, {len} bytes, is past what one MPI message \
             carries, {} (use more ranks or devices)",
            Count::MAX as u64 * WORD as u64
        )));
    }
    let counts: Vec<usize> = lengths
        .iter()
        .map(|&len| len.div_ceil(WORD as u64) as usize)
        .collect();
    let displs = counts
        .iter()
        .scan(0, |at, &count| {
            let displ = *at;
            *at += count;
            Some(displ)
        })
        .collect();
    Ok((counts, displs))
}

/// Hands the bytes of each rank of `from` in `received` (at `displs`, `lengths` long) to
/// `take`, in rank order.
fn hand_over(
    received: &[Complex64],
    displs: &[usize],
    lengths: &[u64],
    from: &[usize],
    take: Take<'_>,
) -> Result<()> {
    let bytes: &[u8] = bytemuck::cast_slice(received);
    for &rank in from {
        let start = displs[rank] * WORD;
        take(rank, &bytes[start..start + lengths[rank] as usize])?;
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

    fn broadcast(&self, root: usize, mine: &dyn Payload, take: Take<'_>) -> Result<()> {
        let mut buffer = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
        // Every rank's length, not only root's: once it completes every rank has arrived, so
        // the elements are polled closely.
        let lengths = self.all_lengths(mine.byte_len() as u64)?;
        let others: Vec<usize> = self.others().collect();
        let moves: [&[usize]; 3] = match self.rank == root {
            true => [&others, &[], &[root]],
            false => [&[], &[root], &[root]],
        };
        self.swap(&mut buffer, mine, &lengths, moves, take)
    }

    fn gather(&self, root: usize, mine: &dyn Payload, take: Take<'_>) -> Result<()> {
        let mut buffer = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
        let lengths = self.all_lengths(mine.byte_len() as u64)?;
        let (others, all): (Vec<usize>, Vec<usize>) =
            (self.others().collect(), (0..self.ranks).collect());
        let moves: [&[usize]; 3] = match self.rank == root {
            true => [&[], &others, &all],
            false => [&[root], &[], &[]],
        };
        self.swap(&mut buffer, mine, &lengths, moves, take)
    }

    fn all_gather(&self, mine: &dyn Payload, take: Take<'_>) -> Result<()> {
        let mut buffer = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
        let lengths = self.all_lengths(mine.byte_len() as u64)?;
        let (others, all): (Vec<usize>, Vec<usize>) =
            (self.others().collect(), (0..self.ranks).collect());
        self.swap(&mut buffer, mine, &lengths, [&others, &others, &all], take)
    }

    /// Sends this rank's slot of `all` from where it lies to the other `readers` and, on a
    /// reader, receives the others' into theirs: no copy beyond MPI's own. The lengths
    /// all-gather that opens it checks that every rank counts the same slots.
    fn all_gather_in_place(
        &self,
        all: Box<[Complex64]>,
        counts: &[usize],
        readers: &[usize],
    ) -> Result<Box<[Complex64]>> {
        let reads = check_in_place(self.rank, all.len(), counts, readers)?;
        let _one_at_a_time = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
        let lengths = self.all_lengths((counts[self.rank] * WORD) as u64)?;
        let (told, _) = partition(&lengths)?;
        if let Some(rank) = (0..self.ranks).find(|&r| told[r] != counts[r]) {
            return Err(Error::Invalid(format!(
                "rank {rank} brought {} elements of rows this rank expected as {}",
                told[rank], counts[rank]
            )));
        }
        if !reads {
            return Ok(all);
        }
        let send_to: Vec<usize> = match counts[self.rank] {
            0 => vec![],
            _ => readers
                .iter()
                .copied()
                .filter(|&r| r != self.rank)
                .collect(),
        };
        let receive_from: Vec<usize> = self.others().filter(|&r| counts[r] > 0).collect();
        self.move_slots(all, counts, &send_to, &receive_from)
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
