# cmake -DNVCC=<nvcc> -DINCLUDE=<dir> -DARCH=<90> -DOUT=<dir> -DSOURCES=<a.cu|b.cu> -P check_spills.cmake
# Compiles each source for sm_ARCH with ptxas's spill warnings and fails when a function of ours
# spills registers to local memory; CUDA's own subroutines (named __cuda_*) are only reported.
file(MAKE_DIRECTORY "${OUT}")
string(REPLACE "|" ";" SOURCES "${SOURCES}")
set(failures "")
foreach(source IN LISTS SOURCES)
  get_filename_component(name "${source}" NAME_WE)
  execute_process(
    COMMAND "${NVCC}" -std=c++20 "-I${INCLUDE}" -O3 -cubin "-arch=sm_${ARCH}"
            -Xptxas -warn-spills "${source}" -o "${OUT}/${name}.cubin"
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${name}.cu: nvcc failed (${status}):\n${out}${err}")
  endif()
  string(REGEX MATCHALL "spilled to local memory in function '[^']*'[^\n]*" spills "${out}${err}")
  foreach(spill IN LISTS spills)
    if(spill MATCHES "function .__cuda_")
      message(STATUS "${name}.cu: CUDA's own subroutine ${spill} (allowed)")
    else()
      string(APPEND failures "  ${name}.cu: ${spill}\n")
    endif()
  endforeach()
endforeach()
if(failures)
  message(FATAL_ERROR "Registers spilled in our kernels on sm_${ARCH}:\n${failures}")
endif()
message(STATUS "No kernel of ours spills registers on sm_${ARCH}")
