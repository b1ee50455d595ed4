/* The public C API (include/shingle.h) over the engine: argument checks,
 * the translation of statuses and messages, 1-based ids, and ownership.
 * Nothing here computes anything the engine does not. */
#define SHINGLE_BUILDING 1
#include "include/shingle.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "document.h"
#include "index.h"
#include "rabin.h"
#include "shingler.h"
#include "sketch.h"

/* The identity of the canonicalization rules is the AUG fingerprint, under
 * this fixed polynomial (P64b of docs/vectors.md), of their description,
 * written exactly as the Lua API's shingle.options.rules_id writes it. */
#define RULES_POLY 0xcaefbcde6b4238b1ULL
/* The Lua API's default seed ("SHINGL"): sketches from both compare. */
#define DEFAULT_SEED 0x5348494E474CULL

struct shingle_shingler {
    sh_shingler sh;
    sh_sketch_params sp;
    sh_work work;
};

struct shingle_sketch {
    sh_sketch *s;   /* malloc'ed with room for cap values, or NULL while empty */
    size_t cap;
};

/* ---- errors ------------------------------------------------------------------ */

/* The message of the last failure in this thread: what *errmsg points at. */
static __thread char last_msg[sizeof(((sh_error *)0)->msg)];

static int code_of(sh_status s)
{
    switch (s) {
    case SH_OK: return SHINGLE_OK;
    case SH_ENOMEM: return SHINGLE_ENOMEM;
    case SH_EINVAL: return SHINGLE_EINVAL;
    case SH_EUTF8: return SHINGLE_EUTF8;
    case SH_EFORMAT: return SHINGLE_EFORMAT;
    case SH_EMISMATCH: return SHINGLE_EMISMATCH;
    case SH_EIO: return SHINGLE_EIO;
    case SH_EBUSY: return SHINGLE_EBUSY;
    case SH_ELIMIT: return SHINGLE_ELIMIT;
    }
    return SHINGLE_EINVAL;
}

static int fail(char **errmsg, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int fail(char **errmsg, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_msg, sizeof last_msg, fmt, ap);
    va_end(ap);
    if (errmsg) *errmsg = last_msg;
    return code;
}

/* The engine's failure: its code and its message. */
static int failed(char **errmsg, const sh_error *e)
{
    return fail(errmsg, code_of(e->code), "%s", e->msg);
}

int shingle_version_number(void) { return SHINGLE_VERSION_NUMBER; }

const char *shingle_version(void) { return SHINGLE_VERSION_STRING; }

const char *shingle_strerror(int code)
{
    switch (code) {
    case SHINGLE_OK: return "OK: no error";
    case SHINGLE_ENOMEM: return "ENOMEM: out of memory";
    case SHINGLE_EINVAL: return "EINVAL: an argument or option out of range";
    case SHINGLE_EUTF8: return "EUTF8: the text is not UTF-8";
    case SHINGLE_EFORMAT: return "EFORMAT: truncated, corrupt or foreign data";
    case SHINGLE_EMISMATCH: return "EMISMATCH: made with other parameters";
    case SHINGLE_EIO: return "EIO: an input/output error";
    case SHINGLE_ENOTFOUND: return "ENOTFOUND: no such document, URL or cluster";
    case SHINGLE_ERANGE: return "ERANGE: the output buffer is too small";
    case SHINGLE_EBUSY: return "EBUSY: locked by another process";
    case SHINGLE_ELIMIT: return "ELIMIT: beyond a configured limit";
    }
    return "unknown status";
}

int shingle_utf8_check(const char *buf, size_t len, size_t *bad, char **errmsg)
{
    sh_error e;
    if (!buf && len) return fail(errmsg, SHINGLE_EINVAL, "shingle_utf8_check: buf is NULL");
    if (sh_utf8_check(buf, len, &e) == SH_OK) return SHINGLE_OK;
    if (bad) *bad = e.offset;
    return failed(errmsg, &e);
}

/* ---- shinglers ------------------------------------------------------------------ */

static const char *const kind_names[] = { "", "min", "mod", "minmod", "class", "full" };

static int parse_u64(const char *v, uint64_t *out)
{
    char *end;
    unsigned long long x;
    if (!*v || *v == '-') return 0;
    errno = 0;
    x = strtoull(v, &end, 0);
    if (errno || *end) return 0;
    *out = (uint64_t)x;
    return 1;
}

static int parse_bool(const char *v, int *out)
{
    if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes")) { *out = 1; return 1; }
    if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no")) { *out = 0; return 1; }
    return 0;
}

/* One key=value of the options string into c and sp. */
/* The next "key=value" of an options string (separated by blanks or commas), *p moved past it:
   SHINGLE_OK, -1 at the end of the string, or the failure. */
static int next_option(const char **p, char *key, size_t ksz, char *val, size_t vsz, char **errmsg)
{
    const char *q = *p;
    size_t kl = 0, vl = 0;
    while (*q == ' ' || *q == '\t' || *q == ',') q++;
    *p = q;
    if (!*q) return -1;
    while (*q && *q != '=' && *q != ' ' && kl < ksz - 1) key[kl++] = *q++;
    key[kl] = 0;
    if (*q != '=') return fail(errmsg, SHINGLE_EINVAL, "options: '%s' is not key=value (e.g. \"w=10 sketch=mod\")", key);
    q++;
    while (*q && *q != ' ' && *q != '\t' && *q != ',' && vl < vsz - 1) val[vl++] = *q++;
    val[vl] = 0;
    if (*q && *q != ' ' && *q != '\t' && *q != ',') return fail(errmsg, SHINGLE_EINVAL, "option %s: the value is too long", key);
    *p = q;
    return SHINGLE_OK;
}

