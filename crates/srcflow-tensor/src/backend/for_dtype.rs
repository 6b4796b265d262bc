//! `for_dtype!`: one body, instantiated for the element type of a run-time [`DType`](crate::tensor::DType).

/// Runs `$body` with `$t` the element type of `$dtype`.
macro_rules! for_dtype {
    ($dtype:expr, $t:ident => $body:expr) => {
        match $dtype {
            $crate::tensor::DType::Float32 => {
                type $t = f32;
                $body
            }
            $crate::tensor::DType::Float64 => {
                type $t = f64;
                $body
            }
            $crate::tensor::DType::Complex64 => {
                type $t = num_complex::Complex32;
                $body
            }
            $crate::tensor::DType::Complex128 => {
                type $t = num_complex::Complex64;
                $body
            }
        }
    };
}
