/*
 * schedule.h - pipeline schedules: generate, validate, simulate, format.
 *
 * A schedule is one ordered list of actions per stage. An action is F (forward), B (backward for
 * the input gradient), W (backward for the weight gradients) or BW (B and W fused), for one
 * microbatch through one model chunk. Data flows through the model's virtual stages 0 .. p*v-1
 * in order; the schedule's placement says which virtual stage chunk c of stage s is (a loop:
 * c*p + s, so the last stage's chunk c feeds the first stage's chunk c+1, Megatron's
 * interleaving; pps_schedule_vstage()).
 *
 * This module is pure C: no I/O, no dependencies but libc. Everything else (runtime, analysis,
 * the CLI) uses it to know what a run should do and how long it should take.
 *
 * Dependencies the validator and the simulator enforce, for microbatch j at virtual stage k:
 *   F(j,k)      after F(j,k-1)                      (k > 0; cross-stage unless p == 1)
 *   B(j,k)/BW   after F(j,k) on its own stage, and after B/BW(j,k+1) (k < last)
 *   W(j,k)      after B(j,k) on its own stage
 * The last virtual stage's B follows its own F (the loss is computed there).
 */
#ifndef PPS_SCHEDULE_H
#define PPS_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "pps_error.h"

enum pps_op {
    PPS_OP_F = 0,
    PPS_OP_B = 1,
    PPS_OP_W = 2,
    PPS_OP_BW = 3,
};

enum pps_sched_kind {
    PPS_SCHED_GPIPE = 0,
    PPS_SCHED_1F1B,
    PPS_SCHED_INTERLEAVED,
    PPS_SCHED_ZB_H1,
    PPS_SCHED_ZB_H2,
    PPS_SCHED_ZB_V,           /* two chunks a stage in the V placement, B and W split */
    PPS_SCHED_DUALPIPEV,      /* DeepSeek's DualPipe cut in half: V placement, BW and B/W mixed */
    PPS_SCHED_INTERLEAVED_ZB, /* interleaved 1F1B, B and W split, W's deferred */
    /* built for given costs and a memory limit (pps_schedule_auto) */
    PPS_SCHED_ZB_AUTO,
    PPS_SCHED_KIND_COUNT,
};

/* Which virtual stage chunk c of stage s holds. */
enum pps_placement {
    PPS_PLACE_LOOP = 0, /* c*p + s: chunks go round the stages in a loop (interleaved 1F1B) */
    PPS_PLACE_V = 1,    /* v = 2: s and 2p-1-s, down the stages and back up (ZB-V, DualPipeV) */
};

struct pps_action {
    uint8_t op;     /* enum pps_op */
    uint16_t chunk; /* 0 .. v-1 */
    uint32_t mb;    /* 0 .. m-1 */
};

/*
 * The action lists: stage s runs actions[start[s]] .. actions[start[s+1]-1] in order.
 * Caller-held; fill with pps_schedule_generate() or by hand (pps_schedule_alloc), release with
 * pps_schedule_release().
 */
struct pps_schedule {
    int kind; /* enum pps_sched_kind, or -1 for a hand-made schedule */
    int p, m, v;
    struct pps_action *actions;
    size_t *start; /* p + 1 offsets into actions */
    int placement; /* enum pps_placement: PPS_PLACE_LOOP unless set */
};

#define PPS_SCHEDULE_INIT                                                                          \
    {                                                                                              \
        -1, 0, 0, 0, NULL, NULL, PPS_PLACE_LOOP                                                    \
    }

/* The virtual stage of chunk c of stage s under placement, for p stages. */
static inline int pps_place_vstage(int placement, int p, int stage, int chunk)
{
    if (placement == PPS_PLACE_V && chunk == 1)
        return 2 * p - 1 - stage;
    return chunk * p + stage;
}
/* The stage and chunk that hold virtual stage vs (0 <= vs < p*v) under placement. */
static inline int pps_place_stage(int placement, int p, int vs)
{
    if (placement == PPS_PLACE_V && vs >= p)
        return 2 * p - 1 - vs;
    return vs % p;
}
static inline int pps_place_chunk(int placement, int p, int vs)
{
    return placement == PPS_PLACE_V ? (vs >= p) : vs / p;
}
static inline int pps_schedule_vstage(const struct pps_schedule *s, int stage, int chunk)
{
    return pps_place_vstage(s->placement, s->p, stage, chunk);
}
/* The placement of the schedules of kind (enum pps_sched_kind). */
int pps_sched_kind_placement(int kind);
/* The chunks per stage kind runs: asked (interleaved, interleaved-zb; 0: 2), 2 (zb-v, dualpipev),
 * or 1. */
