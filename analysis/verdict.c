/*
 * verdict.c - the one sentence a user needs: does the schedule explain the measured bubble?
 *
 * The prediction already runs the schedule with each stage's own mean op costs, so a measured
 * bubble well above it is time the schedule does not account for: microbatches or stages that
 * ran slower than their mean, communication, or stalls. A post-validated run is judged by its
 * steady state (iterations back to back) against the simulator's.
 */
#include <math.h>
#include <stdio.h>

#include "analysis.h"

int pps_report_verdict(const struct pps_report *rep, char *buf, size_t len)
{
    double diff;
    int verdict;

    if (!rep || rep->n_iters == 0 || isnan(rep->bubble)) {
        if (len)
            snprintf(buf, len, "no spans with an iteration: nothing to measure");
        return PPS_VERDICT_NONE;
    }
    if (!rep->have_prediction) {
        if (len)
            snprintf(buf, len, "no prediction to compare with: %s", rep->prediction_note);
        return PPS_VERDICT_NONE;
    }
    /* Post-validated iterations overlap: judge them by the steady state, as they ran. */
    if (rep->postval && !isnan(rep->steady_bubble))
        diff = rep->steady_bubble - rep->pred.steady_bubble;
    else
        diff = rep->bubble - rep->pred.bubble;
    if (diff > PPS_VERDICT_MARGIN) {
        verdict = PPS_VERDICT_ABOVE;
        if (len)
            snprintf(buf, len,
                     "measured bubble is %.1f pp above the prediction: imbalance or "
                     "communication, not the schedule",
                     100 * diff);
    } else if (diff < -PPS_VERDICT_MARGIN) {
        verdict = PPS_VERDICT_BELOW;
        if (len)
            snprintf(buf, len,
                     "measured bubble is %.1f pp below the prediction: the run overlapped work "
                     "the simulator runs in sequence, or its op costs varied",
                     -100 * diff);
    } else {
        verdict = PPS_VERDICT_AS_PREDICTED;
        if (len)
            snprintf(buf, len,
                     "measured bubble is within %.0f pp of the prediction: the schedule and the "
                     "measured op costs explain it",
                     100 * PPS_VERDICT_MARGIN);
    }
    return verdict;
}
