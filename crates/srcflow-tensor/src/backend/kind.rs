//! `BackendKind`: which backend the devices of a run compute on, chosen by name.

use super::{Backend, CpuBackend, CudaBackend};
use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// The backend a run's devices compute on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BackendKind {
    /// The CPU: each device a worker group with its share of the threads.
    #[default]
    Cpu,
    /// CUDA GPUs, by device id.
    Cuda,
    /// CUDA when this machine has every device asked for, else the CPU.
    Auto,
}

impl BackendKind {
    /// Every kind, as named on the command line.
    pub const ALL: [BackendKind; 3] = [BackendKind::Cpu, BackendKind::Cuda, BackendKind::Auto];

    /// Its name: `cpu`, `cuda` or `auto`.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Cuda => "cuda",
            BackendKind::Auto => "auto",
        }
    }

    /// The kind a run gets for devices `ids`: `Auto` resolved on this machine.
    pub fn resolve(self, ids: &[usize]) -> BackendKind {
        match self {
            BackendKind::Auto => {
                let present = CudaBackend::device_count();
                if ids.iter().all(|&id| id < present) {
                    BackendKind::Cuda
                } else {
                    BackendKind::Cpu
                }
            }
            kind => kind,
        }
    }

    /// CPU backends for `devices` devices sharing `threads` threads (0: one per core), each
    /// with its share (at least one).
    pub fn cpu_backends(devices: usize, threads: usize) -> Result<Vec<Box<dyn Backend>>> {
        Self::cpu_threads_of(devices, 0..devices, threads)?
            .into_iter()
            .map(|share| Ok(Box::new(CpuBackend::new(share)?) as Box<dyn Backend>))
            .collect()
    }

    /// The kernel threads of each of `devices` CPU devices of which this process runs `own`:
    /// those share `threads` threads (0: one per core), each with its share (at least one);
    /// the others (other ranks' devices) get one thread, which never computes. An error names
    /// a count this machine cannot hold.
    pub fn cpu_threads_of(
        devices: usize,
        own: std::ops::Range<usize>,
        threads: usize,
    ) -> Result<Vec<usize>> {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let most = cpus.saturating_mul(THREADS_PER_CPU);
        for (setting, count, what) in [
            ("`Options::threads`", threads, "threads"),
            (
                "`GraphOptions::devices`",
                devices,
                "devices (worker groups of at least one thread)",
            ),
        ] {
            if count > most {
                return Err(Error::Invalid(format!(
                    "{setting} must be at most {most} on the CPU backend ({THREADS_PER_CPU} per logical CPU of this machine's {cpus}: more only add overhead), found {count} {what}"
                )));
            }
        }
        let threads = match threads {
            0 => cpus,
            t => t,
        };
        Ok((0..devices)
            .map(|device| {
                match device
                    .checked_sub(own.start)
                    .filter(|_| own.contains(&device))
                {
                    Some(mine) => crate::even_share::even_share(threads, own.len(), mine)
                        .len()
                        .max(1),
                    None => 1,
                }
            })
            .collect())
    }
}

/// Kernel threads (and CPU devices) a run may have per logical CPU: more than one lets a
/// laptop try, plan and simulate several devices; thousands only add the time to start them.
const THREADS_PER_CPU: usize = 16;

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BackendKind {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        BackendKind::ALL
            .into_iter()
            .find(|kind| kind.name() == text)
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "unknown backend '{text}'; expected cpu, cuda or auto"
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_read_by_name_and_a_wrong_one_is_named() {
        for kind in BackendKind::ALL {
            assert_eq!(kind.name().parse::<BackendKind>().unwrap(), kind);
        }
        let error = "gpu".parse::<BackendKind>().unwrap_err().to_string();
        assert_eq!(error, "unknown backend 'gpu'; expected cpu, cuda or auto");
    }

    #[test]
    fn auto_is_the_cpu_where_the_devices_asked_for_are_not_all_here() {
        let present = CudaBackend::device_count();
        assert_eq!(BackendKind::Auto.resolve(&[present]), BackendKind::Cpu);
        assert_eq!(BackendKind::Cpu.resolve(&[0]), BackendKind::Cpu);
    }
}
