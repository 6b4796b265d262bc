//! Hostile checkpoints: random edits of a killed run's journal and value files (bytes flipped,
//! set or cut, lines dropped, swapped or given other numbers or file names, files swapped,
//! cut or removed) never make a resumed run finish with an output other than the uninterrupted
//! run's, and never remove or change a file outside the checkpoint folder.
//! `SRCFLOW_FUZZ_CASES` sets the checkpoints tried (48 by default, for CI); `tools/fuzz.sh` runs
//! many more.

mod common;

use common::killed::{edit, Killed};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::collections::BTreeMap;
use std::path::Path;

/// Checkpoints tried.
fn cases() -> u32 {
    std::env::var("SRCFLOW_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(48)
}

/// One edit of a checkpoint: `at`, `line` and `file` pick a place, whatever the sizes.
#[derive(Clone, Debug)]
enum Edit {
    FlipJournalBit { at: f64, bit: u8 },
    SetJournalByte { at: f64, byte: u8 },
    CutJournal { at: f64 },
    DropLine { line: usize },
    SwapLines { a: usize, b: usize },
    RenumberLine { line: usize, nth: usize, to: u64 },
    RenameFile { line: usize, to: usize },
    FlipValueBit { file: usize, at: f64, bit: u8 },
    CutValue { file: usize, at: f64 },
    SwapValues { a: usize, b: usize },
    RemoveValue { file: usize },
}

/// File names an edited journal line may name instead of its value's.
const NAMES: [&str; 6] = [
    "../victim.bin",
    "VICTIM",
    "identity.json",
    "journal.jsonl",
    "env-00001-0-32.bin",
    "core-00031.bin",
];

fn edit_strategy() -> impl Strategy<Value = Edit> {
    let at = 0.0..1.0f64;
    prop_oneof![
        (at.clone(), 0..8u8).prop_map(|(at, bit)| Edit::FlipJournalBit { at, bit }),
        (at.clone(), any::<u8>()).prop_map(|(at, byte)| Edit::SetJournalByte { at, byte }),
        at.clone().prop_map(|at| Edit::CutJournal { at }),
        any::<usize>().prop_map(|line| Edit::DropLine { line }),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::SwapLines { a, b }),
        (
            any::<usize>(),
            0..12usize,
            prop_oneof![0..40u64, any::<u64>()]
        )
            .prop_map(|(line, nth, to)| Edit::RenumberLine { line, nth, to }),
        (any::<usize>(), 0..NAMES.len()).prop_map(|(line, to)| Edit::RenameFile { line, to }),
        (any::<usize>(), at.clone(), 0..8u8).prop_map(|(file, at, bit)| Edit::FlipValueBit {
            file,
            at,
            bit
        }),
        (any::<usize>(), at).prop_map(|(file, at)| Edit::CutValue { file, at }),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::SwapValues { a, b }),
        any::<usize>().prop_map(|file| Edit::RemoveValue { file }),
    ]
}

/// Applies `edit` to the checkpoint in `dir`, whose victim file outside is `victim`.
fn apply(edit_: &Edit, dir: &Path, victim: &Path) {
    let journal = dir.join("journal.jsonl");
    let values = value_files(dir);
    let value = |i: usize| values[i % values.len()].clone();
    let place = |at: f64, len: usize| ((at * len as f64) as usize).min(len.saturating_sub(1));
    match *edit_ {
        Edit::FlipJournalBit { at, bit } => edit(&journal, |b| {
            let i = place(at, b.len());
            b[i] ^= 1 << bit
        }),
        Edit::SetJournalByte { at, byte } => edit(&journal, |b| {
            let i = place(at, b.len());
            b[i] = byte
        }),
        Edit::CutJournal { at } => edit(&journal, |b| b.truncate(place(at, b.len()))),
        Edit::DropLine { line } => edit_lines(&journal, |lines| {
            let i = line % lines.len();
            lines.remove(i);
        }),
        Edit::SwapLines { a, b } => edit_lines(&journal, |lines| {
            let n = lines.len();
            lines.swap(a % n, b % n)
        }),
        Edit::RenumberLine { line, nth, to } => edit_lines(&journal, |lines| {
            let i = line % lines.len();
            lines[i] = renumbered(&lines[i], nth, to)
        }),
        Edit::RenameFile { line, to } => edit_lines(&journal, |lines| {
            let i = line % lines.len();
            let name = NAMES[to].replace("VICTIM", &victim.display().to_string());
            lines[i] = renamed(&lines[i], &name)
        }),
        Edit::FlipValueBit { file, at, bit } => edit(&value(file), |b| {
            let i = place(at, b.len());
            b[i] ^= 1 << bit
        }),
        Edit::CutValue { file, at } => edit(&value(file), |b| b.truncate(place(at, b.len()))),
        Edit::SwapValues { a, b } => {
            let (a, b) = (value(a), value(b));
            let there = std::fs::read(&a).unwrap();
            std::fs::copy(&b, &a).unwrap();
            std::fs::write(&b, there).unwrap();
        }
        Edit::RemoveValue { file } => {
            let _ = std::fs::remove_file(value(file));
        }
    }
}

