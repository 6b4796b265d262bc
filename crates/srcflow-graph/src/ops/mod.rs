//! Whole-train operations used to check results: exact product, norms, distances, truncation.

mod difference;
mod distance;
mod distance_cost;
mod exact_product;
mod truncate;

pub use distance::{distance, distance_of, norm, Distance};
pub use distance_cost::DistanceCost;
pub use exact_product::{exact_product, exact_product_with};
pub use truncate::{bond_spectra, is_right_canonical, truncate_svd};
