/*
 * test_labels.c - the naming rules of NVTX ranges (storage/labels.c) that the NVTX injection and
 * the importers share, table by table: every PyTorch label spelling, ppscope's "pps:" names, the
 * user regex and its settings, the fallbacks and malformed names; and the two string helpers
 * (emit_nvtx decorations, wide strings).
 */
#include <wchar.h>

#include "labels.h"
#include "storage.h"
#include "test.h"

enum { F = PPS_SPAN_F, B = PPS_SPAN_B, W = PPS_SPAN_W, BW = PPS_SPAN_BW };
enum { SEND = PPS_SPAN_SEND, RECV = PPS_SPAN_RECV, WAIT = PPS_SPAN_WAIT, OPT = PPS_SPAN_OPT };
enum { ITER = PPS_LABEL_ITER, NONE = PPS_LABEL_NONE, TORCH = PPS_LABEL_TORCH };
enum { PPS = PPS_LABEL_PPS, REGEX = PPS_LABEL_REGEX };

struct row {
    const char *name;
    int rule; /* enum pps_label_rule */
    int kind, stage, chunk, mb, iter, peer;
    int64_t bytes;
};

/* Runs every row through pps_label_match with p; reports each mismatch with the row's name. */
static void check_rows(const struct pps_label_patterns *p, const struct row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct row *r = &rows[i];
        struct pps_label_op op;
        int rule = pps_label_match(p, r->name, &op);
        int ok = rule == r->rule;
        if (r->rule == NONE)
            ok = ok && op.kind == -1 && op.stage == -1 && op.mb == -1;
        else
            ok = ok && op.kind == r->kind && op.stage == r->stage && op.chunk == r->chunk &&
                 op.mb == r->mb && op.iter == r->iter && op.peer == r->peer && op.bytes == r->bytes;
        if (!ok) {
            fprintf(stderr,
                    "  \"%s\": rule %d kind %d stage %d chunk %d mb %d iter %d peer %d bytes %lld;"
                    " expected rule %d kind %d stage %d chunk %d mb %d iter %d peer %d bytes "
                    "%lld\n",
                    r->name, rule, op.kind, op.stage, op.chunk, op.mb, op.iter, op.peer,
                    (long long)op.bytes, r->rule, r->kind, r->stage, r->chunk, r->mb, r->iter,
                    r->peer, (long long)r->bytes);
            CHECK(ok);
        }
    }
}

/* Every name must be "not a pipeline op", with the op all -1. */
static void check_none(const struct pps_label_patterns *p, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct pps_label_op op;
        int rule = pps_label_match(p, names[i], &op);
        if (rule != NONE || op.kind != -1 || op.stage != -1 || op.mb != -1 || op.bytes != -1) {
            fprintf(stderr, "  \"%s\": rule %d kind %d, expected no pipeline op\n",
                    names[i] ? names[i] : "(null)", rule, op.kind);
            CHECK(0);
        }
    }
}

#define N_ROWS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- (a) PyTorch ------------------------------------------------------------------------ */

static void test_torch_labels_every_action_type(void)
{
    static const struct row rows[] = {
        {"PP:0F3", TORCH, F, 0, 0, 3, -1, -1, -1},
        {"PP:2I0", TORCH, B, 2, 0, 0, -1, -1, -1},
        {"PP:1W5", TORCH, W, 1, 0, 5, -1, -1, -1},
        {"PP:3B2", TORCH, BW, 3, 0, 2, -1, -1, -1},
        {"PP:3BW2", TORCH, BW, 3, 0, 2, -1, -1, -1},
        {"PP:12F107", TORCH, F, 12, 0, 107, -1, -1, -1},
        {"PP:0SEND_F1", TORCH, SEND, 0, 0, 1, -1, 1, -1},
        {"PP:2RECV_F1", TORCH, RECV, 2, 0, 1, -1, 1, -1},
        {"PP:2SEND_B4", TORCH, SEND, 2, 0, 4, -1, 1, -1},
        {"PP:1RECV_B4", TORCH, RECV, 1, 0, 4, -1, 2, -1},
        {"PP:0RECV_F0", TORCH, RECV, 0, 0, 0, -1, -1, -1}, /* no stage before 0 */
        {"PP:0SEND_B0", TORCH, SEND, 0, 0, 0, -1, -1, -1},
        {"PP:1F", TORCH, F, 1, 0, -1, -1, -1, -1}, /* PyTorch omits a missing microbatch */
    };
    struct pps_label_patterns p;
    pps_label_patterns_init(&p);
    check_rows(&p, rows, N_ROWS(rows));
    pps_label_patterns_release(&p);
}

