//! Dense arrays in row-major order, of four element types, with labelled contraction on top.

mod any;
mod dense;
mod dtype;
mod legs;
pub mod matrix;
mod meter;
mod operand;
mod permute;
pub(crate) use permute::{
    advance, keeps_layout, offsets_of, permute_elements, row_major_strides, unravel,
};
mod plan;
pub(crate) use plan::{ContractionPlan, OperandLayout};
mod scalar;
mod work;

pub use any::AnyTensor;
pub use any::Typed;
pub use dense::{Array, Tensor, C64};
pub use dtype::DType;
pub use legs::Leg;
pub use meter::Meter;
pub(crate) use operand::permutation;
pub use operand::Shape;
pub use operand::{Labeled, Operand};
pub use scalar::Scalar;
pub use work::Work;