static int set_option(sh_shingler_config *c, sh_sketch_params *sp, int *flags, const char *k, const char *v, char **errmsg)
{
    uint64_t x = 0;
    int b = 0;
    size_t i;
    static const struct { const char *name; uint64_t lo, hi; } ranges[] = {
        { "w", 1, 1024 }, { "k", 16, 64 }, { "s", 1, 1000000 }, { "m", 1, 9007199254740992ULL }, { "floor", 0, 1000 } };
    for (i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        if (strcmp(k, ranges[i].name) != 0) continue;
        if (!parse_u64(v, &x) || x + 1 < ranges[i].lo + 1 || x > ranges[i].hi)
            return fail(errmsg, SHINGLE_EINVAL, "option %s=%s: give a whole number from %llu to %llu", k, v,
                        (unsigned long long)ranges[i].lo, (unsigned long long)ranges[i].hi);
        switch (i) {
        case 0: c->w = (int)x; break;
        case 1: c->k = (int)x; break;
        case 2: sp->s = (uint32_t)x; break;
        case 3: sp->m = x; break;
        default: sp->floor = (uint32_t)x; break;
        }
        return SHINGLE_OK;
    }
    if (!strcmp(k, "seed") || !strcmp(k, "poly") || !strcmp(k, "idpoly")) {
        if (!parse_u64(v, &x)) return fail(errmsg, SHINGLE_EINVAL, "option %s=%s: give a number (decimal or 0x hex)", k, v);
        if (k[0] == 's') c->seed = x;
        else if (k[0] == 'p') c->poly = x;
        else c->idpoly = x;
        return SHINGLE_OK;
    }
    if (!strcmp(k, "sketch")) {
        for (i = 1; i < sizeof kind_names / sizeof kind_names[0]; i++)
            if (!strcmp(v, kind_names[i])) { sp->kind = (uint8_t)i; return SHINGLE_OK; }
        return fail(errmsg, SHINGLE_EINVAL, "option sketch=%s: use min, mod, minmod, class or full", v);
    }
    if (!strcmp(k, "option")) {
        if (!strcmp(v, "A") || !strcmp(v, "B")) { c->option = v[0] == 'A' ? SH_OPTION_A : SH_OPTION_B; return SHINGLE_OK; }
        return fail(errmsg, SHINGLE_EINVAL, "option option=%s: use A or B", v);
    }
    if (!strcmp(k, "tokens")) {
        if (!strcmp(v, "rabin")) { c->tokens = SH_TOKENS_RABIN; return SHINGLE_OK; }
        if (!strcmp(v, "pad8")) { c->tokens = SH_TOKENS_PAD8; return SHINGLE_OK; }
        return fail(errmsg, SHINGLE_EINVAL, "option tokens=%s: use rabin or pad8", v);
    }
    if (!strcmp(k, "invalid")) {
        if (!strcmp(v, "error")) c->canon.invalid = SH_UTF8_ERROR;
        else if (!strcmp(v, "skip")) c->canon.invalid = SH_UTF8_SKIP;
        else if (!strcmp(v, "latin1")) c->canon.invalid = SH_UTF8_LATIN1;
        else return fail(errmsg, SHINGLE_EINVAL, "option invalid=%s: use error, skip or latin1", v);
        return SHINGLE_OK;
    }
    {
        static const struct { const char *name; unsigned flag; } bools[] = {
            { "html", SH_CANON_HTML }, { "lowercase", SH_CANON_LOWER }, { "numbers", SH_CANON_NUMBERS },
            { "punctuation", SH_CANON_PUNCT }, { "fold", SH_CANON_FOLD } };
        for (i = 0; i < sizeof bools / sizeof bools[0]; i++) {
            if (strcmp(k, bools[i].name) != 0) continue;
            if (!parse_bool(v, &b)) return fail(errmsg, SHINGLE_EINVAL, "option %s=%s: use 1 or 0 (true or false)", k, v);
            *flags = b ? (*flags | (int)bools[i].flag) : (*flags & ~(int)bools[i].flag);
            return SHINGLE_OK;
        }
    }
    return fail(errmsg, SHINGLE_EINVAL, "unknown option '%s'; the options are w, k, seed, poly, idpoly, sketch, s, m, floor, "
                "option, tokens, html, lowercase, numbers, punctuation, fold, invalid", k);
}

/* The rules identity of the Lua API (shingle.options.rules_id): a Rabin
 * fingerprint of "lowercase=..;numbers=..;punctuation=..;fold=..;invalid=..". */
static uint64_t rules_id(unsigned flags, sh_utf8_mode invalid)
{
    static const char *const inv[] = { "error", "skip", "latin1" };
    char desc[160];
    sh_rabin r;
    int n = snprintf(desc, sizeof desc, "lowercase=%s;numbers=%s;punctuation=%s;fold=%s;invalid=%s",
                     flags & SH_CANON_LOWER ? "true" : "false", flags & SH_CANON_NUMBERS ? "true" : "false",
                     flags & SH_CANON_PUNCT ? "true" : "false", flags & SH_CANON_FOLD ? "true" : "false",
                     inv[(unsigned)invalid < 3 ? invalid : 0]);
    sh_rabin_init(&r, RULES_POLY, 64);
    return sh_rabin_aug(&r, desc, (size_t)n);
}