static void test_torch_labels_tolerate_separators_and_emit_nvtx_suffixes(void)
{
    static const struct row rows[] = {
        {"PP: 0F3", TORCH, F, 0, 0, 3, -1, -1, -1},
        {"PP:0 F 3", TORCH, F, 0, 0, 3, -1, -1, -1},
        {"PP:0_F_3", TORCH, F, 0, 0, 3, -1, -1, -1},
        {"PP:0-I-3", TORCH, B, 0, 0, 3, -1, -1, -1},
        {"PP:0.W.3", TORCH, W, 0, 0, 3, -1, -1, -1},
        {"PP:0:SEND_F:3", TORCH, SEND, 0, 0, 3, -1, 1, -1},
        {"PP:0SEND_F_3", TORCH, SEND, 0, 0, 3, -1, 1, -1},
        {"PP:0F3  ", TORCH, F, 0, 0, 3, -1, -1, -1},
        {"PP:0F3, seq = 12, op_id = 40", TORCH, F, 0, 0, 3, -1, -1, -1},
        {"PP:1I2, op_id = 7", TORCH, B, 1, 0, 2, -1, -1, -1},
    };
    struct pps_label_patterns p;
    pps_label_patterns_init(&p);
    check_rows(&p, rows, N_ROWS(rows));
    pps_label_patterns_release(&p);
}

static void test_torch_single_stage_schedule_labels(void)
{
    static const struct row rows[] = {
        {"Forward 3", TORCH, F, -1, 0, 3, -1, -1, -1},
        {"Backward 0", TORCH, BW, -1, 0, 0, -1, -1, -1},
        {"Backward 12, op_id = 9", TORCH, BW, -1, 0, 12, -1, -1, -1},
    };
    static const char *const names[] = {"Forward",   "Forward x",   "Forward 3x",
                                        "forward 3", "Backward  3", "Forward 3 of 8"};
    struct pps_label_patterns p;
    pps_label_patterns_init(&p);
    check_rows(&p, rows, N_ROWS(rows));
    check_none(&p, names, N_ROWS(names));
    pps_label_patterns_release(&p);
}

static void test_torch_actions_that_are_not_pipeline_ops_fall_back(void)
{
    static const char *const names[] = {
        "PP:0UNSHARD",
        "PP:1RESHARD",
        "PP:1REDUCE_GRAD",
        "PP:0SEND_F_RECV_B3",
        "PP:(0F1;1B0)OVERLAP_F_B",
        "PP:0X3",
        "PP:F3",
        "PP:",
        "PP:0F3x",
        "PP:0FORWARD",
        "PP:0F3 extra",
        "pp:0F3", /* PyTorch writes "PP:" */
        "XPP:0F3",
        "PP:99999999999F1", /* stage out of range */
        "PP:0F99999999999",
        "",
    };
    struct pps_label_patterns p;
    pps_label_patterns_init(&p);
    check_none(&p, names, N_ROWS(names));
    pps_label_patterns_release(&p);
}

static void test_torch_b_means_input_in_older_releases(void)
{
    static const struct row rows[] = {
        {"PP:3B2", TORCH, B, 3, 0, 2, -1, -1, -1},
        {"PP:3BW2", TORCH, BW, 3, 0, 2, -1, -1, -1},
        {"PP:3I2", TORCH, B, 3, 0, 2, -1, -1, -1},
    };
    struct pps_label_patterns p;
    struct pps_err err = {0};
    pps_label_patterns_init(&p);
    CHECK_EQ_INT(pps_label_patterns_set_torch(&p, "input", NULL, NULL, &err), 0);
    check_rows(&p, rows, N_ROWS(rows));
    CHECK_EQ_INT(pps_label_patterns_set_torch(&p, "FULL", NULL, NULL, &err), 0);
    CHECK_EQ_INT(p.torch_b_is_input, 0);
    pps_label_patterns_release(&p);
}