int pps_sched_kind_v(int kind, int asked);
/* Whether kind splits the backward into B and W (dualpipev: some of its backwards). */
int pps_sched_kind_split(int kind);
/* "loop", "v"; parse returns -1 for an unknown name. */
const char *pps_placement_name(int placement);
int pps_placement_parse(const char *name);

/* Name <-> kind: the names of PPS_SCHED_NAMES. Parse returns -1 if unknown. */
#define PPS_SCHED_NAMES                                                                            \
    "gpipe, 1f1b, interleaved, zb-h1, zb-h2, zb-v, dualpipev, interleaved-zb, zb-auto"
const char *pps_sched_kind_name(int kind);
int pps_sched_kind_parse(const char *name);
/* One-letter or two-letter op name: "F", "B", "W", "BW". */
const char *pps_op_name(int op);

/*
 * Checks that (kind, p, m, v) can be generated; on failure names the constraint in err:
 * p >= 1, m >= 1, v == 1 except for interleaved (v >= 1, m % p == 0), interleaved-zb (v >= 1,
 * m a multiple of m / p when m >= 2p: groups of equal size), zb-v (v == 2) and dualpipev (v == 2,
 * m >= 2p, as DeepSeek's and PyTorch's DualPipeV assert).
 */
int pps_schedule_check_params(int kind, int p, int m, int v, struct pps_err *err);

/* Fills sched (which must be released or fresh) with the action lists of kind for (p, m, v).
 * zb-auto, which needs costs and a limit, is built for unit costs (tF = tB = tW = 1, tcomm 0)
 * and a limit of p live microbatches (ZB-H1's and 1F1B's): see pps_schedule_auto(). */
int pps_schedule_generate(struct pps_schedule *sched, int kind, int p, int m, int v,
                          struct pps_err *err);

/* Allocates room for n actions spread over p stages (start[] zeroed): for hand-made schedules. */
int pps_schedule_alloc(struct pps_schedule *sched, int p, int m, int v, size_t n);
void pps_schedule_release(struct pps_schedule *sched);

static inline size_t pps_schedule_len(const struct pps_schedule *s, int stage)
{
    return s->start[stage + 1] - s->start[stage];
}
static inline const struct pps_action *pps_schedule_at(const struct pps_schedule *s, int stage,
                                                       size_t pos)
{
    return &s->actions[s->start[stage] + pos];
}

/*
 * Where validation failed: the stage, the position in its list, and the action there
 * (stage = -1 when the failure is not about one action, e.g. a wrong stage count).
 */
struct pps_sched_fault {
    int stage;
    long pos;
    struct pps_action action;
    /* What is wrong with the action, without the stage and step ("comes before the microbatch's
     * forward"; for a missing one, pos -1, what it is: "its forward"); NULL where err's
     * sentence is the only one (a deadlock, a wrong count of stages). */
    const char *why;
    /* A deadlock: what the action waits for, from which stage: dep.op PPS_OP_F, or PPS_OP_B for
     * the microbatch's backward (B or BW); dep_stage -1 when the fault is not a deadlock. */
    int dep_stage;
    struct pps_action dep;
};

/*
 * Validates sched: counts (each microbatch and chunk has exactly one F and either one BW or one
 * B and one W on its stage), per-microbatch order on a stage (F before B or BW, B before W), and
 * deadlock-freedom by dependency-driven execution with unbounded buffers. Returns 0, or
 * PPS_ESCHEDULE with the first fault in *fault (if not NULL) and a sentence in err naming the
 * stage, the position and the action. Linear in the number of actions.
 */
int pps_schedule_validate(const struct pps_schedule *sched, struct pps_sched_fault *fault,
                          struct pps_err *err);

