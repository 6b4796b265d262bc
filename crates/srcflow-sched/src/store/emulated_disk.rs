//! `EmulatedDisk`: makes each request to the scratch disk last as long as it would on a
//! filesystem of given [`DiskRequests`] (`--disk-emulate`), for tests and benches of a
//! parallel filesystem on any machine.

use super::disk_requests::{DiskRequests, Link};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The emulated filesystem's link, shared by every request of a run, both ways.
#[derive(Debug)]
pub struct EmulatedDisk {
    requests: DiskRequests,
    /// When the emulation started (the origin of the link's clock).
    origin: Instant,
    link: Mutex<Link>,
}

impl EmulatedDisk {
    /// A filesystem whose requests behave as `requests` says.
    pub fn new(requests: DiskRequests) -> Self {
        EmulatedDisk {
            requests,
            origin: Instant::now(),
            link: Mutex::new(Link::default()),
        }
    }

    /// Reserves the link for a request of `bytes` issued now; returns when it is to end.
    pub fn issue(&self, bytes: u64) -> Instant {
        let issued = self.origin.elapsed().as_secs_f64();
        let mut link = self.link.lock().unwrap_or_else(|e| e.into_inner());
        let end = link.request(&self.requests, issued, bytes);
        self.origin + Duration::from_secs_f64(end)
    }
}
