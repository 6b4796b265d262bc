//! `MachineModel`: how fast a machine computes each kernel and moves bytes on each lane, read
//! from JSON (`graphs/*.json`): compute tasks timed from their shapes by a [`ComputeModel`] of
//! the device's thread count where the model has one, else by one rate per kernel.

use super::compute_model::ComputeModel;
use crate::ranks::Exchange;
use crate::sched::TaskTimer;
use crate::store::{DiskIo, DiskRequests};
use serde::{Deserialize, Serialize};
use srcflow_graph::graph::{DataId, Lane, Op, Shared, Task};
use srcflow_tensor::error::{Error, Result};
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

/// The `bytes_per_s` entry for the io lane's output writes (its reads take `io`'s rate).
pub const IO_WRITE: &str = "io-write";

/// The `bytes_per_s` entry for one core copying host memory. A value that crosses ranks is
/// copied on the host as the MPI transport copies it: packed into the transport's buffer once
/// by the rank that sends it, and decoded out of it by each rank that receives it, except,
/// where devices compute in host memory, the row blocks of an S that every rank reading it
/// receives whole, straight into that S (`ranks::Exchange::in_place`). The model charges the
/// pack to the send task (on the making device's download lane; the transport packs on the
/// sending rank's network lane) and each decode to its receive task. Without the entry, those
/// copies are free.
pub const HOST_COPY: &str = "host-copy";

/// Kernels a model must rate.
const RATED_KERNELS: [&str; 6] = ["env", "sketch", "qr", "project", "first", "exact"];

/// A machine as the simulator sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineModel {
    /// What the model describes.
    pub name: String,
    /// GFLOP/s of each kernel: env, sketch, qr, project, first, exact; optionally fold (else
    /// at the sketch's rate) and round (else at the QR's).
    pub gflops: BTreeMap<String, f64>,
    /// Bytes per second of each lane that moves data: io (input and output cores), download,
    /// upload, collective (device to device), disk-write, disk-read; optionally network
    /// (between nodes), io-write ([`IO_WRITE`]) and host-copy ([`HOST_COPY`]).
    pub bytes_per_s: BTreeMap<String, f64>,
    /// Seconds every message between nodes costs beyond its bytes, which go at
    /// `bytes_per_s.network` (simulations of several ranks only).
    #[serde(default)]
    pub network_latency_s: f64,
    /// The scratch filesystem as requests see it (latency, bandwidth per request and in
    /// all), where measured (`srcflow calibrate`) or emulated (`--disk-emulate`): a disk
    /// transfer then takes as long as its requests take with the run's depth, and no less
    /// than its bytes at the disk lane's rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_requests: Option<DiskRequests>,
    /// Seconds every task costs beyond its work (launch, bookkeeping).
    #[serde(default)]
    pub task_overhead_s: f64,
    /// Seconds a kernel's task costs beyond its flops at the kernel's rate, by kernel (small
    /// GEMMs run below the rate that large ones reach).
    #[serde(default)]
    pub kernel_overhead_s: BTreeMap<String, f64>,
    /// Compute times from task shapes, one model per kernel thread count of a device (written
    /// by `srcflow calibrate`); a model without them times compute by `gflops`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compute: Vec<ComputeModel>,
    /// True when the rates are assumed rather than measured on the machine (a GPU no one has
    /// calibrated yet): `simulate` says so.
    #[serde(default)]
    pub assumed: bool,
    /// True for a device with memory of its own (a GPU): its budget is apart from the host's.
    /// False (the default) when the device is host memory, as on the CPU backend.
    #[serde(default)]
    pub device_has_own_memory: bool,
    /// Where the numbers come from and what the model leaves out.
    #[serde(default)]
    pub notes: Vec<String>,
}

impl MachineModel {
    /// Reads and checks a model; errors name the file and the field.
    pub fn read(path: &Path) -> Result<Self> {
        let text =
            srcflow_tensor::files::read_regular_to_string(path).map_err(|e| Error::io(path, e))?;
        let model: MachineModel = serde_json::from_str(&text).map_err(|e| Error::Manifest {
            path: path.to_path_buf(),
            message: format!("not a machine model: {e}"),
        })?;
        model.check().map_err(|message| Error::Manifest {
            path: path.to_path_buf(),
            message,
        })?;
        Ok(model)
    }

