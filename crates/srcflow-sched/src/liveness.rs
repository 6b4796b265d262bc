//! Whether the process that left a directory behind still runs.

/// True when no process with id `pid` exists (not merely one of another user).
pub fn process_is_gone(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    !alive && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}
