//! `SweepProgressBar`: the progress of `srcflow run` on a terminal (indicatif) — tasks done,
//! pass, site, bytes written to disk and ETA; hidden when standard error is not a terminal (pipes, CI).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use srcflow::graph::{Pass, Task};
use srcflow::sched::{progress_message, Progress};

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
    fn task_done(&self, task: &Task, pass: Pass, done: usize, total: usize, written: u64) {
        self.bar.set_length(total as u64);
        self.bar.set_position(done as u64);
        self.bar
            .set_message(progress_message(pass, task.site, written));
    }
}
