/*
 * labels.h - what an NVTX range name says about the pipeline: the naming rules that both the NVTX
 * injection (tracer/nvtx/) and the importers (import_nsys.c, import_kineto.c) apply, so that one
 * program traced either way gives one run. Pure functions (no NVTX, no tracer, no SQLite, no
 * I/O), so each rule is unit-tested on its own (tests/unit/test_labels.c). Kinds are enum
 * pps_span_kind (the same numbers as the tracer's PPS_TRACE_*).
 *
 * A name is tried against three rules, in order (docs/nvtx.md has the user's side):
 *
 *   (a) PyTorch pipelining's action labels, "PP:" + str(_Action): the stage index, the action
 *       type and the microbatch, e.g. "PP:0F3", "PP:2I0", "PP:1W5", "PP:3B2", "PP:0SEND_F1".
 *       F = forward (F), I = backward input (ppscope's B), W = weight (W), B = full backward
 *       (BW), BW = full backward of older releases (BW); SEND_F / SEND_B are SEND, RECV_F /
 *       RECV_B are RECV, with the peer the next or previous stage. Spaces, '_', '-', '.' or ':'
 *       may separate the parts; what PyTorch's emit_nvtx appends after a comma (", seq = 3,
 *       op_id = 7") is ignored. UNSHARD, RESHARD, REDUCE_GRAD and compound actions are not
 *       pipeline ops. Also the single-stage schedules' "Forward 3" (F) and "Backward 3" (BW),
 *       which have no stage.
 *   (b) ppscope's own naming: "pps:" then, in any order and separated by spaces or commas, one
 *       kind word (F, B, W, BW, SEND, RECV, WAIT, OPT, or a spelling of one, see
 *       pps_label_kind_parse) and KEY=VALUE pairs with keys stage, mb, chunk, iter, peer, bytes:
 *       "pps:F stage=2 mb=3 chunk=0". A name with iter=N and no kind ("pps:iter=4", or the kind
 *       ITER) marks the start of iteration N. A repeated or unknown key, a second kind, or a value
 *       that is not a non-negative integer make the name malformed: it is not a pipeline op.
 *   (c) A user's POSIX extended regex whose capture groups are named, in order, by a list such
 *       as "kind,stage,mb"; without a kind group the kind is fixed by the user.
 *
 * A name that none of them takes is "not a pipeline op": the injection keeps it as a named range.
 * pps_label_step() reads the iteration of other tools' step ranges ("ProfilerStep#3").
 */
#ifndef PPS_LABELS_H
#define PPS_LABELS_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "pps_error.h"

/* op.kind of an iteration marker ("pps:iter=3"); the other kinds are enum pps_span_kind. */
#define PPS_LABEL_ITER 64

/* Which rule took a name (pps_label_match's return value). */
enum pps_label_rule {
    PPS_LABEL_NONE = 0,  /* not a pipeline op */
    PPS_LABEL_TORCH = 1, /* (a) PyTorch "PP:" label */
    PPS_LABEL_PPS = 2,   /* (b) "pps:" name */
    PPS_LABEL_REGEX = 3, /* (c) the user's regex */
};

/* A pipeline op read from a name. -1 in any field: the name does not say. */
struct pps_label_op {
    int kind; /* PPS_SPAN_F ... PPS_SPAN_OPT, or PPS_LABEL_ITER */
    int stage;
    int chunk;
    int mb;
    int iter;
    int peer;
    int64_t bytes;
};

/* The fields a regex capture group can fill (PPSCOPE_NVTX_GROUPS). */
enum pps_label_field {
    PPS_LABEL_FIELD_SKIP = 0,
    PPS_LABEL_FIELD_KIND,
    PPS_LABEL_FIELD_STAGE,
    PPS_LABEL_FIELD_CHUNK,
    PPS_LABEL_FIELD_MB,
    PPS_LABEL_FIELD_ITER,
    PPS_LABEL_FIELD_PEER,
    PPS_LABEL_FIELD_BYTES,
};

#define PPS_LABEL_MAX_GROUPS 16

/* The rules' settings. Held by the caller: _init, then the _set_ functions, then _release. */
struct pps_label_patterns {
    /* (a): 1 when PyTorch's "B" means the input backward (releases before "I" existed). */
    int torch_b_is_input;
    /* (a): with stages > 0, PyTorch's virtual stage s (0 .. stages*v-1) becomes stage and chunk:
     * chunk = s / stages, stage = s % stages ("loop"), reversed on odd chunks with vshape. */
    int stages;
    int vshape;
    /* (c) */
    int have_regex;
    regex_t regex;
    int n_groups;
    int group_field[PPS_LABEL_MAX_GROUPS]; /* enum pps_label_field of capture group i + 1 */
    int fixed_kind;                        /* kind when no kind group matched; 0: none */
};

