//! `calibrate --from-trace`: refines the compute models of a machine model with the measured
//! compute tasks of real runs' traces (each slice holds its kernel, its work and its time).

use serde_json::Value;
use srcflow::error::{Error, Result};
use srcflow::sim::{ComputeModel, MachineModel, Observation};
use srcflow::tensor::Work;
use std::path::Path;

/// `model` refined by the compute tasks of the traces at `paths`.
pub fn refine(mut model: MachineModel, paths: &[impl AsRef<Path>]) -> Result<MachineModel> {
    for path in paths {
        let path = path.as_ref();
        let run = read_trace(path)?;
        let threads: std::collections::BTreeSet<usize> =
            run.threads_per_device.iter().copied().collect();
        for t in threads {
            let tasks: Vec<Observation> = run
                .tasks
                .iter()
                .filter(|(device, _)| run.threads_per_device.get(*device) == Some(&t))
                .map(|(_, o)| o.clone())
                .collect();
            let source = format!("trace {}", path.display());
            let refined = match model.compute.iter().position(|c| c.threads == t) {
                Some(i) => model.compute.remove(i).refined(&tasks, &source),
                None => ComputeModel::fitted(t, &tasks, &source),
            };
            model.compute.push(refined);
        }
    }
    model.compute.sort_by_key(|c| std::cmp::Reverse(c.threads));
    Ok(model)
}

/// What a trace holds for refining: each device's threads and the compute tasks.
struct TracedRun {
    /// Kernel threads of each device.
    threads_per_device: Vec<usize>,
    /// Each compute task with the device it ran on.
    tasks: Vec<(usize, Observation)>,
}

/// The devices' threads and the compute tasks of the trace at `path`.
fn read_trace(path: &Path) -> Result<TracedRun> {
    let invalid = |message: String| Error::Manifest {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let trace: Value =
        serde_json::from_str(&text).map_err(|e| invalid(format!("not a JSON trace: {e}")))?;
    let run = &trace["otherData"]["srcflow"];
    if run["simulated"].as_bool() == Some(true) {
        return Err(invalid(
            "the trace of a simulated run: its times come from a model, not a measurement".into(),
        ));
    }
    let threads: Vec<usize> = run["threads_per_device"]
        .as_array()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| invalid("no otherData.srcflow.threads_per_device: not a trace of `srcflow run` that records task shapes".into()))?
        .iter()
        .map(|t| t.as_u64().map(|t| t as usize))
        .collect::<Option<_>>()
        .ok_or_else(|| invalid("otherData.srcflow.threads_per_device holds a non-count".into()))?;
    let slices = trace["traceEvents"].as_array().into_iter().flatten();
    let tasks: Vec<(usize, Observation)> = slices
        .filter(|e| e["ph"] == "X" && !e["args"]["work"].is_null())
        .map(|e| {
            observation(e).ok_or_else(|| {
                invalid(format!(
                    "a compute slice without kernel, device, work or duration: {e}"
                ))
            })
        })
        .collect::<Result<_>>()?;
    if tasks.is_empty() {
        return Err(invalid(
            "no compute task with its work: nothing to refine with".into(),
        ));
    }
    Ok(TracedRun {
        threads_per_device: threads,
        tasks,
    })
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
