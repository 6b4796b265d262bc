//! `Transport`: the collectives ranks exchange bytes with (MPI's, or threads' in one process).

use num_complex::Complex64;
use srcflow_tensor::error::{Error, Result};
use std::ops::Range;

/// What a rank puts into a collective: its bytes, written straight into the transport's own
/// buffer (where MPI sends them from), so that they are copied once.
pub trait Payload {
    /// How many bytes it writes.
    fn byte_len(&self) -> usize;

    /// Writes its bytes into `out`, which is [`Payload::byte_len`] long.
    fn write_to(&self, out: &mut [u8]);

    /// Its bytes, in a vector of their own.
    fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = vec![0; self.byte_len()];
        self.write_to(&mut bytes);
        bytes
    }
}

impl Payload for &[u8] {
    fn byte_len(&self) -> usize {
        self.len()
    }

    fn write_to(&self, out: &mut [u8]) {
        out.copy_from_slice(self);
    }
}

/// What a collective hands each rank's bytes to (this rank's own among them), with the rank
/// that sent them. The bytes are valid only during the call, and may lie in the transport's
/// own buffers, so that a caller decoding them copies them once; it must not start another
/// collective on the same transport.
pub type Take<'a> = &'a mut dyn FnMut(usize, &[u8]) -> Result<()>;

/// Collectives over the ranks of one run. Every rank calls the same collectives in the same
/// order; a rank that fails calls [`Transport::abort`], after which every collective on every
/// rank, under way or to come, returns an error naming it instead of waiting.
pub trait Transport: Send + Sync {
    /// This process's rank, from 0.
    fn rank(&self) -> usize;

    /// Ranks in the run.
    fn ranks(&self) -> usize;

    /// Hands `mine` of rank `root` to `take` on every rank (what the others pass is ignored).
    fn broadcast(&self, root: usize, mine: &dyn Payload, take: Take<'_>) -> Result<()>;

    /// Hands every rank's `mine` to `take`, in rank order, on rank `root`; other ranks take
    /// nothing.
    fn gather(&self, root: usize, mine: &dyn Payload, take: Take<'_>) -> Result<()>;

    /// Hands every rank's `mine` to `take`, in rank order, on every rank.
    fn all_gather(&self, mine: &dyn Payload, take: Take<'_>) -> Result<()>;

    /// Every rank's rows of one value, in rank order, `counts[rank]` elements each, on every
    /// rank of `readers` (in rank order, each once; every rank with rows among them): in
    /// `all`, which spans the value on a reader, this rank has written its own slot, and the
    /// others' arrive into theirs. A rank not among `readers` passes an empty `all` and gets
    /// it back. MPI receives the rows in place; this default goes through
    /// [`Transport::all_gather`] and copies them in.
    fn all_gather_in_place(
        &self,
        mut all: Box<[Complex64]>,
        counts: &[usize],
        readers: &[usize],
    ) -> Result<Box<[Complex64]>> {
        let rank = self.rank();
        let reads = check_in_place(rank, all.len(), counts, readers)?;
        let own = match reads {
            true => bytemuck::cast_slice::<Complex64, u8>(&all[slot(counts, rank)]).to_vec(),
            false => vec![],
        };
        self.all_gather(&own.as_slice(), &mut |from, bytes| {
            if from == rank || !reads {
                return Ok(());
            }
            let into = bytemuck::cast_slice_mut::<Complex64, u8>(&mut all[slot(counts, from)]);
            if bytes.len() != into.len() {
                return Err(Error::Invalid(format!(
                    "rank {from} sent {} bytes of rows this rank expected as {}",
                    bytes.len(),
                    into.len()
                )));
            }
            into.copy_from_slice(bytes);
            Ok(())
        })?;
        Ok(all)
    }

    /// An error when another rank has failed (for waits outside the collectives).
    fn check(&self) -> Result<()>;

    /// Gives up the run on every rank because this one failed with `why`.
    fn abort(&self, why: &str);

    /// Rank `root`'s `mine`, copied out of a broadcast (for small exchanges).
    fn broadcast_bytes(&self, root: usize, mine: &[u8]) -> Result<Vec<u8>> {
        let mut all = Vec::new();
        self.broadcast(root, &mine, &mut |_, bytes| {
            all = bytes.to_vec();
            Ok(())
        })?;
        Ok(all)
    }

    /// Every rank's `mine`, in rank order, copied out of an all-gather (for small exchanges).
    fn all_gather_bytes(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        let mut all = Vec::with_capacity(self.ranks());
        self.all_gather(&mine, &mut |_, bytes| {
            all.push(bytes.to_vec());
            Ok(())
        })?;
        Ok(all)
    }

    /// Every rank's `mine`, in rank order, copied out of a gather on rank `root`; empty on
    /// the other ranks.
    fn gather_bytes(&self, root: usize, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        let mut all = Vec::new();
        self.gather(root, &mine, &mut |_, bytes| {
            all.push(bytes.to_vec());
            Ok(())
        })?;
        Ok(all)
    }
}

/// Whether `rank` reads an in-place all-gather ([`Transport::all_gather_in_place`]) of slots
/// of `counts` elements among `readers`, passing `len` elements; an error, the same on every
/// rank and before any message, when the call breaks that method's terms.
pub(crate) fn check_in_place(
    rank: usize,
    len: usize,
    counts: &[usize],
    readers: &[usize],
) -> Result<bool> {
    let ranks = counts.len();
    if readers.windows(2).any(|w| w[0] >= w[1]) || readers.iter().any(|&r| r >= ranks) {
        return Err(Error::Invalid(format!(
            "the readers of an in-place all-gather, {readers:?}, are not distinct ranks below \
             {ranks} in order"
        )));
    }
    if let Some(maker) = (0..ranks).find(|r| counts[*r] > 0 && !readers.contains(r)) {
        return Err(Error::Invalid(format!(
            "rank {maker} brings rows to an in-place all-gather but does not read it"
        )));
    }
    let reads = readers.contains(&rank);
    let expected = if reads { counts.iter().sum() } else { 0 };
    if len != expected {
        return Err(Error::Invalid(format!(
            "rank {rank} passed {len} elements to an in-place all-gather of {expected}"
        )));
    }
    Ok(reads)
}

/// The elements of rank `rank`'s slot among slots of `counts` elements laid in rank order.
pub(crate) fn slot(counts: &[usize], rank: usize) -> Range<usize> {
    let start = counts[..rank].iter().sum();
    start..start + counts[rank]
}
