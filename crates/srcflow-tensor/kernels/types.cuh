// Element types of srcflow's tensors as CUDA sees them, without cuComplex.h (NVRTC then needs no
// header from the CUDA toolkit): float32, float64, complex64 and complex128, laid out as
// num-complex and cuBLAS lay them out (real part first). The backend puts this file in front of
// every other file of this folder before NVRTC compiles it (src/backend/cuda/kernels.rs).

typedef long long index_t;

struct c64 { float re; float im; };
struct c128 { double re; double im; };

// The complex conjugate; a real number is its own.
__device__ inline float conj_of(float x) { return x; }
__device__ inline double conj_of(double x) { return x; }
__device__ inline c64 conj_of(c64 x) { c64 y = {x.re, -x.im}; return y; }
__device__ inline c128 conj_of(c128 x) { c128 y = {x.re, -x.im}; return y; }

// `x` times the real factor `f`.
__device__ inline float times(float x, double f) { return x * (float)f; }
__device__ inline double times(double x, double f) { return x * f; }
__device__ inline c64 times(c64 x, double f) { c64 y = {x.re * (float)f, x.im * (float)f}; return y; }
__device__ inline c128 times(c128 x, double f) { c128 y = {x.re * f, x.im * f}; return y; }

// Real and imaginary parts, and an element made of them (a real type keeps the real part).
__device__ inline double real_of(float x) { return x; }
__device__ inline double real_of(double x) { return x; }
__device__ inline double real_of(c64 x) { return x.re; }
__device__ inline double real_of(c128 x) { return x.re; }
__device__ inline double imag_of(float) { return 0.0; }
__device__ inline double imag_of(double) { return 0.0; }
__device__ inline double imag_of(c64 x) { return x.im; }
__device__ inline double imag_of(c128 x) { return x.im; }
template <typename T> __device__ inline T made_of(double re, double im);
template <> __device__ inline float made_of<float>(double re, double) { return (float)re; }
template <> __device__ inline double made_of<double>(double re, double) { return re; }
template <> __device__ inline c64 made_of<c64>(double re, double im) { c64 y = {(float)re, (float)im}; return y; }
template <> __device__ inline c128 made_of<c128>(double re, double im) { c128 y = {re, im}; return y; }

// Each thread of a one-dimensional grid takes elements `i` from its global index on, a grid's
// width apart, until `n`.
#define FOR_EACH_ELEMENT(i, n) \
    for (index_t i = (index_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (index_t)blockDim.x * gridDim.x)

// Where the elements of a contiguous `rank`-axis block of `dims` sit in a strided tensor: element
// (i_0, .., i_{rank-1}) at `offset + Σ i_d · strides[d]`.
#define MAX_RANK 8
struct Strided {
    int rank;
    index_t offset;
    index_t dims[MAX_RANK];
    index_t strides[MAX_RANK];
};

// The position in the strided tensor of the `i`-th element of the contiguous block.
__device__ inline index_t strided_position(const Strided& layout, index_t i) {
    index_t position = layout.offset;
    for (int d = layout.rank - 1; d >= 0; --d) {
        position += (i % layout.dims[d]) * layout.strides[d];
        i /= layout.dims[d];
    }
    return position;
}
