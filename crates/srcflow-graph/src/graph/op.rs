//! `Op`: what a task does, and in one table ([`Op::profile`]) everything the layers above
//! ask of each op: its lane, the device memory it takes, the tiers it moves values between,
//! how the scheduler paces it and what it means to a report. Each arm is one op's
//! declaration, and no arm has a wildcard: a new op is a variant here, its arm in the table,
//! and its execution (a kernel in `kernel.rs`, or a data move in the engine's executor).

use super::{Lane, Pass};
use serde::{Deserialize, Serialize};
use srcflow_tensor::Tier;

/// What a task does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Op {
    /// Read one input core of `layer` for `pass`.
    ReadSite {
        /// Layer index (0 = top).
        layer: usize,
        /// Pass the core is read for.
        pass: Pass,
    },
    /// Build C_site from C_{site-1} (left-to-right pass).
    Env,
    /// Fold the cores of a site into S_{site+1} (W_site), for its sketch and projection.
    Fold,
    /// Sketch Y_site from C_{site-1} and S_{site+1} (or W_site).
    Sketch,
    /// Orthonormal basis η_site of the gathered Y_site.
    Qr,
    /// Project onto η_site: S_site from S_{site+1} (or W_site).
    Project,
    /// The first output core η_0, absorbing the rest of the product.
    First,
    /// The exact two-site product, truncated by an SVD (n = 2 only).
    Exact,
    /// Hand one output core to the sink (memory or disk).
    WriteSite,
    /// Hand an output core to the sink to keep until the rounding sweep.
    StoreDraft,
    /// Read an output core back from the sink for the rounding sweep.
    LoadDraft,
    /// One step of the rounding sweep: an SVD truncating the bond right of a site to χ̄.
    Round,
    /// Move an environment slice one tier down, `to` host (from the device) or disk (from host).
    Spill {
        /// The tier it lands on.
        to: Tier,
    },
    /// Move an environment slice one tier up, `from` disk (to host) or host (to the device).
    Fetch {
        /// The tier it comes from.
        from: Tier,
    },
    /// Upload this device's share of an input core read once for the node (the split upload).
    UploadPart,
    /// Join the parts of a value from every device into a whole copy on this device.
    AllGather,
    /// Copy a sketch block from the device that made it to the device that runs the QR.
    Gather,
    /// Copy this device's rows of a basis from the device that ran the QR.
    Scatter,
    /// Hand a value this rank made to the network lane, for the ranks whose tasks read it
    /// (runs with several ranks only; see `ranks` in srcflow-sched).
    Send,
    /// Take a value another rank made from the network lane (several ranks only).
    Receive,
    /// Keep a finished value in the run's checkpoint directory (runs with a checkpoint only).
    Checkpoint,
    /// Read a value back from the checkpoint a resumed run started from, in place of the
    /// tasks that made it.
    Restore,
}

