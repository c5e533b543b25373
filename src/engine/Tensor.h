// Tensors are non-owning f32 views of backend memory: a pointer plus a 2-D row-major shape.
// Memory is owned by a Buffer (move-only, RAII), allocated through a Backend. On the CPU
// backend the pointer is host memory; on CUDA it is device memory and must never be
// dereferenced on the host. Everything a network needs is a matrix (batch x features), so
// shapes are two-dimensional; vectors are 1 x n.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace il {

class Backend;

struct Shape {
    int64_t rows = 0;
    int64_t cols = 0;
    int64_t size() const { return rows * cols; }
    bool operator==(const Shape&) const = default;
    std::string toString() const { return std::to_string(rows) + "x" + std::to_string(cols); }
};

// A mutable view. Cheap to copy; does not own its memory.
struct Tensor {
    float* data = nullptr;
    Shape shape;

    int64_t rows() const { return shape.rows; }
    int64_t cols() const { return shape.cols; }
    int64_t size() const { return shape.size(); }
    bool empty() const { return data == nullptr || shape.size() == 0; }
    // Rows [first, first + count) as a view (row-major, so still contiguous).
    Tensor rowSlice(int64_t first, int64_t count) const
    {
        return {data + first * shape.cols, {count, shape.cols}};
    }
    Tensor reshaped(int64_t rows, int64_t cols) const { return {data, {rows, cols}}; }
};

// Read-only view, implicitly made from a Tensor.
struct ConstTensor {
    const float* data = nullptr;
    Shape shape;

    ConstTensor() = default;
    ConstTensor(const float* d, Shape s) : data(d), shape(s) {}
    ConstTensor(const Tensor& t) : data(t.data), shape(t.shape) {} // NOLINT(implicit)

    int64_t rows() const { return shape.rows; }
    int64_t cols() const { return shape.cols; }
    int64_t size() const { return shape.size(); }
    bool empty() const { return data == nullptr || shape.size() == 0; }
    ConstTensor rowSlice(int64_t first, int64_t count) const
    {
        return {data + first * shape.cols, {count, shape.cols}};
    }
};

// Owns one allocation of `count` elements of T on a backend. Move-only: copying device memory
// must be explicit (Backend::copy), never an accident of a copy constructor. Two kinds exist:
// Buffer (f32 values, viewed as Tensors) and IndexBuffer (int32 ids: token ids, row indices).
// rows x cols floats of data from offsetFloats (Buffer::view); ShapeError if they do not fit in
// `floats`.
Tensor bufferView(float* data, size_t floats, int64_t rows, int64_t cols, size_t offsetFloats);

template <typename T> class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(Backend* backend, size_t count);
    ~DeviceBuffer();
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& other) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;

    T* data() const { return m_data; }
    size_t count() const { return m_count; }
    Backend* backend() const { return m_backend; }
    void reset();

    // f32 buffers: the element count, and views of the whole buffer (or its first rows*cols
    // floats from an offset) with the given shape. Throws ShapeError if the view does not fit.
    size_t floats() const requires std::is_same_v<T, float> { return m_count; }
    Tensor view(int64_t rows, int64_t cols,
                size_t offsetFloats = 0) const requires std::is_same_v<T, float>
    {
        return bufferView(m_data, m_count, rows, cols, offsetFloats);
    }
    Tensor view(Shape s, size_t offsetFloats = 0) const requires std::is_same_v<T, float>
    {
        return view(s.rows, s.cols, offsetFloats);
    }

private:
    Backend* m_backend = nullptr;
    T* m_data = nullptr;
    size_t m_count = 0;
};

using Buffer = DeviceBuffer<float>;
using IndexBuffer = DeviceBuffer<int32_t>; // ids are int32 on every backend

// Both are instantiated once, in Backend.cpp.
extern template class DeviceBuffer<float>;
extern template class DeviceBuffer<int32_t>;

} // namespace il
