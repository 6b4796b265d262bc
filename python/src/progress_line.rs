//! `ProgressLine`: what `progress=True` draws — one line on standard error with the tasks done,
//! a bar, the time left at the rate so far, the pass, the site and the bytes written to disk, redrawn at
//! most ten times a second and cleared at the end; nothing when standard error is not a
//! terminal (pipes, CI).

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
    /// When the line was made: the start of the run, for the time left.
    started: Instant,
}

impl ProgressLine {
    /// A line that draws only when standard error is a terminal.
    pub fn new() -> Self {
        ProgressLine {
            on_terminal: std::io::stderr().is_terminal(),
            drawn_at: Mutex::new(None),
            started: Instant::now(),
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
    fn task_done(&self, task: &Task, pass: Pass, done: usize, total: usize, written: u64) {
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
        let message = progress_message(pass, task.site, written);
        let left = time_left(now - self.started, done, total);
        let line = format!(
            "[{}] {done}/{total} tasks, {left}  {message}",
            bar(done, total)
        );
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

/// The time the `total - done` tasks left take at the rate of the `done` ones in `elapsed`, as
/// `ETA 1m05s` (`ETA ?` before the first task).
fn time_left(elapsed: Duration, done: usize, total: usize) -> String {
    if done == 0 {
        return "ETA ?".into();
    }
    let left = elapsed.as_secs_f64() * total.saturating_sub(done) as f64 / done as f64;
    let seconds = left.round() as u64;
    match seconds / 60 {
        0 => format!("ETA {seconds}s"),
        minutes => format!("ETA {minutes}m{:02}s", seconds % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_left_follows_the_rate_so_far() {
        let ten = Duration::from_secs(10);
        assert_eq!(time_left(ten, 0, 100), "ETA ?");
        assert_eq!(time_left(ten, 50, 100), "ETA 10s");
        assert_eq!(time_left(ten, 10, 100), "ETA 1m30s");
        assert_eq!(time_left(ten, 100, 100), "ETA 0s");
    }

    #[test]
    fn the_bar_fills_with_the_tasks_done() {
        assert_eq!(bar(0, 10), format!("{:<30}", ">"));
        assert_eq!(bar(10, 10), "=".repeat(30));
    }
}