impl Op {
    /// Everything the layers above need to know about this op (inlined, so that a caller
    /// asking for one field on the scheduler's path gets just that field).
    #[inline]
    pub fn profile(&self) -> Profile {
        use DeviceMemory::*;
        match *self {
            Op::ReadSite { .. } => Profile {
                device_memory: OutputsUnlessCoresOnHost,
                read_ahead: Some(ReadAhead::InputSteps),
                supplies: Supply::InputCore,
                ..Profile::data("read", Lane::Io)
            },
            Op::Env => Profile::kernel("env", Some(Pass::LeftToRight)),
            Op::Fold => Profile {
                unfolds: true,
                ..Profile::kernel("fold", Some(Pass::RightToLeft))
            },
            Op::Sketch => Profile::kernel("sketch", Some(Pass::RightToLeft)),
            Op::Qr => Profile::kernel("qr", Some(Pass::RightToLeft)),
            Op::Project => Profile::kernel("project", Some(Pass::RightToLeft)),
            Op::First => Profile::kernel("first", Some(Pass::RightToLeft)),
            Op::Exact => Profile::kernel("exact", Some(Pass::RightToLeft)),
            Op::WriteSite => Profile {
                read_ahead: Some(ReadAhead::InputSteps),
                ..Profile::data("write", Lane::Io)
            },
            Op::StoreDraft => Profile {
                read_ahead: Some(ReadAhead::InputSteps),
                ..Profile::data("store-draft", Lane::Io)
            },
            Op::LoadDraft => Profile {
                device_memory: Outputs,
                read_ahead: Some(ReadAhead::InputSteps),
                ..Profile::data("load-draft", Lane::Io)
            },
            Op::Round => Profile::kernel("round", None),
            Op::Spill { to: Tier::Disk } => Profile {
                spills_to: Some(Tier::Disk),
                ..Profile::data("spill-disk", Lane::DiskWrite)
            },
            Op::Spill { to } => Profile {
                spills_to: Some(to),
                ..Profile::data("spill-host", Lane::Download)
            },
            Op::Fetch { from: Tier::Disk } => Profile {
                fetches_from: Some(Tier::Disk),
                supplies: Supply::StoredValue,
                ..Profile::data("fetch-disk", Lane::DiskRead)
            },
            Op::Fetch { from } => Profile {
                device_memory: MovedBytes,
                fetches_from: Some(from),
                supplies: Supply::StoredValue,
                ..Profile::data("fetch-host", Lane::Upload)
            },
            Op::UploadPart => Profile {
                device_memory: Outputs,
                read_ahead: Some(ReadAhead::UploadSteps),
                ..Profile::data("upload-part", Lane::Upload)
            },
            Op::AllGather => Profile {
                device_memory: Outputs,
                ..Profile::data("all-gather", Lane::Collective)
            },
            Op::Gather => Profile {
                device_memory: Outputs,
                ..Profile::data("gather", Lane::Collective)
            },
            Op::Scatter => Profile {
                device_memory: Outputs,
                ..Profile::data("scatter", Lane::Collective)
            },
            Op::Send => Profile {
                crosses_ranks: true,
                ..Profile::data("send", Lane::Download)
            },
            Op::Receive => Profile {
                crosses_ranks: true,
                ..Profile::data("receive", Lane::Network)
            },
            Op::Checkpoint => Profile {
                checkpoint: true,
                ..Profile::data("checkpoint", Lane::DiskWrite)
            },
            Op::Restore => Profile {
                device_memory: OutputsOnDevice,
                checkpoint: true,
                supplies: Supply::StoredValue,
                ..Profile::data("restore", Lane::DiskRead)
            },
        }
    }

    /// The lane an operation runs on.
    #[inline]
    pub fn lane(&self) -> Lane {
        self.profile().lane
    }

    /// A short name for reports and traces.
    #[inline]
    pub fn name(&self) -> &'static str {
        self.profile().name
    }
}

/// What the layers above need to know about one op (see [`Op::profile`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// A short name for reports and traces.
    pub name: &'static str,
    /// The lane it runs on.
    pub lane: Lane,
    /// What it allocates on its device when it starts.
    pub device_memory: DeviceMemory,
    /// The pass whose kernel it is, for the time a report gives each pass (`None` for the
    /// rounding sweep and for ops that move values).
    pub kernel_pass: Option<Pass>,
    /// The tier an environment it spills lands on.
    pub spills_to: Option<Tier>,
    /// The tier an environment it fetches comes from.
    pub fetches_from: Option<Tier>,
    /// True when it writes values to the run's checkpoint or reads them back.
    pub checkpoint: bool,
    /// Which limit keeps it from running ahead of compute, for ops that read or write the
    /// problem's cores.
    pub read_ahead: Option<ReadAhead>,
    /// What a compute task that waits for it is waiting for.
    pub supplies: Supply,
    /// True when the governor may rewrite it into unfolded readers once memory refuses it.
    pub unfolds: bool,
    /// True when it hands a value from one rank to another.
    pub crosses_ranks: bool,
}

