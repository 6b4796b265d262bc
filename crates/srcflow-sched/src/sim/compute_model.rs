//! `ComputeModel`: how long a compute task takes on one device with a given number of kernel
//! threads, from the shapes of its steps ([`Work`]): a fixed cost per task of each kernel,
//! plus seconds per GEMM call, per GEMM flop in each arithmetic-intensity class (a piecewise
//! roofline), per byte of GEMM results, per flop of GEMMs reading their left operand
//! transposed, per byte permuted and per factorization flop in each intensity class. Fitted by
//! non-negative least squares to measured tasks (`srcflow calibrate`), and refined by the
//! tasks of real runs' traces (`srcflow calibrate --from-trace`).

use super::least_squares::NormalEquations;
use serde::{Deserialize, Serialize};
use srcflow_tensor::tensor::Work;
use std::collections::BTreeMap;

/// The kernels a model gives a fixed cost per task.
pub const KERNELS: [&str; 8] = [
    "env", "fold", "sketch", "qr", "project", "first", "round", "exact",
];

/// How far beyond the fitted tasks' range (a factor either way) a task's flops or GEMM
/// intensity may lie and still count as seen.
const REACH: f64 = 2.0;

/// One measured compute task.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    /// Its kernel (`env`, `sketch`, …).
    pub kernel: String,
    /// Its work.
    pub work: Work,
    /// Seconds it took.
    pub seconds: f64,
}

/// The range of the tasks of one kernel a model was fitted on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeenShapes {
    /// How many tasks.
    pub tasks: usize,
    /// Smallest and largest flops of a task.
    pub flops: [f64; 2],
    /// Smallest and largest GEMM intensity of a task (flops per byte; 0 without GEMMs).
    pub intensity: [f64; 2],
}

/// Compute times on a device with `threads` kernel threads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComputeModel {
    /// Kernel threads of the device it describes.
    pub threads: usize,
    /// Seconds per unit of each kind of work, by the names of [`Work::FEATURES`].
    pub seconds_per: BTreeMap<String, f64>,
    /// Seconds every task of a kernel costs beyond its work, by kernel.
    pub task_s: BTreeMap<String, f64>,
    /// Seconds the dispatcher takes between one compute task and the next ready one: the mean
    /// over the sources fitted (the calibration grid, each trace) of the median of the
    /// source's gaps, weighed by their number.
    #[serde(default)]
    pub dispatch_s: f64,
    /// Dispatch gaps behind `dispatch_s`.
    #[serde(default)]
    pub dispatch_gaps: usize,
    /// The tasks it was fitted on, by kernel.
    pub seen: BTreeMap<String, SeenShapes>,
    /// What it was fitted on: calibration problems and traces, with their task counts.
    pub fitted_on: Vec<String>,
    /// The fit as normal equations, which more tasks refine.
    pub fit: NormalEquations,
}

/// Whether a model has seen tasks like one it times.
#[derive(Clone, Debug, PartialEq)]
pub enum Reach {
    /// Within the fitted range of its kernel.
    Seen,
    /// Outside it, and why.
    Extrapolated(String),
}

impl ComputeModel {
    /// A model of a device with `threads` threads fitted to `observations` and the dispatch
    /// gaps `gaps` (seconds), which come from `source` (in words).
    pub fn fitted(
        threads: usize,
        observations: &[Observation],
        gaps: &[f64],
        source: &str,
    ) -> Self {
        let unknowns = Work::FEATURES.len() + KERNELS.len();
        let empty = ComputeModel {
            threads,
            seconds_per: BTreeMap::new(),
            task_s: BTreeMap::new(),
            dispatch_s: 0.0,
            dispatch_gaps: 0,
            seen: BTreeMap::new(),
            fitted_on: vec![],
            fit: NormalEquations::new(unknowns),
        };
        empty.refined(observations, gaps, source)
    }