static void test_torch_virtual_stages_map_to_stage_and_chunk(void)
{
    /* 4 ranks, 2 chunks each. Loop: virtual stage 5 is rank 1's second chunk. */
    static const struct row loop[] = {
        {"PP:5F0", TORCH, F, 1, 1, 0, -1, -1, -1},
        {"PP:3F0", TORCH, F, 3, 0, 0, -1, -1, -1},
        {"PP:3SEND_F0", TORCH, SEND, 3, 0, 0, -1, 0, -1}, /* to virtual 4 = rank 0 */
        {"PP:4RECV_F0", TORCH, RECV, 0, 1, 0, -1, 3, -1},
    };
    /* V shape: ranks hold stages r and 2p-1-r; virtual 5 is rank 2's second chunk. */
    static const struct row vshape[] = {
        {"PP:5I1", TORCH, B, 2, 1, 1, -1, -1, -1},
        {"PP:7W1", TORCH, W, 0, 1, 1, -1, -1, -1},
        {"PP:3SEND_F0", TORCH, SEND, 3, 0, 0, -1, 3, -1}, /* to virtual 4, also on rank 3 */
    };
    struct pps_label_patterns p;
    struct pps_err err = {0};
    pps_label_patterns_init(&p);
    CHECK_EQ_INT(pps_label_patterns_set_torch(&p, NULL, "4", NULL, &err), 0);
    check_rows(&p, loop, N_ROWS(loop));
    CHECK_EQ_INT(pps_label_patterns_set_torch(&p, NULL, NULL, "v", &err), 0);
    check_rows(&p, vshape, N_ROWS(vshape));
    pps_label_patterns_release(&p);
}

