//! `InProcessRanks`: the ranks of a run as threads of one process, exchanging through shared
//! memory. The tests run every rank protocol on it; MPI's transport runs the same collectives.

use super::{Payload, Take, Transport};
use srcflow_tensor::error::{Error, Result};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// The transport of one rank among threads of one process.
pub struct InProcessRanks {
    rank: usize,
    shared: Arc<Rendezvous>,
    /// Collectives this rank has called so far: the number of its next.
    calls: AtomicU64,
}

/// What the ranks share: the collectives under way and whether one gave up.
struct Rendezvous {
    ranks: usize,
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// Collectives under way, by number: each rank's call and bytes, and how many took theirs.
    rounds: HashMap<u64, Round>,
    /// The rank that gave up the run, and why.
    aborted: Option<(usize, String)>,
}

/// One collective: the call each rank made (which must agree) and its bytes.
struct Round {
    call: Call,
    bytes: Vec<Option<Vec<u8>>>,
    taken: usize,
}

/// Which collective a rank called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Call {
    Broadcast(usize),
    Gather(usize),
    AllGather,
}

impl InProcessRanks {
    /// The transports of `ranks` ranks, one per rank (hand each to its own thread).
    pub fn group(ranks: usize) -> Vec<Arc<dyn Transport>> {
        let shared = Arc::new(Rendezvous {
            ranks,
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        (0..ranks)
            .map(|rank| {
                Arc::new(InProcessRanks {
                    rank,
                    shared: Arc::clone(&shared),
                    calls: AtomicU64::new(0),
                }) as Arc<dyn Transport>
            })
            .collect()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every rank's bytes of this rank's next collective `call`, once all have called it; the
    /// reason of a rank that gave up, once one has (before an out-of-step call is noticed).
    fn exchange(&self, call: Call, bytes: Vec<u8>) -> Result<Vec<Vec<u8>>> {
        let number = self.calls.fetch_add(1, Ordering::SeqCst);
        let ranks = self.shared.ranks;
        let mut state = self.lock();
        if let Some((rank, why)) = &state.aborted {
            return Err(aborted(*rank, why));
        }
        let round = state.rounds.entry(number).or_insert_with(|| Round {
            call,
            bytes: vec![None; ranks],
            taken: 0,
        });
        if round.call != call {
            let first = round.call;
            drop(state);
            let why = format!(
                "ranks out of step: rank {} called {call:?} as collective {number}, another \
                 rank {first:?}",
                self.rank
            );
            self.abort(&why);
            return Err(Error::Invalid(why));
        }
        round.bytes[self.rank] = Some(bytes);
        self.shared.changed.notify_all();
        loop {
            if let Some((rank, why)) = &state.aborted {
                return Err(aborted(*rank, why));
            }
            let round = state.rounds.get_mut(&number).expect("open until all took");
            if round.bytes.iter().all(Option::is_some) {
                let all: Vec<Vec<u8>> = round.bytes.iter().flatten().cloned().collect();
                round.taken += 1;
                if round.taken == ranks {
                    state.rounds.remove(&number);
                }
                return Ok(all);
            }
            state = self
                .shared
                .changed
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Hands every rank's bytes in `all` to `take`, in rank order.
fn hand_over(all: Vec<Vec<u8>>, take: Take<'_>) -> Result<()> {
    all.iter()
        .enumerate()
        .try_for_each(|(rank, bytes)| take(rank, bytes))
}

/// The error every rank's collectives return once rank `rank` gave up with `why`.
fn aborted(rank: usize, why: &str) -> Error {
    Error::Invalid(format!("rank {rank} failed: {why}"))
}

impl Transport for InProcessRanks {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.shared.ranks
    }

    fn broadcast(&self, root: usize, mine: &dyn Payload, take: Take<'_>) -> Result<()> {
        let all = self.exchange(Call::Broadcast(root), mine.to_bytes())?;
        take(root, &all[root])
    }

    fn gather(&self, root: usize, mine: &dyn Payload, take: Take<'_>) -> Result<()> {
        let all = self.exchange(Call::Gather(root), mine.to_bytes())?;
        if self.rank == root {
            hand_over(all, take)?;
        }
        Ok(())
    }

    fn all_gather(&self, mine: &dyn Payload, take: Take<'_>) -> Result<()> {
        let all = self.exchange(Call::AllGather, mine.to_bytes())?;
        hand_over(all, take)
    }

    fn check(&self) -> Result<()> {
        match &self.lock().aborted {
            Some((rank, why)) if *rank != self.rank => Err(aborted(*rank, why)),
            _ => Ok(()),
        }
    }

    fn abort(&self, why: &str) {
        let mut state = self.lock();
        state
            .aborted
            .get_or_insert_with(|| (self.rank, why.to_string()));
        self.shared.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::InProcessRanks;
    use crate::ranks::transport::slot;
    use num_complex::Complex64;
    use std::thread;

    #[test]
    fn collectives_deliver_every_ranks_bytes_in_rank_order() {
        let ranks = InProcessRanks::group(3);
        let results: Vec<_> = thread::scope(|s| {
            let handles: Vec<_> = ranks
                .iter()
                .map(|t| {
                    s.spawn(move || {
                        let me = [t.rank() as u8];
                        let mut b = vec![];
                        t.broadcast(1, &me.as_slice(), &mut |from, bytes| {
                            b.push((from, bytes.to_vec()));
                            Ok(())
                        })
                        .unwrap();
                        let g = t.gather_bytes(2, &me).unwrap();
                        let a = t.all_gather_bytes(&me).unwrap();
                        (b, g, a)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (rank, (b, g, a)) in results.into_iter().enumerate() {
            assert_eq!(b, vec![(1, vec![1])]);
            assert_eq!(a, vec![vec![0], vec![1], vec![2]]);
            assert_eq!(g.len(), if rank == 2 { 3 } else { 0 });
        }
    }

    #[test]
    fn an_in_place_all_gather_fills_every_readers_slots_and_leaves_others_empty() {
        // Ranks 0 and 1 bring rows; rank 2 reads and brings none; rank 3 reads none.
        let (counts, readers) = ([2, 1, 0, 0], [0, 1, 2]);
        let ranks = InProcessRanks::group(4);
        let results: Vec<Vec<f64>> = thread::scope(|s| {
            let handles: Vec<_> = ranks
                .iter()
                .map(|t| {
                    s.spawn(move || {
                        let rank = t.rank();
                        let len = if rank < 3 { 3 } else { 0 };
                        let mut all = vec![Complex64::default(); len];
                        for at in slot(&counts, rank) {
                            all[at] = Complex64::new(10.0 * rank as f64 + at as f64, 0.0);
                        }
                        let all = t.all_gather_in_place(all.into(), &counts, &readers);
                        all.unwrap().iter().map(|z| z.re).collect()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for rows in &results[..3] {
            assert_eq!(rows, &[0.0, 1.0, 12.0]);
        }
        assert!(results[3].is_empty());
    }

    #[test]
    fn an_abort_wakes_every_waiting_rank_with_its_reason() {
        let ranks = InProcessRanks::group(2);
        thread::scope(|s| {
            let waiting = s.spawn(|| ranks[0].all_gather_bytes(&[]));
            ranks[1].abort("disk full");
            let err = waiting.join().unwrap().unwrap_err().to_string();
            assert!(err.contains("rank 1 failed: disk full"), "{err}");
        });
    }

    #[test]
    fn ranks_calling_different_collectives_are_an_error_not_a_hang() {
        let ranks = InProcessRanks::group(2);
        thread::scope(|s| {
            let first = s.spawn(|| ranks[0].all_gather_bytes(&[]));
            let second = ranks[1].gather_bytes(0, &[]);
            assert!(second.unwrap_err().to_string().contains("out of step"));
            assert!(first.join().unwrap().is_err());
        });
    }
}
