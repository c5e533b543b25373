# cmake -DIN=<file.cu> -DOUT=<file.cpp> -P cu2cpp.cmake
# Turns each kernel launch `name<<<grid, block[, shared[, stream]]>>>(args)` into
# `::il_emu::launch(::il_emu::Config(grid, block, ...), name, args)`, the only CUDA syntax that
# C++ cannot parse; everything else is left to the emulated headers.
file(READ "${IN}" text)
set(name "[A-Za-z_][A-Za-z0-9_]*(<[A-Za-z0-9_:, ]*>)?")
string(REGEX REPLACE "(${name})[ \t\r\n]*<<<(([^>]|>[^>])*)>>>[ \t\r\n]*\\(" 
       "::il_emu::launch(::il_emu::Config(\\3), \\1, " text "${text}")
if(text MATCHES "<<<")
  message(FATAL_ERROR "${IN}: a kernel launch the emulation cannot rewrite is left")
endif()
file(WRITE "${OUT}.tmp" "#line 1 \"${IN}\"\n${text}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
