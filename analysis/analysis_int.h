/*
 * analysis_int.h - what the analysis module's files share, and nobody else uses.
 */
#ifndef PPS_ANALYSIS_INT_H
#define PPS_ANALYSIS_INT_H

#include "analysis.h"

/*
 * Fills rep's mean op costs (tf_ns, tb_ns, tw_ns for rep->n_stages stages, fused_bw, topt_ns)
 * from every compute span of run, and tcomm_ns from the run's metadata. Returns 0 or PPS_ENOMEM.
 */
/* The placement of run's chunks (enum pps_placement): its schedule's, the one the report named
 * or the run's metadata names; a loop where neither says. */
int pps__analysis_placement(const struct pps_run *run, const struct pps_report *rep);

int pps__analysis_costs(const struct pps_run *run, struct pps_report *rep, struct pps_err *err);

/*
 * Simulates the run's schedule with rep's costs into rep->pred and sets have_prediction; when
 * that cannot be done (unknown schedule, missing parameters, a stage with nothing measured),
 * leaves have_prediction 0 and says why in prediction_note. Returns 0, or PPS_ENOMEM only.
 */
int pps__analysis_predict(const struct pps_run *run, struct pps_report *rep, struct pps_err *err);

/*
 * Measures rep->links from the run's messages: a SEND and the RECV (and WAIT) that carry the same
 * message id (corr) on the peer. Returns 0 or PPS_ENOMEM; a run without ids has no links.
 */
int pps__analysis_links(const struct pps_run *run, struct pps_report *rep, struct pps_err *err);

/*
 * The links that carry the communication's cost: those whose extra time (measured transfer minus
 * the tcomm the prediction assumes) is positive and at least half the largest. Their indexes
 * into rep->links go into idx (at most max); returns how many there are.
 */
int pps__analysis_slow_links(const struct pps_report *rep, int *idx, int max);
/* Those links in words: "the link 1->2 takes 3.05 ms per message where the prediction assumes
 * 12.6 us", "links 1->2, 2->1 take ...", "every link takes about ...". */
void pps__analysis_slow_links_text(const struct pps_report *rep, char *buf, size_t len);

/* Whether the host left the stage threads waiting for a core PPS_CONTENTION_MIN of their time
 * or more: their measured times then include those waits. */
int pps__analysis_contended(const struct pps_report *rep);
/* A link's time per message as the analysis takes it: the median over the receives that waited,
 * or, on a contended host (where a woken receiver may wait for a core), its fastest message,
 * which no such wait inflates as it does the others. */
double pps__analysis_link_ns(const struct pps_report *rep, const struct pps_link_stats *l);
/* Whether the links explain time above the prediction: measured above it by more than the
 * tolerance, and the prediction with the links as measured closes the gap (to within the
 * tolerance), or half of it, or rises by more than the tolerance. One rule, for the verdict and
 * the flags alike. */
int pps__analysis_links_matter(const struct pps_report *rep);

/*
 * Stage s's compute (F, B, W, BW) over the run, as the imbalance is judged by it: on a contended
 * host, less the time it waited for a core beyond what the other stages waited (an op that waits
 * for a core runs longer on the clock; the wait all stages share makes none heavier than the
 * others). *less_ns (may be NULL) is what was taken off.
 */
double pps__analysis_stage_compute(const struct pps_report *rep, int s, double *less_ns);

/* Whether no compute span of run carries an iteration (infer.c). */
int pps__analysis_needs_iters(const struct pps_run *run);
/* Where no compute span carries an iteration, a copy of run (*out; its spans its own, the rest
 * shared: free it with pps__analysis_free_copy) whose spans are labelled by the iterations each
 * stage's first forward starts; *out NULL where run is labelled, or has no forward to count by.
 * 0 or PPS_ENOMEM. */
