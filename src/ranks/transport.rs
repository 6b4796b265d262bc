//! `Transport`: the collectives ranks exchange bytes with (MPI's, or threads' in one process).

use crate::error::Result;

/// Collectives over the ranks of one run. Every rank calls the same collectives in the same
/// order; a rank that fails calls [`Transport::abort`], after which every collective on every
/// rank, under way or to come, returns an error naming it instead of waiting.
pub trait Transport: Send + Sync {
    /// This process's rank, from 0.
    fn rank(&self) -> usize;

    /// Ranks in the run.
    fn ranks(&self) -> usize;

    /// `bytes` of rank `root`, on every rank (what the others pass is ignored).
    fn broadcast(&self, root: usize, bytes: Vec<u8>) -> Result<Vec<u8>>;

    /// Every rank's `bytes`, in rank order, on rank `root`; other ranks get an empty list.
    fn gather(&self, root: usize, bytes: Vec<u8>) -> Result<Vec<Vec<u8>>>;

    /// Every rank's `bytes`, in rank order, on every rank.
    fn all_gather(&self, bytes: Vec<u8>) -> Result<Vec<Vec<u8>>>;

    /// An error when another rank has failed (for waits outside the collectives).
    fn check(&self) -> Result<()>;

    /// Gives up the run on every rank because this one failed with `why`.
    fn abort(&self, why: &str);
}
