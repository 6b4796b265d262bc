//! Where parallel work runs: only in the rayon pool of the thread that does it (a run's device
//! pool, entered with `ThreadPool::install`). A thread outside every pool (an I/O lane, a
//! program calling the library) works alone, so rayon's global pool never starts beside the
//! device pools and oversubscribes the cores they were sized for.

use rayon::prelude::*;

/// True when the calling thread is a worker of a rayon pool.
pub fn in_pool() -> bool {
    rayon::current_thread_index().is_some()
}

/// faer's parallelism for work on the calling thread: its pool's threads, none outside a pool.
pub fn faer_par() -> faer::Par {
    if in_pool() {
        faer::Par::rayon(0)
    } else {
        faer::Par::Seq
    }
}

/// `work` on each chunk of `len` elements of `items` (the last may be shorter) and its index:
/// in parallel in the calling thread's pool, one after another outside a pool.
pub fn for_each_chunk<X: Send>(
    items: &mut [X],
    len: usize,
    work: impl Fn(usize, &mut [X]) + Send + Sync,
) {
    if in_pool() {
        items
            .par_chunks_mut(len)
            .enumerate()
            .for_each(|(i, chunk)| work(i, chunk));
    } else {
        items
            .chunks_mut(len)
            .enumerate()
            .for_each(|(i, chunk)| work(i, chunk));
    }
}

/// `work` on each of `0..count`: in parallel in the calling thread's pool, one after another
/// outside a pool.
pub fn for_each_index(count: usize, work: impl Fn(usize) + Send + Sync) {
    if in_pool() {
        (0..count).into_par_iter().for_each(work);
    } else {
        (0..count).for_each(work);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn work_outside_a_pool_runs_on_the_calling_thread_and_inside_on_the_pool() {
        let caller = std::thread::current().id();
        let threads = Mutex::new(Vec::new());
        for_each_index(64, |_| {
            threads.lock().unwrap().push(std::thread::current().id())
        });
        assert!(threads.lock().unwrap().iter().all(|&t| t == caller));
        assert_eq!(faer_par(), faer::Par::Seq);

        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let mut items = vec![0usize; 64];
        pool.install(|| {
            assert_eq!(faer_par(), faer::Par::rayon(0));
            for_each_chunk(&mut items, 8, |i, chunk| chunk.fill(i));
        });
        assert!(items
            .chunks(8)
            .enumerate()
            .all(|(i, c)| c.iter().all(|&x| x == i)));
    }
}
