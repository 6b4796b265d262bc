// Strided copies between a contiguous tensor and a strided view of another: permutes (a gather
// whose strides are the input's, reordered), slices (a gather from an offset), and the writes of
// a part into a whole (a scatter) that joins and half-batch outputs are made of; and the upper
// triangle of a matrix.

// out[i] = in[strided_position(layout, i)] for the `n` elements of the block.
template <typename T>
__device__ void gather(const T* in, T* out, index_t n, Strided layout) {
    FOR_EACH_ELEMENT(i, n) { out[i] = in[strided_position(layout, i)]; }
}

// out[strided_position(layout, i)] = in[i] for the `n` elements of the block.
template <typename T>
__device__ void scatter(const T* in, T* out, index_t n, Strided layout) {
    FOR_EACH_ELEMENT(i, n) { out[strided_position(layout, i)] = in[i]; }
}

// The upper triangle of the top `rows` rows of a column-major matrix of `cols` columns and
// leading dimension `ld`, zero below the diagonal: the R factor of a QR left in place by geqrf.
template <typename T>
__device__ void upper_triangle(const T* in, T* out, index_t rows, index_t cols, index_t ld) {
    FOR_EACH_ELEMENT(i, rows * cols) {
        index_t row = i % rows, col = i / rows;
        out[i] = row <= col ? in[col * ld + row] : made_of<T>(0.0, 0.0);
    }
}

#define STRIDED_COPIES(T, NAME)                                                              \
    extern "C" __global__ void gather_##NAME(const T* in, T* out, index_t n, Strided layout) { \
        gather(in, out, n, layout);                                                          \
    }                                                                                        \
    extern "C" __global__ void scatter_##NAME(const T* in, T* out, index_t n, Strided layout) { \
        scatter(in, out, n, layout);                                                         \
    }                                                                                        \
    extern "C" __global__ void upper_##NAME(const T* in, T* out, index_t rows, index_t cols,  \
                                            index_t ld) {                                    \
        upper_triangle(in, out, rows, cols, ld);                                             \
    }

STRIDED_COPIES(float, f32)
STRIDED_COPIES(double, f64)
STRIDED_COPIES(c64, c64)
STRIDED_COPIES(c128, c128)
