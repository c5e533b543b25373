// An empty libcuda.so.1: the backend registry only checks that a driver library can be loaded
// before it loads the module, so this makes "a driver is installed" true for the tests.
extern "C" __attribute__((visibility("default"))) int ironlearn_fake_driver(void)
{
    return 1;
}
