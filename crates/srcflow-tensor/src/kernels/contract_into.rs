//! A contraction whose result goes straight into a given axis order: computed as `a · b` or as
//! the transposed product `b · a`, whichever copies fewer elements (the inputs into GEMM order,
//! the result into that order).

use super::search_shape::proxy;
use crate::error::Result;
use crate::tensor::{
    keeps_layout, permutation, ContractionPlan, Labeled, Leg, Meter, Operand, Shape,
};

/// `a · b` (summing their shared legs, keeping `batch` as leading axes) with its axes in
/// `order`. The choice of product depends on shapes alone, with the batched legs at the
/// search's proxy size, so a half-batch computes as its whole batch does. The count of copies
/// does not see GEMM efficiency: the environment kernel keeps its own orientation, because its
/// per-column products taken transposed (16 × 128 × 32 on MPO·MPS) ran slower than the copy they
/// saved, and so does the folded projection (`project_folded`), whose tall product runs faster
/// than the wide one that would land in order.
pub fn contract_into<O: Operand>(
    a: &O,
    b: &O,
    batch: &[Leg],
    order: &[Leg],
    meter: &mut Meter,
) -> Result<O> {
    let (a_shape, b_shape) = (proxy(a), proxy(b));
    let product =
        if copies(&b_shape, &a_shape, batch, order) < copies(&a_shape, &b_shape, batch, order) {
            b.contract(a, batch, meter)?
        } else {
            a.contract(b, batch, meter)?
        };
    product.arrange(order, meter)
}

/// Elements the product `a · b` copies: its inputs into GEMM order, its result into `order`.
fn copies(a: &Labeled<Shape>, b: &Labeled<Shape>, batch: &[Leg], order: &[Leg]) -> usize {
    let plan = ContractionPlan::new(&a.legs, &a.value, &b.legs, &b.value, batch);
    let arranged = keeps_layout(&plan.dims, &permutation(&plan.legs, order));
    let result = if arranged {
        0
    } else {
        plan.dims.iter().product()
    };
    plan.copied_elements(&a.value, &b.value) + result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::legs;

    #[test]
    fn the_transposed_product_is_taken_where_it_lands_in_order() {
        // An environment C[Col, Left(0)] times a core [Left(0), Right(0), Up, Down], wanted as
        // [Col, Right(0), Up, Down]: C · core lands in order, core · C would not.
        let c = Labeled {
            legs: vec![Leg::Col, Leg::Left(0)],
            value: vec![8, 5],
        };
        let core = Labeled {
            legs: legs::core(0, 1),
            value: vec![5, 6, 2, 2],
        };
        let order = [Leg::Col, Leg::Right(0), Leg::Up, Leg::Down];
        let x = contract_into(&core, &c, &[], &order, &mut Meter::default()).unwrap();
        assert_eq!((x.legs, x.value), (order.to_vec(), vec![8, 6, 2, 2]));
        assert_eq!(copies(&c, &core, &[], &order), 0);
        assert_eq!(copies(&core, &c, &[], &order), 8 * 6 * 2 * 2);
    }
}
