/*
 * test_model_learn.c - the model learns: plain AdamW on the default text (the defaults of
 * pps_model_spec_init, as `ppscope run` trains without flags) brings the loss well down within
 * 200 steps, and a second run from the same seed repeats its losses bitwise.
 */
#include <math.h>

#include "model_fixture.h"
#include "test.h"

enum { STEPS = 200, WINDOW = 20, M = 4 };

/* Trains for steps steps through a 2-stage pipeline (fused and split B/W in turn), the losses
 * into loss[]. */
static void train(double *loss, int steps)
{
    struct pps_model_spec s;
    struct pps_model_data *d;
    struct pps_err err = {0};
    struct mx_pipe pp;

    pps_model_spec_init(&s);
    d = mx_data(&s);
    mx_pipe_open(&pp, &s, d, 2, 1, M, NULL);
    for (int it = 0; it < steps; it++) {
        double sumsq = 0;
        mx_pipe_iteration(&pp, it, it % 2 ? MX_ZB : MX_FUSED);
        loss[it] = pp.chunk[1]->ops->loss_sum(pp.chunk[1]) / M;
        for (int vs = 0; vs < pp.n; vs++) {
            double sq;
            size_t nf;
            if (pp.chunk[vs]->ops->grad_stats(pp.chunk[vs], &sq, &nf, &err) < 0)
                mx_die("grad_stats", &err);
            CHECK_EQ_INT(nf, 0);
            sumsq += sq;
        }
        /* Clipping at a global norm of 1, as the runtime's optimizer does. */
        for (int vs = 0; vs < pp.n; vs++) {
            double scale = sqrt(sumsq) > 1.0 ? 1.0 / sqrt(sumsq) : 1.0;
            if (pp.chunk[vs]->ops->step(pp.chunk[vs], scale, it + 1, &err) < 0)
                mx_die("step", &err);
        }
    }
    mx_pipe_close(&pp);
    pps_model_data_free(d);
}

static void test_loss_falls_on_the_default_text(void)
{
    static double loss[STEPS], again[STEPS];
    double first = 0, last = 0;

    train(loss, STEPS);
    for (int i = 0; i < WINDOW; i++) {
        first += loss[i] / WINDOW;
        last += loss[STEPS - WINDOW + i] / WINDOW;
    }
    fprintf(stderr, "  mean loss: first %d steps %.4f, last %d steps %.4f (ln 256 = %.4f)\n",
            WINDOW, first, WINDOW, last, log(256.0));
    CHECK(fabs(loss[0] - log(256.0)) < 0.5);
    CHECK(last < 0.85 * first);

    /* From the same seed, the same losses to the bit (the first steps suffice). */
    train(again, WINDOW);
    CHECK(memcmp(loss, again, WINDOW * sizeof(double)) == 0);
}

static const struct test_case cases[] = {
    TEST(test_loss_falls_on_the_default_text),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
