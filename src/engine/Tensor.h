// Tensors are non-owning f32 views of backend memory: a pointer plus a 2-D row-major shape.
// Memory is owned by a Buffer (move-only, RAII), allocated through a Backend. On the CPU
// backend the pointer is host memory; on CUDA it is device memory and must never be
// dereferenced on the host. Everything a network needs is a matrix (batch x features), so
// shapes are two-dimensional; vectors are 1 x n.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

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
    ConstTensor rowSlice(int64_t first, int64_t count) const
    {
        return {data + first * shape.cols, {count, shape.cols}};
    }
};

// Owns one allocation on a backend. Move-only: copying device memory must be explicit
// (Backend::copy), never an accident of a copy constructor.
class Buffer {
public:
    Buffer() = default;
    Buffer(Backend* backend, size_t floats);
    ~Buffer();
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    Buffer(Buffer&& other) noexcept;
    Buffer& operator=(Buffer&& other) noexcept;

    float* data() const { return m_data; }
    size_t floats() const { return m_floats; }
    Backend* backend() const { return m_backend; }
    // A view of the whole buffer (or its first rows*cols floats) with the given shape.
    Tensor view(int64_t rows, int64_t cols, size_t offsetFloats = 0) const;
    Tensor view(Shape s, size_t offsetFloats = 0) const
    {
        return view(s.rows, s.cols, offsetFloats);
    }
    void reset();

private:
    Backend* m_backend = nullptr;
    float* m_data = nullptr;
    size_t m_floats = 0;
};

// Ids (token ids, row indices) are int32 on every backend.
class IndexBuffer {
public:
    IndexBuffer() = default;
    IndexBuffer(Backend* backend, size_t count);
    ~IndexBuffer();
    IndexBuffer(const IndexBuffer&) = delete;
    IndexBuffer& operator=(const IndexBuffer&) = delete;
    IndexBuffer(IndexBuffer&& other) noexcept;
    IndexBuffer& operator=(IndexBuffer&& other) noexcept;

    int32_t* data() const { return m_data; }
    size_t count() const { return m_count; }
    void reset();

private:
    Backend* m_backend = nullptr;
    int32_t* m_data = nullptr;
    size_t m_count = 0;
};

} // namespace il
