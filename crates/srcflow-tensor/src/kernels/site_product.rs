//! The exact product of all layers at one site.

use crate::error::Result;
use crate::tensor::{Leg, Meter, Operand};

/// The product core `[Left(0..k), Right(0..k), Up, Down]` of one site of every layer.
pub fn site_product<O: Operand>(cores: &[O], meter: &mut Meter) -> Result<O> {
    let k = cores.len();
    let (top, rest) = cores.split_first().expect("at least one layer");
    let product = rest
        .iter()
        .try_fold(top.clone(), |x, core| x.contract(core, &[], meter))?;
    let order: Vec<Leg> = (0..k)
        .map(Leg::Left)
        .chain((0..k).map(Leg::Right))
        .chain([Leg::Up, Leg::Down])
        .collect();
    product.arrange(&order, meter)
}
