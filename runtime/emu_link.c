/*
 * emu_link.c - the emu link model: a transport that wraps another and delivers each message
 * between two stages no earlier than its send time + latency + bytes / bandwidth (emu.h).
 *
 * A message to another stage travels as two of the inner transport's messages with its tag: a
 * header (the send time and the payload's length), then the payload. Equal tags from one peer
 * arrive in send order (transport.h), so the header always comes first. poll takes the header
 * as soon as it is there and keeps it in a small stash, so it can say "not yet" until the
 * modeled arrival time; recv takes the header (stashed or not), sleeps until that time, then
 * takes the payload. A message a stage sends to itself does not cross a wire and goes straight
 * through.
 */
#include <stdlib.h>
#include <string.h>

#include "emu.h"
#include "emu_int.h"

/* What crosses the wire before each payload. */
struct pps__emu_header {
    int64_t send_ns;
    int64_t len;
};

/* A header taken by poll, waiting for its recv. */
struct pps__emu_stashed {
    struct pps__emu_stashed *next;
    int src;
    struct pps_msg_tag tag;
    struct pps__emu_header h;
};

struct pps__emu_link {
    struct pps_transport base;
    struct pps_transport *inner;
    struct pps_emu_config cfg;
    struct pps__emu_stashed *stash;
    float *scratch; /* a payload of the wrong length, received to be dropped */
    size_t scratch_len;
};

static struct pps__emu_link *link_of(struct pps_transport *t)
{
    return (struct pps__emu_link *)(void *)t;
}

static int same_tag(const struct pps_msg_tag *a, const struct pps_msg_tag *b)
{
    return a->kind == b->kind && a->iter == b->iter && a->mb == b->mb && a->vstage == b->vstage;
}

/* The stashed header for (src, tag), unlinked when take is set. */
static struct pps__emu_stashed *stash_find(struct pps__emu_link *l, int src,
                                           const struct pps_msg_tag *tag, int take)
{
    for (struct pps__emu_stashed **pp = &l->stash; *pp; pp = &(*pp)->next) {
        struct pps__emu_stashed *e = *pp;
        if (e->src == src && same_tag(&e->tag, tag)) {
            if (take)
                *pp = e->next;
            return e;
        }
    }
    return NULL;
}

static int64_t arrival(const struct pps__emu_link *l, int src, const struct pps__emu_header *h)
{
    return h->send_ns + (int64_t)pps_emu_link_delay_ns(&l->cfg, src, l->base.stage, (size_t)h->len);
}

static int link_send(struct pps_transport *t, int dst, const struct pps_msg_tag *tag,
                     const void *buf, size_t len, struct pps_err *err)
{
    struct pps__emu_link *l = link_of(t);
    struct pps__emu_header h;
    int rc;

    if (dst == t->stage)
        return l->inner->ops->send(l->inner, dst, tag, buf, len, err);
    h.send_ns = pps__emu_now();
    h.len = (int64_t)len;
    rc = l->inner->ops->send(l->inner, dst, tag, &h, sizeof(h), err);
    if (!rc)
        rc = l->inner->ops->send(l->inner, dst, tag, buf, len, err);
    return rc;
}

static int link_recv(struct pps_transport *t, int src, const struct pps_msg_tag *tag, void *buf,
                     size_t len, struct pps_err *err)
{
    struct pps__emu_link *l = link_of(t);
    struct pps__emu_stashed *e;
    struct pps__emu_header h;
    int rc;

    if (src == t->stage)
        return l->inner->ops->recv(l->inner, src, tag, buf, len, err);
    e = stash_find(l, src, tag, 1);
    if (e) {
        h = e->h;
        free(e);
    } else {
        rc = l->inner->ops->recv(l->inner, src, tag, &h, sizeof(h), err);
        if (rc)
            return rc;
    }
    pps__emu_sleep_until(arrival(l, src, &h));
    if ((size_t)h.len == len)
        return l->inner->ops->recv(l->inner, src, tag, buf, len, err);

    /* The wrong length: take the payload anyway (the rule is that it is dropped), then say so. */
    if ((size_t)h.len > l->scratch_len) {
        float *s = realloc(l->scratch, (size_t)h.len);
        if (!s)
            return pps_err_set(err, PPS_ENOMEM, "emu link: out of memory for a %lld-byte message",
                               (long long)h.len);
        l->scratch = s;
        l->scratch_len = (size_t)h.len;
    }
    rc = l->inner->ops->recv(l->inner, src, tag, l->scratch, (size_t)h.len, err);
    if (rc)
        return rc;
    return pps_err_set(err, PPS_EINVAL,
                       "a message of iteration %d, microbatch %d for virtual stage %d from stage "
                       "%d is %lld bytes, stage %d expected %zu",
                       tag->iter, tag->mb, tag->vstage, src, (long long)h.len, t->stage, len);
}

