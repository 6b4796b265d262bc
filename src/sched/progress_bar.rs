//! `SweepProgressBar`: the progress of a run on a terminal (indicatif; `srcflow run` and the
//! Python package's `progress=True`) — tasks done,
//! pass, site, bytes spilled and ETA; hidden when standard error is not a terminal (pipes, CI).

use super::Progress;
use crate::graph::{Pass, Task};
use crate::ByteSize;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar on standard error, fed by the scheduler.
pub struct SweepProgressBar {
    bar: ProgressBar,
}

impl Default for SweepProgressBar {
    fn default() -> Self {
        Self::new()
    }
}

impl SweepProgressBar {
    /// A bar that draws only when standard error is a terminal.
    pub fn new() -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {pos}/{len} tasks, ETA {eta}  {msg}",
        )
        .expect("the template is valid")
        .progress_chars("=> ");
        bar.set_style(style);
        SweepProgressBar { bar }
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for SweepProgressBar {
    fn task_done(&self, task: &Task, pass: Pass, done: usize, total: usize, spilled: u64) {
        self.bar.set_length(total as u64);
        self.bar.set_position(done as u64);
        self.bar.set_message(message(pass, task.site, spilled));
    }
}

/// What the bar says after the numbers: the pass, the site and the bytes spilled.
fn message(pass: Pass, site: usize, spilled: u64) -> String {
    let arrow = match pass {
        Pass::LeftToRight => "→",
        Pass::RightToLeft => "←",
    };
    format!("{arrow} site {site}, {} spilled", ByteSize(spilled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_pass_the_site_and_the_spill() {
        assert_eq!(
            message(Pass::RightToLeft, 17, 2_500_000),
            "← site 17, 2.50 MB spilled"
        );
        assert_eq!(message(Pass::LeftToRight, 0, 0), "→ site 0, 0 B spilled");
    }
}
