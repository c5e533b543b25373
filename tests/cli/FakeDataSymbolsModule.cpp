// A library that exports the three names of the CUDA module's entry points as variables, not
// functions: the program must say it is not a CUDA module rather than call into data (which
// crashed `devices` before BackendRegistry checked the symbols' types).
extern "C" {
__attribute__((visibility("default"))) int ironlearn_cuda_abi = 1;
__attribute__((visibility("default"))) char ironlearn_cuda_probe[64] = "not code";
__attribute__((visibility("default"))) const char* ironlearn_cuda_create = "not code either";
}
