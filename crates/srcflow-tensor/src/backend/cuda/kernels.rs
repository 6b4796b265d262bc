//! The CUDA C kernels of this crate's `kernels/` folder: embedded in the binary, compiled by
//! NVRTC when the first CUDA backend of a process needs them (kept for later ones, and on disk:
//! `kernel_cache.rs`), and named by what they do.

use crate::error::{Error, Result};
use crate::tensor::DType;
use cudarc::nvrtc::{result, sys};
use std::ffi::{CStr, CString};

/// The shared element types and helpers, put in front of every file (NVRTC is given no headers).
const TYPES: &str = include_str!("../../../kernels/types.cuh");

/// One `.cu` file of `kernels/`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KernelFile {
    /// Its file name.
    pub name: &'static str,
    /// Its text.
    text: &'static str,
}

/// Every `.cu` file of `kernels/`.
pub(crate) const FILES: [KernelFile; 2] = [
    KernelFile {
        name: "strided_copy.cu",
        text: include_str!("../../../kernels/strided_copy.cu"),
    },
    KernelFile {
        name: "elementwise.cu",
        text: include_str!("../../../kernels/elementwise.cu"),
    },
];

/// The suffix the kernels of `dtype` carry.
pub fn suffix(dtype: DType) -> &'static str {
    match dtype {
        DType::Float32 => "f32",
        DType::Float64 => "f64",
        DType::Complex64 => "c64",
        DType::Complex128 => "c128",
    }
}

/// The kernel that copies a strided view of a tensor of `dtype` into a contiguous one.
pub fn gather(dtype: DType) -> String {
    format!("gather_{}", suffix(dtype))
}

/// The kernel that copies a contiguous tensor of `dtype` into a strided view of another.
pub fn scatter(dtype: DType) -> String {
    format!("scatter_{}", suffix(dtype))
}

/// The kernel that copies the upper triangle of a column-major matrix of `dtype`.
pub fn upper(dtype: DType) -> String {
    format!("upper_{}", suffix(dtype))
}

/// The kernel that conjugates a tensor of `dtype`.
pub fn conj(dtype: DType) -> String {
    format!("conj_{}", suffix(dtype))
}

/// The kernel that scales the entries of one axis of a tensor of `dtype`.
pub fn scale(dtype: DType) -> String {
    format!("scale_{}", suffix(dtype))
}

/// The kernel that converts a tensor of `from` into one of `to`.
pub fn cast(from: DType, to: DType) -> String {
    format!("cast_{}_to_{}", suffix(from), suffix(to))
}

/// Every kernel the CUDA backend launches, by name, and the file that defines it.
pub fn entries() -> Vec<(&'static str, String)> {
    let [strided, elementwise] = FILES.map(|file| file.name);
    DType::ALL
        .iter()
        .flat_map(|&dtype| {
            let per_type = [
                (strided, gather(dtype)),
                (strided, scatter(dtype)),
                (strided, upper(dtype)),
                (elementwise, conj(dtype)),
                (elementwise, scale(dtype)),
            ];
            let casts = DType::ALL.map(|to| (elementwise, cast(dtype, to)));
            per_type.into_iter().chain(casts)
        })
        .collect()
}

/// `file` compiled by NVRTC to a CUBIN for the real architecture `arch` (`"sm_90"` for an H100
/// or H200), or an error naming the file with NVRTC's log. A CUBIN rather than PTX: a driver
/// older than the NVRTC at hand cannot load that NVRTC's PTX, but loads its CUBIN.
pub fn compile(file: KernelFile, arch: &str) -> Result<Vec<u8>> {
    nvrtc_present()?;
    let source = CString::new(source(file)).expect("no NUL in a kernel");
    let name = CString::new(file.name).expect("no NUL in a file name");
    let program = result::create_program(&source, Some(&name))
        .map_err(|e| Error::Cuda(format!("nvrtcCreateProgram (kernels/{}): {e:?}", file.name)))?;
    // SAFETY: `program` is alive until destroyed below; `source` and `name` outlive it.
    let cubin = unsafe { cubin_of(program, file, arch) };
    // SAFETY: created above and destroyed once.
    let _ = unsafe { result::destroy_program(program) };
    cubin
}

/// The text NVRTC compiles for `file`: the shared types, then the file.
fn source(file: KernelFile) -> String {
    format!("{TYPES}\n{}", file.text)
}

/// NVRTC's options for the real architecture `arch`.
fn options(arch: &str) -> [String; 2] {
    [format!("--gpu-architecture={arch}"), "--std=c++17".into()]
}

