/*
 * devmap.c - device activity records into spans of the ops that launched them (devmap.h).
 */
#include <stdlib.h>
#include <string.h>

#include "devmap.h"

#define SLOT_BITS  7
#define KIND_BITS  4
#define CHUNK_BITS 8
#define MB_BITS    20
#define ITER_BITS  24

#define MASK(bits) ((UINT64_C(1) << (bits)) - 1)

/* v in 0..max-1 as itself; anything else (-1 included) as all ones, read back as -1. */
static uint64_t field(int v, int bits)
{
    return v >= 0 && (uint64_t)v < MASK(bits) ? (uint64_t)v : MASK(bits);
}

static int unfield(uint64_t x, int bits)
{
    return x == MASK(bits) ? -1 : (int)x;
}

uint64_t pps__devop_pack(int slot, int kind, int chunk, int mb, int iter)
{
    uint64_t x = UINT64_C(1) << 63;
    x |= (slot >= 0 && slot < PPS__DEVOP_SLOTS ? (uint64_t)slot : MASK(SLOT_BITS))
         << (KIND_BITS + CHUNK_BITS + MB_BITS + ITER_BITS);
    x |= (kind > 0 && kind <= (int)MASK(KIND_BITS) ? (uint64_t)kind : 0)
         << (CHUNK_BITS + MB_BITS + ITER_BITS);
    x |= field(chunk, CHUNK_BITS) << (MB_BITS + ITER_BITS);
    x |= field(mb, MB_BITS) << ITER_BITS;
    x |= field(iter, ITER_BITS);
    return x;
}

int pps__devop_unpack(uint64_t ext, int *slot, int *kind, int *chunk, int *mb, int *iter)
{
    if (!(ext >> 63))
        return -1;
    *slot =
        unfield(ext >> (KIND_BITS + CHUNK_BITS + MB_BITS + ITER_BITS) & MASK(SLOT_BITS), SLOT_BITS);
    *kind = (int)(ext >> (CHUNK_BITS + MB_BITS + ITER_BITS) & MASK(KIND_BITS));
    *chunk = unfield(ext >> (MB_BITS + ITER_BITS) & MASK(CHUNK_BITS), CHUNK_BITS);
    *mb = unfield(ext >> ITER_BITS & MASK(MB_BITS), MB_BITS);
    *iter = unfield(ext & MASK(ITER_BITS), ITER_BITS);
    return 0;
}

int64_t pps__devop_corr(uint64_t ext)
{
    return (int64_t)(ext & MASK(KIND_BITS + CHUNK_BITS + MB_BITS + ITER_BITS));
}

struct pps__devmap *pps__devmap_new(void)
{
    struct pps__devmap *m = calloc(1, sizeof(*m));
    if (m && !(m->pending = calloc(PPS__DEVMAP_PENDING, sizeof(*m->pending)))) {
        free(m);
        m = NULL;
    }
    return m;
}

void pps__devmap_free(struct pps__devmap *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_pending; i++)
        free(m->pending[i].name);
    free(m->pending);
    free(m);
}

/* The op of call corr, or 0 when the map has not seen it (or has forgotten it). */
static uint64_t op_of(const struct pps__devmap *m, uint32_t corr)
{
    size_t i = corr % PPS__DEVMAP_RING;
    return m->ring_corr[i] == corr ? m->ring_ext[i] : 0;
}

/* The span of record r under op ext (0: unknown), to emit. */
static void emit_span(struct pps__devmap *m, const struct pps__devrec *r, const char *name,
                      uint64_t ext, pps__devmap_emit emit, void *ctx)
{
    struct pps_span s;
    int slot = -1, kind = 0, chunk = -1, mb = -1, iter = -1;

    memset(&s, 0, sizeof(s));
    if (ext && pps__devop_unpack(ext, &slot, &kind, &chunk, &mb, &iter) == 0)
        s.corr = pps__devop_corr(ext);
    else
        m->unattributed++;
    s.start_ns = r->start_ns;
    s.end_ns = r->end_ns > r->start_ns ? r->end_ns : r->start_ns;
    s.kind = r->type == PPS__DEVREC_KERNEL ? PPS_SPAN_KERNEL : PPS_SPAN_MEMCPY;
    s.bytes = r->type == PPS__DEVREC_KERNEL || r->bytes < 0 ? 0 : r->bytes;
    s.iter = iter;
    s.mb = mb;
    s.chunk = (int16_t)chunk;
    s.peer = -1;
    s.name_id = -1;
    s.clock = PPS_CLOCK_HOST;
    emit(ctx, slot, &s, name);
}

static const char *name_of(const struct pps__devrec *r)
{
    if (r->type == PPS__DEVREC_KERNEL)
        return r->name ? r->name : "kernel";
    if (r->type == PPS__DEVREC_MEMSET)
        return "memset";
    return r->copy ? r->copy : "memcpy";
}

void pps__devmap_record(struct pps__devmap *m, const struct pps__devrec *r, pps__devmap_emit emit,
                        void *ctx)
{
    uint64_t ext;

    if (r->type == PPS__DEVREC_EXTERNAL) {
        size_t i = r->corr % PPS__DEVMAP_RING;
        m->ring_corr[i] = r->corr;
        m->ring_ext[i] = r->ext;
        return;
    }
    if (r->type != PPS__DEVREC_KERNEL && r->type != PPS__DEVREC_MEMCPY &&
        r->type != PPS__DEVREC_MEMSET)
        return;
    if ((ext = op_of(m, r->corr)) != 0) {
        emit_span(m, r, name_of(r), ext, emit, ctx);
        return;
    }
    if (m->n_pending == PPS__DEVMAP_PENDING) {
        /* No room to wait: written now, without its op, and counted. */
        m->lost++;
        emit_span(m, r, name_of(r), 0, emit, ctx);
        return;
    }
    {
        struct pps__devmap_pending *p = &m->pending[m->n_pending];
        p->rec = *r;
        p->name = strdup(name_of(r));
        p->since_ns = -1; /* set by the first drain_end */
        p->rec.name = p->rec.copy = NULL;
        m->n_pending++;
    }
}

void pps__devmap_drain_end(struct pps__devmap *m, int64_t now_ns, int force, pps__devmap_emit emit,
                           void *ctx)
{
    size_t kept = 0;

    for (size_t i = 0; i < m->n_pending; i++) {
        struct pps__devmap_pending *p = &m->pending[i];
        uint64_t ext = op_of(m, p->rec.corr);
        const char *name = p->name ? p->name : name_of(&p->rec);

        if (p->since_ns < 0)
            p->since_ns = now_ns;
        if (ext || force || now_ns - p->since_ns >= PPS__DEVMAP_PATIENCE_NS) {
            emit_span(m, &p->rec, name, ext, emit, ctx);
            free(p->name);
        } else {
            m->pending[kept++] = *p;
        }
    }
    m->n_pending = kept;
}