/*
 * Formats the schedule as a grid, one row per stage ("s0: F0 F1 B0 ..."; chunk shown as F3.1
 * when v > 1), marking mark_stage/mark_pos with brackets "[B3]" (mark_stage = -1: no mark).
 * Writes at most len bytes including the NUL and returns the length the full text needs, like
 * snprintf.
 */
size_t pps_schedule_format(const struct pps_schedule *sched, int mark_stage, long mark_pos,
                           char *buf, size_t len);
/* Stage stage's row alone, "s2: F0 F1 B0 ...", with no newline; like snprintf. */
size_t pps_schedule_format_row(const struct pps_schedule *sched, int stage, char *buf, size_t len);

/* ----------------------------------------------------------------------------------------- */
/* Schedules as text (text_read.c, text_write.c, text_fault.c)                               */
/* ----------------------------------------------------------------------------------------- */

/*
 * Two ways to write a schedule down.
 *
 * PPS_SYNTAX_CSV, PyTorch pipelining's pipeline-order CSV (what its schedules' _dump_csv writes
 * and _load_csv reads): one row per rank, one cell per time step, a cell an action
 * STAGE TYPE MICROBATCH with STAGE the virtual stage: F forward, I input-gradient backward (our
 * B), W weight gradient, B full backward (our BW); an empty cell is an idle step. Also read:
 * "(0F7;7B3)OVERLAP_F_B" (DualPipeV's overlapped pair) as its actions in order; the releases
 * before I, where B was the input gradient and BW the full backward (a B whose microbatch has a
 * W on its stage is ours B, else BW); and the communication cells of a "compute_comms" dump
 * (SEND_F, RECV_F, SEND_B, RECV_B, WAIT_SEND_F, WAIT_SEND_B, REDUCE_GRAD, WAIT_REDUCE_GRAD,
 * UNSHARD, RESHARD), left out, as ppscope sends and receives along the data flow. Rank r is
 * stage r; the placement is the one its virtual stages fit (a loop, c*p + r; else V, r and
 * 2p-1-r); p the rows, v the virtual stages over p, m the largest microbatch + 1.
 *
 * PPS_SYNTAX_GRID, ppscope's own (what `ppscope sim --grid` prints): a row "s0: F0 F1 B0 W0 BW1"
 * per stage, s0, s1, ... in order, chunk c shown as F3.1 where v > 1; a line "placement: v"
 * (or loop, the default); blank lines, "# comments" and the line "actions:" say nothing.
 */
enum pps_sched_syntax {
    PPS_SYNTAX_AUTO = 0, /* the grid where the first line that says something is one of its
                            lines, else CSV */
    PPS_SYNTAX_CSV = 1,
    PPS_SYNTAX_GRID = 2,
};

/* Where a schedule read from text came from: its cells, row by row, and each action's cell. */
struct pps_sched_text {
    int syntax;        /* PPS_SYNTAX_CSV or PPS_SYNTAX_GRID */
    char *buf;         /* the text, cut into cells */
    const char **cell; /* every cell, row by row, trimmed; CSV's empty cells too ("") */
    size_t *row;       /* n_rows + 1 offsets into cell */
    int *line;         /* n_rows: the line (from 1) row r is on */
    int n_rows;
    size_t *at;   /* per action (laid out like the schedule's actions): its cell's index in cell */
    long skipped; /* CSV: communication cells left out */
    long overlapped; /* CSV: OVERLAP_F_B cells read as their actions */
};

#define PPS_SCHED_TEXT_INIT                                                                        \
    {                                                                                              \
        0, NULL, NULL, NULL, NULL, 0, NULL, 0, 0                                                   \
    }

/*
 * Reads text[0..len) in syntax into out (fresh or released; kind -1, "custom") and where each
 * action came from into src (fresh or released; may be NULL). p, m, v and the placement come
 * from the text (above). Checks the text, not the schedule: validate it after
 * (pps_schedule_validate, then pps_sched_text_explain for the fault in the text's terms).
 * PPS_EFORMAT with the line, rank and step and the cell in err for text that is no schedule;
 * PPS_ENOMEM.
 */
