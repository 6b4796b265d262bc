//! The names of the library's settings in each interface. A library error names a setting as
//! the library's user sets it (`` `GraphOptions::chi_out` ``); the command line says its flag
//! and Python its argument, both mapped from this one table.

/// A setting as the library, the command line and Python name it.
pub struct SettingName {
    /// In the library's errors: `` `GraphOptions::chi_out` ``.
    pub library: &'static str,
    /// The command line's flag: `--chi-out`.
    pub flag: &'static str,
    /// Python's argument (`` `chi_out` ``), or `None` where Python does not set it (its
    /// errors keep the library's name).
    pub python: Option<&'static str>,
}

/// Each setting a library error may name.
pub const SETTING_NAMES: [SettingName; 22] = [
    name("`GraphOptions::chi_out`", "--chi-out", Some("`chi_out`")),
    name(
        "`GraphOptions::batch_cols`",
        "--batch-cols",
        Some("`batch_cols`"),
    ),
    name("`GraphOptions::cutoff`", "--cutoff", Some("`cutoff`")),
    name(
        "`GraphOptions::devices`",
        "--devices",
        Some("`Resources.devices`"),
    ),
    name(
        "`GraphOptions::oversample`",
        "--oversample",
        Some("`oversample`"),
    ),
    name("`GraphOptions::dtype`", "--dtype", Some("`dtype`")),
    name("`DeviceOptions::inject_oom`", "--inject-oom", None),
    name(
        "`DeviceOptions::inject_failure`",
        "--inject-device-failure",
        None,
    ),
    name("`DeviceOptions::fragment`", "--fragment", None),
    name(
        "`Budgets::device`",
        "--device-memory",
        Some("`Resources.gpu_memory`"),
    ),
    name(
        "`Budgets::host`",
        "--host-memory",
        Some("`Resources.host_memory`"),
    ),
    name(
        "`Budgets::disk`",
        "--disk-space",
        Some("the free space under `Resources.scratch_dir`"),
    ),
    name(
        "`Budgets::scratch_dir`",
        "--scratch-dir",
        Some("`Resources.scratch_dir`"),
    ),
    name("`ProblemDir::conjugating_bra`", "--conj", None),
    name("`Tiering::prefetch`", "--prefetch", Some("`prefetch`")),
    name("`Options::threads`", "--threads", Some("`threads`")),
    name("`DiskIo::rates`", "--disk-bandwidth", None),
    name(
        "`DiskIo::depth`",
        "--io-depth",
        Some("`Resources.io_depth`"),
    ),
    name(
        "`DiskIo::direct`",
        "--direct-io",
        Some("`Resources.direct_io`"),
    ),
    name("`Tiering::kill`", "--inject-kill", None),
    name(
        "`EngineBuilder::checkpoint_every`",
        "--checkpoint-every",
        Some("`Resources.checkpoint_every`"),
    ),
    name(
        "`EngineBuilder::checkpoint`",
        "--checkpoint",
        Some("`Resources.checkpoint`"),
    ),
];

/// One row of [`SETTING_NAMES`].
const fn name(
    library: &'static str,
    flag: &'static str,
    python: Option<&'static str>,
) -> SettingName {
    SettingName {
        library,
        flag,
        python,
    }
}

/// `message` with each setting it names replaced by its command-line flag.
pub fn in_flags(message: &str) -> String {
    SETTING_NAMES.iter().fold(message.to_string(), |text, s| {
        text.replace(s.library, s.flag)
    })
}

/// `message` with each setting it names replaced by its Python argument, where Python sets it.
pub fn in_python_arguments(message: &str) -> String {
    SETTING_NAMES
        .iter()
        .fold(message.to_string(), |text, s| match s.python {
            Some(argument) => text.replace(s.library, argument),
            None => text,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use srcflow_graph::graph::GraphOptions;

    #[test]
    fn a_library_error_names_the_flag_on_the_command_line_and_the_argument_in_python() {
        let mut options = GraphOptions::new(0);
        let library = options.check().unwrap_err().to_string();
        assert!(library.contains("`GraphOptions::chi_out`"), "{library}");
        assert_eq!(in_flags(&library), "--chi-out must be at least 1, found 0");
        assert_eq!(
            in_python_arguments(&library),
            "`chi_out` must be at least 1, found 0"
        );
        options.chi_out = 4;
        options.cutoff = 2.0;
        let cutoff = in_flags(&options.check().unwrap_err().to_string());
        assert!(cutoff.starts_with("--cutoff must be in [0, 1)"), "{cutoff}");
    }

    #[test]
    fn python_keeps_the_library_name_of_a_setting_it_does_not_set() {
        let both = "`EngineBuilder::checkpoint_every` and `EngineBuilder::checkpoint`";
        assert_eq!(in_flags(both), "--checkpoint-every and --checkpoint");
        assert_eq!(
            in_python_arguments(both),
            "`Resources.checkpoint_every` and `Resources.checkpoint`"
        );
        assert_eq!(
            in_python_arguments("`DeviceOptions::fragment`"),
            "`DeviceOptions::fragment`"
        );
    }
}
