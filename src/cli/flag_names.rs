//! The command line's names for the library's settings: library errors name a setting as the
//! user of the library sets it (`` `GraphOptions::chi_out` ``); the CLI says the flag instead.

/// Each setting a library error may name, with the flag that sets it.
const FLAGS: [(&str, &str); 22] = [
    ("`GraphOptions::chi_out`", "--chi-out"),
    ("`GraphOptions::batch_cols`", "--batch-cols"),
    ("`GraphOptions::cutoff`", "--cutoff"),
    ("`GraphOptions::devices`", "--devices"),
    ("`GraphOptions::oversample`", "--oversample"),
    ("`GraphOptions::dtype`", "--dtype"),
    ("`DeviceOptions::inject_oom`", "--inject-oom"),
    ("`DeviceOptions::inject_failure`", "--inject-device-failure"),
    ("`DeviceOptions::fragment`", "--fragment"),
    ("`Budgets::device`", "--device-memory"),
    ("`Budgets::host`", "--host-memory"),
    ("`Budgets::disk`", "--disk-space"),
    ("`Budgets::scratch_dir`", "--scratch-dir"),
    ("`ProblemDir::conjugating_bra`", "--conj"),
    ("`Tiering::prefetch`", "--prefetch"),
    ("`Options::threads`", "--threads"),
    ("`DiskIo::rates`", "--disk-bandwidth"),
    ("`DiskIo::depth`", "--io-depth"),
    ("`DiskIo::direct`", "--direct-io"),
    ("`Tiering::kill`", "--inject-kill"),
    ("`EngineBuilder::checkpoint_every`", "--checkpoint-every"),
    ("`EngineBuilder::checkpoint`", "--checkpoint"),
];

/// `message` with every setting it names replaced by its flag.
pub fn with_flag_names(message: &str) -> String {
    srcflow_tensor::error::renamed(message, &FLAGS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use srcflow::graph::GraphOptions;

    #[test]
    fn a_library_error_names_the_flag_on_the_command_line() {
        let mut options = GraphOptions::new(0);
        let library = options.check().unwrap_err().to_string();
        assert!(library.contains("`GraphOptions::chi_out`"), "{library}");
        assert_eq!(
            with_flag_names(&library),
            "--chi-out must be at least 1, found 0"
        );
        options.chi_out = 4;
        options.cutoff = 2.0;
        let cutoff = with_flag_names(&options.check().unwrap_err().to_string());
        assert!(cutoff.starts_with("--cutoff must be in [0, 1)"), "{cutoff}");
    }
}
