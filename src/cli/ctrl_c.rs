//! Ctrl-C: the first press cancels the run cleanly (scratch and partial output removed), a
//! second one exits at once.

use srcflow::{CancelToken, Error, Result};
use std::sync::{Mutex, OnceLock};

/// The token of the run under way, which the handler cancels.
static CURRENT: Mutex<Option<CancelToken>> = Mutex::new(None);
/// Whether the handler could be installed (once per process).
static INSTALLED: OnceLock<std::result::Result<(), String>> = OnceLock::new();

/// A token that the first Ctrl-C cancels (the handler is installed once per process; a later
/// run's token replaces the earlier one's).
pub fn cancel_on_ctrl_c() -> Result<CancelToken> {
    let installed = INSTALLED.get_or_init(|| {
        ctrlc::set_handler(|| {
            let current = CURRENT.lock().unwrap_or_else(|e| e.into_inner());
            if current.as_ref().is_some_and(CancelToken::cancel) {
                std::process::exit(130);
            }
        })
        .map_err(|e| e.to_string())
    });
    if let Err(e) = installed {
        return Err(Error::Invalid(format!(
            "cannot install the Ctrl-C handler: {e}"
        )));
    }
    let token = CancelToken::new();
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = Some(token.clone());
    Ok(token)
}
