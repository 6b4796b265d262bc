//! The SRC kernels, written once over [`Operand`](crate::tensor::Operand): they compute on tensors and count on shapes.
//!
//! Every kernel takes labelled operands whose legs come from [`legs`]; layer `i` of `k` has core
//! legs `[Left(i), Right(i), up, down]` where `up` is `Up` for the top layer and `Join(i-1)`
//! otherwise, and `down` is `Down` for the bottom layer and `Join(i)` otherwise.

mod absorb;
mod contract_into;
mod env;
mod exact;
mod fold_right;
pub mod legs;
mod order;
mod orders;
mod project;
mod qr;
mod rank;
mod round;
mod search_shape;
pub mod site_product;
mod sketch;

pub use crate::backend::qr_flops;
pub use crate::backend::svd_flops;
pub(crate) use absorb::absorb;
pub use env::env;
pub use exact::exact_pair;
pub use fold_right::fold_right;
pub use orders::{OrderChoice, OrderMemo, Orders};
pub use project::{project, project_folded};
pub use qr::orthonormal_basis;
pub use qr::qr_work;
pub(crate) use rank::kept_rank;
pub use round::{round, RoundStep};
pub use site_product::site_product;
pub use sketch::{sketch, sketch_folded};
