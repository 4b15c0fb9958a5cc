// kineto_json.cpp - simdjson's On-Demand parser behind the C functions of kineto_json.h: a
// window of whole trace events ("[" event, event, ... "]") in, a flat array of the fields the
// importer reads out. The only C++ in ppscope: simdjson reads Kineto traces five times faster
// than the best C parser in Debian's archive (docs/import.md has the figures), and the 1M
// events/s the importer must reach leave no room for a slower one.
//
// No exceptions cross into C: every simdjson call is checked through its error code. simdjson's
// parsing is iterative, and the depth is capped (kMaxDepth), so no input can overflow a stack.
#include <simdjson.h>

#include <cstdio>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include "kineto_json.h"

namespace
{

using simdjson::error_code;
using simdjson::SUCCESS;
namespace od = simdjson::ondemand;

// Kineto's events nest 5 deep (event, args, "Input Dims", its lists); the window adds one.
constexpr size_t kMaxDepth = 64;

static_assert(PPS__KJSON_PADDING >= simdjson::SIMDJSON_PADDING, "simdjson needs more padding");

struct fail {
    const char *what;
    error_code code;
};

inline pps__kstr to_kstr(std::string_view v)
{
    return pps__kstr{v.data(), v.size()};
}

// A number's text without the whitespace On-Demand leaves behind it.
inline std::string_view trim_token(std::string_view t)
{
    while (!t.empty() &&
           (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t'))
        t.remove_suffix(1);
    return t;
}

error_code number_text(od::value v, std::string_view *out)
{
    od::json_type t;
    error_code e = v.type().get(t);
    if (e)
        return e;
    if (t != od::json_type::number)
        return simdjson::INCORRECT_TYPE;
    *out = trim_token(v.raw_json_token());
    return SUCCESS;
}

// An id that is an integer or a string: Kineto writes "pid": "Spans" for its own rows.
error_code int_or_string(od::value v, int64_t *i, pps__kstr *s)
{
    od::json_type t;
    error_code e = v.type().get(t);
    if (e)
        return e;
    if (t == od::json_type::number)
        return v.get_int64().get(*i);
    if (t == od::json_type::string) {
        std::string_view sv;
        if ((e = v.get_string().get(sv)))
            return e;
        *s = to_kstr(sv);
        return SUCCESS;
    }
    return simdjson::INCORRECT_TYPE;
}

// args["Concrete Inputs"][2]: c10d::send's dstRank, c10d::recv_'s srcRank, as text.
void concrete_peer(od::value v, pps__kev *ev)
{
    od::array a;
    if (v.get_array().get(a))
        return;
    size_t i = 0;
    for (auto elem : a) {
        od::value x;
        if (elem.get(x))
            return;
        if (i++ != 2)
            continue;
        std::string_view s;
        if (x.get_string().get(s) || s.empty() || s.size() > 9)
            return;
        int64_t peer = 0;
        for (char c : s) {
            if (c < '0' || c > '9')
                return;
            peer = peer * 10 + (c - '0');
        }
        ev->peer = peer;
        ev->has |= PPS__KEV_PEER;
        return;
    }
}

bool take_args(od::value v, pps__kev *ev, fail *f)
{
    od::object args;
    error_code e = v.get_object().get(args);
    if (e) {
        *f = {"args is not an object", e};
        return false;
    }
    for (auto field : args) {
        od::field fl;
        std::string_view key;
        if ((e = std::move(field).get(fl)) || (e = fl.unescaped_key().get(key))) {
            *f = {"bad args", e};
            return false;
        }
        od::value x = fl.value();
        if (key == "correlation" || key == "External id" || key == "bytes") {
            int64_t i;
            if ((e = x.get_int64().get(i))) {
                *f = {key == "bytes"         ? "args.bytes is not an integer"
                      : key == "correlation" ? "args.correlation is not an integer"
                                             : "args.External id is not an integer",
                      e};
                return false;
            }
            if (key == "correlation") {
                ev->corr = i;
                ev->has |= PPS__KEV_CORR;
            } else if (key == "bytes") {
                ev->bytes = i;
                ev->has |= PPS__KEV_BYTES;
            } else {
                ev->ext = i;
                ev->has |= PPS__KEV_EXT;
            }
        } else if (key == "name") {
            std::string_view s;
            if (!x.get_string().get(s))
                ev->arg_name = to_kstr(s);
        } else if (key == "Concrete Inputs") {
            concrete_peer(x, ev);
        }
    }
    return true;
}

bool take_event(od::object obj, pps__kev *ev, fail *f)
{
    *ev = pps__kev{};
    for (auto field : obj) {
        od::field fl;
        std::string_view key, s;
        error_code e;
        if ((e = std::move(field).get(fl)) || (e = fl.unescaped_key().get(key))) {
            *f = {"bad event", e};
            return false;
        }
        od::value v = fl.value();
        if (key == "ph" || key == "cat" || key == "name") {
            if ((e = v.get_string().get(s))) {
                *f = {key == "ph"    ? "ph is not a string"
                      : key == "cat" ? "cat is not a string"
                                     : "name is not a string",
                      e};
                return false;
            }
            (key == "ph" ? ev->ph : key == "cat" ? ev->cat : ev->name) = to_kstr(s);
        } else if (key == "ts" || key == "dur") {
            if ((e = number_text(v, &s))) {
                *f = {key == "ts" ? "ts is not a number" : "dur is not a number", e};
                return false;
            }
            if (key == "ts") {
                ev->ts = to_kstr(s);
                ev->has |= PPS__KEV_TS;
            } else {
                ev->dur = to_kstr(s);
                ev->has |= PPS__KEV_DUR;
            }
        } else if (key == "pid" || key == "tid") {
            bool pid = key == "pid";
            if ((e = int_or_string(v, pid ? &ev->pid : &ev->tid, pid ? &ev->pid_s : &ev->tid_s))) {
                *f = {pid ? "pid is neither an integer nor a string"
                          : "tid is neither an integer nor a string",
                      e};
                return false;
            }
            ev->has |= pid ? PPS__KEV_PID : PPS__KEV_TID;
        } else if (key == "args") {
            if (!take_args(v, ev, f))
                return false;
        }
    }
    return true;
}

// Whether the whole document was read: nothing may follow the value (a window cut in the wrong
// place can hold a closed array and more).
bool at_end(od::document &d)
{
    const char *loc;
    return d.current_location().get(loc) == simdjson::OUT_OF_BOUNDS;
}

} // namespace

struct pps__kjson {
    od::parser parser;
    std::vector<pps__kev> evs;
};

extern "C" struct pps__kjson *pps__kjson_new(void)
{
    pps__kjson *k = new (std::nothrow) pps__kjson();
    if (k && k->parser.allocate(1 << 20, kMaxDepth) != SUCCESS) {
        delete k;
        k = nullptr;
    }
    return k;
}

extern "C" void pps__kjson_free(struct pps__kjson *k)
{
    delete k;
}

extern "C" int pps__kjson_events(struct pps__kjson *k, const char *doc, size_t len, size_t cap,
                                 const struct pps__kev **evs, size_t *n, char *msg, size_t msglen)
{
    od::document d;
    od::array arr;
    fail f{nullptr, SUCCESS};
    size_t i = 0;
    error_code e;

    *evs = nullptr;
    *n = 0;
    k->evs.clear();
    if ((e = k->parser.iterate(doc, len, cap).get(d)) || (e = d.get_array().get(arr))) {
        snprintf(msg, msglen, "not JSON (%s)", simdjson::error_message(e));
        return -1;
    }
    try {
        for (auto elem : arr) {
            od::value v;
            od::object obj;
            if ((e = std::move(elem).get(v))) {
                f = {"bad JSON", e};
                break;
            }
            if ((e = v.get_object().get(obj))) {
                f = {"not an object", e};
                break;
            }
            k->evs.emplace_back();
            if (!take_event(obj, &k->evs.back(), &f))
                break;
            i++;
        }
        if (!f.what && !at_end(d))
            f = {"bad JSON", simdjson::TRAILING_CONTENT};
    } catch (const std::bad_alloc &) {
        snprintf(msg, msglen, "out of memory");
        return -1;
    }
    if (f.what) {
        snprintf(msg, msglen, "event %zu: %s (%s)", i, f.what, simdjson::error_message(f.code));
        return -1;
    }
    *evs = k->evs.data();
    *n = k->evs.size();
    return 0;
}

extern "C" int pps__kjson_dist_info(struct pps__kjson *k, const char *doc, size_t len, size_t cap,
                                    int64_t *rank, int64_t *world, char *msg, size_t msglen)
{
    od::document d;
    od::object obj;
    error_code e;

    *rank = *world = -1;
    if ((e = k->parser.iterate(doc, len, cap).get(d)) || (e = d.get_object().get(obj))) {
        snprintf(msg, msglen, "distributedInfo is not an object (%s)", simdjson::error_message(e));
        return -1;
    }
    for (auto field : obj) {
        od::field fl;
        std::string_view key;
        if ((e = std::move(field).get(fl)) || (e = fl.unescaped_key().get(key)))
            break;
        if (key == "rank" || key == "world_size") {
            int64_t v;
            if ((e = fl.value().get_int64().get(v))) {
                snprintf(msg, msglen, "distributedInfo.%s is not an integer (%s)",
                         key == "rank" ? "rank" : "world_size", simdjson::error_message(e));
                return -1;
            }
            *(key == "rank" ? rank : world) = v;
        }
    }
    if (e || !at_end(d)) {
        snprintf(msg, msglen, "distributedInfo is not JSON (%s)",
                 simdjson::error_message(e ? e : simdjson::TRAILING_CONTENT));
        return -1;
    }
    return 0;
}
