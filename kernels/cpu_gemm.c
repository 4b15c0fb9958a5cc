/*
 * cpu_gemm.c - the cpu backend's GEMM: CBLAS (OpenBLAS) when the build has BLAS, a plain C loop
 * nest otherwise. Both are deterministic: OpenBLAS runs on one thread (see pps__cpu_gemm_init),
 * and the loops below add in a fixed order.
 */
#include <stdint.h>

#include "cpu.h"
#include "pps_config.h"

#ifdef PPS_HAVE_BLAS
#include <cblas.h>
#endif

void pps__cpu_gemm_init(void)
{
#ifdef PPS_HAVE_BLAS
    /*
     * One OpenBLAS thread per call, for the whole process. The pipeline runs one stage per
     * thread already: p stages each asking OpenBLAS for every core would oversubscribe the
     * machine, and calls from several threads into OpenBLAS's shared pool would serialize on it.
     * A single thread also leaves nothing in how a product is split up to depend on the machine's
     * load, so the same call gives the same bits from any thread (kernels.h, Determinism).
     * This is OpenBLAS's pthreads build (what pkg-config openblas names on Debian); its OpenMP
     * build keeps the count per thread, and needs OMP_NUM_THREADS=1 as well (docs/kernels.md).
     */
    openblas_set_num_threads(1);
#endif
}

#ifdef PPS_HAVE_BLAS

int pps__cpu_gemm(struct pps_kernels *k, int trans_a, int trans_b, int m, int n, int kdim,
                  float alpha, const float *a, const float *b, float beta, float *c)
{
    /* Leading dimensions of the stored (row-major) matrices; BLAS wants them >= 1 even when
     * kdim is 0 and the matrix is empty. */
    int lda = trans_a ? m : kdim, ldb = trans_b ? kdim : n;

    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, kdim, alpha, a, lda > 0 ? lda : 1, b,
                ldb > 0 ? ldb : 1, beta, c, n);
    return 0;
}

#else

/* Row i of C = beta * C, or zeros for beta == 0 (BLAS semantics: C is then not read). */
static void scale_row(float *c, int n, float beta)
{
    if (beta == 0.0f) {
        for (int j = 0; j < n; j++)
            c[j] = 0.0f;
    } else if (beta != 1.0f) {
        for (int j = 0; j < n; j++)
            c[j] *= beta;
    }
}

/*
 * The fallback for builds without BLAS: correct and deterministic, not fast. Each element of C
 * is beta * C plus the products added in order of p. With B not transposed, rows of B are added
 * into a row of C (contiguous inner loop); with B transposed, each element is a dot product of
 * two contiguous rows.
 */
int pps__cpu_gemm(struct pps_kernels *k, int trans_a, int trans_b, int m, int n, int kdim,
                  float alpha, const float *a, const float *b, float beta, float *c)
{
    for (int i = 0; i < m; i++) {
        float *ci = c + (size_t)i * n;
        if (!trans_b) {
            scale_row(ci, n, beta);
            for (int p = 0; p < kdim; p++) {
                float aip = trans_a ? a[(size_t)p * m + i] : a[(size_t)i * kdim + p];
                const float *bp = b + (size_t)p * n;
                aip *= alpha;
                for (int j = 0; j < n; j++)
                    ci[j] += aip * bp[j];
            }
        } else {
            for (int j = 0; j < n; j++) {
                const float *bj = b + (size_t)j * kdim;
                float s = 0.0f;
                if (trans_a) {
                    for (int p = 0; p < kdim; p++)
                        s += a[(size_t)p * m + i] * bj[p];
                } else {
                    const float *ai = a + (size_t)i * kdim;
                    for (int p = 0; p < kdim; p++)
                        s += ai[p] * bj[p];
                }
                ci[j] = beta == 0.0f ? alpha * s : alpha * s + beta * ci[j];
            }
        }
    }
    return 0;
}

#endif