static void test_torch_settings_reject_bad_values(void)
{
    struct pps_label_patterns p;
    struct pps_err err = {0};
    pps_label_patterns_init(&p);
    CHECK_EQ_INT(pps_label_patterns_set_torch(&p, "half", NULL, NULL, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "PPSCOPE_NVTX_TORCH_B");
    CHECK_EQ_INT(pps_label_patterns_set_torch(&p, NULL, "0", NULL, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "PPSCOPE_NVTX_STAGES");
    CHECK_EQ_INT(pps_label_patterns_set_torch(&p, NULL, "four", NULL, &err), PPS_EINVAL);
    CHECK_EQ_INT(pps_label_patterns_set_torch(&p, NULL, NULL, "zigzag", &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "PPSCOPE_NVTX_STAGE_ORDER");
    CHECK_EQ_INT(p.torch_b_is_input, 0);
    CHECK_EQ_INT(p.stages, 0);
    CHECK_EQ_INT(p.vshape, 0);
    pps_label_patterns_release(&p);
}

/* ---- (b) ppscope's names ---------------------------------------------------------------- */

static void test_pps_names_every_kind_and_key(void)
{
    static const struct row rows[] = {
        {"pps:F stage=2 mb=3 chunk=0", PPS, F, 2, 0, 3, -1, -1, -1},
        {"pps:B stage=1 mb=0", PPS, B, 1, -1, 0, -1, -1, -1},
        {"pps:W mb=7", PPS, W, -1, -1, 7, -1, -1, -1},
        {"pps:BW stage=0 mb=1 iter=4", PPS, BW, 0, -1, 1, 4, -1, -1},
        {"pps:SEND stage=1 peer=2 mb=3 bytes=4096", PPS, SEND, 1, -1, 3, -1, 2, 4096},
        {"pps:RECV stage=2 peer=1 mb=3 bytes=9000000000", PPS, RECV, 2, -1, 3, -1, 1, 9000000000},
        {"pps:WAIT stage=2 peer=1", PPS, WAIT, 2, -1, -1, -1, 1, -1},
        {"pps:OPT stage=3", PPS, OPT, 3, -1, -1, -1, -1, -1},
        {"pps:F", PPS, F, -1, -1, -1, -1, -1, -1},
        {"pps:iter=4", PPS, ITER, -1, -1, -1, 4, -1, -1},
        {"pps:ITER iter=5", PPS, ITER, -1, -1, -1, 5, -1, -1},
    };
    struct pps_label_patterns p;
    pps_label_patterns_init(&p);
    check_rows(&p, rows, N_ROWS(rows));
    pps_label_patterns_release(&p);
}

static void test_pps_names_are_order_and_case_insensitive(void)
{
    static const struct row rows[] = {
        {"pps:mb=3 stage=2 F", PPS, F, 2, -1, 3, -1, -1, -1},
        {"pps:chunk=1,F,stage=2,mb=3", PPS, F, 2, 1, 3, -1, -1, -1},
        {"PPS:f STAGE=2 MB=3", PPS, F, 2, -1, 3, -1, -1, -1},
        {"pps:  fwd   stage = 2   mb = 3  ", PPS, F, 2, -1, 3, -1, -1, -1},
        {"pps:backward_weight stage=0 mb=0", PPS, W, 0, -1, 0, -1, -1, -1},
        {"pps:Bwd-Input stage=0 mb=0", PPS, B, 0, -1, 0, -1, -1, -1},
    };
    struct pps_label_patterns p;
    pps_label_patterns_init(&p);
    check_rows(&p, rows, N_ROWS(rows));
    static const char *const unknown_kind[] = {"pps: stage=2, mb=3, kind_free"};
    check_none(&p, unknown_kind, 1);
    pps_label_patterns_release(&p);
}

static void test_pps_malformed_names_are_not_pipeline_ops(void)
{
    static const char *const names[] = {
        "pps:",
        "pps:stage=2 mb=3",      /* no kind, no iter */
        "pps:F B stage=2",       /* two kinds */
        "pps:F stage=2 stage=3", /* a repeated key */
        "pps:F mbatch=3",        /* an unknown key */
        "pps:F stage=-1",        /* not a non-negative integer */
        "pps:F stage=x",
        "pps:F mb=3x",
        "pps:F stage=",
        "pps:F stage=40000",    /* stages are 16-bit */
        "pps:F mb=99999999999", /* microbatches are 32-bit */
        "pps:FWDX stage=1",     /* not a kind */
        "pps:ITER stage=1",     /* an iteration marker needs its iter */
        "pps:F stage=1 = 2",
        "pps:F;stage=1",
        "ppsF stage=1",
        "pp",
    };
    struct pps_label_patterns p;
    pps_label_patterns_init(&p);
    check_none(&p, names, N_ROWS(names));
    pps_label_patterns_release(&p);
}

static void test_kind_spellings(void)
{
    static const struct {
        const char *text;
        int kind;
    } rows[] = {
        {"F", F},           {"fwd", F},        {"Forward", F},      {"fprop", F},
        {"B", B},           {"I", B},          {"bwd_input", B},    {"BACKWARD-INPUT", B},
        {"dgrad", B},       {"igrad", B},      {"bgrad", B},        {"bx", B},
        {"W", W},           {"wgrad", W},      {"bwd_weight", W},   {"weight", W},
        {"BW", BW},         {"bwd", BW},       {"backward", BW},    {"full_backward", BW},
        {"send", SEND},     {"isend", SEND},   {"SEND_F", SEND},    {"recv", RECV},
        {"irecv", RECV},    {"receive", RECV}, {"wait", WAIT},      {"opt", OPT},
        {"optimizer", OPT}, {"iter", ITER},    {"iteration", ITER}, {"", -1},
        {"x", -1},          {"fw", -1},        {"forwards", -1},    {"send_", -1},
    };
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        int k = pps_label_kind_parse(rows[i].text, strlen(rows[i].text));
        if (k != rows[i].kind) {
            fprintf(stderr, "  kind \"%s\": %d, expected %d\n", rows[i].text, k, rows[i].kind);
            CHECK(0);
        }
    }
    /* The length bounds the text: "fwd_s1" starts with a kind but is not one. */
    CHECK_EQ_INT(pps_label_kind_parse("fwd_s1", 3), F);
    CHECK_EQ_INT(pps_label_kind_parse("fwd_s1", 6), -1);
    CHECK_EQ_INT(pps_label_kind_parse(NULL, 0), -1);
}

/* ---- (c) the user's regex --------------------------------------------------------------- */

static void test_regex_with_a_fixed_kind(void)
{
    static const struct row rows[] = {
        {"fwd_s2_mb3", REGEX, F, 2, -1, 3, -1, -1, -1},
        {"PP:0F3", TORCH, F, 0, 0, 3, -1, -1, -1}, /* the built-in rules come first */
    };
    static const char *const others[] = {"fwd_s2_mb", "xfwd_s2_mb3", "data loading"};
    struct pps_label_patterns p;
    struct pps_err err = {0};
    pps_label_patterns_init(&p);
    CHECK_EQ_INT(
        pps_label_patterns_set_regex(&p, "^fwd_s([0-9]+)_mb([0-9]+)$", "stage,mb", "F", &err), 0);
    check_rows(&p, rows, N_ROWS(rows));
    check_none(&p, others, N_ROWS(others));
    pps_label_patterns_release(&p);
}

static void test_regex_with_a_kind_group_and_skipped_groups(void)
{
    static const struct row rows[] = {
        {"fwd_s2_mb3", REGEX, F, 2, -1, 3, -1, -1, -1},
        {"bgrad_s1_mb0", REGEX, B, 1, -1, 0, -1, -1, -1},
        {"wgrad_s0_mb9", REGEX, W, 0, -1, 9, -1, -1, -1},
        {"layer7/bwd/s1/c1/mb4", REGEX, BW, 1, 1, 4, -1, -1, -1},
        {"layer7/send/s1/c0/mb4", REGEX, SEND, 1, 0, 4, -1, -1, -1},
        {"fwd_mb3", REGEX, F, -1, -1, 3, -1, -1, -1},
        {"fwd_c1_mb3", REGEX, F, -1, 1, 3, -1, -1, -1},
    };
    /* "step" is no kind, nor is "iter" here. */
    static const char *const not_kinds[] = {"step_s0_mb9", "iter_s0_mb9"};
    struct pps_label_patterns p;
    struct pps_err err = {0};
    pps_label_patterns_init(&p);
    CHECK_EQ_INT(pps_label_patterns_set_regex(&p, "^([a-z]+)_s([0-9]+)_mb([0-9]+)$",
                                              "kind,stage,mb", NULL, &err),
                 0);
    check_rows(&p, rows, 3);
    check_none(&p, not_kinds, N_ROWS(not_kinds));
    /* A group named "_" is matched but ignored. */
    CHECK_EQ_INT(
        pps_label_patterns_set_regex(&p, "^layer([0-9]+)/([a-z]+)/s([0-9]+)/c([0-9]+)/mb([0-9]+)$",
                                     "_, kind, stage, chunk, microbatch", "F", &err),
        0);
    check_rows(&p, rows + 3, 2);
    /* An optional group that did not take part leaves its field unknown. */
    CHECK_EQ_INT(pps_label_patterns_set_regex(&p, "^fwd(_c([0-9]+))?_mb([0-9]+)$", "_,chunk,mb",
                                              "fwd", &err),
                 0);
    check_rows(&p, rows + 5, 2);
    pps_label_patterns_release(&p);
}

static void test_regex_settings_fail_with_one_line_reasons(void)
{
    static const struct {
        const char *regex, *groups, *kind, *want;
    } rows[] = {
        {"^fwd_s([0-9]+$", "stage", "F", "PPSCOPE_NVTX_REGEX"},
        {"^fwd_s([0-9]+)$", NULL, "F", "needs PPSCOPE_NVTX_GROUPS"},
        {"^fwd_s([0-9]+)$", "stage,mb", "F", "names 2 groups but PPSCOPE_NVTX_REGEX has 1"},
        {"^fwd_s([0-9]+)$", "stg", "F", "unknown field \"stg\""},
        {"^fwd_s([0-9]+)$", "stage mb", "F", "expected a comma"},
        {"^fwd_s([0-9]+)$", "stage", NULL, "has no kind"},
        {"^fwd_s([0-9]+)$", "stage", "fwdx", "PPSCOPE_NVTX_KIND"},
        {"^fwd_s([0-9]+)$", "stage", "iter", "PPSCOPE_NVTX_KIND"},
        {NULL, "stage", NULL, "PPSCOPE_NVTX_REGEX is not"},
        {"", NULL, "F", "PPSCOPE_NVTX_REGEX is not"},
    };
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        struct pps_label_patterns p;
        struct pps_err err = {0};
        pps_label_patterns_init(&p);
        CHECK_EQ_INT(
            pps_label_patterns_set_regex(&p, rows[i].regex, rows[i].groups, rows[i].kind, &err),
            PPS_EINVAL);
        CHECK_STR_CONTAINS(err.msg, rows[i].want);
        CHECK(strchr(err.msg, '\n') == NULL);
        CHECK_EQ_INT(p.have_regex, 0);
        pps_label_patterns_release(&p);
    }
    /* Nothing set is no regex and no error. */
    struct pps_label_patterns p;
    pps_label_patterns_init(&p);
    CHECK_EQ_INT(pps_label_patterns_set_regex(&p, NULL, "", NULL, NULL), 0);
    CHECK_EQ_INT(p.have_regex, 0);
    /* A bad regex after a good one leaves none, and the rules (a) and (b) still work. */
    CHECK_EQ_INT(pps_label_patterns_set_regex(&p, "^f([0-9]+)$", "mb", "F", NULL), 0);
    CHECK_EQ_INT(pps_label_patterns_set_regex(&p, "^f([0-9]+$", "mb", "F", NULL), PPS_EINVAL);
    struct pps_label_op op;
    CHECK_EQ_INT(pps_label_match(&p, "f3", &op), NONE);
    CHECK_EQ_INT(pps_label_match(&p, "PP:0F3", &op), TORCH);
    pps_label_patterns_release(&p);
}

static void test_regex_values_that_do_not_parse_are_no_match(void)
{
    struct pps_label_patterns p;
    struct pps_label_op op;
    pps_label_patterns_init(&p);
    CHECK_EQ_INT(
        pps_label_patterns_set_regex(&p, "^op_([a-z]+)_([0-9a-z]+)$", "kind,mb", NULL, NULL), 0);
    CHECK_EQ_INT(pps_label_match(&p, "op_fwd_12", &op), REGEX);
    CHECK_EQ_INT(op.mb, 12);
    CHECK_EQ_INT(pps_label_match(&p, "op_fwd_1x", &op), NONE);
    CHECK_EQ_INT(op.kind, -1);
    CHECK_EQ_INT(pps_label_match(&p, "op_nope_1", &op), NONE);
    pps_label_patterns_release(&p);
}

/* ---- fallbacks: ordinary range names ---------------------------------------------------- */

static void test_ordinary_names_are_not_pipeline_ops(void)
{
    static const char *const names[] = {
        "data loading",
        "aten::linear",
        "forward", /* a kind word alone is not a pps: name */
        "F",
        "0F3",
        "PP 0F3",
        NULL,
    };
    struct pps_label_patterns p;
    pps_label_patterns_init(&p);
    check_none(&p, names, N_ROWS(names));
    pps_label_patterns_release(&p);
}

/* ---- names ------------------------------------------------------------------------------ */

static void test_clean_name_drops_emit_nvtx_decorations(void)
{
    static const struct {
        const char *in, *out;
    } rows[] = {
        {"aten::linear, seq = 12, op_id = 40", "aten::linear"},
        {"aten::mm, op_id = 7", "aten::mm"},
        {"aten::add, sizes = [[2, 3], [2, 3]]", "aten::add"},
        {"aten::add, input_op_ids = [(1, 0)]", "aten::add"},
        {"load, shuffle, batch", "load, shuffle, batch"},
        {"data loading", "data loading"},
        {"", ""},
    };
    char buf[128];
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        size_t n = pps_label_clean_name(rows[i].in, buf, sizeof(buf));
        if (strcmp(buf, rows[i].out) != 0 || n != strlen(rows[i].out)) {
            fprintf(stderr, "  clean \"%s\": \"%s\", expected \"%s\"\n", rows[i].in, buf,
                    rows[i].out);
            CHECK(0);
        }
    }
    CHECK_EQ_INT(pps_label_clean_name(NULL, buf, sizeof(buf)), 0);
    /* Cut to the buffer, never inside a UTF-8 character ("é" is two bytes). */
    CHECK_EQ_INT(pps_label_clean_name("abcdefgh", buf, 5), 4);
    CHECK(strcmp(buf, "abcd") == 0);
    CHECK_EQ_INT(pps_label_clean_name("abc\xc3\xa9z", buf, 5), 3);
    CHECK(strcmp(buf, "abc") == 0);
    CHECK_EQ_INT(pps_label_clean_name("ab\xc3\xa9z", buf, 5), 4);
    CHECK(strcmp(buf, "ab\xc3\xa9") == 0);
}