int pps_schedule_read(struct pps_schedule *out, struct pps_sched_text *src, const char *text,
                      size_t len, int syntax, struct pps_err *err);
void pps_sched_text_release(struct pps_sched_text *src);

/*
 * The fault f that pps_schedule_validate found in s, read from src, in the text's terms into buf
 * (like snprintf, returning the length the whole text needs): a line "line L, rank R, step S:
 * 1I3 comes before the microbatch's forward" (the grid: "stage S" and its own notation),
 * then the rows around the cell, the cell marked [1I3] (a missing action: its row marked
 * "<-- here"). msg is the validator's sentence, said where f has nothing more precise.
 */
size_t pps_sched_text_explain(const struct pps_sched_text *src, const struct pps_schedule *s,
                              const struct pps_sched_fault *f, const char *msg, char *buf,
                              size_t len);

/*
 * sched in PyTorch's pipeline-order CSV (above), into buf like snprintf: each action in the
 * column of the step it runs in when every action takes one step and starts once its inputs are
 * in (an empty cell where a rank waits), so that PyTorch's lockstep reading of the columns holds
 * (an action's input is made in an earlier column). Lines end in CRLF, as Python's csv writes.
 * 0 (nothing written) where sched does not run (validate it first).
 */
size_t pps_schedule_write_csv(const struct pps_schedule *sched, char *buf, size_t len);

/* sched in ppscope's grid (above): pps_schedule_format's rows, after "placement: v" in V. */
size_t pps_schedule_write_grid(const struct pps_schedule *sched, char *buf, size_t len);

/* A copy of in into out (fresh or released): 0 or PPS_ENOMEM. */
int pps_schedule_copy(struct pps_schedule *out, const struct pps_schedule *in);
/* Whether a and b are the same schedule: p, m, v, the action lists op for op, and the placement
 * (on one stage a loop and V place alike: chunk c is virtual stage c in both). */
int pps_schedule_equal(const struct pps_schedule *a, const struct pps_schedule *b);

/*
 * A schedule whose stages hold at most budget[s] pending W's (a microbatch B'd and not yet W'd;
 * budget NULL or budget[s] <= 0: stage s as it is): before each B that would leave more, the
 * stage's oldest pending W (its B ran first) moves up to run there. A chunk's W's keep their B's
 * order, so gradients add up in the same order as in the original; an original whose W's do not
 * follow their B's order on a budgeted stage is PPS_ESCHEDULE (the fault says where). Fills out
 * (fresh or released) with the same number of actions per stage.
 */
int pps_schedule_apply_w_budget(const struct pps_schedule *in, const int *budget,
                                struct pps_schedule *out, struct pps_sched_fault *fault,
                                struct pps_err *err);

/* ----------------------------------------------------------------------------------------- */
/* Simulation                                                                                */
/* ----------------------------------------------------------------------------------------- */

/*
 * Op costs, in any time unit. tf[s], tb[s], tw[s] are the times of one microbatch through all of
 * stage s's layers; with v chunks each chunk's op takes 1/v of it, so schedules compare at equal
 * work. BW costs tb + tw. tcomm is added to every dependency that crosses stages; topt is the
 * optimizer step, run by every stage after the iteration's last action.
 *
 * Memory model (activations, in units of one microbatch through one whole stage): F allocates
 * 1/v when it starts; B frees (1 - w_mem)/v when it ends, keeping what W still needs (the inputs
 * of the weight GEMMs); W frees the remaining w_mem/v; BW frees 1/v. w_mem = 1 counts a
 * microbatch as live until its W, w_mem = 0 frees everything at B.
 */
struct pps_sim_costs {
    int p;
    double *tf, *tb, *tw; /* p entries each */
    double tcomm;
    /* NULL, or p * p entries: tlink[from * p + to] replaces tcomm on the dependencies from stage
     * `from` to stage `to` (a link measured per direction). */
    double *tlink;
    double topt;
    double w_mem;
};

/* Allocates p-entry arrays set to uniform costs (tcomm = topt = 0, w_mem = 0.5, no tlink). */
int pps_sim_costs_init(struct pps_sim_costs *c, int p, double tf, double tb, double tw);
/* Allocates c->tlink (if it has none) with every link at c->tcomm: 0 or PPS_ENOMEM. */
int pps_sim_costs_links(struct pps_sim_costs *c);
void pps_sim_costs_release(struct pps_sim_costs *c);