int shingle_shingler_new(const char *options, shingle_shingler **out, char **errmsg)
{
    sh_shingler_config c;
    sh_sketch_params sp;
    int flags = SH_CANON_LOWER | SH_CANON_NUMBERS, rc;
    const char *p = options ? options : "";
    shingle_shingler *sh;
    sh_error e;
    if (!out) return fail(errmsg, SHINGLE_EINVAL, "shingle_shingler_new: out is NULL");
    *out = NULL;
    memset(&c, 0, sizeof c);
    memset(&sp, 0, sizeof sp);
    c.w = 10;
    c.k = 64;
    c.seed = DEFAULT_SEED;
    c.tokens = SH_TOKENS_RABIN;
    c.option = SH_OPTION_B;
    /* the defaults of shingle.new (lua/shingle/options.lua), as shingle.h
     * promises; spec/ffi_spec.lua compares the sketches of "" with its */
    c.canon.invalid = SH_UTF8_LATIN1;
    sp.kind = SH_SKETCH_MOD;
    sp.s = 200;
    sp.m = 25;
    sp.floor = 20;
    while (*p) {
        char key[32], val[64];
        if ((rc = next_option(&p, key, sizeof key, val, sizeof val, errmsg)) < 0) break;
        if (rc != SHINGLE_OK) return rc;
        if ((rc = set_option(&c, &sp, &flags, key, val, errmsg)) != SHINGLE_OK) return rc;
    }
    if (flags & SH_CANON_FOLD) flags |= SH_CANON_LOWER;
    c.canon.flags = (unsigned)flags;
    sp.rules = rules_id(c.canon.flags, c.canon.invalid);
    sh = (shingle_shingler *)calloc(1, sizeof *sh);
    if (!sh) return fail(errmsg, SHINGLE_ENOMEM, "out of memory for a shingler");
    if (sh_shingler_init(&sh->sh, &c, &e) != SH_OK) {
        free(sh);
        return failed(errmsg, &e);
    }
    sh->sp = sp;
    *out = sh;
    return SHINGLE_OK;
}

void shingle_shingler_free(shingle_shingler *sh)
{
    if (!sh) return;
    sh_work_free(&sh->work);
    free(sh);
}

/* ---- sketches -------------------------------------------------------------------- */

int shingle_sketch_new(shingle_sketch **out, char **errmsg)
{
    if (!out) return fail(errmsg, SHINGLE_EINVAL, "shingle_sketch_new: out is NULL");
    *out = (shingle_sketch *)calloc(1, sizeof **out);
    if (!*out) return fail(errmsg, SHINGLE_ENOMEM, "out of memory for a sketch");
    return SHINGLE_OK;
}

void shingle_sketch_free(shingle_sketch *sk)
{
    if (!sk) return;
    free(sk->s);
    free(sk);
}

static void put(shingle_sketch *sk, sh_sketch *s)
{
    free(sk->s);
    sk->s = s;
    sk->cap = s ? s->n : 0;
}

int shingle_sketch_text(shingle_shingler *sh, const char *buf, size_t len, shingle_sketch *sk, char **errmsg)
{
    sh_error e;
    sh_sketch hdr;
    if (!sh || !sk || (!buf && len)) return fail(errmsg, SHINGLE_EINVAL, "shingle_sketch_text: a NULL argument");
    if (sh_shingle_text(&sh->sh, &sh->work, buf ? buf : "", len, &e) != SH_OK ||
        sh_sketch_compute(&sh->sh, &sh->work, &sh->sp, 0, sh_work_tokens(&sh->work), &hdr, &e) != SH_OK) {
        put(sk, NULL);
        return failed(errmsg, &e);
    }
    /* the values are in the shingler's work: copy them into the handle, whose
     * memory only grows (a server sketches every request into one handle) */
    if (!sk->s || sk->cap < hdr.n) {
        size_t cap = hdr.n > 2 * sk->cap ? hdr.n : 2 * sk->cap;
        sh_sketch *grown = (sh_sketch *)realloc(sk->s, sizeof *grown + (cap ? cap : 1) * sizeof(uint64_t));
        if (!grown) {
            put(sk, NULL);
            return fail(errmsg, SHINGLE_ENOMEM, "out of memory for a sketch of %zu values", hdr.n);
        }
        sk->s = grown;
        sk->cap = cap;
    }
    memcpy(sk->s, &hdr, sizeof hdr);
    memcpy(sk->s->v, sh->work.vals, hdr.n * sizeof(uint64_t));
    return SHINGLE_OK;
}

size_t shingle_sketch_size(const shingle_sketch *sk) { return sk && sk->s ? sk->s->n : 0; }

const uint64_t *shingle_sketch_values(const shingle_sketch *sk) { return sk && sk->s ? sk->s->v : NULL; }

uint64_t shingle_sketch_shingles(const shingle_sketch *sk) { return sk && sk->s ? sk->s->n_shingles : 0; }

uint64_t shingle_sketch_tokens(const shingle_sketch *sk) { return sk && sk->s ? sk->s->n_tokens : 0; }

size_t shingle_sketch_serialized_size(const shingle_sketch *sk)
{
    return sk && sk->s ? sh_sketch_serialized_size(sk->s) : 0;
}

int shingle_sketch_serialize(const shingle_sketch *sk, unsigned char *out, size_t cap, size_t *len, char **errmsg)
{
    size_t need;
    if (!sk || !sk->s) return fail(errmsg, SHINGLE_EINVAL, "shingle_sketch_serialize: the sketch is empty (sketch a text first)");
    need = sh_sketch_serialized_size(sk->s);
    if (len) *len = need;
    if (!out || cap < need) return fail(errmsg, SHINGLE_ERANGE, "the sketch takes %zu bytes; the buffer has %zu", need, cap);
    sh_sketch_serialize(sk->s, out);
    return SHINGLE_OK;
}

int shingle_sketch_load(const unsigned char *buf, size_t len, shingle_sketch *sk, char **errmsg)
{
    sh_error e;
    sh_sketch *s;
    if (!sk || (!buf && len)) return fail(errmsg, SHINGLE_EINVAL, "shingle_sketch_load: a NULL argument");
    put(sk, NULL);
    if (sh_sketch_deserialize(buf, len, &s, &e) != SH_OK) return failed(errmsg, &e);
    put(sk, s);
    return SHINGLE_OK;
}

