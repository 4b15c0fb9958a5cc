// bench_json_simdjson.cpp - simdjson (On-Demand and DOM) for bench_json.c, behind C functions.
//
// simdjson parses a document held whole in memory. To stream, the events of "traceEvents" are
// read into a window; the window is cut after its last "}" that a "," follows (whitespace
// between), wrapped in "[...]" and parsed as one document; what follows the cut is moved to the
// front of the window and the next chunk is read behind it. A cut inside a string or inside a
// nested object makes the document invalid (it cannot be balanced), so a wrong cut is never
// taken for a right one: the window is then cut by a careful scan that follows strings and
// depth. simdjson's own scan thus does nearly all the work.
#include <simdjson.h>

#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#include "bench_json.h"

namespace
{

constexpr size_t kChunk = 1 << 20;

// Takes the event's field k but "args" (v: an On-Demand value or a DOM element, which read
// alike). A value of the wrong type throws, as simdjson's conversions do.
template <typename V> void take_field(bench_event *e, std::string_view k, V &&v)
{
    if (k == "ph") {
        std::string_view t = v.get_string().value();
        e->ph = t.empty() ? 0 : t[0];
    } else if (k == "cat") {
        std::string_view t = v.get_string().value();
        size_t n = std::min(t.size(), sizeof(e->cat) - 1);
        memcpy(e->cat, t.data(), n);
    } else if (k == "name") {
        std::string_view t = v.get_string().value();
        e->name_len = std::min(t.size(), sizeof(e->name) - 1);
        memcpy(e->name, t.data(), e->name_len);
    } else if (k == "ts") {
        e->ts_us = v.get_double().value();
    } else if (k == "dur") {
        e->dur_us = v.get_double().value();
    } else if (k == "pid") {
        int64_t x;
        if (v.get_int64().get(x) == simdjson::SUCCESS)
            e->pid = x;
    } else if (k == "tid") {
        int64_t x;
        if (v.get_int64().get(x) == simdjson::SUCCESS)
            e->tid = x;
    }
}

// Takes the field k of the event's "args".
template <typename V> void take_arg(bench_event *e, std::string_view k, V &&v)
{
    if (k == "correlation")
        e->corr = v.get_int64().value();
    else if (k == "External id")
        e->ext = v.get_int64().value();
}

void take_ondemand(simdjson::ondemand::object obj, bench_sum *s)
{
    bench_event e{};
    for (auto field : obj) {
        std::string_view k = field.unescaped_key().value();
        auto v = field.value();
        if (k == "args") {
            for (auto a : v.get_object())
                take_arg(&e, a.unescaped_key().value(), a.value());
        } else {
            take_field(&e, k, v);
        }
    }
    bench_event_done(s, &e);
}

void take_dom(simdjson::dom::object obj, bench_sum *s)
{
    bench_event e{};
    for (auto [k, v] : obj) {
        if (k == "args") {
            for (auto [ak, av] : v.get_object())
                take_arg(&e, ak, av);
        } else {
            take_field(&e, k, v);
        }
    }
    bench_event_done(s, &e);
}

bool is_ws(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// After the last '}' that ws* ',' follows in b[0..n): the cut's length, or 0.
size_t quick_cut(const char *b, size_t n)
{
    for (size_t i = n; i-- > 0;) {
        if (b[i] != ',')
            continue;
        size_t j = i;
        while (j > 0 && is_ws(b[j - 1]))
            j--;
        if (j > 0 && b[j - 1] == '}')
            return j;
    }
    return 0;
}

// The careful cut: after the last '}' closing a depth-0 object. Also reports the array's end.
size_t careful_cut(const char *b, size_t n, size_t *array_end)
{
    int depth = 0;
    bool in_str = false, esc = false;
    size_t cut = 0;
    *array_end = 0;
    for (size_t i = 0; i < n; i++) {
        char c = b[i];
        if (in_str) {
            if (esc)
                esc = false;
            else if (c == '\\')
                esc = true;
            else if (c == '"')
                in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0) {
                *array_end = i + 1;
                return cut;
            }
            if (--depth == 0)
                cut = i + 1;
        }
    }
    return cut;
}

template <bool Dom> int run(int fd, bench_sum *s)
{
    simdjson::ondemand::parser od;
    simdjson::dom::parser dom;
    std::vector<char> buf(4 * kChunk + 1 + simdjson::SIMDJSON_PADDING);
    size_t have = 0; // bytes of events in buf[1..]
    bool found = false, done = false;
    static const char key[] = "\"traceEvents\"";
    size_t matched = 0;
    ssize_t n;

    while (!done) {
        if (buf.size() < 1 + have + kChunk + simdjson::SIMDJSON_PADDING)
            buf.resize(2 * buf.size());
        n = read(fd, buf.data() + 1 + have, kChunk);
        if (n < 0)
            return -1;
        bool eof = n == 0;
        char *b = buf.data() + 1;
        size_t start = have;
        have += (size_t)n;
        if (!found) {
            size_t i = start;
            for (; i < have && !found; i++) {
                if (matched < sizeof(key) - 1)
                    matched = b[i] == key[matched] ? matched + 1 : (b[i] == '"');
                else if (b[i] == '[')
                    found = true;
            }
            memmove(b, b + i, have - i);
            have -= i;
            if (!found)
                continue;
        }
        size_t lead = 0;
        while (lead < have && (is_ws(b[lead]) || b[lead] == ','))
            lead++;
        size_t cut = quick_cut(b + lead, have - lead), array_end = 0;
        if (eof && !found)
            break;
        for (int attempt = eof ? 1 : 0; attempt < 2; attempt++) {
            if (attempt == 1)
                cut = careful_cut(b + lead, have - lead, &array_end);
            if (cut == 0 && !array_end)
                break;
            char *doc = b + lead - 1;
            char saved = doc[1 + cut];
            doc[0] = '[';
            doc[1 + cut] = ']';
            bool ok = true;
            try {
                if (Dom) {
                    simdjson::dom::element d = dom.parse(doc, cut + 2, false);
                    for (auto ev : d.get_array())
                        take_dom(ev.get_object(), s);
                } else {
                    auto d = od.iterate(doc, cut + 2, buf.size() - (doc - buf.data()));
                    for (auto ev : d.get_array())
                        take_ondemand(ev.get_object(), s);
                }
            } catch (const simdjson::simdjson_error &) {
                ok = false;
            }
            doc[1 + cut] = saved;
            if (!ok) {
                if (attempt == 1)
                    return -1;
                continue;
            }
            if (array_end)
                done = true;
            break;
        }
        size_t used = lead + cut;
        memmove(b, b + used, have - used);
        have -= used;
        if (eof)
            break;
    }
    return 0;
}

} // namespace

extern "C" int bench_run_simdjson(int fd, bench_sum *s)
{
    return run<false>(fd, s);
}

extern "C" int bench_run_simdjson_dom(int fd, bench_sum *s)
{
    return run<true>(fd, s);
}
