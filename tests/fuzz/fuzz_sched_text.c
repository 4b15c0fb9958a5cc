/*
 * fuzz_sched_text.c - libFuzzer target of the schedule file reader (schedule/text_read.c, behind
 * `sim` and `run --schedule-file`): each input is read as a schedule, PyTorch's pipeline-order
 * CSV or ppscope's grid as its first line says. Every input must end in one of two ways:
 *   - refused: PPS_EFORMAT (or PPS_ENOMEM) with a one-line reason and no schedule;
 *   - read: a schedule that validates, or whose fault pps_sched_text_explain says (its length
 *     what it returns, its first line the headline); one that validates writes as CSV and as the
 *     grid, each reading back to the same schedule, and simulates.
 * A crash, a leak or a sanitizer report is a bug.
 *
 * Built with clang's -fsanitize=fuzzer under PPS_FUZZ=ON (tests/fuzz.cmake); its seeds are
 * tests/fuzz/corpus/sched_text (`make fuzz` runs it). Without libFuzzer the same file builds a
 * replayer (fuzz_common.h's), which ctest runs over the corpus (fuzz_replay_sched_text).
 */
#define FUZZ_NAME  "sched_text"
#define FUZZ_INPUT "in.csv"
#define FUZZ_PROG  "fuzz_sched_text"
#include "fuzz_common.h"

#include "schedule.h"

static void bad(const char *what, const char *detail)
{
    fprintf(stderr, FUZZ_PROG ": %s: %s\n", what, detail);
    abort();
}

/* s written as CSV (csv) or the grid must read back to itself. */
static void round_trip(const struct pps_schedule *s, int csv)
{
    size_t need = csv ? pps_schedule_write_csv(s, NULL, 0) : pps_schedule_write_grid(s, NULL, 0);
    struct pps_schedule back = PPS_SCHEDULE_INIT;
    struct pps_err err = {0, ""};
    char *text = malloc(need + 1);

    if (!text)
        return;
    if ((csv ? pps_schedule_write_csv(s, text, need + 1)
             : pps_schedule_write_grid(s, text, need + 1)) != need ||
        strlen(text) != need)
        bad("a written schedule of another length than said", csv ? "csv" : "grid");
    if (pps_schedule_read(&back, NULL, text, need, PPS_SYNTAX_AUTO, &err))
        bad(csv ? "a written CSV that does not read back"
                : "a written grid that does not read back",
            err.msg);
    if (!pps_schedule_equal(s, &back))
        bad("a schedule that reads back otherwise", csv ? "csv" : "grid");
    pps_schedule_release(&back);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pps_schedule s = PPS_SCHEDULE_INIT;
    struct pps_sched_text src = PPS_SCHED_TEXT_INIT;
    struct pps_sched_fault fault;
    struct pps_err err = {0, ""};
    int rc = pps_schedule_read(&s, &src, (const char *)data, size, PPS_SYNTAX_AUTO, &err);

    if (rc) {
        if ((rc != PPS_EFORMAT && rc != PPS_ENOMEM) || !err.msg[0] || strchr(err.msg, '\n') ||
            s.actions || src.cell)
            bad("a bad refusal", err.msg);
        return 0;
    }
    if (s.kind != -1 || !src.at || src.n_rows != s.p)
        bad("a schedule read without its source", "");
    rc = pps_schedule_validate(&s, &fault, &err);
    if (rc == PPS_ESCHEDULE) {
        size_t need = pps_sched_text_explain(&src, &s, &fault, err.msg, NULL, 0);
        char *text = malloc(need + 1);

        if (text) {
            if (pps_sched_text_explain(&src, &s, &fault, err.msg, text, need + 1) != need ||
                strlen(text) != need || !strchr(text, '\n'))
                bad("an explanation of another length than said", text);
            free(text);
        }
    } else if (rc == 0) {
        struct pps_sim_costs costs;
        struct pps_sim_result res;

        round_trip(&s, 1);
        round_trip(&s, 0);
        memset(&res, 0, sizeof(res));
        if (!pps_sim_costs_init(&costs, s.p, 1, 2, 1)) {
            if (pps_simulate(&s, &costs, &res, &err))
                bad("a valid schedule that does not simulate", err.msg);
            pps_sim_result_release(&res);
            pps_sim_costs_release(&costs);
        }
    } else if (rc != PPS_ENOMEM) {
        bad("a validation that fails otherwise", err.msg);
    }
    pps_sched_text_release(&src);
    pps_schedule_release(&s);
    return 0;
}