int shingle_estimate_sketches(const shingle_sketch *a, const shingle_sketch *b, shingle_estimate *out, char **errmsg)
{
    sh_estimate e;
    sh_error err;
    if (!a || !b || !out || !a->s || !b->s)
        return fail(errmsg, SHINGLE_EINVAL, "shingle_estimate_sketches: a NULL argument or an empty sketch");
    if (sh_sketch_estimate(a->s, b->s, &e, &err) != SH_OK) return failed(errmsg, &err);
    out->resemblance = e.resemblance;
    out->containment = e.contain_ab;
    out->contained = e.contain_ba;
    out->both = e.both;
    out->sample = e.sample;
    return SHINGLE_OK;
}

/* ---- the index ---------------------------------------------------------------------- */

/* The public handle is the engine's index itself, so that a Lua binding and an
 * FFI in one process can share one LMDB environment. */
static sh_index *IX(shingle_index *ix) { return (sh_index *)(void *)ix; }

int shingle_index_open(const char *path, int flags, shingle_index **out, char **errmsg)
{
    sh_index *ix;
    sh_error e;
    if (!path || !out) return fail(errmsg, SHINGLE_EINVAL, "shingle_index_open: a NULL argument");
    *out = NULL;
    if (flags & ~(SHINGLE_INDEX_READONLY | SHINGLE_INDEX_CREATE))
        return fail(errmsg, SHINGLE_EINVAL, "shingle_index_open: unknown flags 0x%x", (unsigned)flags);
    if ((flags & SHINGLE_INDEX_READONLY) && (flags & SHINGLE_INDEX_CREATE))
        return fail(errmsg, SHINGLE_EINVAL, "shingle_index_open: SHINGLE_INDEX_CREATE makes an index to write: not with SHINGLE_INDEX_READONLY");
    if (sh_index_open(&ix, path, flags & SHINGLE_INDEX_READONLY, (flags & SHINGLE_INDEX_CREATE) != 0, 0, &e) != SH_OK)
        return failed(errmsg, &e);
    *out = (shingle_index *)(void *)ix;
    return SHINGLE_OK;
}

void shingle_index_close(shingle_index *ix)
{
    if (ix) sh_index_close(IX(ix));
}

int shingle_index_count(shingle_index *ix, uint32_t *n, char **errmsg)
{
    sh_error e;
    if (!ix || !n) return fail(errmsg, SHINGLE_EINVAL, "shingle_index_count: a NULL argument");
    if (sh_index_count(IX(ix), n, &e) != SH_OK) return failed(errmsg, &e);
    return SHINGLE_OK;
}

int shingle_index_filter_start(shingle_index *ix, char **errmsg)
{
    sh_error e;
    if (!ix) return fail(errmsg, SHINGLE_EINVAL, "shingle_index_filter_start: a NULL index");
    if (sh_index_filter_start(IX(ix), 0, &e) != SH_OK) return failed(errmsg, &e);
    return SHINGLE_OK;
}

int shingle_index_cache_start(shingle_index *ix, size_t max_bytes, char **errmsg)
{
    sh_error e;
    if (!ix) return fail(errmsg, SHINGLE_EINVAL, "shingle_index_cache_start: a NULL index");
    if (sh_index_filter_start(IX(ix), max_bytes, &e) != SH_OK) return failed(errmsg, &e);
    return SHINGLE_OK;
}

int shingle_index_read_begin(shingle_index *ix, char **errmsg)
{
    sh_error e;
    if (!ix) return fail(errmsg, SHINGLE_EINVAL, "shingle_index_read_begin: ix is NULL");
    if (sh_index_read_begin(IX(ix), &e) != SH_OK) return failed(errmsg, &e);
    return SHINGLE_OK;
}

void shingle_index_read_end(shingle_index *ix)
{
    if (ix) sh_index_read_end(IX(ix));
}

int shingle_index_similar(shingle_index *ix, const shingle_sketch *q, double threshold, int policy, int by_containment,
                          uint32_t top, uint32_t max_df, shingle_hit *hits, size_t cap, size_t *n, char **errmsg)
{
    sh_index_hit *h;
    size_t nh, i;
    sh_error e;
    if (!ix || !q || !n || (!hits && cap)) return fail(errmsg, SHINGLE_EINVAL, "shingle_index_similar: a NULL argument");
    *n = 0;
    if (!q->s) return fail(errmsg, SHINGLE_EINVAL, "shingle_index_similar: the query sketch is empty (sketch a text first)");
    if (!(threshold >= 0 && threshold <= 1)) return fail(errmsg, SHINGLE_EINVAL, "threshold %g: give a number from 0 to 1", threshold);
    if (policy < SHINGLE_POLICY_RESEMBLANCE || policy > SHINGLE_POLICY_BOTH)
        return fail(errmsg, SHINGLE_EINVAL, "policy %d: use SHINGLE_POLICY_RESEMBLANCE, _CONTAINMENT, _EITHER or _BOTH", policy);
    if (top == 0 || top > cap) top = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
    if (top == 0) return SHINGLE_OK;
    if (sh_index_similar(IX(ix), q->s, threshold, (sh_policy)policy, by_containment, top, max_df, &h, &nh, &e) != SH_OK)
        return failed(errmsg, &e);
    for (i = 0; i < nh; i++) {
        hits[i].id = h[i].doc + 1;
        hits[i].shared = h[i].shared;
        hits[i].resemblance = h[i].r;
        hits[i].containment = h[i].cab;
        hits[i].contained = h[i].cba;
    }
    free(h);
    *n = nh;
    return SHINGLE_OK;
}

