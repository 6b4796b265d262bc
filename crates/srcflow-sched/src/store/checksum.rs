//! `Checksum`: the xxh3 hash of a stored tensor (its element type, shape and bytes), which a
//! read compares with the one taken when it was written, so that a file that no longer holds
//! what was written (a flipped byte, another file's bytes, an edited shape) is never used.

use srcflow_tensor::tensor::DType;
use xxhash_rust::xxh3::Xxh3;

/// The hash of a tensor's element type and shape, then of its bytes as they come.
pub(crate) struct Checksum(Xxh3);

impl Checksum {
    /// The hash of a `dtype` tensor of `shape`, before any of its bytes.
    pub fn new(dtype: DType, shape: &[usize]) -> Self {
        let mut hasher = Xxh3::new();
        hasher.update(dtype.to_string().as_bytes());
        for dim in shape {
            hasher.update(&(*dim as u64).to_le_bytes());
        }
        Checksum(hasher)
    }

    /// Adds the next `bytes` of the tensor.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The hash of everything added.
    pub fn digest(&self) -> u64 {
        self.0.digest()
    }
}
