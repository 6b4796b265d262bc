//! `Session`: what outlives a run — each device's backend (its kernel threads; on CUDA its
//! context, streams, library handles and compiled kernels) and the plans made so far — so that
//! a program calling srcflow in a loop pays for them once. Engines borrow it
//! ([`super::EngineBuilder::session`]); clones share it.

use super::plan_cache::{PlanCache, PlanKey, Prepared};
use srcflow_graph::plan::Budgets;
use srcflow_tensor::backend::{Backend, CpuBackend, CudaBackend};
use srcflow_tensor::error::Result;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Backends a session keeps (a device and thread count each); past this many the least
/// recently used is dropped, so that a program trying every thread count does not keep a pool
/// of threads for each.
pub const BACKENDS_KEPT: usize = 16;

/// The backends and plans that runs share. Runs on one session take turns (see
/// [`Session::take_turn`]); a program that wants two at once makes two sessions.
#[derive(Clone, Default)]
pub struct Session {
    state: Arc<State>,
}

/// A session's shared state.
#[derive(Default)]
struct State {
    backends: Mutex<Vec<(DeviceKey, Arc<dyn Backend>)>>,
    /// The process the backends were made in (0: none made yet).
    made_in: AtomicU32,
    plans: Mutex<PlanCache>,
    turn: Mutex<()>,
}

/// Which backend computes for a device of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DeviceKey {
    /// The CPU worker group of a run's device `device`, with `threads` kernel threads.
    Cpu { device: usize, threads: usize },
    /// CUDA GPU `id`.
    Cuda { id: usize },
}

/// What a session holds now, and how often its plans were reused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionStats {
    /// Backends kept (one per device and thread count asked for).
    pub backends: usize,
    /// Plans kept.
    pub plans: usize,
    /// Runs whose plan was found kept.
    pub plan_hits: u64,
    /// Runs that had to plan.
    pub plan_misses: u64,
}

/// Locks `mutex`, even if a thread panicked while holding it (what it guards stays whole).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Session {
    /// An empty session: backends and plans are made when a run first needs them.
    pub fn new() -> Self {
        Session::default()
    }

    /// The CPU backend of a run's device `device` with `threads` kernel threads: the one kept,
    /// or a new one, kept from now on.
    pub(crate) fn cpu_backend(&self, device: usize, threads: usize) -> Result<Arc<dyn Backend>> {
        self.backend(DeviceKey::Cpu { device, threads }, || {
            Ok(Box::new(CpuBackend::new(threads)?))
        })
    }

    /// The CUDA backend of GPU `id`: the one kept (its kernels compiled), or a new one.
    pub(crate) fn cuda_backend(&self, id: usize) -> Result<Arc<dyn Backend>> {
        self.backend(DeviceKey::Cuda { id }, || {
            Ok(Box::new(CudaBackend::new(id)?))
        })
    }

    /// The backend kept for `key`, or the one `make` makes, kept from now on (the least
    /// recently used one goes past [`BACKENDS_KEPT`]; an engine holding it keeps it until the
    /// engine drops). In a process forked from the one that made the backends, new ones are
    /// made.
    fn backend(
        &self,
        key: DeviceKey,
        make: impl FnOnce() -> Result<Box<dyn Backend>>,
    ) -> Result<Arc<dyn Backend>> {
        let mut backends = lock(&self.state.backends);
        let pid = std::process::id();
        if self.state.made_in.swap(pid, Ordering::Relaxed) != pid {
            // A forked child: the parent's kernel threads and GPU contexts are not here, and
            // dropping them could wait on threads that do not exist. They are left as they are.
            std::mem::forget(std::mem::take(&mut *backends));
        }
        if let Some(at) = backends.iter().position(|(k, _)| *k == key) {
            let kept = backends.remove(at);
            let backend = Arc::clone(&kept.1);
            backends.push(kept);
            return Ok(backend);
        }
        let backend: Arc<dyn Backend> = Arc::from(make()?);
        backends.push((key, Arc::clone(&backend)));
        if backends.len() > BACKENDS_KEPT {
            backends.remove(0);
        }
        Ok(backend)
    }

    /// The graph and plan for `key` and `budgets`: the ones kept, or those `make` makes, kept
    /// from now on.
    pub(crate) fn prepared(
        &self,
        key: PlanKey,
        budgets: Option<&Budgets>,
        make: impl FnOnce() -> Result<Prepared>,
    ) -> Result<Prepared> {
        if let Some(found) = lock(&self.state.plans).find(&key, budgets) {
            return Ok(found);
        }
        let prepared = make()?;
        lock(&self.state.plans).keep(key, budgets, prepared.clone());
        Ok(prepared)
    }

    /// Waits for the session's other runs to end and holds the turn until the guard drops:
    /// runs on one session take turns, as the backends' streams and library handles are one
    /// per device.
    pub fn take_turn(&self) -> MutexGuard<'_, ()> {
        lock(&self.state.turn)
    }

    /// What the session holds now.
    pub fn stats(&self) -> SessionStats {
        let plans = lock(&self.state.plans);
        SessionStats {
            backends: lock(&self.state.backends).len(),
            plans: plans.len(),
            plan_hits: plans.hits,
            plan_misses: plans.misses,
        }
    }

    /// Forgets the plans kept and gives back the memory the block cache keeps (when no run is
    /// under way); the backends and their threads stay.
    pub fn trim(&self) {
        lock(&self.state.plans).clear();
        srcflow_tensor::alloc::release_cached_if_idle();
    }

    /// [`Session::trim`], and drops the backends (their threads, GPU contexts and kernels)
    /// once no engine holds them: the next run on this session makes new ones.
    pub fn close(&self) {
        self.trim();
        lock(&self.state.backends).clear();
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("stats", &self.stats())
            .finish()
    }
}