/// The name under which the CUBIN of `file` for `arch` is kept on disk: the file, the
/// architecture, NVRTC's version and a hash of the source and options
/// (`strided_copy-sm_90-nvrtc12.9-…​.cubin`); another source, option or NVRTC gives another.
pub(crate) fn cache_key(file: KernelFile, arch: &str) -> Result<String> {
    use std::hash::{Hash, Hasher};
    nvrtc_present()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC is loaded (above); the two integers outlive the call.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| Error::Cuda(format!("nvrtcVersion: {e:?}")))?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (source(file), options(arch)).hash(&mut hasher);
    let stem = file.name.trim_end_matches(".cu");
    Ok(format!(
        "{stem}-{arch}-nvrtc{major}.{minor}-{:016x}.cubin",
        hasher.finish()
    ))
}

/// Compiles `program` (the text of `file`) for `arch` and returns its CUBIN.
///
/// # Safety
/// `program` must be a live NVRTC program.
unsafe fn cubin_of(program: sys::nvrtcProgram, file: KernelFile, arch: &str) -> Result<Vec<u8>> {
    if let Err(e) = result::compile_program(program, &options(arch)) {
        let log = result::get_program_log(program)
            .map(|log| CStr::from_ptr(log.as_ptr()).to_string_lossy().into_owned())
            .unwrap_or_else(|_| format!("{e:?}"));
        return Err(Error::Invalid(format!(
            "kernels/{} does not compile for {arch}: {log}",
            file.name
        )));
    }
    let failed = |e| Error::Cuda(format!("nvrtcGetCUBIN (kernels/{}): {e:?}", file.name));
    let mut size = 0usize;
    sys::nvrtcGetCUBINSize(program, &mut size)
        .result()
        .map_err(failed)?;
    let mut cubin = vec![0u8; size];
    sys::nvrtcGetCUBIN(program, cubin.as_mut_ptr().cast())
        .result()
        .map_err(failed)?;
    Ok(cubin)
}

/// An error unless NVRTC's library can be loaded.
pub(crate) fn nvrtc_present() -> Result<()> {
    // SAFETY: loading a shared library by name runs its initialisers; NVRTC's are benign.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(Error::Unavailable(
            "NVRTC (libnvrtc.so.12) not found: install it with tools/nvrtc.sh and put the \
             directory it prints on LD_LIBRARY_PATH"
                .into(),
        ))
    }
}

/// NVRTC for the tests that compile kernels.
#[cfg(test)]
pub(crate) mod test_nvrtc {
    use super::nvrtc_present;
    use std::path::Path;

    /// Loads NVRTC from the directory `tools/nvrtc.sh` installs it in (or `SRCFLOW_NVRTC_DIR`),
    /// so that cudarc finds it by its name (a library loaded once answers to its soname).
    pub fn load_nvrtc() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let dir = std::env::var_os("SRCFLOW_NVRTC_DIR")
            .map(Into::into)
            .unwrap_or_else(|| repo.join("target/nvrtc/nvidia/cuda_nvrtc/lib"));
        let library = dir.join("libnvrtc.so.12");
        let path = std::ffi::CString::new(library.to_str().expect("a UTF-8 path")).unwrap();
        // SAFETY: dlopen of a path; the handle is kept for the life of the test process.
        let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        assert!(
            !handle.is_null() || nvrtc_present().is_ok(),
            "no NVRTC at {} nor on the library path: run tools/nvrtc.sh",
            library.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::test_nvrtc::load_nvrtc;
    use super::*;
    use std::path::Path;

    /// True when the CUBIN's string table holds `symbol` (between two NULs).
    fn defines(cubin: &[u8], symbol: &str) -> bool {
        let wanted = [&[0u8][..], symbol.as_bytes(), &[0u8]].concat();
        cubin.windows(wanted.len()).any(|w| w == wanted)
    }

    #[test]
    fn every_file_of_the_kernels_folder_is_embedded() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
        let mut on_disk: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.ends_with(".cu"))
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = FILES.iter().map(|f| f.name.to_string()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded);
    }

    #[test]
    fn every_kernel_compiles_for_ampere_and_hopper_and_defines_what_the_backend_launches() {
        load_nvrtc();
        for arch in ["sm_80", "sm_90"] {
            for file in FILES {
                let cubin = compile(file, arch).unwrap_or_else(|e| panic!("{e}"));
                assert!(!defines(&cubin, "not_a_kernel"));
                let launched = entries().into_iter().filter(|(f, _)| *f == file.name);
                for (_, entry) in launched {
                    assert!(
                        defines(&cubin, &entry),
                        "{} for {arch} has no kernel {entry}",
                        file.name
                    );
                }
            }
        }
    }

    #[test]
    fn a_kernel_that_does_not_compile_is_named_with_the_compiler_log() {
        load_nvrtc();
        let broken = KernelFile {
            name: "broken.cu",
            text: "extern \"C\" __global__ void broken(index_t n) { undeclared(n); }",
        };
        let message = compile(broken, "sm_90").unwrap_err().to_string();
        assert!(message.starts_with("kernels/broken.cu does not compile for sm_90"));
        assert!(message.contains("undeclared"), "{message}");
    }
}
