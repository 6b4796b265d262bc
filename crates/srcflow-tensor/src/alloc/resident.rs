//! The process's resident memory, read without allocating (the allocator itself asks).

/// Resident bytes of this process from `/proc/self/statm`, or `None` where it cannot be read.
pub fn resident_bytes() -> Option<usize> {
    let mut text = [0u8; 128];
    // SAFETY: a NUL-terminated path; the descriptor is closed before returning.
    let len = unsafe {
        let fd = libc::open(
            c"/proc/self/statm".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return None;
        }
        let len = libc::read(fd, text.as_mut_ptr().cast(), text.len());
        libc::close(fd);
        len
    };
    let text = std::str::from_utf8(text.get(..usize::try_from(len).ok()?)?).ok()?;
    let pages: usize = text.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * usize::try_from(page).ok()?)
}
