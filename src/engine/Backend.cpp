#include "Backend.h"
#include "Errors.h"

#include <utility>

namespace il {

template <typename T>
DeviceBuffer<T>::DeviceBuffer(Backend* backend, size_t count) : m_backend(backend), m_count(count)
{
    if (count > 0) m_data = static_cast<T*>(backend->allocateBytes(count * sizeof(T)));
}

template <typename T> DeviceBuffer<T>::~DeviceBuffer()
{
    reset();
}

template <typename T>
DeviceBuffer<T>::DeviceBuffer(DeviceBuffer&& other) noexcept
    : m_backend(std::exchange(other.m_backend, nullptr)),
      m_data(std::exchange(other.m_data, nullptr)), m_count(std::exchange(other.m_count, 0))
{
}

template <typename T> DeviceBuffer<T>& DeviceBuffer<T>::operator=(DeviceBuffer&& other) noexcept
{
    if (this != &other) {
        reset();
        m_backend = std::exchange(other.m_backend, nullptr);
        m_data = std::exchange(other.m_data, nullptr);
        m_count = std::exchange(other.m_count, 0);
    }
    return *this;
}

template <typename T> void DeviceBuffer<T>::reset()
{
    if (m_data && m_backend) m_backend->freeBytes(m_data);
    m_data = nullptr;
    m_count = 0;
}

Tensor bufferView(float* data, size_t floats, int64_t rows, int64_t cols, size_t offsetFloats)
{
    if (rows < 0 || cols < 0 || offsetFloats + static_cast<size_t>(rows * cols) > floats)
        throw ShapeError("view " + std::to_string(rows) + "x" + std::to_string(cols) +
                         " at offset " + std::to_string(offsetFloats) +
                         " does not fit a buffer of " + std::to_string(floats) + " floats");
    return {data + offsetFloats, {rows, cols}};
}

template class DeviceBuffer<float>;
// Member by member for int32: clang 14 would instantiate the f32-only views of a whole-class
// instantiation despite their requires clauses.
template DeviceBuffer<int32_t>::DeviceBuffer(Backend*, size_t);
template DeviceBuffer<int32_t>::~DeviceBuffer();
template DeviceBuffer<int32_t>::DeviceBuffer(DeviceBuffer&&) noexcept;
template DeviceBuffer<int32_t>& DeviceBuffer<int32_t>::operator=(DeviceBuffer&&) noexcept;
template void DeviceBuffer<int32_t>::reset();

std::vector<float> Backend::toHost(ConstTensor src)
{
    std::vector<float> out(static_cast<size_t>(src.size()));
    if (!out.empty()) download(out.data(), src.data, out.size() * sizeof(float));
    return out;
}

} // namespace il
