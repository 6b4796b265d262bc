// Element-wise kernels: the complex conjugate, a real factor per entry of one axis, and the
// conversion between element types.

// out[i] = conj(in[i]).
template <typename T>
__device__ void conjugate(const T* in, T* out, index_t n) {
    FOR_EACH_ELEMENT(i, n) { out[i] = conj_of(in[i]); }
}

// out[i] = in[i] · factors[(i / inner) % axis]: each entry along an axis of `axis` entries, with
// `inner` elements after it, scaled by its factor.
template <typename T>
__device__ void scale_axis(const T* in, T* out, index_t n, const double* factors, index_t axis,
                           index_t inner) {
    FOR_EACH_ELEMENT(i, n) { out[i] = times(in[i], factors[(i / inner) % axis]); }
}

// out[i] = in[i] as `To` (a real type keeps the real part).
template <typename From, typename To>
__device__ void convert(const From* in, To* out, index_t n) {
    FOR_EACH_ELEMENT(i, n) { out[i] = made_of<To>(real_of(in[i]), imag_of(in[i])); }
}

#define PER_TYPE(T, NAME)                                                                    \
    extern "C" __global__ void conj_##NAME(const T* in, T* out, index_t n) {                 \
        conjugate(in, out, n);                                                               \
    }                                                                                        \
    extern "C" __global__ void scale_##NAME(const T* in, T* out, index_t n,                  \
                                            const double* factors, index_t axis,             \
                                            index_t inner) {                                 \
        scale_axis(in, out, n, factors, axis, inner);                                        \
    }

PER_TYPE(float, f32)
PER_TYPE(double, f64)
PER_TYPE(c64, c64)
PER_TYPE(c128, c128)

#define CAST(FROM, FROM_NAME, TO, TO_NAME)                                                   \
    extern "C" __global__ void cast_##FROM_NAME##_to_##TO_NAME(const FROM* in, TO* out,      \
                                                               index_t n) {                  \
        convert(in, out, n);                                                                 \
    }

#define CASTS_FROM(FROM, FROM_NAME)          \
    CAST(FROM, FROM_NAME, float, f32)        \
    CAST(FROM, FROM_NAME, double, f64)       \
    CAST(FROM, FROM_NAME, c64, c64)          \
    CAST(FROM, FROM_NAME, c128, c128)

CASTS_FROM(float, f32)
CASTS_FROM(double, f64)
CASTS_FROM(c64, c64)
CASTS_FROM(c128, c128)
