//! The paths `srcflow run` reads and writes, checked against each other before any work (before
//! the problem is opened): no output, checkpoint or scratch folder lands on an input (the
//! manifest, a layer folder), no output or checkpoint on another or in a run's own scratch
//! folder (`srcflow-scratch-*`), and no output in the checkpoint folder. Outputs and
//! checkpoints inside the scratch folder itself are fine: clusters keep all three under
//! `/scratch/$USER`.

use srcflow::io::Manifest;
use srcflow::{Error, Result};
use srcflow_sched::store::RUN_SCRATCH;
use srcflow_tensor::files::{resolved, within};
use std::path::{Path, PathBuf};

/// What a run reads from and writes to, as its flags name them.
pub struct RunPaths<'a> {
    /// The problem folder.
    pub problem: &'a Path,
    /// `--out`.
    pub out: &'a Path,
    /// `--trace`.
    pub trace: Option<&'a Path>,
    /// `--graph-out`.
    pub graph_out: Option<&'a Path>,
    /// `--checkpoint`.
    pub checkpoint: Option<&'a Path>,
    /// `--scratch-dir`.
    pub scratch: Option<&'a Path>,
}

impl RunPaths<'_> {
    /// Refuses paths that overlap, naming both and their flags.
    pub fn check(&self) -> Result<()> {
        let written = [
            (Some(self.out), "output (--out)"),
            (self.trace, "trace (--trace)"),
            (self.graph_out, "graph (--graph-out)"),
            (self.checkpoint, "checkpoint (--checkpoint)"),
        ];
        let written: Vec<(&Path, &str)> = written
            .into_iter()
            .filter_map(|(path, role)| Some((path?, role)))
            .collect();
        let scratch = self.scratch.map(|s| (s, "scratch folder (--scratch-dir)"));
        for (input, input_role) in self.inputs() {
            for &(path, role) in written.iter().chain(&scratch) {
                refuse_within(path, role, &input, input_role)?;
            }
        }
        for (i, &(path, role)) in written.iter().enumerate() {
            if let Some(scratch) = self.scratch {
                refuse_in_run_scratch(path, role, scratch)?;
            }
            for &(other, other_role) in &written[i + 1..] {
                refuse_within(path, role, other, other_role)?;
                refuse_within(other, other_role, path, role)?;
            }
        }
        Ok(())
    }

    /// The run's inputs: the problem's manifest and layer folders (none when the manifest
    /// cannot be read: opening the problem says why).
    fn inputs(&self) -> Vec<(PathBuf, &'static str)> {
        let Ok(manifest) = Manifest::read(self.problem) else {
            return vec![];
        };
        let layers = manifest
            .layers
            .iter()
            .map(|layer| self.problem.join(&layer.name));
        let mut inputs = vec![(self.problem.join("manifest.json"), "problem's manifest")];
        inputs.extend(layers.map(|folder| (folder, "problem's layer folder")));
        inputs
    }
}

/// Refuses `path` (the flag's `role`) when it lies in a folder a run makes for itself in
/// `scratch` (which the next run removes when its run is dead).
fn refuse_in_run_scratch(path: &Path, role: &str, scratch: &Path) -> Result<()> {
    let Ok(rest) = resolved(path)
        .strip_prefix(resolved(scratch))
        .map(Path::to_path_buf)
    else {
        return Ok(());
    };
    let first = rest.components().next();
    let in_run = first.is_some_and(|c| c.as_os_str().to_string_lossy().starts_with(RUN_SCRATCH));
    if !in_run {
        return Ok(());
    }
    Err(Error::Invalid(format!(
        "the {role} {} is inside a run's own scratch folder in {} ({RUN_SCRATCH}…), which \
         srcflow removes: give it a place of its own",
        path.display(),
        scratch.display()
    )))
}

/// Refuses `path` (the flag's `role`) when it is `folder` (its `folder_role`) or inside it.
fn refuse_within(path: &Path, role: &str, folder: &Path, folder_role: &str) -> Result<()> {
    if !within(path, folder) {
        return Ok(());
    }
    let how = match resolved(path) == resolved(folder) {
        true => "is",
        false => "is inside",
    };
    Err(Error::Invalid(format!(
        "the {role} {} {how} the {folder_role} {}: srcflow would write over what the run \
         reads or writes there; give it a place of its own",
        path.display(),
        folder.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths<'a>(problem: &'a Path, out: &'a Path) -> RunPaths<'a> {
        RunPaths {
            problem,
            out,
            trace: None,
            graph_out: None,
            checkpoint: None,
            scratch: None,
        }
    }

    #[test]
    fn overlapping_paths_are_refused_naming_both_flags() {
        let dir = tempfile::tempdir().unwrap();
        let problem = dir.path().join("prob");
        srcflow::io::write_stack(
            &problem,
            &srcflow::gen::generate(
                srcflow::gen::ProblemKind::Random,
                &srcflow::gen::ProblemSpec {
                    sites: 4,
                    bond: 4,
                    ..Default::default()
                },
            )
            .unwrap(),
        )
        .unwrap();
        let layer = Manifest::read(&problem).unwrap().layers[0].name.clone();
        let out = dir.path().join("out");
        assert!(paths(&problem, &out).check().is_ok());
        let manifest = problem.join("manifest.json");
        let refused = |p: RunPaths| p.check().unwrap_err().to_string();
        let said = refused(RunPaths {
            trace: Some(&manifest),
            ..paths(&problem, &out)
        });
        assert!(
            said.contains("trace (--trace)") && said.contains("manifest"),
            "{said}"
        );
        let same = dir.path().join("run.json");
        let said = refused(RunPaths {
            trace: Some(&same),
            graph_out: Some(&same),
            ..paths(&problem, &out)
        });
        assert!(
            said.contains("--trace") && said.contains("--graph-out"),
            "{said}"
        );
        let in_layer = problem.join(&layer).join("00000.npy");
        let said = refused(RunPaths {
            graph_out: Some(&in_layer),
            ..paths(&problem, &out)
        });
        assert!(said.contains("layer folder"), "{said}");
        let scratch = dir.path().join("scratch");
        let said = refused(RunPaths {
            checkpoint: Some(&out),
            ..paths(&problem, &out)
        });
        assert!(
            said.contains("--checkpoint") && said.contains("--out"),
            "{said}"
        );
        let in_run_scratch = scratch.join("srcflow-scratch-1-2/run.json");
        let said = refused(RunPaths {
            trace: Some(&in_run_scratch),
            scratch: Some(&scratch),
            ..paths(&problem, &out)
        });
        assert!(said.contains("a run's own scratch folder"), "{said}");
        let layer_scratch = problem.join(&layer).join("scratch");
        let said = refused(RunPaths {
            scratch: Some(&layer_scratch),
            ..paths(&problem, &out)
        });
        assert!(
            said.contains("--scratch-dir") && said.contains("layer folder"),
            "{said}"
        );
        let (in_scratch, out_in_scratch) = (scratch.join("prob.ckpt"), scratch.join("result"));
        let fine = RunPaths {
            checkpoint: Some(&in_scratch),
            scratch: Some(&scratch),
            ..paths(&problem, &out_in_scratch)
        };
        assert!(
            fine.check().is_ok(),
            "a checkpoint and output in the scratch folder are fine"
        );
    }
}