int shingle_index_document(shingle_index *ix, uint32_t id, shingle_document *doc, char *url, size_t url_cap, char *sweep,
                           size_t sweep_cap, char **errmsg)
{
    sh_ixdoc d;
    sh_error e;
    char sw[256];
    if (!ix || !doc) return fail(errmsg, SHINGLE_EINVAL, "shingle_index_document: a NULL argument");
    if (id == 0 || id == UINT32_MAX) return fail(errmsg, SHINGLE_ENOTFOUND, "no document %u: ids start at 1", id);
    if (sh_index_doc_get(IX(ix), id - 1, &d, NULL, url, url ? url_cap : 0, sw, sizeof sw, &e) != SH_OK) {
        int code = failed(errmsg, &e);
        return code == SHINGLE_EINVAL ? SHINGLE_ENOTFOUND : code; /* the engine's "no such document" */
    }
    doc->id = id;
    doc->cluster = d.cluster + 1;
    doc->shingles = d.n_shingles;
    doc->tokens = d.n_tokens;
    doc->relation = d.dup < 4 ? (int)d.dup : 0;
    doc->url_len = d.url_len;
    doc->sweep_len = strlen(sw);
    if (sweep && sweep_cap) {
        size_t k = doc->sweep_len < sweep_cap - 1 ? doc->sweep_len : sweep_cap - 1;
        memcpy(sweep, sw, k);
        sweep[k] = 0;
    }
    return SHINGLE_OK;
}

static int copy_ids(uint32_t *list, size_t m, uint32_t *ids, size_t cap, size_t *n, char **errmsg)
{
    size_t i;
    *n = m;
    for (i = 0; i < m && i < cap; i++) ids[i] = list[i] + 1;
    free(list);
    if (m > cap) return fail(errmsg, SHINGLE_ERANGE, "%zu ids, the buffer holds %zu", m, cap);
    return SHINGLE_OK;
}

int shingle_index_url_docs(shingle_index *ix, const char *url, size_t len, uint32_t *ids, size_t cap, size_t *n,
                           char **errmsg)
{
    uint32_t *list;
    size_t m;
    sh_error e;
    if (!ix || !url || !n || (!ids && cap)) return fail(errmsg, SHINGLE_EINVAL, "shingle_index_url_docs: a NULL argument");
    if (sh_index_url_docs(IX(ix), url, len, &list, &m, &e) != SH_OK) return failed(errmsg, &e);
    return copy_ids(list, m, ids, cap, n, errmsg);
}

int shingle_index_cluster_docs(shingle_index *ix, uint32_t cluster, uint32_t *ids, size_t cap, size_t *n, char **errmsg)
{
    uint32_t *list;
    size_t m;
    sh_error e;
    if (!ix || !n || (!ids && cap)) return fail(errmsg, SHINGLE_EINVAL, "shingle_index_cluster_docs: a NULL argument");
    if (cluster == 0) return fail(errmsg, SHINGLE_ENOTFOUND, "no cluster 0: ids start at 1");
    if (sh_index_cluster_docs(IX(ix), cluster - 1, &list, &m, &e) != SH_OK) return failed(errmsg, &e);
    if (m == 0) { free(list); return fail(errmsg, SHINGLE_ENOTFOUND, "no cluster %u in the index", cluster); }
    return copy_ids(list, m, ids, cap, n, errmsg);
}

/* ---- an index's shingler, and adding documents ---------------------------------------- */

/* The stored configuration of an index (meta "user.config": the JSON object
 * lua/shingle/index.lua writes, flat: strings, numbers, booleans) as the
 * key=value list shingle_shingler_new takes, keys of the shingler only. */
#define CONF_MAX 40
typedef struct conf_kv {
    char key[32];
    char val[80];
    int is_string;
} conf_kv;

/* One JSON string at *p (after its opening quote) into out[0..cap), escapes
 * decoded for ASCII (\uXXXX of another character gives '?'); 0 if malformed. */
static int json_string(const char **p, char *out, size_t cap)
{
    const char *s = *p;
    size_t n = 0;
    while (*s && *s != '"') {
        char c = *s++;
        if (c == '\\') {
            c = *s++;
            switch (c) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': {
                int i;
                unsigned u = 0;
                for (i = 0; i < 4; i++) {
                    char h = *s++;
                    u <<= 4;
                    if (h >= '0' && h <= '9') u |= (unsigned)(h - '0');
                    else if (h >= 'a' && h <= 'f') u |= (unsigned)(h - 'a' + 10);
                    else if (h >= 'A' && h <= 'F') u |= (unsigned)(h - 'A' + 10);
                    else return 0;
                }
                c = u < 0x80 ? (char)u : '?';
                break;
            }
            case '"': case '\\': case '/': break;
            default: return 0;
            }
        }
        if (n + 1 < cap) out[n++] = c;
    }
    if (*s != '"') return 0;
    out[n] = 0;
    *p = s + 1;
    return 1;
}

static const char *json_space(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    return s;
}

/* Parse the flat object json into kv[0..*n); 0 if it is not one. */
static int parse_config(const char *json, conf_kv *kv, size_t *n)
{
    const char *s = json_space(json);
    *n = 0;
    if (*s++ != '{') return 0;
    s = json_space(s);
    if (*s == '}') return 1;
    for (;;) {
        conf_kv scratch, *e = *n < CONF_MAX ? &kv[*n] : &scratch;
        if (*s++ != '"' || !json_string(&s, e->key, sizeof e->key)) return 0;
        s = json_space(s);
        if (*s++ != ':') return 0;
        s = json_space(s);
        e->is_string = *s == '"';
        if (*s == '"') {
            s++;
            if (!json_string(&s, e->val, sizeof e->val)) return 0;
        } else {
            size_t k = 0;
            while (*s && *s != ',' && *s != '}' && *s != ' ' && *s != '\n' && *s != '\t' && *s != '\r') {
                if (k + 1 < sizeof e->val) e->val[k++] = *s;
                s++;
            }
            e->val[k] = 0;
            if (k == 0) return 0;
        }
        if (e != &scratch) (*n)++;
        s = json_space(s);
        if (*s == ',') { s = json_space(s + 1); continue; }
        if (*s == '}') return 1;
        return 0;
    }
}

