#include <stdio.h>
#include <time.h>
int main(void) {
    struct timespec a, b; long n = 200000000; unsigned long x = 1;
    for (int rep = 0; rep < 5; rep++) {
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) {
        __asm__ volatile("add %0, %0\n\tadd %0, %0\n\tadd %0, %0\n\tadd %0, %0\n\tadd %0, %0\n\t"
                         "add %0, %0\n\tadd %0, %0\n\tadd %0, %0\n\tadd %0, %0\n\tadd %0, %0" : "+r"(x));
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
    printf("%.3f GHz\n", n * 10.0 / s / 1e9);
    }
    return (int)(x & 1);
}
