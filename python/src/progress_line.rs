//! `ProgressLine`: what `progress=True` draws — one line on standard error with the tasks done,
//! a bar, the pass, the site and the bytes spilled, redrawn at most ten times a second and
//! cleared at the end; nothing when standard error is not a terminal (pipes, CI).

use srcflow::graph::{Pass, Task};
use srcflow::sched::{progress_message, Progress};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Time between two redraws of the line.
const REDRAW_EVERY: Duration = Duration::from_millis(100);

/// Characters of the bar between its brackets.
const BAR_WIDTH: usize = 30;

/// A progress line on standard error, fed by the scheduler.
pub struct ProgressLine {
    /// True when standard error is a terminal (else the line is never drawn).
    on_terminal: bool,
    /// When the line was last drawn (`None` before the first time).
    drawn_at: Mutex<Option<Instant>>,
}

impl ProgressLine {
    /// A line that draws only when standard error is a terminal.
    pub fn new() -> Self {
        ProgressLine {
            on_terminal: std::io::stderr().is_terminal(),
            drawn_at: Mutex::new(None),
        }
    }

    /// Clears the line, if it was drawn.
    pub fn finish(&self) {
        let drawn = self.drawn_at.lock().map(|at| at.is_some()).unwrap_or(false);
        if drawn {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

impl Progress for ProgressLine {
    fn task_done(&self, task: &Task, pass: Pass, done: usize, total: usize, spilled: u64) {
        if !self.on_terminal {
            return;
        }
        let Ok(mut drawn_at) = self.drawn_at.lock() else {
            return;
        };
        let now = Instant::now();
        if drawn_at.is_some_and(|at| now - at < REDRAW_EVERY) && done < total {
            return;
        }
        *drawn_at = Some(now);
        let message = progress_message(pass, task.site, spilled);
        let line = format!("[{}] {done}/{total} tasks  {message}", bar(done, total));
        let _ = write!(std::io::stderr(), "\r\x1b[2K{line}");
    }
}

/// `done` of `total` as a bar of `=` ending in `>`, padded with spaces to `BAR_WIDTH`.
fn bar(done: usize, total: usize) -> String {
    let filled = (done * BAR_WIDTH)
        .checked_div(total)
        .unwrap_or(0)
        .min(BAR_WIDTH);
    let mut bar = "=".repeat(filled);
    if filled < BAR_WIDTH {
        bar.push('>');
    }
    format!("{bar:<BAR_WIDTH$}")
}
