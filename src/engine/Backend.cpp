#include "Backend.h"
#include "Errors.h"

#include <utility>

namespace il {

Buffer::Buffer(Backend* backend, size_t floats) : m_backend(backend), m_floats(floats)
{
    if (floats > 0) m_data = static_cast<float*>(backend->allocateBytes(floats * sizeof(float)));
}

Buffer::~Buffer()
{
    reset();
}

Buffer::Buffer(Buffer&& other) noexcept
    : m_backend(std::exchange(other.m_backend, nullptr)),
      m_data(std::exchange(other.m_data, nullptr)), m_floats(std::exchange(other.m_floats, 0))
{
}

Buffer& Buffer::operator=(Buffer&& other) noexcept
{
    if (this != &other) {
        reset();
        m_backend = std::exchange(other.m_backend, nullptr);
        m_data = std::exchange(other.m_data, nullptr);
        m_floats = std::exchange(other.m_floats, 0);
    }
    return *this;
}

void Buffer::reset()
{
    if (m_data && m_backend) m_backend->freeBytes(m_data);
    m_data = nullptr;
    m_floats = 0;
}

Tensor Buffer::view(int64_t rows, int64_t cols, size_t offsetFloats) const
{
    if (rows < 0 || cols < 0 || offsetFloats + static_cast<size_t>(rows * cols) > m_floats)
        throw ShapeError("view " + std::to_string(rows) + "x" + std::to_string(cols) +
                         " at offset " + std::to_string(offsetFloats) +
                         " does not fit a buffer of " + std::to_string(m_floats) + " floats");
    return {m_data + offsetFloats, {rows, cols}};
}

IndexBuffer::IndexBuffer(Backend* backend, size_t count) : m_backend(backend), m_count(count)
{
    if (count > 0) m_data = static_cast<int32_t*>(backend->allocateBytes(count * sizeof(int32_t)));
}

IndexBuffer::~IndexBuffer()
{
    reset();
}

IndexBuffer::IndexBuffer(IndexBuffer&& other) noexcept
    : m_backend(std::exchange(other.m_backend, nullptr)),
      m_data(std::exchange(other.m_data, nullptr)), m_count(std::exchange(other.m_count, 0))
{
}

IndexBuffer& IndexBuffer::operator=(IndexBuffer&& other) noexcept
{
    if (this != &other) {
        reset();
        m_backend = std::exchange(other.m_backend, nullptr);
        m_data = std::exchange(other.m_data, nullptr);
        m_count = std::exchange(other.m_count, 0);
    }
    return *this;
}

void IndexBuffer::reset()
{
    if (m_data && m_backend) m_backend->freeBytes(m_data);
    m_data = nullptr;
    m_count = 0;
}

std::vector<float> Backend::toHost(ConstTensor src)
{
    std::vector<float> out(static_cast<size_t>(src.size()));
    if (!out.empty()) download(out.data(), src.data, out.size() * sizeof(float));
    return out;
}

} // namespace il