/// The value files of the checkpoint in `dir`, in order.
fn value_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .collect();
    files.sort();
    files
}

/// Rewrites the journal at `path` (when it has a line) with `edit` applied to its lines.
fn edit_lines(path: &Path, edit_: impl FnOnce(&mut Vec<String>)) {
    let text = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    if lines.is_empty() {
        return;
    }
    edit_(&mut lines);
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// `line` with its `nth` number (of those it holds, counted round) replaced by `to`.
fn renumbered(line: &str, nth: usize, to: u64) -> String {
    let mut numbers = vec![];
    let mut start = None;
    for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
        match (c.is_ascii_digit(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                numbers.push(s..i);
                start = None
            }
            _ => {}
        }
    }
    if numbers.is_empty() {
        return line.into();
    }
    let range = numbers[nth % numbers.len()].clone();
    format!("{}{to}{}", &line[..range.start], &line[range.end..])
}

/// `line` with the file it names (if any) replaced by `name`.
fn renamed(line: &str, name: &str) -> String {
    let Some(start) = line.find("\"file\":\"").map(|i| i + 8) else {
        return line.into();
    };
    let end = start + line[start..].find('"').unwrap();
    format!(
        "{}{}{}",
        &line[..start],
        name.replace('\\', "\\\\"),
        &line[end..]
    )
}

/// Every file under `dir` with its bytes, but those in the checkpoints made for each run and
/// in the scratch folder (where a run removes what the killed run left).
fn files_under(dir: &Path) -> BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy();
        if name.starts_with("checkpoint-") || name == "scratch" {
            continue;
        }
        match path.is_dir() {
            true => files.extend(files_under(&path)),
            false => {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

#[test]
fn an_edited_checkpoint_never_gives_a_wrong_output_nor_touches_a_file_outside() {
    let killed = Killed::new();
    let victim = killed.path("victim.bin");
    std::fs::write(&victim, "the user's").unwrap();
    let n = cases();
    let mut runner = TestRunner::new(Config {
        cases: n,
        failure_persistence: None,
        ..Config::default()
    });
    let outcomes = std::cell::RefCell::new(BTreeMap::<&str, usize>::new());
    let strategy = proptest::collection::vec(edit_strategy(), 1..4);
    runner
        .run(&strategy, |edits| {
            let outside = files_under(&killed.path(""));
            let (output, run) = killed.resumed(|dir| {
                for e in &edits {
                    apply(e, dir, &victim);
                }
            });
            let after = files_under(&killed.path(""));
            let changed: Vec<_> = outside
                .iter()
                .filter(|(path, bytes)| after.get(*path) != Some(bytes))
                .map(|(path, _)| path.display().to_string())
                .collect();
            prop_assert!(changed.is_empty(), "{edits:?} changed {changed:?}");
            let outcome = match output {
                Some(output) => {
                    prop_assert!(output == killed.reference, "{edits:?}: a wrong output");
                    "finished with the uninterrupted run's output"
                }
                None => {
                    let said = common::stderr(&run);
                    prop_assert!(!said.contains("panicked"), "{edits:?}: {said}");
                    "refused"
                }
            };
            *outcomes.borrow_mut().entry(outcome).or_default() += 1;
            Ok(())
        })
        .unwrap();
    println!(
        "fuzz target checkpoint: {n} checkpoints, {:?}",
        outcomes.borrow()
    );
}