/* Rules (a) and (b) with PyTorch's current naming, and no regex. */
void pps_label_patterns_init(struct pps_label_patterns *p);
/* Frees the compiled regex. The struct may be initialised again afterwards. */
void pps_label_patterns_release(struct pps_label_patterns *p);

/*
 * Rule (c) from the three settings (PPSCOPE_NVTX_REGEX, _GROUPS, _KIND; each may be NULL or
 * empty). groups is a comma-separated list naming each capture group in order: kind, stage, mb
 * (or microbatch), chunk, iter, peer, bytes, or "_" / "" for a group to ignore. kind is a kind
 * spelling (pps_label_kind_parse). The regex needs a kind from one or the other. On a bad
 * setting (a regex that does not compile, an unknown field, more groups named than the regex
 * has, no kind, groups or kind without a regex) returns PPS_EINVAL with a one-line reason that
 * names the variable, and leaves p without a regex. All three empty: no regex, returns 0.
 */
int pps_label_patterns_set_regex(struct pps_label_patterns *p, const char *regex,
                                 const char *groups, const char *kind, struct pps_err *err);

/*
 * Rule (a)'s settings: b_means ("full", the default, or "input": PPSCOPE_NVTX_TORCH_B), stages
 * (a count of ranks, PPSCOPE_NVTX_STAGES) and order ("loop", the default, or "v":
 * PPSCOPE_NVTX_STAGE_ORDER); each may be NULL or empty. A bad value is PPS_EINVAL with a reason,
 * and leaves that setting as it was.
 */
int pps_label_patterns_set_torch(struct pps_label_patterns *p, const char *b_means,
                                 const char *stages, const char *order, struct pps_err *err);

/*
 * Tries the rules on name, in order. Returns the rule that took it (enum pps_label_rule) with the
 * op in *op, or PPS_LABEL_NONE with *op all -1. Thread-safe (regexec on a compiled regex).
 */
int pps_label_match(const struct pps_label_patterns *p, const char *name, struct pps_label_op *op);

/* The rules one by one (for tests): 1 and *op filled when the rule takes name, else 0. */
int pps_label_match_torch(const struct pps_label_patterns *p, const char *name,
                          struct pps_label_op *op);
int pps_label_match_pps(const char *name, struct pps_label_op *op);
int pps_label_match_regex(const struct pps_label_patterns *p, const char *name,
                          struct pps_label_op *op);

/*
 * A kind from its common spellings, case-insensitive, '-' the same as '_': F (f, fwd, forward,
 * fprop), B (b, i, bwd_input, backward_input, bi, bx, dgrad, igrad, bgrad, input_grad), W (w,
 * bwd_weight, backward_weight, bw_weight, wgrad, weight, weight_grad), BW (bw, bwd, backward,
 * bprop, full_backward), SEND (send, isend, send_f, send_b), RECV (recv, irecv, receive, recv_f,
 * recv_b), WAIT (wait), OPT (opt, optim, optimizer, optimizer_step), PPS_LABEL_ITER (iter,
 * iteration). Returns the kind, or -1. len is the text's length (text need not end there).
 */
int pps_label_kind_parse(const char *text, size_t len);

/*
 * Copies name into out (n bytes, n >= 1) without what PyTorch's emit_nvtx appends to a range's
 * name (", seq = N", ", op_id = N", ", sizes = [...]", ", input_op_ids = ..."), so that every
 * call of one op has one name; cut to n - 1 bytes at a UTF-8 character boundary. Returns the
 * length written.
 */
size_t pps_label_clean_name(const char *name, char *out, size_t n);
/* The length pps_label_clean_name() would write, without copying: the name is name[0..len). */
size_t pps_label_clean_len(const char *name, size_t n);

/*
 * Encodes a wide string (UTF-32, or UTF-16 where wchar_t has 16 bits) as UTF-8 into out (n
 * bytes, n >= 1), cut at a character boundary; an invalid code point becomes U+FFFD. NULL is
 * the empty string. Returns the length written.
 */
size_t pps_label_utf8_from_wide(const wchar_t *ws, char *out, size_t n);

/*
 * The iteration a range of another tool's naming stands for, the step that it spans: PyTorch's
 * profiler "ProfilerStep#N", and "step N", "iteration N", "iter N" (case-insensitive; ' ', '_',
 * '#', ':' or '=' between word and number; "train_step 3" is not one: the word starts the
 * name). Returns 1 with *iter = N, else 0. The "pps:iter=N" marks are rule (b)'s.
 */
int pps_label_step(const char *name, int *iter);

#endif
