//! Dense complex tensors in row-major order, with labelled contraction on top.

mod dense;
mod legs;
mod meter;
mod operand;
mod permute;
mod plan;

pub use dense::{Tensor, C64};
pub use legs::Leg;
pub use meter::Meter;
pub use operand::{Labeled, Operand, Shape};
