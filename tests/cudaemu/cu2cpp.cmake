# cmake -DIN=<file.cu> -DOUT=<file.cpp> -P cu2cpp.cmake
# Turns each kernel launch `name<<<grid, block[, shared[, stream]]>>>(args)` into
# `::il_emu::launch(::il_emu::Config(grid, block, ...), name, args)`, the only CUDA syntax that
# C++ cannot parse; everything else is left to the emulated headers.
file(READ "${IN}" text)
set(name "[A-Za-z_][A-Za-z0-9_]*(<[A-Za-z0-9_:, ]*>)?")
# A kernel declared `__launch_bounds__(N) kernel(` in this file: its launches here become
# `::il_emu::Config(...).bounded(N)`, so one with more than N threads per block fails as on a GPU.
set(bounds_re "__launch_bounds__\\(([^()]*)\\)[ \t\r\n]*([A-Za-z_][A-Za-z0-9_]*)")
string(REGEX MATCHALL "${bounds_re}" bounded "${text}")
foreach(declaration IN LISTS bounded)
  string(REGEX MATCH "${bounds_re}" unused "${declaration}")
  set(bound "${CMAKE_MATCH_1}")
  set(kernel "${CMAKE_MATCH_2}")
  string(REGEX REPLACE "([^A-Za-z0-9_:])(${kernel}(<[A-Za-z0-9_:, ]*>)?)[ \t\r\n]*<<<(([^>]|>[^>])*)>>>[ \t\r\n]*\\("
         "\\1::il_emu::launch(::il_emu::Config(\\4).bounded(${bound}), \\2, " text "${text}")
endforeach()
string(REGEX REPLACE "(${name})[ \t\r\n]*<<<(([^>]|>[^>])*)>>>[ \t\r\n]*\\(" 
       "::il_emu::launch(::il_emu::Config(\\3), \\1, " text "${text}")
if(text MATCHES "<<<")
  message(FATAL_ERROR "${IN}: a kernel launch the emulation cannot rewrite is left")
endif()
file(WRITE "${OUT}.tmp" "#line 1 \"${IN}\"\n${text}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
