// simdjson 3.12.3 (from the pysimdjson 7.0.2 sdist) On-Demand reference: every document of the
// JSONL stream (iterate_many), its "after" object's every field into the same columns (cols.h).
// Build: g++ -O3 -march=native -shared -fPIC -o libsj.so sj.cpp simdjson.cpp
#include "simdjson.h"
#include "cols.h"
using namespace simdjson;

static ondemand::parser parser;

extern "C" const char* sj_impl() { return simdjson::get_active_implementation()->name().data(); }

static int sj_image(ondemand::value after, out_t* o)
{
    bool isnull = false;
    if (after.is_null().get(isnull)) return -3;
    if (isnull) return 0;
    ondemand::object a;
    if (after.get_object().get(a)) return -4;
    int guess = 0;
    for (auto field : a) {
        std::string_view key;
        if (field.unescaped_key().get(key)) return -5;
        int j;
        if (guess < NCOLS && key.size() == (size_t)o->nlen[guess] &&
            memcmp(key.data(), COL_NAMES[guess], key.size()) == 0)
            j = guess;
        else
            j = col_lookup(o, (const uint8_t*)key.data(), (int64_t)key.size());
        if (j < 0) continue;
        guess = j + 1;
        ondemand::value v = field.value();
        bool vn = false;
        if (v.is_null().get(vn)) return -6;
        if (vn) { put_null(o, j); continue; }
        switch (o->c[j].kind) {
        case K_INT: { int64_t x; if (v.get_int64().get(x)) put_null(o, j); else put_int(o, j, x); break; }
        case K_DBL: { double d; if (v.get_double().get(d)) put_null(o, j); else put_dbl(o, j, d); break; }
        case K_BOOL: { bool t; if (v.get_bool().get(t)) put_null(o, j); else put_bool(o, j, t); break; }
        default: {
            std::string_view s;
            if (v.get_string().get(s)) {
                std::string_view r = v.raw_json_token();
                put_str(o, j, (const uint8_t*)r.data(), (int64_t)r.size(), 0);
            } else
                put_str(o, j, (const uint8_t*)s.data(), (int64_t)s.size(), 0);
        }
        }
    }
    return 0;
}

/* before and after images, the top-level fields iterated in order */
extern "C" int64_t sj_run2(const uint8_t* buf, int64_t n, void* vo, void* vb, int64_t batch)
{
    out_t* o = (out_t*)vo;
    out_t* ob = (out_t*)vb;
    out_reset(o);
    out_reset(ob);
    ondemand::document_stream stream;
    if (parser.iterate_many((const char*)buf, (size_t)n, (size_t)batch).get(stream)) return -1;
    for (auto doc : stream) {
        ondemand::object top;
        if (doc.get_object().get(top)) return -2;
        for (auto field : top) {
            ondemand::raw_json_string k;
            if (field.key().get(k)) return -7;
            if (k.unsafe_is_equal("before")) {
                if (sj_image(field.value(), ob)) return -8;
            } else if (k.unsafe_is_equal("after")) {
                if (sj_image(field.value(), o)) return -9;
                row_end(o);
                row_end(ob);
                break;                       /* the rest of the document: skipped by the index */
            }
        }
    }
    return o->rows;
}

extern "C" int64_t sj_run(const uint8_t* buf, int64_t n, void* vo, int64_t batch)
{
    out_t* o = (out_t*)vo;
    out_reset(o);
    ondemand::document_stream stream;
    if (parser.iterate_many((const char*)buf, (size_t)n, (size_t)batch).get(stream)) return -1;
    for (auto doc : stream) {
        ondemand::object top;
        if (doc.get_object().get(top)) return -2;
        ondemand::value after;
        if (top.find_field("after").get(after)) continue;        // BEGIN/END: no "after"
        int r = sj_image(after, o);
        if (r < 0) return r;
        row_end(o);
    }
    return o->rows;
}

extern "C" int64_t sj_utf8(const uint8_t* buf, int64_t n)
{
    return simdjson::validate_utf8((const char*)buf, (size_t)n) ? 1 : 0;
}
