//! The instruction sets the CPU kernels dispatch to at run time (faer picks its SIMD kernels by
//! what the processor offers, and they sum in different orders): part of what decides the last
//! bits of a CPU run, so that a checkpoint is resumed only where they are the same.

/// The processor's architecture and the SIMD instruction sets among those the kernels dispatch
/// on that it offers, as "x86_64 avx2 fma".
pub(crate) fn dispatched() -> String {
    let mut sets = vec![std::env::consts::ARCH];
    sets.extend(offered());
    sets.join(" ")
}

#[cfg(target_arch = "x86_64")]
fn offered() -> Vec<&'static str> {
    let sets = [
        ("avx512f", std::arch::is_x86_feature_detected!("avx512f")),
        ("avx2", std::arch::is_x86_feature_detected!("avx2")),
        ("fma", std::arch::is_x86_feature_detected!("fma")),
    ];
    sets.into_iter()
        .filter(|(_, has)| *has)
        .map(|(name, _)| name)
        .collect()
}

#[cfg(target_arch = "aarch64")]
fn offered() -> Vec<&'static str> {
    match std::arch::is_aarch64_feature_detected!("neon") {
        true => vec!["neon"],
        false => vec![],
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn offered() -> Vec<&'static str> {
    vec![]
}
