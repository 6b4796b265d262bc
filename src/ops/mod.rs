//! Whole-train operations used to check results: exact product, norms, distances, truncation.

mod difference;
mod distance;
mod exact_product;
mod truncate;

pub use distance::{distance, norm};
pub use exact_product::exact_product;
pub use truncate::{bond_spectra, is_right_canonical, truncate_svd};