impl Profile {
    /// A kernel on the compute lane, of `pass` (see [`Profile::kernel_pass`]).
    const fn kernel(name: &'static str, pass: Option<Pass>) -> Self {
        Profile {
            device_memory: DeviceMemory::OutputsAndWorkspace,
            kernel_pass: pass,
            ..Profile::data(name, Lane::Compute)
        }
    }

    /// An op that moves values on `lane`, taking no device memory of its own.
    const fn data(name: &'static str, lane: Lane) -> Self {
        Profile {
            name,
            lane,
            device_memory: DeviceMemory::Nothing,
            kernel_pass: None,
            spills_to: None,
            fetches_from: None,
            checkpoint: false,
            read_ahead: None,
            supplies: Supply::Other,
            unfolds: false,
            crosses_ranks: false,
        }
    }
}

/// What an op allocates on its device when it starts (the scheduler's `DeviceRequest`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceMemory {
    /// Nothing: it works on the host, on disk, or on blocks already allocated.
    Nothing,
    /// Its outputs.
    Outputs,
    /// Its outputs, unless the graph keeps input cores on the host (several devices).
    OutputsUnlessCoresOnHost,
    /// Its outputs when they land on the device.
    OutputsOnDevice,
    /// The bytes it moves (a fetch from host memory to the device).
    MovedBytes,
    /// Its outputs and its kernel's workspace (for a half-batch node, its slice's).
    OutputsAndWorkspace,
}

/// The scheduler's limit on how far ahead of compute an op may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadAhead {
    /// The read-ahead steps of the input lane.
    InputSteps,
    /// The upload-ahead steps of a core's split upload.
    UploadSteps,
}

/// What an op's output is to the compute tasks that wait for it (the cause of their stalls).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Supply {
    /// A value brought back from a lower tier or the checkpoint.
    StoredValue,
    /// An input core read from the problem.
    InputCore,
    /// Anything else.
    Other,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One op of each kind the graph makes.
    fn every_op() -> Vec<Op> {
        let mut ops = vec![
            Op::Env,
            Op::Fold,
            Op::Sketch,
            Op::Qr,
            Op::Project,
            Op::First,
        ];
        ops.extend([
            Op::Exact,
            Op::WriteSite,
            Op::StoreDraft,
            Op::LoadDraft,
            Op::Round,
        ]);
        ops.extend([
            Op::UploadPart,
            Op::AllGather,
            Op::Gather,
            Op::Scatter,
            Op::Send,
        ]);
        ops.extend([Op::Receive, Op::Checkpoint, Op::Restore]);
        for pass in Pass::BOTH {
            ops.push(Op::ReadSite { layer: 0, pass });
        }
        for tier in [Tier::Host, Tier::Disk] {
            ops.extend([Op::Spill { to: tier }, Op::Fetch { from: tier }]);
        }
        ops
    }

    #[test]
    fn reports_and_traces_tell_every_op_apart_by_name() {
        let mut names: Vec<&str> = every_op().iter().map(Op::name).collect();
        names.dedup(); // the two reads share "read"
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
    }

    #[test]
    fn kernels_and_only_kernels_run_on_compute_with_a_workspace() {
        for op in every_op() {
            let profile = op.profile();
            let kernel = profile.device_memory == DeviceMemory::OutputsAndWorkspace;
            assert_eq!(kernel, profile.lane == Lane::Compute, "{op:?}");
            assert!(profile.kernel_pass.is_none() || kernel, "{op:?}");
        }
    }

    #[test]
    fn tier_moves_run_on_the_lanes_between_those_tiers() {
        for op in every_op() {
            let profile = op.profile();
            match (profile.spills_to, profile.fetches_from) {
                (Some(Tier::Disk), None) => assert_eq!(profile.lane, Lane::DiskWrite),
                (Some(_), None) => assert_eq!(profile.lane, Lane::Download),
                (None, Some(Tier::Disk)) => assert_eq!(profile.lane, Lane::DiskRead),
                (None, Some(_)) => assert_eq!(profile.lane, Lane::Upload),
                (None, None) => {}
                (Some(_), Some(_)) => panic!("{op:?} both spills and fetches"),
            }
        }
    }
}
