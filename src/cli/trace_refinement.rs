//! The measured tasks of a run's trace, and `calibrate --from-trace`: compute models refined
//! with them (each compute slice holds its kernel, device, work, time and dispatch gap).

use serde_json::Value;
use srcflow::sim::{ComputeModel, MachineModel, Observation, KERNELS};
use srcflow::tensor::Work;
use srcflow::{Error, Result};
use std::collections::BTreeSet;
use std::path::Path;

/// What a trace of a real run holds for a performance model.
pub struct TracedRun {
    /// Kernel threads of each device.
    pub threads_per_device: Vec<usize>,
    /// Each compute task with the device it ran on.
    pub tasks: Vec<(usize, Observation)>,
    /// Each dispatch gap (seconds) with its device.
    pub gaps: Vec<(usize, f64)>,
    /// Bytes and seconds of its input reads.
    pub reads: (f64, f64),
    /// Bytes and seconds of its output writes (those that did no other work).
    pub writes: (f64, f64),
}

/// `model` refined by the compute tasks of the traces at `paths`.
pub fn refine(mut model: MachineModel, paths: &[impl AsRef<Path>]) -> Result<MachineModel> {
    for path in paths {
        let path = path.as_ref();
        let run = read_run(path)?;
        add_runs(
            &mut model.compute,
            &[run],
            &format!("trace {}", path.display()),
        );
    }
    Ok(model)
}

/// Adds the tasks of `runs`, from `source`, to the compute model of each device's thread
/// count in `compute` (a new one for a count it lacks); the most threads first.
pub fn add_runs(compute: &mut Vec<ComputeModel>, runs: &[TracedRun], source: &str) {
    let threads: BTreeSet<usize> = runs
        .iter()
        .flat_map(|r| r.threads_per_device.iter().copied())
        .collect();
    for t in threads {
        let on = |run: &TracedRun, device: usize| run.threads_per_device.get(device) == Some(&t);
        let tasks: Vec<Observation> = runs
            .iter()
            .flat_map(|r| {
                r.tasks
                    .iter()
                    .filter(|(d, _)| on(r, *d))
                    .map(|(_, o)| o.clone())
            })
            .collect();
        let gaps: Vec<f64> = runs
            .iter()
            .flat_map(|r| r.gaps.iter().filter(|(d, _)| on(r, *d)).map(|&(_, g)| g))
            .collect();
        if tasks.is_empty() {
            continue; // devices of this thread count ran no compute task: nothing to fit
        }
        let refined = match compute.iter().position(|c| c.threads == t) {
            Some(i) => compute.remove(i).refined(&tasks, &gaps, source),
            None => ComputeModel::fitted(t, &tasks, &gaps, source),
        };
        compute.push(refined);
    }
    compute.sort_by_key(|c| std::cmp::Reverse(c.threads));
}

/// The measured tasks of the trace at `path`; an error naming the file unless it is the trace
/// of a real run with task shapes.
pub fn read_run(path: &Path) -> Result<TracedRun> {
    let invalid = |message: String| Error::Manifest {
        path: path.to_path_buf(),
        message,
    };
    let trace = srcflow::trace::read_trace(path)?;
    let run = &trace["otherData"]["srcflow"];
    if run["simulated"].as_bool() == Some(true) {
        return Err(invalid(
            "the trace of a simulated run: its times come from a model, not a measurement".into(),
        ));
    }
    let threads_per_device = thread_counts(run).ok_or_else(|| {
        invalid("no otherData.srcflow.threads_per_device: not a trace of `srcflow run` that records task shapes".into())
    })?;
    let slices: Vec<&Value> = trace["traceEvents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["ph"] == "X")
        .collect();
    let compute = slices.iter().filter(|e| {
        let kernel = e["cat"].as_str().unwrap_or_default();
        KERNELS.contains(&kernel) && !e["args"]["work"].is_null()
    });
    let tasks: Vec<(usize, Observation)> = compute
        .clone()
        .map(|e| {
            observation(e).ok_or_else(|| {
                invalid(format!(
                    "a compute slice without kernel, device, duration or work as this srcflow counts it (a trace of an older version?): {e}"
                ))
            })
        })
        .collect::<Result<_>>()?;
    let devices = threads_per_device.len();
    if let Some((device, _)) = tasks.iter().find(|(device, _)| *device >= devices) {
        return Err(invalid(format!(
            "a compute slice on device {device}, but otherData.srcflow.threads_per_device lists {devices} device(s)"
        )));
    }
    if tasks.is_empty() {
        return Err(invalid(
            "no compute task with its work: nothing to fit".into(),
        ));
    }
    let gaps = compute
        .filter_map(|e| {
            Some((
                e["args"]["device"].as_u64()? as usize,
                e["args"]["dispatch_s"].as_f64()?,
            ))
        })
        .collect();
    let moved = |cat: &str| {
        let plain = slices
            .iter()
            .filter(|e| e["cat"] == cat && e["args"]["work"].is_null());
        plain.fold((0.0, 0.0), |(b, s), e| {
            let bytes = e["args"]["bytes"].as_f64().unwrap_or(0.0);
            (b + bytes, s + e["dur"].as_f64().unwrap_or(0.0) / 1e6)
        })
    };
    Ok(TracedRun {
        threads_per_device,
        tasks,
        gaps,
        reads: moved("read"),
        writes: moved("write"),
    })
}

/// The threads of each device a trace's run records (`None` when missing or empty).
fn thread_counts(run: &Value) -> Option<Vec<usize>> {
    let counts = run["threads_per_device"]
        .as_array()
        .filter(|t| !t.is_empty())?;
    counts
        .iter()
        .map(|t| t.as_u64().map(|t| t as usize))
        .collect()
}

/// The device and observation of one compute slice.
fn observation(slice: &Value) -> Option<(usize, Observation)> {
    let args = &slice["args"];
    let work: Work = serde_json::from_value(args["work"].clone()).ok()?;
    let device = args["device"].as_u64()? as usize;
    let observation = Observation {
        kernel: slice["cat"].as_str()?.to_string(),
        work,
        seconds: slice["dur"].as_f64()? / 1e6,
    };
    Some((device, observation))
}