static void test_wide_strings_become_utf8(void)
{
    char buf[64];
    CHECK_EQ_INT(pps_label_utf8_from_wide(L"pps:F stage=1 mb=2", buf, sizeof(buf)), 18);
    CHECK(strcmp(buf, "pps:F stage=1 mb=2") == 0);
    const wchar_t mixed[] = {L'a', 0xE9, 0x20AC, 0x1F600, 0};
    CHECK_EQ_INT(pps_label_utf8_from_wide(mixed, buf, sizeof(buf)), 1 + 2 + 3 + 4);
    CHECK(strcmp(buf, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80") == 0);
    const wchar_t bad[] = {0xD800, (wchar_t)0x110000, 0};
    pps_label_utf8_from_wide(bad, buf, sizeof(buf));
    CHECK(strcmp(buf, "\xef\xbf\xbd\xef\xbf\xbd") == 0);
    /* Cut at a character boundary: the euro sign does not fit in the last two bytes. */
    const wchar_t euro[] = {L'a', L'b', 0x20AC, 0};
    CHECK_EQ_INT(pps_label_utf8_from_wide(euro, buf, 5), 2);
    CHECK_EQ_INT(pps_label_utf8_from_wide(NULL, buf, sizeof(buf)), 0);
    CHECK(buf[0] == '\0');
}

/* Other tools' step ranges give the iteration they span; look-alikes do not. */
static void test_step_ranges_give_their_iteration(void)
{
    static const struct {
        const char *name;
        int ok, iter;
    } cases[] = {
        {"ProfilerStep#3", 1, 3},   {"profilerstep#0", 1, 0},
        {"step 7", 1, 7},           {"Step_12", 1, 12},
        {"iteration 4", 1, 4},      {"Iteration:5", 1, 5},
        {"iter=6", 1, 6},           {"iter 2 ", 1, 2},
        {"steps 3", 0, 0},          {"iterator 1", 0, 0},
        {"train_step 3", 0, 0},     {"step", 0, 0},
        {"step 3 of 9", 0, 0},      {"step -1", 0, 0},
        {"step 99999999999", 0, 0}, {"", 0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int iter = -1;
        int ok = pps_label_step(cases[i].name, &iter);
        if (ok != cases[i].ok || (ok && iter != cases[i].iter)) {
            fprintf(stderr, "  \"%s\": got %d (iter %d), expected %d (iter %d)\n", cases[i].name,
                    ok, iter, cases[i].ok, cases[i].iter);
            test_failures_++;
        }
    }
    CHECK(!pps_label_step(NULL, NULL));
}

static const struct test_case cases[] = {
    TEST(test_torch_labels_every_action_type),
    TEST(test_torch_labels_tolerate_separators_and_emit_nvtx_suffixes),
    TEST(test_torch_single_stage_schedule_labels),
    TEST(test_torch_actions_that_are_not_pipeline_ops_fall_back),
    TEST(test_torch_b_means_input_in_older_releases),
    TEST(test_torch_virtual_stages_map_to_stage_and_chunk),
    TEST(test_torch_settings_reject_bad_values),
    TEST(test_pps_names_every_kind_and_key),
    TEST(test_pps_names_are_order_and_case_insensitive),
    TEST(test_pps_malformed_names_are_not_pipeline_ops),
    TEST(test_kind_spellings),
    TEST(test_regex_with_a_fixed_kind),
    TEST(test_regex_with_a_kind_group_and_skipped_groups),
    TEST(test_regex_settings_fail_with_one_line_reasons),
    TEST(test_regex_values_that_do_not_parse_are_no_match),
    TEST(test_ordinary_names_are_not_pipeline_ops),
    TEST(test_clean_name_drops_emit_nvtx_decorations),
    TEST(test_wide_strings_become_utf8),
    TEST(test_step_ranges_give_their_iteration),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
