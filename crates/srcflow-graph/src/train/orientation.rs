//! Bra stacks `φ·A_1·…·A_k`: the leading MPS is a row vector, used without conjugation (as in
//! src-method), so the stack equals the ket stack `A_k^T·…·A_1^T·φ`, which is what runs.

use super::layout::shape_from_quimb;
use super::{Kind, LayerShape, StackShape};
use srcflow_tensor::tensor::AnyTensor;

/// How the layers of a stack were given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Orientation {
    /// MPOs, optionally followed by an MPS: run as given.
    Ket,
    /// An MPS followed by MPOs: run reversed, with every MPO transposed.
    Bra,
}

impl Orientation {
    /// `Bra` when the first of two or more layers is an MPS, else `Ket`.
    pub fn of(kinds: &[Kind]) -> Self {
        match kinds {
            [Kind::Mps, _, ..] => Orientation::Bra,
            _ => Orientation::Ket,
        }
    }

    /// True when a given layer of `kind` is transposed (up and down swapped) in the ket form.
    pub fn transposes(self, kind: Kind) -> bool {
        self == Orientation::Bra && kind == Kind::Mpo
    }

    /// `core`, read in quimb layout as the user gave it, as `site` of the ket-form layer `layer`
    /// runs it (`[l, r, u, d]`): transposed when this
    /// orientation transposes the layer, else conjugated when `conj`. An error message when its
    /// shape is not the one `layer` was planned with or an element is not finite.
    pub fn ket_core(
        self,
        layer: &LayerShape,
        site: usize,
        core: AnyTensor,
        conj: bool,
    ) -> Result<AnyTensor, String> {
        let transposed = self.transposes(layer.kind);
        let mut expected = layer.cores[site];
        if transposed {
            expected.swap(2, 3);
        }
        let lrud = shape_from_quimb(layer.kind, site, layer.cores.len(), core.shape())
            .map_err(|e| e.to_string())?;
        if lrud != expected {
            return Err(format!(
                "shape changed since the run started: expected {expected:?}, found {lrud:?}"
            ));
        }
        if let Some(index) = core.first_non_finite() {
            return Err(format!(
                "element {index} (flat, C order) is NaN or infinite"
            ));
        }
        let core = core.reshape(lrud.to_vec());
        Ok(match (transposed, conj) {
            (true, _) => core.permute(&[0, 1, 3, 2]),
            (false, true) => core.conj(),
            (false, false) => core,
        })
    }

    /// The ket form of `layers`, given in this orientation.
    pub fn ket_form<T>(self, mut layers: Vec<T>, transpose: impl Fn(T) -> T) -> Vec<T> {
        if self == Orientation::Ket {
            return layers;
        }
        layers.reverse();
        let k = layers.len();
        layers
            .into_iter()
            .enumerate()
            .map(|(i, layer)| if i + 1 < k { transpose(layer) } else { layer })
            .collect()
    }
}

impl LayerShape {
    /// The shape with up and down swapped in every core (an MPO's transpose).
    pub fn transposed(mut self) -> LayerShape {
        for core in &mut self.cores {
            core.swap(2, 3);
        }
        self
    }
}

impl StackShape {
    /// The orientation of this stack as given.
    pub fn orientation(&self) -> Orientation {
        let kinds: Vec<Kind> = self.layers.iter().map(|l| l.kind).collect();
        Orientation::of(&kinds)
    }

    /// The ket form of this stack (itself unless it is a bra stack).
    pub fn into_ket_form(self) -> StackShape {
        let layers = self
            .orientation()
            .ket_form(self.layers, LayerShape::transposed);
        StackShape { layers }
    }
}