int pps__analysis_infer_iters(const struct pps_run *run, struct pps_run **out, struct pps_err *err);
void pps__analysis_free_copy(struct pps_run *copy);
/* p, m and v where the run's metadata lacks them (rep->inferred says which). Needs the present
 * stages marked. */
void pps__analysis_infer_shape(const struct pps_run *run, struct pps_report *rep);
/* The schedule of a run that names none this ppscope knows: the family its typical iteration's
 * order matches (rep->sched_kind), else that order (rep->observed). 0 or PPS_ENOMEM. */
int pps__analysis_infer_schedule(const struct pps_run *run, struct pps_report *rep,
                                 struct pps_err *err);

/* Every figure of rep that may stay unknown set so (NaN, -1, no observed schedule): where the
 * report starts, from spans or from a summary. */
void pps__analysis_unknown(struct pps_report *rep);

/* What the report takes from the run's metadata alone, after its measurement of the spans: the
 * host (pps__analysis_host), the prediction and the verdict. A report read from a summary
 * (summary.c) is measured there and derived here, as one made from the spans. */
int pps__analysis_derive(const struct pps_run *run, struct pps_report *rep, struct pps_err *err);

/* Fills rep->stage_spans, wait_peer and recv_peer from run's spans (flags.c). 0 or PPS_ENOMEM. */
int pps__analysis_peers(const struct pps_run *run, struct pps_report *rep, struct pps_err *err);

/* Fills rep->host from the runtime's host_* meta keys (host.h). Returns 0. */
int pps__analysis_host(const struct pps_run *run, struct pps_report *rep, struct pps_err *err);

/* Sets each iteration's phase_bubble, sums the whole iterations' idle by phase into
 * rep->total[] and sets rep->phase_bubble, their mean (phase.c).
 * Needs the iterations measured and their partial ones marked. */
void pps__analysis_phase_totals(struct pps_report *rep);

/* Sets the verdict's basis, its measured and predicted figures, spread and tolerance. */
void pps__analysis_judge(struct pps_report *rep);

/* A bubble of a simulation on the verdict's basis: its one iteration for a run with an
 * optimizer barrier, its steady state for a post-validated one. */
double pps__analysis_on_basis(const struct pps_report *rep, const struct pps_sim_result *r);

/* The run's schedule as it ran it: its kind's, generated, or zb-auto built again from the costs
 * and limit in the run's metadata; else its order (rep->observed: a schedule file's, or the
 * spans'), copied (run_schedule.c). 0 or negative, the reason in perr. */
int pps__analysis_generate(const struct pps_run *run, const struct pps_report *rep,
                           struct pps_schedule *sched, struct pps_err *perr);

/* A run of a custom schedule (a schedule file's) keeps its order as rows of ppscope's grid, each
 * shard its stage's (meta schedule_order; sim --trace's one shard every row): read back into
 * rep->observed, validated, for p, m, v as the run says. 1 when it was, 0 when the run keeps none
 * or it is damaged (rep->infer_note says how), PPS_ENOMEM. */
int pps__analysis_stated_order(const struct pps_run *run, struct pps_report *rep,
                               struct pps_err *err);

/* A run made with a pending-W budget (meta stage_w_budget of each rank, the stage) ran its
 * schedule reordered: *sched is replaced by that order where one applies. 0 or negative. */
int pps__analysis_w_budget(const struct pps_run *run, struct pps_schedule *sched,
                           struct pps_err *perr);

/* A side computation's failure rc (a schedule that cannot be made, a simulation that fails):
 * out of memory is the caller's error, set in err ("WHAT: out of memory") and returned; any
 * other is the run's, written to note (prefix, then perr's text) and 0 returned. */
int pps__analysis_note_fail(int rc, const struct pps_err *perr, const char *what,
                            const char *prefix, char *note, size_t len, struct pps_err *err);

/* Appends printf-style text to buf at *used, never past len (the text is cut there). */
void pps__analysis_add(char *buf, size_t len, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