    /// This model with `observations` and dispatch gaps `gaps` from `source` added to its fit.
    pub fn refined(mut self, observations: &[Observation], gaps: &[f64], source: &str) -> Self {
        if !gaps.is_empty() {
            let total = self.dispatch_gaps + gaps.len();
            let weighed = self.dispatch_s * self.dispatch_gaps as f64;
            self.dispatch_s = (weighed + median(gaps) * gaps.len() as f64) / total as f64;
            self.dispatch_gaps = total;
        }
        for o in observations {
            // Weights 1/t: each task's error counts relative to the square root of its time, so
            // thousands of small tasks and a few large ones both have a say.
            self.fit.add(
                &row(&o.kernel, &o.work),
                o.seconds,
                1.0 / o.seconds.max(1e-4),
            );
            self.see(o);
        }
        self.fitted_on
            .push(format!("{source} ({} tasks)", observations.len()));
        let coefficients = self.fit.solve_nonnegative();
        let (features, kernels) = coefficients.split_at(Work::FEATURES.len());
        self.seconds_per = named(&Work::FEATURES, features);
        self.task_s = named(&KERNELS, kernels);
        self
    }

    /// Seconds a task of `kernel` doing `work` takes, the dispatcher's time included.
    pub fn seconds(&self, kernel: &str, work: &Work) -> f64 {
        let fixed = self.task_s.get(kernel).copied().unwrap_or(0.0);
        self.dispatch_s + fixed + self.work_seconds(work)
    }

    /// Seconds of `work` alone, at the model's rates (no task's fixed cost).
    pub fn work_seconds(&self, work: &Work) -> f64 {
        let per_unit = Work::FEATURES
            .iter()
            .zip(work.features())
            .map(|(name, amount)| self.seconds_per.get(*name).copied().unwrap_or(0.0) * amount);
        per_unit.sum()
    }

    /// Whether tasks of `kernel` like `work` were among those fitted.
    pub fn reach(&self, kernel: &str, work: &Work) -> Reach {
        let Some(seen) = self.seen.get(kernel) else {
            return Reach::Extrapolated(format!("no {kernel} task was fitted"));
        };
        let outside = |what: &str, value: f64, [lo, hi]: [f64; 2]| {
            let inside = value >= lo / REACH && value <= hi * REACH;
            (!inside).then(|| format!("{what} {value:.3e} outside the fitted {lo:.3e}–{hi:.3e}"))
        };
        let intensity = work.gemm_intensity();
        match outside("flops", work.flops(), seen.flops)
            .or_else(|| outside("GEMM intensity", intensity, seen.intensity))
        {
            Some(why) => Reach::Extrapolated(why),
            None => Reach::Seen,
        }
    }

    /// Fails unless the model fits its shape: threads above 0, rates and costs finite and
    /// not negative, normal equations square over every feature and kernel (the message names
    /// the field).
    pub fn check(&self) -> Result<(), String> {
        if self.threads == 0 {
            return Err("threads must be 1 or more, found 0".into());
        }
        let costs = self
            .seconds_per
            .iter()
            .map(|(k, v)| (format!("seconds_per.{k}"), *v));
        let costs = costs
            .chain(self.task_s.iter().map(|(k, v)| (format!("task_s.{k}"), *v)))
            .chain([("dispatch_s".to_string(), self.dispatch_s)]);
        for (field, value) in costs {
            if !(value.is_finite() && value >= 0.0) {
                return Err(format!("{field} must be 0 or more, found {value}"));
            }
        }
        let unknowns = Work::FEATURES.len() + KERNELS.len();
        let fit = &self.fit;
        if fit.moment.len() != unknowns
            || fit.gram.iter().any(|row| row.len() != unknowns)
            || fit.gram.len() != unknowns
        {
            return Err(format!(
                "fit must have {unknowns} unknowns (gram {unknowns}×{unknowns}, moment {unknowns})"
            ));
        }
        Ok(())
    }