/* Start and end of one action, laid out like sched->actions. */
struct pps_sim_span {
    double start, end;
};

struct pps_sim_result {
    int p;
    double makespan;            /* one iteration, optimizer step included */
    double bubble;              /* sum of idle / (p * makespan) */
    double steady_period;       /* iteration time when iterations run back to back, no barrier */
    double steady_bubble;       /* 1 - busy / (p * steady_period) */
    double *busy;               /* p entries: compute time (F, B, W, BW, optimizer) per stage */
    double *idle;               /* p entries: makespan - busy */
    double *peak_act;           /* p entries: peak live activations, see the memory model */
    struct pps_sim_span *spans; /* one per action, same indexing as sched->actions */
    /* p * PPS_PHASE_COUNT entries: stage s's idle in phase ph at [s * PPS_PHASE_COUNT + ph]
     * (pps_sim_phases); the four add up to idle[s]. */
    double *phase_idle;
};

/*
 * List-schedules each stage's actions in order: an action starts when its stage is free and its
 * dependencies have ended (plus tcomm across stages). One iteration with an optimizer barrier
 * gives makespan, busy, idle (and by phase), bubble and peak activations; iterations run back to
 * back, each stage stepping its optimizer right after its own last action (post-validation),
 * give the steady state. res must be zeroed or released; free with pps_sim_result_release().
 * Linear in the number of actions. Returns PPS_ESCHEDULE if the schedule deadlocks, PPS_EINVAL on
 * bad costs.
 */
int pps_simulate(const struct pps_schedule *sched, const struct pps_sim_costs *costs,
                 struct pps_sim_result *res, struct pps_err *err);
void pps_sim_result_release(struct pps_sim_result *res);

/* ----------------------------------------------------------------------------------------- */
/* zb-auto (auto.c)                                                                          */
/* ----------------------------------------------------------------------------------------- */

/*
 * The memory limit zb-auto counts in: live microbatches on a stage, a microbatch live from its
 * F to its W (the zero-bubble paper's count: ZB-H1 and 1F1B peak at p, ZB-H2 at 2p-1). One is
 * the least any schedule runs in (F, B, W of one microbatch at a time); above m acts as m.
 */
#define PPS_ZB_AUTO_MIN_LIMIT 1

/*
 * Builds zb-auto into out (fresh or released): the zero-bubble paper's automatic scheduler for
 * costs (costs->p stages; tf, tb, tw per stage, tcomm or tlink, topt) and m microbatches, with
 * at most mem_limit live microbatches (above) on every stage. Warm-up F's as the limits allow,
 * then a ready B first, a ready F next, a W in the gaps; a local search over each stage's
 * warm-up and when W's run, keeping the least simulated makespan (pps_simulate's, optimizer
 * barrier included). The handcrafted orders that fit the limit (ZB-H1, ZB-H2, 1F1B and GPipe
 * with split backwards) are among the candidates, so it is never worse than any of them.
 * Deterministic. Kind PPS_SCHED_ZB_AUTO, v = 1, loop placement, B and W split, 3m actions a
 * stage. PPS_EINVAL (with the reason) for bad costs, shape or a limit below
 * PPS_ZB_AUTO_MIN_LIMIT; PPS_ENOMEM.
 */
int pps_schedule_auto(struct pps_schedule *out, const struct pps_sim_costs *costs, int m,
                      int mem_limit, struct pps_err *err);

/* The most live microbatches (F done, W or BW not) on any stage of sched, zb-auto's count. */
int pps_schedule_live_peak(const struct pps_schedule *sched);

/* ----------------------------------------------------------------------------------------- */
/* Bubble by phase (phase.c)                                                                 */
/* ----------------------------------------------------------------------------------------- */