    /// Fails unless every kernel and lane has a positive, finite rate (a model built in code
    /// rather than read is checked before it is used).
    pub fn validate(&self) -> Result<()> {
        self.check()
            .map_err(|message| Error::Invalid(format!("machine model '{}': {message}", self.name)))
    }

    /// Writes the model as pretty JSON.
    pub fn write(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self).expect("a model serialises");
        srcflow_tensor::files::durable::write_whole(path, text.as_bytes())
    }

    /// Every kernel and lane rated, with positive, finite rates.
    fn check(&self) -> std::result::Result<(), String> {
        let lanes = Lane::ALL.iter().filter(|&&l| l.modelled());
        let wanted = RATED_KERNELS
            .iter()
            .map(|k| ("gflops", &self.gflops, *k))
            .chain(lanes.map(|l| ("bytes_per_s", &self.bytes_per_s, l.name())));
        for (field, rates, key) in wanted {
            match rates.get(key) {
                Some(&r) if r.is_finite() && r > 0.0 => {}
                Some(r) => return Err(format!("{field}.{key} must be positive, found {r}")),
                None => return Err(format!("{field}.{key} is missing")),
            }
        }
        let moving = Lane::ALL.iter().filter(|&&l| l != Lane::Compute);
        for (key, &rate) in &self.bytes_per_s {
            let extra = matches!(key.as_str(), IO_WRITE | HOST_COPY);
            if !(moving.clone().any(|l| l.name() == key) || extra) {
                return Err(format!(
                    "bytes_per_s.{key} is not a lane (nor {IO_WRITE} or {HOST_COPY})"
                ));
            }
            if !(rate.is_finite() && rate > 0.0) {
                return Err(format!("bytes_per_s.{key} must be positive, found {rate}"));
            }
        }
        if !(self.network_latency_s.is_finite() && self.network_latency_s >= 0.0) {
            return Err(format!(
                "network_latency_s must be 0 or more, found {}",
                self.network_latency_s
            ));
        }
        if !(self.task_overhead_s.is_finite() && self.task_overhead_s >= 0.0) {
            return Err(format!(
                "task_overhead_s must be 0 or more, found {}",
                self.task_overhead_s
            ));
        }
        for (i, model) in self.compute.iter().enumerate() {
            model.check().map_err(|m| format!("compute[{i}].{m}"))?;
        }
        if let Some(requests) = &self.disk_requests {
            requests
                .check()
                .map_err(|e| format!("disk_requests: {e}"))?;
        }
        Ok(())
    }

    /// Fails unless the model rates the network between nodes (`bytes_per_s.network`), which
    /// a simulation of several ranks needs.
    pub fn check_network(&self) -> Result<()> {
        match self.bytes_per_s.get(Lane::Network.name()) {
            Some(_) => Ok(()),
            None => Err(Error::Invalid(format!(
                "machine model '{}' has no bytes_per_s.network, which a simulation of several \
                 ranks needs (and network_latency_s, the seconds each message costs)",
                self.name
            ))),
        }
    }

    /// The same machine with the disk of a run that sets `disk`: each disk lane no faster
    /// than its cap, and the filesystem emulated, if it is.
    pub fn with_disk_io(mut self, disk: &DiskIo) -> Self {
        let caps = [
            (Lane::DiskRead, disk.rates.read),
            (Lane::DiskWrite, disk.rates.write),
        ];
        for (lane, cap) in caps {
            if let (Some(r), Some(cap)) = (self.bytes_per_s.get_mut(lane.name()), cap) {
                *r = r.min(cap.0);
            }
        }
        if let Some(requests) = disk.emulate {
            self.disk_requests = Some(requests);
        }
        self
    }
}

impl MachineModel {
    /// Bytes per second of `task`'s lane; output writes at [`IO_WRITE`] where the model has it.
    fn lane_rate(&self, task: &Task) -> f64 {
        let writes = matches!(task.op, Op::WriteSite | Op::StoreDraft);
        match self.bytes_per_s.get(IO_WRITE) {
            Some(&rate) if writes => rate,
            _ => self.bytes_per_s[task.lane.name()],
        }
    }

    /// Seconds one copy of `bytes` of host memory takes ([`HOST_COPY`]; none when unrated).
    fn host_copy_s(&self, bytes: u64) -> f64 {
        self.bytes_per_s
            .get(HOST_COPY)
            .map_or(0.0, |&rate| bytes as f64 / rate)
    }

