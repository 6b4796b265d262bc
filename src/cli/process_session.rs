//! The one engine session of a `srcflow` process: every engine a command builds (the default
//! run's two, for one) computes on its backends and shares its plans.

use srcflow::engine::Session;
use std::sync::OnceLock;

/// The process's session, made on first use.
pub fn session() -> Session {
    static SESSION: OnceLock<Session> = OnceLock::new();
    SESSION.get_or_init(Session::new).clone()
}