static int link_poll(struct pps_transport *t, int src, const struct pps_msg_tag *tag)
{
    struct pps__emu_link *l = link_of(t);
    struct pps__emu_stashed *e;

    if (src == t->stage)
        return l->inner->ops->poll(l->inner, src, tag);
    e = stash_find(l, src, tag, 0);
    if (!e) {
        if (!l->inner->ops->poll(l->inner, src, tag))
            return 0;
        e = calloc(1, sizeof(*e));
        /* No memory, or a header that does not come: recv will meet the same trouble and say
         * so; "would not block" is the answer poll owes it. */
        if (!e)
            return 1;
        if (l->inner->ops->recv(l->inner, src, tag, &e->h, sizeof(e->h), NULL)) {
            free(e);
            return 1;
        }
        e->src = src;
        e->tag = *tag;
        e->next = l->stash;
        l->stash = e;
    }
    return pps__emu_now() >= arrival(l, src, &e->h);
}

static int link_allreduce_sum(struct pps_transport *t, double *x, int n, struct pps_err *err)
{
    struct pps__emu_link *l = link_of(t);

    return l->inner->ops->allreduce_sum(l->inner, x, n, err);
}

static int link_barrier(struct pps_transport *t, struct pps_err *err)
{
    struct pps__emu_link *l = link_of(t);

    return l->inner->ops->barrier(l->inner, err);
}

static int link_allreduce_start(struct pps_transport *t, double *x, int n, struct pps_err *err)
{
    struct pps__emu_link *l = link_of(t);

    return l->inner->ops->allreduce_start(l->inner, x, n, err);
}

static int link_allreduce_test(struct pps_transport *t, struct pps_err *err)
{
    struct pps__emu_link *l = link_of(t);

    return l->inner->ops->allreduce_test(l->inner, err);
}

static int link_allreduce_wait(struct pps_transport *t, struct pps_err *err)
{
    struct pps__emu_link *l = link_of(t);

    return l->inner->ops->allreduce_wait(l->inner, err);
}

static int link_abort(struct pps_transport *t, const char *reason)
{
    struct pps__emu_link *l = link_of(t);

    return l->inner->ops->abort(l->inner, reason);
}

static void link_free(struct pps_transport *t)
{
    struct pps__emu_link *l;

    if (!t)
        return;
    l = link_of(t);
    while (l->stash) {
        struct pps__emu_stashed *next = l->stash->next;
        free(l->stash);
        l->stash = next;
    }
    l->inner->ops->free(l->inner);
    free(l->scratch);
    free(l);
}

static const struct pps_transport_ops link_ops = {
    .name = "emu-link",
    .send = link_send,
    .recv = link_recv,
    .poll = link_poll,
    .allreduce_sum = link_allreduce_sum,
    .barrier = link_barrier,
    .free = link_free,
    .allreduce_start = link_allreduce_start,
    .allreduce_test = link_allreduce_test,
    .allreduce_wait = link_allreduce_wait,
    .abort = link_abort,
};

int pps_emu_link_new(const struct pps_emu_config *c, struct pps_transport *inner,
                     struct pps_transport **out, struct pps_err *err)
{
    struct pps__emu_link *l;

    if (!out || !inner || !c) {
        if (inner)
            inner->ops->free(inner);
        return pps_err_set(err, PPS_EINVAL, "emu link: no transport to wrap");
    }
    *out = NULL;
    l = calloc(1, sizeof(*l));
    if (!l) {
        inner->ops->free(inner);
        return pps_err_set(err, PPS_ENOMEM, "emu link: out of memory");
    }
    l->base.ops = &link_ops;
    l->base.stage = inner->stage;
    l->base.p = inner->p;
    l->inner = inner;
    l->cfg = *c;
    l->cfg.stage_mult = NULL; /* borrowed there; the link does not need it */
    l->cfg.n_stage_mult = 0;
    *out = &l->base;
    return 0;
}
