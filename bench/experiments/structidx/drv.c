/* perf driver: ./drv MODE reps  (MODE: index|onepass) */
#include "proto.c"
int main(int argc, char** argv)
{
    int64_t n; uint8_t* b = px_load("dbz.jsonl", &n);
    void* o = px_out_new(200000, n);
    int reps = atoi(argv[2]); int64_t r = 0;
    for (int i = 0; i < reps; i++)
        r += !strcmp(argv[1], "index") ? px_index(b, n, 1 << 18, o, 1) : px_onepass(b, n, o, 1);
    printf("%lld\n", (long long)r);
}