/*
 * Where in an iteration a stage idles. A stage's iteration window [t0, t1) (for the simulator:
 * 0 to the makespan, the optimizer step included) is cut at three moments of its own:
 *   warm-up   [t0, a): a = the start of its first backward (B or BW)
 *   steady    [a, b):  b = the end of its last forward, where that comes after a (else b = a)
 *   cool-down [b, c):  c = the end of its last op (F, B, W, BW), where after b (else c = b)
 *   barrier   [c, t1): after its last op: the wait for the other stages, and the optimizer
 * Each edge is clamped into the window and never before the one before it, so the phases cover
 * the window exactly once: a stage's idle in the four adds up to its idle in the window. A stage
 * with no backward has a = its last forward's end; one with no op at all, a = t1 (all warm-up).
 * GPipe, whose backwards all follow its forwards, has no steady state.
 */
enum pps_phase {
    PPS_PHASE_WARMUP = 0,
    PPS_PHASE_STEADY,
    PPS_PHASE_COOLDOWN,
    PPS_PHASE_BARRIER,
    PPS_PHASE_COUNT,
};

/* "warmup", "steady", "cooldown", "barrier"; "?" out of range. */
const char *pps_phase_name(int phase);

/* The phases' edges edge[0..4] = t0, a, b, c, t1 as defined above, from the stage's first
 * backward start, last forward end and last op end (NaN for each it does not have). */
void pps_phase_edges(double t0, double t1, double first_b, double last_f, double last_op,
                     double edge[PPS_PHASE_COUNT + 1]);

/* Each stage's idle by phase (p * PPS_PHASE_COUNT entries into idle, as res->phase_idle) from
 * res's timeline of sched, with every stage's optimizer step (topt) at the barrier, as
 * pps_simulate lays it out. pps_simulate fills res->phase_idle with it. 0 or PPS_EINVAL. */
int pps_sim_phases(const struct pps_schedule *sched, const struct pps_sim_result *res, double topt,
                   double *idle);

/*
 * Stage s of sc walked op by op, each chunk c's microbatch holding after_f[c] after its F and
 * after_b[c] after its B while its W is pending (v entries each, in any unit): F adds after_f,
 * B gives it up for after_b and leaves a W pending, W frees after_b, a fused BW frees after_f.
 * *act_peak and *pw_peak get the most held and the most W's pending after any op. The
 * simulator's model is after_f = 1/v and after_b = w_mem/v (struct pps_sim_costs).
 */
void pps_schedule_stage_memory(const struct pps_schedule *sc, int s, const double *after_f,
                               const double *after_b, double *act_peak, int *pw_peak);

/*
 * The zero-bubble theory of kind's idle per stage, with tF, tB, tW the same on every stage and no
 * message time; NaN where kind has none or (p, m) is outside where it holds. *steady (may be
 * NULL) says whether it is the steady state's, iterations back to back, or one iteration's:
 *   zb-h1           (p-1) max(tF, tF+tB-tW) an iteration, m >= p: the paper's (p-1)(tF+tB-tW)
 *                   while tW <= tB; past that the fill's forwards, (p-1)tF, are what idles
 *   zb-h2           (p-1) max(0, tF+tB-2tW) in the steady state, m >= 2p-1
 *   interleaved-zb  zb-h1's over v: (p-1) max(tF, tF+tB-tW) / v an iteration, m >= p
 *   zb-v            0 in the steady state when tF = tB = tW, m >= 2p-1
 *   dualpipev       (p-1)(tF+tB-tW)/2 an iteration, tF = tB >= tW, m >= 2p: DeepSeek-V3's
 *                   (PP/2-1)(F&B+B-3W) for PP = 2p chunks of costs F = tF/2, B = (tB+tW)/2,
 *                   W = tW/2 and F&B = F+B, less (p-1)tB/2: each pair runs F then BW, and the
 *                   forward's activation leaves before the backward runs
 * The simulator reproduces each (test_simulate.c); a stage's iteration is m(tF+tB+tW) plus it.
 */
double pps_zb_theory_idle(int kind, int p, int m, int v, double tf, double tb, double tw,
                          int *steady);
/* The formula of kind's theory as printed ("(p-1)max(tF, tF+tB-tW)"), or NULL where none. */
const char *pps_zb_theory_formula(int kind);

/* The bubble as users quote it, (p-1)/m, and exactly, (p-1)/(v*m + p-1). */
double pps_bubble_quoted(int p, int m);
double pps_bubble_exact(int p, int m, int v);

#endif
