/*
 * labels.c - NVTX range names to pipeline ops: PyTorch's "PP:" labels, ppscope's "pps:" names,
 * a user's regex (labels.h), other tools' step ranges, and the two string helpers the injection
 * needs before matching (PyTorch's emit_nvtx decorations, wide strings). Pure: no NVTX, no
 * tracer, no SQLite, no I/O.
 */
#include "labels.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "storage.h"

#define STAGE_MAX 32767 /* stages and chunks are 16-bit in the trace store */

static void op_clear(struct pps_label_op *op)
{
    op->kind = -1;
    op->stage = -1;
    op->chunk = -1;
    op->mb = -1;
    op->iter = -1;
    op->peer = -1;
    op->bytes = -1;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-';
}

static char lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/*
 * Reads the decimal digits at *s (at least one) into *out, moving *s past them. Fails (0) on no
 * digit or a value above max.
 */
static int read_uint(const char **s, int64_t max, int64_t *out)
{
    const char *p = *s;
    int64_t v = 0;
    if (!is_digit(*p))
        return 0;
    for (; is_digit(*p); p++) {
        int d = *p - '0';
        if (v > (max - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    *s = p;
    *out = v;
    return 1;
}

/* The whole of text[0..len) as a non-negative integer up to max; 0 if it is not one. */
static int parse_uint(const char *text, size_t len, int64_t max, int64_t *out)
{
    const char *p = text;
    if (len == 0 || !read_uint(&p, max, out))
        return 0;
    return (size_t)(p - text) == len;
}

/* ---- kind spellings --------------------------------------------------------------------- */

struct spelling {
    const char *text;
    int kind;
};

static const struct spelling spellings[] = {
    {"f", PPS_SPAN_F},
    {"fwd", PPS_SPAN_F},
    {"forward", PPS_SPAN_F},
    {"fprop", PPS_SPAN_F},
    {"b", PPS_SPAN_B},
    {"i", PPS_SPAN_B},
    {"bwd_input", PPS_SPAN_B},
    {"backward_input", PPS_SPAN_B},
    {"bi", PPS_SPAN_B},
    {"bx", PPS_SPAN_B},
    {"dgrad", PPS_SPAN_B},
    {"igrad", PPS_SPAN_B},
    {"bgrad", PPS_SPAN_B},
    {"input_grad", PPS_SPAN_B},
    {"w", PPS_SPAN_W},
    {"bwd_weight", PPS_SPAN_W},
    {"backward_weight", PPS_SPAN_W},
    {"bw_weight", PPS_SPAN_W},
    {"wgrad", PPS_SPAN_W},
    {"weight", PPS_SPAN_W},
    {"weight_grad", PPS_SPAN_W},
    {"bw", PPS_SPAN_BW},
    {"bwd", PPS_SPAN_BW},
    {"backward", PPS_SPAN_BW},
    {"bprop", PPS_SPAN_BW},
    {"full_backward", PPS_SPAN_BW},
    {"send", PPS_SPAN_SEND},
    {"isend", PPS_SPAN_SEND},
    {"send_f", PPS_SPAN_SEND},
    {"send_b", PPS_SPAN_SEND},
    {"recv", PPS_SPAN_RECV},
    {"irecv", PPS_SPAN_RECV},
    {"receive", PPS_SPAN_RECV},
    {"recv_f", PPS_SPAN_RECV},
    {"recv_b", PPS_SPAN_RECV},
    {"wait", PPS_SPAN_WAIT},
    {"opt", PPS_SPAN_OPT},
    {"optim", PPS_SPAN_OPT},
    {"optimizer", PPS_SPAN_OPT},
    {"optimizer_step", PPS_SPAN_OPT},
    {"iter", PPS_LABEL_ITER},
    {"iteration", PPS_LABEL_ITER},
};

int pps_label_kind_parse(const char *text, size_t len)
{
    if (!text)
        return -1;
    for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
        const char *sp = spellings[i].text;
        size_t k = 0;
        for (; k < len && sp[k]; k++) {
            char c = lower(text[k]) == '-' ? '_' : lower(text[k]);
            if (c != sp[k])
                break;
        }
        if (k == len && sp[k] == '\0')
            return spellings[i].kind;
    }
    return -1;
}

/* ---- (a) PyTorch's "PP:" labels --------------------------------------------------------- */

/* PyTorch's action types, longest first where one is a prefix of another. */
enum torch_type {
    T_F,
    T_I,
    T_B,
    T_BW,
    T_W,
    T_SEND_F,
    T_RECV_F,
    T_SEND_B,
    T_RECV_B,
    T_OTHER, /* a real action that is not a pipeline op here */
};

struct torch_token {
    const char *text;
    int type;
};

static const struct torch_token torch_tokens[] = {
    {"SEND_F_RECV_B", T_OTHER},
    {"SEND_B_RECV_F", T_OTHER},
    {"OVERLAP_F_B", T_OTHER},
    {"REDUCE_GRAD", T_OTHER},
    {"UNSHARD", T_OTHER},
    {"RESHARD", T_OTHER},
    {"SEND_F", T_SEND_F},
    {"RECV_F", T_RECV_F},
    {"SEND_B", T_SEND_B},
    {"RECV_B", T_RECV_B},
    {"BW", T_BW},
    {"F", T_F},
    {"I", T_I},
    {"B", T_B},
    {"W", T_W},
};

static int is_torch_sep(char c)
{
    return c == ' ' || c == '\t' || c == '_' || c == '-' || c == '.' || c == ':';
}

static void skip_torch_seps(const char **s)
{
    while (is_torch_sep(**s))
        (*s)++;
}

/* Virtual stage vs to the stage and chunk of p's layout. */
static void map_virtual(const struct pps_label_patterns *p, int vs, int *stage, int *chunk)
{
    if (p->stages <= 0) {
        *stage = vs;
        *chunk = 0;
        return;
    }
    int c = vs / p->stages, r = vs % p->stages;
    *chunk = c;
    *stage = (p->vshape && (c & 1)) ? p->stages - 1 - r : r;
}

/*
 * PyTorch's single-stage schedules (ScheduleGPipe, the forward-only one) label each microbatch
 * "Forward 3" and "Backward 3" (a full backward), around its receive, compute and send posting.
 * The label has no stage: the caller's default applies.
 */
static int match_torch_single(const char *s, struct pps_label_op *op)
{
    int64_t mb;
    int kind;
    if (strncmp(s, "Forward ", 8) == 0) {
        kind = PPS_SPAN_F;
        s += 8;
    } else if (strncmp(s, "Backward ", 9) == 0) {
        kind = PPS_SPAN_BW;
        s += 9;
    } else {
        return 0;
    }
    if (!read_uint(&s, INT32_MAX, &mb))
        return 0;
    while (is_space(*s))
        s++;
    if (*s != '\0' && *s != ',')
        return 0;
    op->kind = kind;
    op->mb = (int)mb;
    op->chunk = 0;
    return 1;
}

int pps_label_match_torch(const struct pps_label_patterns *p, const char *name,
                          struct pps_label_op *op)
{
    const char *s = name;
    int64_t vs, mb = -1;
    op_clear(op);
    if (!s)
        return 0;
    if (strncmp(s, "PP:", 3) != 0)
        return match_torch_single(s, op);
    s += 3;
    while (is_space(*s))
        s++;
    if (!read_uint(&s, STAGE_MAX, &vs))
        return 0;
    skip_torch_seps(&s);

    int type = -1;
    for (size_t i = 0; i < sizeof(torch_tokens) / sizeof(torch_tokens[0]); i++) {
        size_t n = strlen(torch_tokens[i].text);
        if (strncmp(s, torch_tokens[i].text, n) == 0) {
            type = torch_tokens[i].type;
            s += n;
            break;
        }
    }
    if (type < 0 || type == T_OTHER)
        return 0;
    skip_torch_seps(&s);
    if (is_digit(*s) && !read_uint(&s, INT32_MAX, &mb))
        return 0;
    while (is_space(*s))
        s++;
    if (*s != '\0' && *s != ',')
        return 0;

    int kind = 0, peer_vs = -1;
    switch (type) {
    case T_F:
        kind = PPS_SPAN_F;
        break;
    case T_I:
        kind = PPS_SPAN_B;
        break;
    case T_B:
        kind = p->torch_b_is_input ? PPS_SPAN_B : PPS_SPAN_BW;
        break;
    case T_BW:
        kind = PPS_SPAN_BW;
        break;
    case T_W:
        kind = PPS_SPAN_W;
        break;
    case T_SEND_F: /* activations go to the next stage, gradients come back from it */
    case T_RECV_B:
        kind = type == T_SEND_F ? PPS_SPAN_SEND : PPS_SPAN_RECV;
        peer_vs = (int)vs + 1;
        break;
    case T_RECV_F:
    case T_SEND_B:
        kind = type == T_RECV_F ? PPS_SPAN_RECV : PPS_SPAN_SEND;
        peer_vs = (int)vs - 1;
        break;
    }
    op->kind = kind;
    op->mb = (int)mb;
    map_virtual(p, (int)vs, &op->stage, &op->chunk);
    if (peer_vs >= 0 && peer_vs <= STAGE_MAX) {
        int peer_chunk;
        map_virtual(p, peer_vs, &op->peer, &peer_chunk);
    }
    return 1;
}

/* ---- (b) ppscope's "pps:" names --------------------------------------------------------- */

struct pps_key {
    const char *text;
    int field;
};

static const struct pps_key pps_keys[] = {
    {"stage", PPS_LABEL_FIELD_STAGE}, {"mb", PPS_LABEL_FIELD_MB},
    {"chunk", PPS_LABEL_FIELD_CHUNK}, {"iter", PPS_LABEL_FIELD_ITER},
    {"peer", PPS_LABEL_FIELD_PEER},   {"bytes", PPS_LABEL_FIELD_BYTES},
};

static int word_is(const char *w, size_t len, const char *lower_text)
{
    size_t k = 0;
    for (; k < len && lower_text[k]; k++)
        if (lower(w[k]) != lower_text[k])
            return 0;
    return k == len && lower_text[k] == '\0';
}

/* Stores the integer text[0..len) in op's field; 0 if it is not a valid value or already set. */
static int set_field(struct pps_label_op *op, int field, const char *text, size_t len)
{
    int64_t v;
    int64_t max = field == PPS_LABEL_FIELD_BYTES                                   ? INT64_MAX
                  : (field == PPS_LABEL_FIELD_MB || field == PPS_LABEL_FIELD_ITER) ? INT32_MAX
                                                                                   : STAGE_MAX;
    if (!parse_uint(text, len, max, &v))
        return 0;
    int *slot = NULL;
    switch (field) {
    case PPS_LABEL_FIELD_STAGE:
        slot = &op->stage;
        break;
    case PPS_LABEL_FIELD_CHUNK:
        slot = &op->chunk;
        break;
    case PPS_LABEL_FIELD_MB:
        slot = &op->mb;
        break;
    case PPS_LABEL_FIELD_ITER:
        slot = &op->iter;
        break;
    case PPS_LABEL_FIELD_PEER:
        slot = &op->peer;
        break;
    case PPS_LABEL_FIELD_BYTES:
        if (op->bytes >= 0)
            return 0;
        op->bytes = v;
        return 1;
    default:
        return 0;
    }
    if (*slot >= 0)
        return 0;
    *slot = (int)v;
    return 1;
}

int pps_label_match_pps(const char *name, struct pps_label_op *op)
{
    const char *s = name;
    op_clear(op);
    if (!s || !word_is(s, 3, "pps") || s[3] != ':')
        return 0;
    s += 4;
    for (;;) {
        while (is_space(*s) || *s == ',')
            s++;
        if (*s == '\0')
            break;
        const char *w = s;
        while (is_word(*s))
            s++;
        size_t wlen = (size_t)(s - w);
        if (wlen == 0)
            goto malformed;
        const char *after = s;
        while (is_space(*after))
            after++;
        if (*after == '=') {
            int field = -1;
            for (size_t i = 0; i < sizeof(pps_keys) / sizeof(pps_keys[0]); i++)
                if (word_is(w, wlen, pps_keys[i].text))
                    field = pps_keys[i].field;
            if (field < 0)
                goto malformed;
            s = after + 1;
            while (is_space(*s))
                s++;
            const char *v = s;
            while (is_digit(*s))
                s++;
            if (!set_field(op, field, v, (size_t)(s - v)))
                goto malformed;
        } else {
            int kind = pps_label_kind_parse(w, wlen);
            if (kind < 0 || op->kind >= 0)
                goto malformed;
            op->kind = kind;
        }
        if (*s != '\0' && !is_space(*s) && *s != ',')
            goto malformed;
    }
    if (op->kind < 0 && op->iter >= 0)
        op->kind = PPS_LABEL_ITER;
    if (op->kind < 0 || (op->kind == PPS_LABEL_ITER && op->iter < 0))
        goto malformed;
    return 1;
malformed:
    op_clear(op);
    return 0;
}

/* ---- (c) the user's regex --------------------------------------------------------------- */

struct field_name {
    const char *text;
    int field;
};

static const struct field_name field_names[] = {
    {"kind", PPS_LABEL_FIELD_KIND},   {"stage", PPS_LABEL_FIELD_STAGE},
    {"mb", PPS_LABEL_FIELD_MB},       {"microbatch", PPS_LABEL_FIELD_MB},
    {"chunk", PPS_LABEL_FIELD_CHUNK}, {"iter", PPS_LABEL_FIELD_ITER},
    {"peer", PPS_LABEL_FIELD_PEER},   {"bytes", PPS_LABEL_FIELD_BYTES},
    {"_", PPS_LABEL_FIELD_SKIP},      {"", PPS_LABEL_FIELD_SKIP},
};

static int empty(const char *s)
{
    return !s || !*s;
}

/* Parses groups into fields[]; returns the count, or -1 with a reason in err. */
static int parse_groups(const char *groups, int *fields, struct pps_err *err)
{
    int n = 0;
    const char *s = groups;
    for (;;) {
        while (is_space(*s))
            s++;
        const char *w = s;
        while (*s && *s != ',' && !is_space(*s))
            s++;
        size_t len = (size_t)(s - w);
        while (is_space(*s))
            s++;
        int field = -1;
        for (size_t i = 0; i < sizeof(field_names) / sizeof(field_names[0]); i++)
            if (word_is(w, len, field_names[i].text))
                field = field_names[i].field;
        if (field < 0) {
            pps_err_set(err, PPS_EINVAL,
                        "PPSCOPE_NVTX_GROUPS: unknown field \"%.*s\" (want kind, stage, mb, chunk, "
                        "iter, peer, bytes or _): regex ignored",
                        (int)(len > 40 ? 40 : len), w);
            return -1;
        }
        if (n == PPS_LABEL_MAX_GROUPS) {
            pps_err_set(err, PPS_EINVAL, "PPSCOPE_NVTX_GROUPS: more than %d groups: regex ignored",
                        PPS_LABEL_MAX_GROUPS);
            return -1;
        }
        fields[n++] = field;
        if (*s != ',')
            break;
        s++;
    }
    if (*s != '\0') {
        pps_err_set(err, PPS_EINVAL,
                    "PPSCOPE_NVTX_GROUPS: expected a comma near \"%.20s\": regex ignored", s);
        return -1;
    }
    return n;
}

int pps_label_patterns_set_regex(struct pps_label_patterns *p, const char *regex,
                                 const char *groups, const char *kind, struct pps_err *err)
{
    int fields[PPS_LABEL_MAX_GROUPS];
    int n = 0, fixed = 0, has_kind_group = 0, rc;
    regex_t re;

    if (p->have_regex) {
        regfree(&p->regex);
        p->have_regex = 0;
    }
    if (empty(regex)) {
        if (!empty(groups) || !empty(kind))
            return pps_err_set(err, PPS_EINVAL,
                               "PPSCOPE_NVTX_GROUPS or PPSCOPE_NVTX_KIND is set but "
                               "PPSCOPE_NVTX_REGEX is not: ignored");
        return 0;
    }
    if (empty(groups))
        return pps_err_set(err, PPS_EINVAL,
                           "PPSCOPE_NVTX_REGEX needs PPSCOPE_NVTX_GROUPS (e.g. \"stage,mb\"): "
                           "regex ignored");
    n = parse_groups(groups, fields, err);
    if (n < 0)
        return PPS_EINVAL;
    for (int i = 0; i < n; i++)
        has_kind_group |= fields[i] == PPS_LABEL_FIELD_KIND;
    if (!empty(kind)) {
        fixed = pps_label_kind_parse(kind, strlen(kind));
        if (fixed < 0 || fixed == PPS_LABEL_ITER)
            return pps_err_set(err, PPS_EINVAL,
                               "PPSCOPE_NVTX_KIND: \"%.40s\" is not a kind (F, B, W, BW, SEND, "
                               "RECV, WAIT, OPT): regex ignored",
                               kind);
    }
    if (!has_kind_group && !fixed)
        return pps_err_set(err, PPS_EINVAL,
                           "PPSCOPE_NVTX_REGEX has no kind: name a group \"kind\" in "
                           "PPSCOPE_NVTX_GROUPS or set PPSCOPE_NVTX_KIND: regex ignored");
    rc = regcomp(&re, regex, REG_EXTENDED);
    if (rc != 0) {
        char why[160];
        regerror(rc, &re, why, sizeof(why));
        return pps_err_set(err, PPS_EINVAL, "PPSCOPE_NVTX_REGEX: %s: regex ignored", why);
    }
    if ((size_t)n > re.re_nsub) {
        regfree(&re);
        return pps_err_set(err, PPS_EINVAL,
                           "PPSCOPE_NVTX_GROUPS names %d groups but PPSCOPE_NVTX_REGEX has %zu: "
                           "regex ignored",
                           n, re.re_nsub);
    }
    p->regex = re;
    p->have_regex = 1;
    p->n_groups = n;
    memcpy(p->group_field, fields, sizeof(int) * (size_t)n);
    p->fixed_kind = fixed;
    return 0;
}

int pps_label_match_regex(const struct pps_label_patterns *p, const char *name,
                          struct pps_label_op *op)
{
    regmatch_t m[PPS_LABEL_MAX_GROUPS + 1];
    op_clear(op);
    if (!p->have_regex || !name)
        return 0;
    if (regexec(&p->regex, name, (size_t)p->n_groups + 1, m, 0) != 0)
        return 0;
    for (int i = 0; i < p->n_groups; i++) {
        const regmatch_t *g = &m[i + 1];
        int field = p->group_field[i];
        if (field == PPS_LABEL_FIELD_SKIP || g->rm_so < 0)
            continue;
        const char *text = name + g->rm_so;
        size_t len = (size_t)(g->rm_eo - g->rm_so);
        if (field == PPS_LABEL_FIELD_KIND) {
            int kind = pps_label_kind_parse(text, len);
            if (kind < 0 || kind == PPS_LABEL_ITER)
                goto no;
            op->kind = kind;
        } else if (!set_field(op, field, text, len)) {
            goto no;
        }
    }
    if (op->kind < 0)
        op->kind = p->fixed_kind ? p->fixed_kind : -1;
    if (op->kind < 0)
        goto no;
    return 1;
no:
    op_clear(op);
    return 0;
}

/* ---- settings and the rules in order ---------------------------------------------------- */

void pps_label_patterns_init(struct pps_label_patterns *p)
{
    memset(p, 0, sizeof(*p));
}

void pps_label_patterns_release(struct pps_label_patterns *p)
{
    if (p->have_regex)
        regfree(&p->regex);
    p->have_regex = 0;
}

int pps_label_patterns_set_torch(struct pps_label_patterns *p, const char *b_means,
                                 const char *stages, const char *order, struct pps_err *err)
{
    int rc = 0;
    if (!empty(b_means)) {
        if (word_is(b_means, strlen(b_means), "full"))
            p->torch_b_is_input = 0;
        else if (word_is(b_means, strlen(b_means), "input"))
            p->torch_b_is_input = 1;
        else
            rc = pps_err_set(err, PPS_EINVAL,
                             "PPSCOPE_NVTX_TORCH_B: \"%.40s\" is neither \"full\" nor \"input\"",
                             b_means);
    }
    if (!empty(stages)) {
        int64_t v;
        if (parse_uint(stages, strlen(stages), STAGE_MAX, &v) && v >= 1)
            p->stages = (int)v;
        else
            rc = pps_err_set(err, PPS_EINVAL,
                             "PPSCOPE_NVTX_STAGES: \"%.40s\" is not a count of stages", stages);
    }
    if (!empty(order)) {
        if (word_is(order, strlen(order), "loop"))
            p->vshape = 0;
        else if (word_is(order, strlen(order), "v"))
            p->vshape = 1;
        else
            rc = pps_err_set(err, PPS_EINVAL,
                             "PPSCOPE_NVTX_STAGE_ORDER: \"%.40s\" is neither \"loop\" nor \"v\"",
                             order);
    }
    return rc;
}

int pps_label_match(const struct pps_label_patterns *p, const char *name, struct pps_label_op *op)
{
    if (pps_label_match_torch(p, name, op))
        return PPS_LABEL_TORCH;
    if (pps_label_match_pps(name, op))
        return PPS_LABEL_PPS;
    if (pps_label_match_regex(p, name, op))
        return PPS_LABEL_REGEX;
    op_clear(op);
    return PPS_LABEL_NONE;
}

/* ---- names ------------------------------------------------------------------------------ */

/* The longest prefix of s[0..len) that does not end inside a UTF-8 character. */
static size_t utf8_cut(const char *s, size_t len)
{
    size_t k = len;
    /* Step back over continuation bytes to the lead byte of the last character. */
    while (k > 0 && ((unsigned char)s[k - 1] & 0xC0) == 0x80)
        k--;
    if (k == 0)
        return len; /* not UTF-8: cut anywhere */
    unsigned char lead = (unsigned char)s[k - 1];
    size_t need = lead < 0x80 ? 1 : (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : 4;
    return (len - (k - 1) >= need) ? len : k - 1;
}

size_t pps_label_clean_name(const char *name, char *out, size_t n)
{
    size_t len = pps_label_clean_len(name, n);
    if (len)
        memcpy(out, name, len);
    out[len] = '\0';
    return len;
}

size_t pps_label_clean_len(const char *name, size_t n)
{
    static const char *const tails[] = {
        ", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = "};
    size_t len;
    if (!name)
        name = "";
    len = strlen(name);
    for (const char *c = strchr(name, ','); c; c = strchr(c + 1, ',')) {
        int hit = 0;
        for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++)
            hit |= strncmp(c, tails[i], strlen(tails[i])) == 0;
        if (hit) {
            len = (size_t)(c - name);
            break;
        }
    }
    if (len > n - 1)
        len = utf8_cut(name, n - 1);
    return len;
}

size_t pps_label_utf8_from_wide(const wchar_t *ws, char *out, size_t n)
{
    size_t k = 0;
    for (; ws && *ws; ws++) {
        unsigned long c = (unsigned long)*ws;
        unsigned char buf[4];
        size_t len;
        if (sizeof(wchar_t) == 2 && c >= 0xD800 && c <= 0xDBFF && ws[1] >= 0xDC00 &&
            ws[1] <= 0xDFFF) {
            c = 0x10000 + ((c - 0xD800) << 10) + ((unsigned long)ws[1] - 0xDC00);
            ws++;
        }
        if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            c = 0xFFFD;
        if (c < 0x80) {
            buf[0] = (unsigned char)c;
            len = 1;
        } else if (c < 0x800) {
            buf[0] = (unsigned char)(0xC0 | (c >> 6));
            buf[1] = (unsigned char)(0x80 | (c & 0x3F));
            len = 2;
        } else if (c < 0x10000) {
            buf[0] = (unsigned char)(0xE0 | (c >> 12));
            buf[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            buf[2] = (unsigned char)(0x80 | (c & 0x3F));
            len = 3;
        } else {
            buf[0] = (unsigned char)(0xF0 | (c >> 18));
            buf[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
            buf[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            buf[3] = (unsigned char)(0x80 | (c & 0x3F));
            len = 4;
        }
        if (k + len > n - 1)
            break;
        memcpy(out + k, buf, len);
        k += len;
    }
    out[k] = '\0';
    return k;
}

/* ---- other tools' step ranges ----------------------------------------------------------- */

int pps_label_step(const char *name, int *iter)
{
    /* Longest first where one word is a prefix of another. */
    static const char *const words[] = {"profilerstep", "iteration", "step", "iter"};
    int64_t v;

    if (!name)
        return 0;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        size_t n = strlen(words[i]);
        const char *s = name + n;
        if (strlen(name) < n || !word_is(name, n, words[i]))
            continue;
        /* "steps 3" or "iterator" are other words: a separator or the number must follow. */
        /* Not '-': "step -1" is no step. */
        while (*s == ' ' || *s == '_' || *s == '#' || *s == ':' || *s == '=')
            s++;
        if (!read_uint(&s, INT32_MAX, &v))
            return 0;
        while (is_space(*s))
            s++;
        if (*s != '\0')
            return 0;
        *iter = (int)v;
        return 1;
    }
    return 0;
}