    /// GFLOP/s of `kernel`. When the model does not rate it, the fold (contractions like the
    /// sketch's) takes the sketch's rate and the rounding step (a factorisation) the QR's.
    fn rate(&self, kernel: &str) -> f64 {
        match (self.gflops.get(kernel), kernel) {
            (Some(&rate), _) => rate,
            (None, "fold") => self.gflops["sketch"],
            (None, _) => self.gflops["qr"],
        }
    }
}

impl MachineModel {
    /// The compute model for a device with `threads` kernel threads: the one fitted for that
    /// count, else the one of the nearest count (`None` when the model has none).
    pub fn compute_for(&self, threads: usize) -> Option<&ComputeModel> {
        self.compute
            .iter()
            .min_by_key(|c| c.threads.abs_diff(threads))
    }

    /// A timer of tasks on this machine for devices with `threads_per_device` kernel threads.
    pub fn timer(&self, threads_per_device: &[usize]) -> ModelTimer<'_> {
        let most = threads_per_device.iter().copied().max().unwrap_or(1);
        ModelTimer {
            machine: self,
            in_place: HashSet::new(),
            compute: threads_per_device
                .iter()
                .map(|&t| self.compute_for(t))
                .collect(),
            most_threads: self.compute_for(most),
            io_depth: crate::store::DEFAULT_IO_DEPTH,
        }
    }
}

/// Times tasks on a [`MachineModel`], each device's compute by the model of its thread count.
pub struct ModelTimer<'a> {
    machine: &'a MachineModel,
    /// The S values whose all-gathers the ranks receive in place
    /// (`ranks::Exchange::in_place`), where the devices compute in host memory.
    in_place: HashSet<Shared>,
    compute: Vec<Option<&'a ComputeModel>>,
    /// The compute model of the device with the most threads (for work off the compute lanes).
    most_threads: Option<&'a ComputeModel>,
    /// Requests in flight per disk transfer.
    io_depth: usize,
}

impl ModelTimer<'_> {
    /// This timer for a run with `depth` requests in flight per disk transfer.
    pub fn with_io_depth(self, depth: usize) -> Self {
        ModelTimer {
            io_depth: depth,
            ..self
        }
    }

    /// Seconds a task moving `bytes` takes on its lane: at the lane's rate, and for a disk
    /// lane of a machine that knows its requests, no less than they take.
    fn moving_seconds(&self, task: &Task) -> f64 {
        let at_rate = task.moved_bytes as f64 / self.machine.lane_rate(task);
        let disk = matches!(task.lane, Lane::DiskRead | Lane::DiskWrite);
        match self.machine.disk_requests.filter(|_| disk) {
            Some(requests) => {
                at_rate.max(requests.transfer_seconds(task.moved_bytes, self.io_depth))
            }
            None => at_rate,
        }
    }

    /// This timer for ranks that run `exchanges`: on a machine whose devices compute in host
    /// memory, the MPI transport receives the row blocks of an S that the ranks gather in
    /// place straight into the whole S, with no decode, and that S serves every device of the
    /// rank, which then all-gathers nothing. A GPU's ranks decode the blocks and all-gather
    /// the parts on each device.
    pub fn with_exchanges(mut self, exchanges: &[Exchange]) -> Self {
        if !self.machine.device_has_own_memory {
            let in_place = exchanges.iter().filter(|e| e.in_place.is_some());
            self.in_place = in_place.filter_map(Exchange::parts_of).collect();
        }
        self
    }

    /// True for a receive of a row block of an S gathered in place (the value it reads, in the
    /// simulator's graph of several ranks) and for the all-gathers of that S's replicas.
    fn lands_in_place(&self, task: &Task) -> bool {
        let of = match (task.op, task.inputs.first(), task.outputs.first()) {
            (Op::Receive, Some(DataId::Part { of, .. }), _) => of,
            (Op::AllGather, _, Some(DataId::Replica { of, .. })) => of,
            _ => return false,
        };
        self.in_place.contains(of)
    }
}

