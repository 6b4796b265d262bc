//! A damaged checkpoint never gives a wrong output: a flipped byte or a NaN in a kept value, two
//! value files swapped, an edited shape, checksum or type in the journal, or a torn journal
//! make srcflow remake what is damaged and finish bitwise as the uninterrupted run; a journal
//! that names a file outside the folder is refused and nothing outside is removed; a finished
//! run removes only the files it wrote; a checkpoint of another build is refused.

mod common;

use common::killed::{edit, edit_journal_line, journal_field, Killed};
use common::*;

/// The output core the killed run wrote first (a resume reads it back for the output).
const CORE: &str = "core-00031.bin";

/// The environment files the killed run's checkpoint keeps, from the last site back (how far
/// the checkpoint writes kept up with the sweep varies from run to run; a resume reads the
/// last).
fn kept_environments(killed: &Killed) -> Vec<String> {
    let files = std::fs::read_dir(killed.template()).unwrap();
    let mut names: Vec<String> = files
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("env-"))
        .collect();
    names.sort();
    names.reverse();
    names
}

#[test]
fn damaged_values_are_made_anew_and_the_output_is_the_uninterrupted_runs() {
    let killed = Killed::new();
    let envs = kept_environments(&killed);
    assert!(envs.len() >= 2, "the kill left environments: {envs:?}");
    assert!(killed.template().join(CORE).exists(), "and the first core");
    let (env, other_env) = (&envs[0][..], &envs[1][..]);
    killed.remakes("untouched", None, |_| {});
    killed.remakes("flipped byte in an environment", Some(env), |c| {
        edit(&c.join(env), |b| b[100] ^= 0x10)
    });
    killed.remakes("NaN in an output core", Some(CORE), |c| {
        edit(&c.join(CORE), |b| {
            b[8..16].copy_from_slice(&f64::NAN.to_le_bytes())
        })
    });
    killed.remakes("two environments swapped", Some(env), |c| {
        let (a, b) = (c.join(env), c.join(other_env));
        let there = std::fs::read(&a).unwrap();
        std::fs::copy(&b, &a).unwrap();
        std::fs::write(&b, there).unwrap();
    });
    killed.remakes("a shape edited", Some(env), |c| {
        let shape = journal_field(c, env, "shape");
        let dims: Vec<&str> = shape[1..shape.len() - 1].split(',').collect();
        let rotated = format!("[{},{}]", dims[1..].join(","), dims[0]);
        assert_ne!(shape, rotated);
        edit_journal_line(c, env, &shape, &rotated)
    });
    killed.remakes("a checksum edited", Some(CORE), |c| {
        let checksum = format!("\"checksum\":{}", journal_field(c, CORE, "checksum"));
        edit_journal_line(c, CORE, &checksum, "\"checksum\":42")
    });
    killed.remakes("an element type edited", Some(CORE), |c| {
        edit_journal_line(c, CORE, "complex128", "float64")
    });
    killed.remakes("a value file removed", None, |c| {
        std::fs::remove_file(c.join(env)).unwrap()
    });
    killed.remakes("a bad byte at the journal's end", None, |c| {
        edit(&c.join("journal.jsonl"), |b| b.extend([0xff, 0xfe]))
    });
    killed.remakes("the journal's last line torn", None, |c| {
        edit(&c.join("journal.jsonl"), |b| {
            let cut = b.len() - 30;
            b.truncate(cut)
        })
    });
}

#[test]
fn a_journal_naming_a_file_outside_the_checkpoint_is_refused_and_nothing_outside_removed() {
    let killed = Killed::new();
    let victim = killed.path("victim.bin");
    for name in [victim.display().to_string(), "../victim.bin".into()] {
        std::fs::write(&victim, "the user's").unwrap();
        let (output, run) = killed.resumed(|c| edit_journal_line(c, CORE, CORE, &name));
        assert!(
            output.is_none(),
            "{name}: a run with an edited journal finished"
        );
        let said = stderr(&run);
        assert!(
            said.contains(&name) && said.contains("journal.jsonl"),
            "{said}"
        );
        assert!(
            victim.exists(),
            "{name}: a file outside the checkpoint was removed"
        );
    }
}

#[test]
fn a_finished_run_removes_only_what_it_wrote_into_the_checkpoint() {
    let killed = Killed::new();
    let (output, run) = killed.resumed(|c| {
        std::fs::write(c.join("notes.bin"), "mine").unwrap();
        std::fs::write(c.join("notes.bin.srcflow-tmp"), "mine too").unwrap();
    });
    assert!(output == Some(killed.reference.clone()), "{}", stderr(&run));
    let checkpoint = killed.path("checkpoint-1");
    let mut left: Vec<String> = std::fs::read_dir(&checkpoint)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["notes.bin", "notes.bin.srcflow-tmp"]);
}

#[test]
fn a_checkpoint_records_the_build_and_one_of_another_build_is_refused() {
    let killed = Killed::new();
    let binary = std::env::var_os("SRCFLOW_BIN").unwrap_or(env!("CARGO_BIN_EXE_srcflow").into());
    let bytes = std::fs::read(binary).unwrap();
    let build = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes));
    let identity = std::fs::read_to_string(killed.template().join("identity.json")).unwrap();
    assert!(identity.contains(&build), "{identity}");
    assert!(identity.contains("\"kernels\""), "{identity}");
    let (output, run) = killed.resumed(|c| {
        let other = identity.replace(&build, "0123456789abcdef");
        std::fs::write(c.join("identity.json"), other).unwrap();
    });
    let said = stderr(&run);
    assert!(output.is_none(), "another build's checkpoint was resumed");
    assert!(
        said.contains(&format!(
            "srcflow build \"0123456789abcdef\" there, \"{build}\" here"
        )),
        "{said}"
    );
}
