//! Signals that end a run: SIGINT (Ctrl-C), SIGTERM (`kill`, a Slurm time limit, a container
//! runtime), SIGHUP (a closed terminal), SIGUSR1 (Slurm's warning before a time limit) and
//! SIGPIPE (a closed pipe) each cancel the run cleanly: its scratch files and partial output
//! are removed, its checkpoint kept. A second SIGINT, SIGTERM, SIGHUP or SIGUSR1 exits at once
//! (the next run removes what that leaves); more SIGPIPEs, which each write to the closed pipe
//! raises, change nothing.

use signal_hook::consts::{SIGHUP, SIGINT, SIGPIPE, SIGTERM, SIGUSR1};
use srcflow::{CancelToken, Error, Result};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, OnceLock};

/// The signals that stop a run, with their names.
const STOPPING: [(i32, &str); 5] = [
    (SIGINT, "SIGINT"),
    (SIGTERM, "SIGTERM"),
    (SIGHUP, "SIGHUP"),
    (SIGUSR1, "SIGUSR1"),
    (SIGPIPE, "SIGPIPE"),
];

/// The token of the run under way, which the first signal cancels.
static CURRENT: Mutex<Option<CancelToken>> = Mutex::new(None);
/// The first signal received (0: none yet).
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// Whether the signals could be watched (once per process).
static WATCHING: OnceLock<std::result::Result<(), String>> = OnceLock::new();

/// A token that the first of the stopping signals cancels (they are watched from the first
/// call on, by a thread of their own; a later run's token replaces the earlier one's).
pub fn cancel_on_signals() -> Result<CancelToken> {
    let watching = WATCHING.get_or_init(|| watch().map_err(|e| e.to_string()));
    if let Err(e) = watching {
        return Err(Error::Invalid(format!("cannot watch for signals: {e}")));
    }
    let token = CancelToken::new();
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = Some(token.clone());
    Ok(token)
}

/// Starts the thread that handles each stopping signal as it comes.
fn watch() -> std::io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new(STOPPING.map(|(signal, _)| signal))?;
    std::thread::Builder::new()
        .name("srcflow-signals".into())
        .spawn(move || signals.forever().for_each(stop))?;
    Ok(())
}

/// Cancels the run under way on `signal`, or exits at once when it was cancelled before and
/// `signal` is not SIGPIPE.
fn stop(signal: i32) {
    let _ = RECEIVED.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
    let current = CURRENT.lock().unwrap_or_else(|e| e.into_inner());
    let again = current.as_ref().is_some_and(CancelToken::cancel);
    if again && signal != SIGPIPE {
        std::process::exit(128 + signal);
    }
}

/// The name of the signal that stopped the run, if one did.
pub fn stopped_by() -> Option<&'static str> {
    let received = RECEIVED.load(Ordering::SeqCst);
    STOPPING
        .iter()
        .find(|(signal, _)| *signal == received)
        .map(|(_, name)| *name)
}

/// The exit status of a run a signal stopped: 128 + the signal's number, as a shell reports a
/// process the signal ended (130 when none was received).
pub fn exit_status() -> u8 {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => 130,
        signal => (128 + signal) as u8,
    }
}

/// From now on, a write to a closed pipe ends the process quietly (`srcflow graph … | head`),
/// as Unix tools do, instead of failing the write: for the whole of a command that writes
/// nothing it could leave half done, and for a run once its output is in place.
pub fn closed_pipe_ends_quietly() {
    // SAFETY: restores the default action of SIGPIPE; a handler installed for it before is no
    // longer called.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