    /// Widens the seen range of `o`'s kernel to take it in.
    fn see(&mut self, o: &Observation) {
        let (flops, intensity) = (o.work.flops(), o.work.gemm_intensity());
        let seen = self.seen.entry(o.kernel.clone()).or_insert(SeenShapes {
            tasks: 0,
            flops: [flops, flops],
            intensity: [intensity, intensity],
        });
        seen.tasks += 1;
        seen.flops = [seen.flops[0].min(flops), seen.flops[1].max(flops)];
        seen.intensity = [
            seen.intensity[0].min(intensity),
            seen.intensity[1].max(intensity),
        ];
    }
}

/// The fit's row of a task of `kernel` doing `work`: its work features, then a one for its
/// kernel's fixed cost.
fn row(kernel: &str, work: &Work) -> Vec<f64> {
    let kernels = KERNELS.iter().map(|&k| if k == kernel { 1.0 } else { 0.0 });
    work.features().into_iter().chain(kernels).collect()
}

/// The median of `values` (not empty).
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

/// `values` by `names`.
fn named(names: &[&str], values: &[f64]) -> BTreeMap<String, f64> {
    names
        .iter()
        .zip(values)
        .map(|(n, &v)| (n.to_string(), v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine whose GEMMs run at 1e10 flops/s and whose tasks cost 1 ms each.
    fn observed(m: usize, kernel: &str) -> Observation {
        let work = Work::gemm(4, m, m, m, 0, false);
        Observation {
            kernel: kernel.into(),
            work,
            seconds: 1e-3 + work.flops() / 1e10,
        }
    }

    #[test]
    fn a_fit_recovers_the_rates_that_made_its_tasks_and_says_what_it_has_seen() {
        let tasks: Vec<Observation> = [64, 96, 128, 192, 256]
            .iter()
            .map(|&m| observed(m, "env"))
            .collect();
        let model = ComputeModel::fitted(2, &tasks, &[1e-4, 3e-4, 2e-4], "test sweeps");
        let big = observed(300, "env");
        let predicted = model.seconds("env", &big.work);
        assert!(
            ((predicted - 2e-4) / big.seconds - 1.0).abs() < 1e-6,
            "{predicted}"
        );
        assert_eq!(model.reach("env", &big.work), Reach::Seen);
        let huge = Work::gemm(4, 4096, 4096, 4096, 0, false);
        assert!(
            matches!(model.reach("env", &huge), Reach::Extrapolated(why) if why.contains("flops"))
        );
        assert!(
            matches!(model.reach("qr", &big.work), Reach::Extrapolated(why) if why.contains("no qr"))
        );
        assert_eq!(model.fitted_on, vec!["test sweeps (5 tasks)".to_string()]);
    }

    #[test]
    fn refining_with_slower_tasks_moves_the_prediction_towards_them() {
        let tasks: Vec<Observation> = [64, 128, 256].iter().map(|&m| observed(m, "env")).collect();
        let model = ComputeModel::fitted(1, &tasks, &[1e-4], "calibration");
        let slower: Vec<Observation> = tasks
            .iter()
            .map(|o| Observation {
                seconds: 2.0 * o.seconds,
                ..o.clone()
            })
            .collect();
        let refined = model
            .clone()
            .refined(&slower, &[4e-4, 4e-4, 4e-4], "trace run.json");
        let work = &tasks[2].work;
        let (before, after) = (model.seconds("env", work), refined.seconds("env", work));
        assert!(
            after > 1.3 * before && after < 2.0 * before,
            "{before} {after}"
        );
        assert_eq!(refined.fitted_on.len(), 2);
        assert_eq!(refined.fit.observations, 6);
        // One gap of 1e-4 s, then three of 4e-4 s: their medians weighed by count.
        assert!((refined.dispatch_s - (1e-4 + 3.0 * 4e-4) / 4.0).abs() < 1e-15);
    }
}
