//! Ctrl-C: the first press stops the run cleanly (scratch and partial output removed), a second
//! one exits at once.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the Ctrl-C handler; the dispatcher polls it.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Installs the Ctrl-C handler (once per process).
pub fn install_ctrlc_handler() -> Result<()> {
    ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    })
    .map_err(|e| Error::Invalid(format!("cannot install the Ctrl-C handler: {e}")))
}

/// True once Ctrl-C has been pressed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
