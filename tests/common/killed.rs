//! A checkpoint left by a killed run, copied for each run that resumes from it (damaged on the
//! way, for tests of what a resume does with a damaged checkpoint).

use super::{budgets_for_every_tier, problem_dir, srcflow, stderr, CHI_OUT};
use std::path::{Path, PathBuf};
use std::process::Output;

/// A problem, its uninterrupted output, and a checkpoint of a run of it killed in its
/// right-to-left pass (environments on the host and on disk, projections and output cores).
pub struct Killed {
    tmp: tempfile::TempDir,
    problem: String,
    flags: Vec<String>,
    /// The uninterrupted run's output cores.
    pub reference: Vec<Vec<u8>>,
    runs: std::cell::Cell<usize>,
}

impl Killed {
    pub fn new() -> Killed {
        let tmp = tempfile::tempdir().unwrap();
        let problem = problem_dir(tmp.path());
        let scratch = tmp.path().join("scratch");
        std::fs::create_dir(&scratch).unwrap();
        let (device, host) = budgets_for_every_tier(&super::problem(), &scratch, None);
        let flags = [
            "--chi-out",
            &CHI_OUT.to_string(),
            "--seed",
            "5",
            "--device-memory",
            &format!("{device}B"),
            "--host-memory",
            &format!("{host}B"),
            "--scratch-dir",
            scratch.to_str().unwrap(),
        ];
        let killed = Killed {
            flags: flags.map(String::from).into(),
            problem,
            tmp,
            reference: vec![],
            runs: Default::default(),
        };
        let plain = killed.run("reference", &[]);
        assert!(plain.status.success(), "{}", stderr(&plain));
        let checkpoint = killed.template();
        let with = ["--checkpoint", checkpoint.to_str().unwrap()];
        let run = killed.run(
            "never",
            &[&with[..], &["--inject-kill", "checkpoint:24"]].concat(),
        );
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(run.status.signal(), Some(9), "{}", stderr(&run));
        Killed {
            reference: output_of(&killed.path("reference")),
            ..killed
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// The checkpoint the killed run left.
    pub fn template(&self) -> PathBuf {
        self.path("killed")
    }

    /// `srcflow run` of the problem into `out`, with `extra` flags.
    pub fn run(&self, out: &str, extra: &[&str]) -> Output {
        let out = self.path(out);
        let mut args = vec!["run", &self.problem, "--out", out.to_str().unwrap()];
        args.extend(self.flags.iter().map(String::as_str));
        args.extend(extra);
        srcflow(&args).output().unwrap()
    }

    /// A copy of the killed run's checkpoint, damaged by `damage`, and the run that resumes
    /// from it; the output, when the run finished, and what it said.
    pub fn resumed(&self, damage: impl FnOnce(&Path)) -> (Option<Vec<Vec<u8>>>, Output) {
        let n = self.runs.get() + 1;
        self.runs.set(n);
        let checkpoint = self.path(&format!("checkpoint-{n}"));
        copy_folder(&self.template(), &checkpoint);
        damage(&checkpoint);
        let out = format!("out-{n}");
        let run = self.run(&out, &["--checkpoint", checkpoint.to_str().unwrap()]);
        let output = run.status.success().then(|| output_of(&self.path(&out)));
        (output, run)
    }

    /// Fails unless the run from a copy of the checkpoint damaged by `damage` finishes with the
    /// uninterrupted run's output, having said it made anew the file named `remade` (if any).
    pub fn remakes(&self, what: &str, remade: Option<&str>, damage: impl FnOnce(&Path)) {
        let (output, run) = self.resumed(damage);
        let said = stderr(&run);
        assert!(output.is_some(), "{what}: {said}");
        assert!(
            output.unwrap() == self.reference,
            "{what}: the output differs"
        );
        if let Some(file) = remade {
            assert!(
                said.contains(file) && said.contains("makes it anew"),
                "{what}: {said}"
            );
        }
    }
}

/// The bytes of every output core of the output folder `out`.
pub fn output_of(out: &Path) -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(out.join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.iter().map(|f| std::fs::read(f).unwrap()).collect()
}

/// Copies the files of `from` into a new folder `to`.
pub fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Rewrites the file at `path` with `edit` applied to its bytes.
pub fn edit(path: &Path, edit: impl FnOnce(&mut Vec<u8>)) {
    let mut bytes = std::fs::read(path).unwrap();
    edit(&mut bytes);
    std::fs::write(path, bytes).unwrap();
}

/// Rewrites the journal of `checkpoint` with `from` replaced by `to` in the line that keeps
/// `file`.
pub fn edit_journal_line(checkpoint: &Path, file: &str, from: &str, to: &str) {
    let journal = checkpoint.join("journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let line = journal_line(checkpoint, file);
    assert!(line.contains(from), "{line}");
    std::fs::write(&journal, text.replace(&line, &line.replacen(from, to, 1))).unwrap();
}

/// The line of the journal of `checkpoint` that keeps `file`.
pub fn journal_line(checkpoint: &Path, file: &str) -> String {
    let text = std::fs::read_to_string(checkpoint.join("journal.jsonl")).unwrap();
    let line = text.lines().find(|l| l.contains(&format!("\"{file}\"")));
    line.unwrap_or_else(|| panic!("no line of {file} in {text}"))
        .to_string()
}

/// The value of the field `key` that the journal of `checkpoint` records for `file`, as
/// written there: a number ("1234") or a list ("[32,4,32]").
pub fn journal_field(checkpoint: &Path, file: &str, key: &str) -> String {
    let line = journal_line(checkpoint, file);
    let after = line.split(&format!("\"{key}\":")).nth(1).unwrap();
    let end = match after.starts_with('[') {
        true => after.find(']').unwrap() + 1,
        false => after.find(|c: char| !c.is_ascii_digit()).unwrap(),
    };
    after[..end].to_string()
}
