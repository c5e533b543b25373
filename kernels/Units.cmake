# The CUDA backend's translation units, named once for every build that compiles them: the module
# (kernels/CMakeLists.txt), the CPU emulation that testCudaParity runs (tests/cudaemu) and the
# register-spill check on sm_90 (tests/CMakeLists.txt, the units that hold kernels).
set(IRONLEARN_CUDA_KERNEL_UNITS
  CudaLinear ElementwiseKernels EmbeddingKernels NormKernels ReductionKernels)
set(IRONLEARN_CUDA_UNITS CudaBackend CudaMemory CudaModule ${IRONLEARN_CUDA_KERNEL_UNITS})
