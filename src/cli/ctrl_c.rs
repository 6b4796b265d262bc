//! Ctrl-C: the first press cancels the run cleanly (scratch and partial output removed), a
//! second one exits at once.

use srcflow::{CancelToken, Error, Result};

/// A token that the first Ctrl-C cancels (the handler is installed once per process).
pub fn cancel_on_ctrl_c() -> Result<CancelToken> {
    let token = CancelToken::new();
    let handler = token.clone();
    ctrlc::set_handler(move || {
        if handler.cancel() {
            std::process::exit(130);
        }
    })
    .map_err(|e| Error::Invalid(format!("cannot install the Ctrl-C handler: {e}")))?;
    Ok(token)
}