impl TaskTimer for ModelTimer<'_> {
    fn seconds(&self, task: &Task) -> f64 {
        let machine = self.machine;
        let work = match task.lane {
            Lane::Compute => {
                let kernel = task.op.name();
                match self.compute.get(task.device).copied().flatten() {
                    Some(model) => model.seconds(kernel, &task.work),
                    None => {
                        let fixed = machine.kernel_overhead_s.get(kernel).copied();
                        fixed.unwrap_or(0.0) + task.flops / (machine.rate(kernel) * 1e9)
                    }
                }
            }
            _ => {
                // Work on another lane (the left-edge trim of the write of site 0) runs on
                // the host's kernel threads: timed by the compute model of the device with the
                // most threads, or at the QR's rate.
                let work = match self.most_threads {
                    Some(model) => model.work_seconds(&task.work),
                    None => task.work.flops() / (machine.rate("qr") * 1e9),
                };
                // A message's costs beyond its bytes on the lane: the pack, in a send; the
                // latency and the decode, in a receive (a row block of S arrives in place).
                let message = match (task.op, task.lane) {
                    // Not run at all: the receive of the S made the replicas.
                    (Op::AllGather, _) if self.lands_in_place(task) => return 0.0,
                    (Op::Send, _) => machine.host_copy_s(task.moved_bytes),
                    (_, Lane::Network) if self.lands_in_place(task) => machine.network_latency_s,
                    (_, Lane::Network) => {
                        machine.network_latency_s + machine.host_copy_s(task.moved_bytes)
                    }
                    _ => 0.0,
                };
                // A device that computes in host memory hands a value to send over as it is.
                let moved = match task.op {
                    Op::Send if !machine.device_has_own_memory => 0.0,
                    _ => self.moving_seconds(task),
                };
                work + message + moved
            }
        };
        machine.task_overhead_s + work
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use srcflow_tensor::Bandwidth;

    fn model() -> MachineModel {
        let gflops = RATED_KERNELS
            .iter()
            .map(|k| (k.to_string(), 10.0))
            .collect();
        let bytes_per_s = Lane::ALL
            .iter()
            .filter(|&&l| l != Lane::Compute)
            .map(|l| (l.name().to_string(), 1e9))
            .collect();
        MachineModel {
            name: "test".into(),
            gflops,
            bytes_per_s,
            network_latency_s: 0.0,
            task_overhead_s: 0.0,
            kernel_overhead_s: BTreeMap::new(),
            compute: vec![],
            disk_requests: None,
            assumed: false,
            device_has_own_memory: false,
            notes: vec![],
        }
    }

    #[test]
    fn a_model_round_trips_and_missing_rates_are_named() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("m.json");
        model().write(&path).unwrap();
        assert_eq!(MachineModel::read(&path).unwrap(), model());
        let mut broken = model();
        broken.gflops.remove("qr");
        broken.write(&path).unwrap();
        let err = MachineModel::read(&path).unwrap_err().to_string();
        assert!(err.contains("gflops.qr") && err.contains("m.json"), "{err}");
        std::fs::write(&path, "{\"name\": 1}").unwrap();
        assert!(MachineModel::read(&path).is_err());
    }

    #[test]
    fn a_broken_compute_model_is_refused_by_name() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("m.json");
        let observed = super::super::Observation {
            kernel: "env".into(),
            work: srcflow_tensor::tensor::Work::gemm(1, 8, 8, 8, 0, false),
            seconds: 1e-3,
        };
        let fitted = ComputeModel::fitted(1, &[observed], &[1e-4], "test");
        let mut broken = model();
        broken.compute = vec![fitted.clone()];
        broken.write(&path).unwrap();
        assert!(MachineModel::read(&path).is_ok());
        broken.compute[0].fit.moment.pop();
        broken.write(&path).unwrap();
        let err = MachineModel::read(&path).unwrap_err().to_string();
        assert!(
            err.contains("compute[0].fit") && err.contains("m.json"),
            "{err}"
        );
        broken.compute[0] = ComputeModel {
            dispatch_s: -1.0,
            ..fitted
        };
        broken.write(&path).unwrap();
        let err = MachineModel::read(&path).unwrap_err().to_string();
        assert!(err.contains("compute[0].dispatch_s"), "{err}");
    }

    #[test]
    fn writes_take_the_io_write_rate_and_the_trim_at_the_compute_rates() {
        use srcflow_graph::gen::{generate, ProblemKind, ProblemSpec};
        use srcflow_graph::graph::{GraphOptions, SweepGraph};
        let spec = ProblemSpec {
            sites: 10,
            bond: 16,
            mpo_bond: 2,
            ..ProblemSpec::default()
        };
        let stack = generate(ProblemKind::Random, &spec).unwrap().shape();
        let graph = SweepGraph::build(&stack, &GraphOptions::new(16)).unwrap();
        let task = |wanted: &dyn Fn(&Task) -> bool| {
            let mut tasks = graph.tasks();
            tasks.find(|t| wanted(t)).unwrap().clone()
        };
        let read = task(&|t| matches!(t.op, Op::ReadSite { .. }));
        let write = task(&|t| t.op == Op::WriteSite && t.site == 3);
        let last_write = task(&|t| t.op == Op::WriteSite && t.site == 0);
        let observed = super::super::Observation {
            kernel: "env".into(),
            work: srcflow_tensor::tensor::Work::gemm(1, 8, 8, 8, 0, false),
            seconds: 1e-3,
        };
        let bytes = |t: &Task, rate: f64| t.moved_bytes as f64 / rate;
        let mut machine = model();
        // Without compute models, the trim's flops go at the QR's rate.
        let at_qr_rate = last_write.work.flops() / 10e9;
        let timer = machine.timer(&[1]);
        assert_eq!(timer.seconds(&write), bytes(&write, 1e9));
        assert_eq!(
            timer.seconds(&last_write),
            at_qr_rate + bytes(&last_write, 1e9)
        );
        // Devices of 1 and 2 threads whose models differ: the trim takes the 2-thread rates.
        let fitted = ComputeModel::fitted(1, &[observed], &[0.0], "test");
        let rated = |threads: usize, seconds: f64| {
            let features = srcflow_tensor::tensor::Work::FEATURES.iter();
            let seconds_per = features.map(|f| (f.to_string(), seconds)).collect();
            let fitted = fitted.clone();
            ComputeModel {
                threads,
                seconds_per,
                ..fitted
            }
        };
        machine.compute = vec![rated(2, 1e-12), rated(1, 3e-12)];
        machine.bytes_per_s.insert(IO_WRITE.into(), 2e8);
        let timer = machine.timer(&[1, 2]);
        assert_eq!(timer.seconds(&read), bytes(&read, 1e9));
        assert_eq!(timer.seconds(&write), bytes(&write, 2e8));
        let trim = machine.compute[0].work_seconds(&last_write.work);
        assert!(trim > 0.0 && trim < machine.compute[1].work_seconds(&last_write.work));
        assert_eq!(timer.seconds(&last_write), trim + bytes(&last_write, 2e8));
        for key in ["io-read", "compute"] {
            let mut unknown = model();
            unknown.bytes_per_s.insert(key.into(), 1e9);
            let err = unknown.check().unwrap_err();
            assert!(err.contains(&format!("bytes_per_s.{key}")), "{err}");
        }
    }

    #[test]
    fn a_disk_cap_slows_only_the_disk_lanes() {
        let rates = crate::store::DiskRates {
            read: Some(Bandwidth(1e6)),
            write: None,
        };
        let capped = model().with_disk_io(&DiskIo {
            rates,
            ..DiskIo::default()
        });
        assert_eq!(capped.bytes_per_s["disk-read"], 1e6);
        assert_eq!(
            capped.bytes_per_s["disk-write"],
            model().bytes_per_s["disk-write"]
        );
        assert_eq!(capped.bytes_per_s["upload"], 1e9);
    }

    #[test]
    fn an_emulated_disk_times_disk_transfers_by_their_requests_at_the_depth() {
        use srcflow_graph::gen::{generate, ProblemKind, ProblemSpec};
        use srcflow_graph::graph::{GraphOptions, SweepGraph};
        let disk = DiskIo {
            emulate: Some("20ms,10MiB/s,40MiB/s".parse().unwrap()),
            ..DiskIo::default()
        };
        let machine = model().with_disk_io(&disk);
        let stack = generate(ProblemKind::Random, &ProblemSpec::default())
            .unwrap()
            .shape();
        let graph = SweepGraph::build(&stack, &GraphOptions::new(16)).unwrap();
        let site_read = graph.tasks().find(|t| matches!(t.op, Op::ReadSite { .. }));
        let mut read = Task::clone(site_read.unwrap());
        read.lane = Lane::DiskRead;
        read.moved_bytes = 64 << 20;
        let at = |depth| machine.timer(&[1]).with_io_depth(depth).seconds(&read);
        assert!((at(1) - 8.0 * 0.82).abs() < 1e-9, "{}", at(1));
        assert!((at(4) - 2.0 * 0.82).abs() < 1e-9, "{}", at(4));
        let mut upload = read.clone();
        upload.lane = Lane::Upload;
        assert_eq!(
            machine.timer(&[1]).seconds(&upload),
            (64 << 20) as f64 / 1e9
        );
    }
}