/* The options an index's configuration gives its shinglers, into out. The
 * floor of an index that does not record one is 8: the default of every
 * version that did not record it (floor 20 came with its recording), so its
 * documents and its queries are sketched alike (docs/capi.md). */
static int index_options(shingle_index *ix, char *out, size_t cap, char **errmsg)
{
    static const char *const keys[] = { "w", "k", "seed", "poly", "idpoly", "sketch", "s", "m", "floor", "option", "tokens",
                                        "invalid", "lowercase", "numbers", "punctuation", "fold" };
    char *json;
    size_t len, n, i, j, used = 0;
    conf_kv kv[CONF_MAX];
    int has_floor = 0;
    sh_error e;
    if (sh_index_meta_get(IX(ix), "user.config", &json, &len, &e) != SH_OK) return failed(errmsg, &e);
    if (!json) return fail(errmsg, SHINGLE_ENOTFOUND, "the index is empty (no sweep added yet): it has no shingler");
    if (!parse_config(json, kv, &n)) {
        free(json);
        return fail(errmsg, SHINGLE_EFORMAT, "the index's stored configuration is not a flat JSON object");
    }
    free(json);
    out[0] = 0;
    for (i = 0; i < n; i++) {
        if ((!strcmp(kv[i].key, "canon") || !strcmp(kv[i].key, "extractor")) && strcmp(kv[i].val, "null") != 0)
            return fail(errmsg, SHINGLE_EINVAL, "the index was made with the %s '%s', which runs in Lua: use the Lua API",
                        !strcmp(kv[i].key, "canon") ? "rule set" : "extractor", kv[i].val);
        for (j = 0; j < sizeof keys / sizeof keys[0]; j++) {
            int w;
            if (strcmp(kv[i].key, keys[j]) != 0) continue;
            if (!strcmp(kv[i].key, "floor")) has_floor = 1;
            w = snprintf(out + used, cap - used, "%s%s=%s", used ? " " : "", kv[i].key, kv[i].val);
            if (w < 0 || (size_t)w >= cap - used) return fail(errmsg, SHINGLE_EFORMAT, "the index's stored configuration is too long");
            used += (size_t)w;
        }
    }
    if (!has_floor) {
        int w = snprintf(out + used, cap - used, "%sfloor=8", used ? " " : "");
        if (w < 0 || (size_t)w >= cap - used) return fail(errmsg, SHINGLE_EFORMAT, "the index's stored configuration is too long");
    }
    return SHINGLE_OK;
}

int shingle_index_shingler(shingle_index *ix, int html, shingle_shingler **out, char **errmsg)
{
    char opts[1024];
    size_t k;
    int rc;
    if (!ix || !out) return fail(errmsg, SHINGLE_EINVAL, "shingle_index_shingler: a NULL argument");
    *out = NULL;
    if ((rc = index_options(ix, opts, sizeof opts - 8, errmsg)) != SHINGLE_OK) return rc;
    k = strlen(opts);
    snprintf(opts + k, sizeof opts - k, " html=%d", html ? 1 : 0);
    return shingle_shingler_new(opts, out, errmsg);
}

