// The Session's devices: which backend the next run trains on, what the user asked for, and
// what the worker found when it probed CUDA (on the worker thread: loading the CUDA module can
// take a moment).
#include "Session.h"

#include "CpuKernels.h"
#include "StudioSettings.h"

#include <algorithm>

namespace il::app {

// ---- device ---------------------------------------------------------------------------------

DeviceChoice Session::device() const
{
    DeviceChoice d;
    if (m_backend == "cuda" && m_cudaProbed && m_cuda.available) {
        d.backend = "cuda";
        d.tf32 = m_tf32;
    } else {
        d.threads = m_threads;
    }
    return d;
}

void Session::setCpuThreads(int threads)
{
    threads = std::max(0, threads);
    if (threads == m_threads) return;
    const DeviceChoice before = device();
    m_threads = threads;
    settings::setCpuThreads(threads);
    if (!(device() == before)) emit deviceChanged();
}

void Session::setDevice(const QString& backend, bool tf32, bool remember)
{
    const DeviceChoice before = device();
    m_backend = backend == "cuda" ? "cuda" : "cpu";
    m_tf32 = tf32;
    if (remember) settings::setDevice(m_backend, m_tf32);
    if (!(device() == before)) emit deviceChanged();
}

QString Session::deviceDescription() const
{
    const DeviceChoice d = device();
    if (d.backend == "cuda")
        return "NVIDIA GPU (CUDA) \u2014 " + QString::fromStdString(m_cuda.device) +
               (d.tf32 ? ", TF32" : "");
    return "CPU \u2014 " + m_cpuName;
}

void Session::setBackendProvider(BackendProvider provider)
{
    m_provider = std::move(provider);
    m_worker->setBackendFactory(m_provider.create);
    probeDevices();
}

void Session::probeDevices()
{
    // The CPU's name comes from a backend made on the worker (making one starts a thread team
    // for the thread that makes it).
    m_worker->postAndReply(
        this,
        [probe = m_provider.cudaStatus](ModelState&) {
            BackendStatus status;
            try {
                if (probe)
                    status = probe();
                else
                    status.reason = "this build has no CUDA backend";
            } catch (const std::exception& e) {
                status = BackendStatus{};
                status.reason = e.what();
            }
            status.name = "cuda";
            // The CPU with the SIMD target its kernels use: "AMD EPYC (AVX-512)".
            const QString cpu = QString::fromStdString(createCpuBackend(0)->info().name) + " (" +
                                QString::fromStdString(simd::activeTarget().name) + ")";
            return std::make_pair(cpu, status);
        },
        [this](const std::pair<QString, BackendStatus>& devices) {
            const DeviceChoice before = device();
            m_cpuName = devices.first;
            m_cuda = devices.second;
            m_cudaProbed = true;
            emit devicesChanged();
            if (!(device() == before)) emit deviceChanged();
        });
}

} // namespace il::app
