//! `Block`: a lease on device memory, handed back to its pool when dropped.

use std::fmt;

/// Device memory in use; dropping it returns the memory to the pool's cache.
pub struct Block {
    bytes: u64,
    give_back: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl Block {
    /// A block of `bytes` that runs `give_back` when dropped.
    pub fn new(bytes: u64, give_back: impl FnOnce() + Send + Sync + 'static) -> Self {
        Block {
            bytes,
            give_back: Some(Box::new(give_back)),
        }
    }

    /// Bytes the pool set aside for it (the request rounded up).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        if let Some(give_back) = self.give_back.take() {
            give_back();
        }
    }
}

impl fmt::Debug for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Block({} bytes)", self.bytes)
    }
}