/* A text that looks like HTML, as the command line decides (lua/shingle/input.lua looks_html). */
static int looks_html(const char *s, size_t n)
{
    static const char *const tags[] = { "<html", "<body", "<!doctype html", "<p>", "<div" };
    char head[2049];
    size_t i = 0, m, t;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f' || s[i] == '\v')) i++;
    if (i >= n || s[i] != '<') return 0;
    m = n < 2048 ? n : 2048;
    for (i = 0; i < m; i++) head[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
    head[m] = 0;
    for (t = 0; t < sizeof tags / sizeof tags[0]; t++) {
        size_t tl = strlen(tags[t]);
        for (i = 0; i + tl <= m; i++)
            if (memcmp(head + i, tags[t], tl) == 0) return 1;
    }
    return 0;
}

/* The defaults of a new index (lua/shingle/index.lua M.defaults): what
 * `shingle index add` makes without options. */
#define INDEX_DEFAULTS "w=10 k=64 sketch=mod s=200 m=25 floor=20 option=B tokens=rabin fold=0 punctuation=0 numbers=1 invalid=latin1"

/* The configuration JSON of a new index from its options string (the
 * defaults first, later keys win), as lua/shingle/index.lua records it;
 * policy, threshold, max_df go to *pol, *thr, *max_df. */
static int new_config(const char *options, char *shopts, size_t shcap, char *json, size_t jcap, sh_policy *pol, double *thr,
                      uint32_t *max_df, char **errmsg)
{
    static const char *const numeric[] = { "w", "k", "seed", "poly", "idpoly", "s", "m", "floor" };
    static const char *const boolean[] = { "lowercase", "numbers", "punctuation", "fold" };
    static const char *const pols[] = { "resemblance", "containment", "either", "both" };
    conf_kv kv[CONF_MAX];
    size_t n = 0, i, j, used = 0, ju;
    int rc;
    char all[1400];
    const char *p;
    const char *policy = "resemblance";
    double threshold = 0.5;
    unsigned long long mdf = 0;
    snprintf(all, sizeof all, "%s %s", INDEX_DEFAULTS, options ? options : "");
    p = all;
    while (*p) {
        char key[32], val[80];
        if ((rc = next_option(&p, key, sizeof key, val, sizeof val, errmsg)) < 0) break;
        if (rc != SHINGLE_OK) return rc;
        if (!strcmp(key, "html"))
            return fail(errmsg, SHINGLE_EINVAL, "option html: an index has a text and an HTML shingler; say it per document");
        if (!strcmp(key, "policy")) {
            for (i = 0; i < 4 && strcmp(val, pols[i]) != 0; i++) {}
            if (i == 4) return fail(errmsg, SHINGLE_EINVAL, "option policy=%s: use resemblance, containment, either or both", val);
            policy = pols[i];
            *pol = (sh_policy)i;
            continue;
        }
        if (!strcmp(key, "threshold")) {
            char *end;
            threshold = strtod(val, &end);
            if (*end || !(threshold >= 0 && threshold <= 1))
                return fail(errmsg, SHINGLE_EINVAL, "option threshold=%s: give a number from 0 to 1", val);
            continue;
        }
        if (!strcmp(key, "max_df")) {
            uint64_t x;
            if (!parse_u64(val, &x) || x > UINT32_MAX)
                return fail(errmsg, SHINGLE_EINVAL, "option max_df=%s: give a whole number from 0 to 4294967295", val);
            mdf = x;
            continue;
        }
        for (i = 0; i < n && strcmp(kv[i].key, key) != 0; i++) {}
        if (i == n) {
            if (n == CONF_MAX) return fail(errmsg, SHINGLE_EINVAL, "options: too many");
            n++;
        }
        snprintf(kv[i].key, sizeof kv[i].key, "%s", key);
        snprintf(kv[i].val, sizeof kv[i].val, "%s", val);
        kv[i].is_string = 1;
        for (j = 0; j < sizeof numeric / sizeof numeric[0]; j++)
            if (!strcmp(key, numeric[j])) {
                uint64_t x;
                if (!parse_u64(val, &x)) return fail(errmsg, SHINGLE_EINVAL, "option %s=%s: give a whole number", key, val);
                snprintf(kv[i].val, sizeof kv[i].val, "%llu", (unsigned long long)x);
                kv[i].is_string = 0;
            }
        for (j = 0; j < sizeof boolean / sizeof boolean[0]; j++)
            if (!strcmp(key, boolean[j])) {
                int b;
                if (!parse_bool(val, &b)) return fail(errmsg, SHINGLE_EINVAL, "option %s=%s: use 1 or 0 (true or false)", key, val);
                snprintf(kv[i].val, sizeof kv[i].val, "%s", b ? "true" : "false");
                kv[i].is_string = 0;
            }
    }
    *thr = threshold;
    *max_df = (uint32_t)mdf;
    shopts[0] = 0;
    ju = (size_t)snprintf(json, jcap, "{\"policy\":\"%s\",\"threshold\":%.17g,\"max_df\":%llu", policy, threshold, mdf);
    for (i = 0; i < n; i++) {
        int w = snprintf(shopts + used, shcap - used, "%s%s=%s", used ? " " : "", kv[i].key,
                         !strcmp(kv[i].val, "true") ? "1" : !strcmp(kv[i].val, "false") ? "0" : kv[i].val);
        if (w < 0 || (size_t)w >= shcap - used) return fail(errmsg, SHINGLE_EINVAL, "options: too long");
        used += (size_t)w;
        w = snprintf(json + ju, jcap - ju, kv[i].is_string ? ",\"%s\":\"%s\"" : ",\"%s\":%s", kv[i].key, kv[i].val);
        if (w < 0 || (size_t)w >= jcap - ju) return fail(errmsg, SHINGLE_EINVAL, "options: too long");
        ju += (size_t)w;
    }
    if (ju + 2 > jcap) return fail(errmsg, SHINGLE_EINVAL, "options: too long");
    json[ju++] = '}';
    json[ju] = 0;
    return SHINGLE_OK;
}

/* The shinglers of an index with documents, made by its first add and kept
 * with the handle (sh_index_attach): making one checks its polynomials for
 * irreducibility, about half of what a one-document add cost. An add that
 * finds them in use by another thread makes its own, as before. */
typedef struct add_shinglers {
    pthread_mutex_t lock;
    shingle_shingler *sh[2];   /* text, HTML; NULL until made */
} add_shinglers;

static void add_shinglers_free(void *p)
{
    add_shinglers *c = (add_shinglers *)p;
    shingle_shingler_free(c->sh[0]);
    shingle_shingler_free(c->sh[1]);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* The handle's kept shinglers, locked, or NULL (then make your own). */
static add_shinglers *kept_shinglers(shingle_index *ix)
{
    add_shinglers *c = (add_shinglers *)sh_index_attachment(IX(ix));
    if (!c) {
        add_shinglers *mine = (add_shinglers *)calloc(1, sizeof *mine);
        if (!mine) return NULL;
        pthread_mutex_init(&mine->lock, NULL);
        c = (add_shinglers *)sh_index_attach(IX(ix), mine, add_shinglers_free);
        if (c != mine) add_shinglers_free(mine);
    }
    return c && pthread_mutex_trylock(&c->lock) == 0 ? c : NULL;
}

int shingle_index_add(shingle_index *ix, const char *sweep, const char *options, const shingle_input *docs, size_t n,
                      shingle_added *out, char **errmsg)
{
    add_shinglers *kept = NULL;
    shingle_shingler *sh[2] = { NULL, NULL };
    sh_index_adder *a = NULL;
    sh_index_doc *batch = NULL;
    sh_doc_out *made = NULL;
    size_t *slot = NULL, nb = 0, i;
    uint32_t *ids = NULL;
    sh_sketch_params p, id;
    sh_policy pol = SH_POLICY_RESEMBLANCE;
    double thr = 0.5;
    uint32_t max_df = 0;
    int present = 0, rc = SHINGLE_OK;
    char json[2048], shopts[1400];
    sh_error e;
    if (!ix || !sweep || (!docs && n) || (!out && n)) return fail(errmsg, SHINGLE_EINVAL, "shingle_index_add: a NULL argument");
    if (!*sweep) return fail(errmsg, SHINGLE_EINVAL, "shingle_index_add: give the sweep a name (e.g. the crawl date)");
    if (n == 0) return SHINGLE_OK;
    if (sh_index_params(IX(ix), &p, &present, &pol, &thr, &e) != SH_OK) return failed(errmsg, &e);
    if (present) {
        char *conf;
        size_t cl;
        if (options && *options)
            return fail(errmsg, SHINGLE_EINVAL, "shingle_index_add: the index has documents and keeps its own options: pass NULL");
        if (sh_index_meta_get(IX(ix), "user.config", &conf, &cl, &e) != SH_OK) return failed(errmsg, &e);
        if (conf) {
            conf_kv kv[CONF_MAX];
            size_t nk, k;
            if (parse_config(conf, kv, &nk))
                for (k = 0; k < nk; k++)
                    if (!strcmp(kv[k].key, "max_df")) max_df = (uint32_t)strtoul(kv[k].val, NULL, 10);
            free(conf);
        }
        if ((kept = kept_shinglers(ix)) != NULL && kept->sh[0] && kept->sh[1]) {
            sh[0] = kept->sh[0];
            sh[1] = kept->sh[1];
        } else {
            if ((rc = shingle_index_shingler(ix, 0, &sh[0], errmsg)) != SHINGLE_OK ||
                (rc = shingle_index_shingler(ix, 1, &sh[1], errmsg)) != SHINGLE_OK)
                goto done;
            if (kept) {
                /* kept from now on (an index's options never change once it has documents) */
                kept->sh[0] = sh[0];
                kept->sh[1] = sh[1];
            }
        }
    } else {
        size_t k;
        if ((rc = new_config(options, shopts, sizeof shopts - 8, json, sizeof json, &pol, &thr, &max_df, errmsg)) != SHINGLE_OK)
            return rc;
        if ((rc = shingle_shingler_new(shopts, &sh[0], errmsg)) != SHINGLE_OK) goto done;
        k = strlen(shopts);
        snprintf(shopts + k, sizeof shopts - k, " html=1");
        if ((rc = shingle_shingler_new(shopts, &sh[1], errmsg)) != SHINGLE_OK) goto done;
    }
    batch = (sh_index_doc *)calloc(n, sizeof *batch);
    made = (sh_doc_out *)calloc(n, sizeof *made);
    slot = (size_t *)calloc(n, sizeof *slot);
    ids = (uint32_t *)calloc(n, sizeof *ids);
    if (!batch || !made || !slot || !ids) { rc = fail(errmsg, SHINGLE_ENOMEM, "out of memory for %zu documents", n); goto done; }
    /* sketch first, outside the write transaction's lock */
    for (i = 0; i < n; i++) {
        const shingle_input *d = &docs[i];
        shingle_shingler *s;
        int html;
        out[i].id = 0;
        out[i].status = SHINGLE_OK;
        if (!d->url || d->url_len == 0) {
            out[i].status = SHINGLE_EINVAL; /* an index finds documents again by URL */
            continue;
        }
        if (!d->text && d->len) { out[i].status = SHINGLE_EINVAL; continue; }
        html = d->html < 0 ? looks_html(d->text ? d->text : "", d->len) : d->html != 0;
        s = sh[html];
        if (sh_shingle_text(&s->sh, &s->work, d->text ? d->text : "", d->len, &e) != SH_OK ||
            sh_doc_sketch(&s->sh, &s->work, &s->sp, 0, 0, 0, d->text ? d->text : "", d->len, sh_work_tokens(&s->work), &made[i], &e) != SH_OK) {
            if (e.code == SH_ENOMEM) { rc = failed(errmsg, &e); goto done; }
            out[i].status = code_of(e.code);
            continue;
        }
        batch[nb].url = d->url;
        batch[nb].url_len = d->url_len;
        batch[nb].raw_fp = made[i].raw_fp;
        batch[nb].canon_fp = made[i].canon_fp;
        batch[nb].sketch = made[i].sketch;
        slot[nb++] = i;
    }
    if (nb == 0) goto done;
    sh_sketch_identity(&sh[0]->sh, &sh[0]->sp, 0, &id);
    if (sh_index_begin(IX(ix), sweep, &id, pol, thr, max_df, &a, &e) != SH_OK) { rc = failed(errmsg, &e); goto done; }
    if (!present && sh_index_meta_put(a, "user.config", json, strlen(json), &e) != SH_OK) { rc = failed(errmsg, &e); goto done; }
    if (sh_index_add(a, batch, nb, ids, &e) != SH_OK) { rc = failed(errmsg, &e); goto done; }
    if (sh_index_commit(a, NULL, &e) != SH_OK) { a = NULL; rc = failed(errmsg, &e); goto done; }
    a = NULL;
    for (i = 0; i < nb; i++) {
        if (ids[i] == SH_INDEX_REFUSED) out[slot[i]].status = SHINGLE_EMISMATCH; /* the sweep has the URL with other content */
        else out[slot[i]].id = ids[i] + 1;
    }
done:
    if (a) sh_index_abort(a);
    if (made)
        for (i = 0; i < n; i++) sh_doc_release(&made[i]);
    free(made);
    free(batch);
    free(slot);
    free(ids);
    if (kept && kept->sh[0] == sh[0]) {
        pthread_mutex_unlock(&kept->lock);
    } else {
        if (kept) pthread_mutex_unlock(&kept->lock);
        shingle_shingler_free(sh[0]);
        shingle_shingler_free(sh[1]);
    }
    return rc;
}
