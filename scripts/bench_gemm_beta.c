/* scripts/bench_gemm_beta.c - times the two ways of computing C = A B^T with
 * OpenBLAS that the CPU backend could take: beta = 0 (OpenBLAS clears C in a
 * pass of its own, its beta kernel, then adds the product), and memset of C
 * followed by beta = 1 (what the backend does). Both must give the same bits;
 * the program checks that and prints, per shape, the best of ten alternated
 * rounds of each. Built with the project (`build/bench_gemm_beta`), linked
 * against the same OpenBLAS as optbench:
 *
 *   OMP_NUM_THREADS=2 build/bench_gemm_beta            the workloads' shapes
 *   OMP_NUM_THREADS=2 build/bench_gemm_beta M N K      one shape
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void product(int way, int m, int n, int k, const float *A, const float *B, float *C)
{
    if (way == 0) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, A, k, B, k, 0.0f, C, n);
    } else {
        memset(C, 0, (size_t)m * n * sizeof *C);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, A, k, B, k, 1.0f, C, n);
    }
}

/* 0 on success, 1 when the two ways differ, 2 out of memory */
static int bench(int m, int n, int k)
{
    float *A = malloc((size_t)m * k * sizeof *A), *B = malloc((size_t)n * k * sizeof *B);
    float *C0 = malloc((size_t)m * n * sizeof *C0), *C1 = malloc((size_t)m * n * sizeof *C1);
    int rc = 0;
    if (!A || !B || !C0 || !C1) {
        fprintf(stderr, "bench_gemm_beta: out of memory for %dx%dx%d\n", m, n, k);
        rc = 2;
        goto out;
    }
    for (long i = 0; i < (long)m * k; i++) A[i] = (float)((i * 7919) % 1000) * 1e-3f - 0.5f;
    for (long i = 0; i < (long)n * k; i++) B[i] = (float)((i * 104729) % 1000) * 1e-3f - 0.5f;
    memset(C0, 0x7f, (size_t)m * n * sizeof *C0); /* garbage that beta = 0 must ignore */
    product(0, m, n, k, A, B, C0);
    product(1, m, n, k, A, B, C1);
    if (memcmp(C0, C1, (size_t)m * n * sizeof *C0) != 0) {
        fprintf(stderr, "bench_gemm_beta: %dx%dx%d: the two ways give different bits\n", m, n, k);
        rc = 1;
    }
    /* about 20 ms of work per timing */
    const double macs = (double)m * n * k;
    int reps = (int)(20e-3 / (macs / 50e9 + 1e-6));
    if (reps < 1) reps = 1;
    double best[2] = {1e30, 1e30};
    for (int round = 0; round < 10; round++)
        for (int way = 0; way < 2; way++) {
            double t0 = now();
            for (int r = 0; r < reps; r++) product(way, m, n, k, A, B, way ? C1 : C0);
            double us = (now() - t0) / reps * 1e6;
            if (us < best[way]) best[way] = us;
        }
    printf("| %d x %d x %d | %.1f | %.1f | %.2f |\n", m, n, k, best[0], best[1], best[0] / best[1]);
out:
    free(A);
    free(B);
    free(C0);
    free(C1);
    return rc;
}

int main(int argc, char **argv)
{
    /* bert-tiny (N = 1024 tokens, d 64, ffn 256, vocab 256, about 150
     * targets) and bert-small (N = 2048, d 256, ffn 1024, vocab 8192, about
     * 300 targets): qkv, fc, head forward; dfg, dln backward */
    static const int shapes[][3] = {{1024, 192, 64}, {1024, 256, 64}, {1024, 64, 256}, {150, 256, 64},
                                    {2048, 768, 256}, {2048, 1024, 256}, {2048, 256, 1024}, {300, 8192, 256}};
    if (argc != 1 && argc != 4) {
        fprintf(stderr, "usage: bench_gemm_beta [M N K]\n");
        return 2;
    }
    printf("| M x N x K | beta = 0 us | memset + beta = 1 us | ratio |\n|---|---|---|---|\n");
    int rc = 0;
    if (argc == 4) {
        int m = atoi(argv[1]), n = atoi(argv[2]), k = atoi(argv[3]);
        if (m < 1 || n < 1 || k < 1) {
            fprintf(stderr, "bench_gemm_beta: M, N and K must be positive integers\n");
            return 2;
        }
        return bench(m, n, k);
    }
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int r = bench(shapes[i][0], shapes[i][1], shapes[i][2]);
        if (r > rc) rc = r;
    }
    return rc;
}
