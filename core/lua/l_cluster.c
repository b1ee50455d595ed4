/* shingle.core bindings for the clustering pipeline (core/cluster.h): a thread
 * pool that sketches documents in bulk, the phase-1 writer, the phases as
 * single calls over an output directory, and the run's files read back.
 * Document ids are 1-based here. */
#include <stdlib.h>
#include <string.h>
#include "lrunopts.h"
#include "clock.h"
#include "cluster.h"
#include "fasta.h"
#include "midi.h"
#include "verifysets.h"
#include <unistd.h>
#include <sys/resource.h>
#include <sys/time.h>

#define SHL_POOL "shingle.Pool"
#define SHL_P1 "shingle.Phase1"
#define SHL_JOB "shingle.PoolJob"

typedef struct shl_pool {
    sh_pool *pool;
    sh_pool_config cfg;
    int ref_text, ref_html;   /* keep the shinglers alive */
    sh_extractor *worker;     /* Lua on the workers (l_worker.c), or NULL */
    sh_fasta *fasta;          /* the FASTA extractor's tables, or NULL */
    sh_midi *midi;            /* the MIDI extractor's token ids, or NULL */
    sh_extractor c_ex;        /* the C extractor (FASTA or MIDI) */
    uint64_t batches;         /* batches started (pool:start): the last one may be running */
} shl_pool;

typedef struct shl_p1 {
    sh_p1 p1;
    int open;
} shl_p1;

/* ---- the pool ----------------------------------------------------------------- */

/* core.pool(text_shingler, html_shingler, { threads, full, sig_k, skip_binary, max_bytes, mail, max_shingles,
 *   fasta_k, midi, lua })
 * fasta_k: the documents are FASTA, sketched as the set of their k-mers
 * (core/fasta.h); midi: MIDI files, shingled as interval sequences
 * (core/midi.h); lua: Lua on the workers (shl_worker_extractor). */
static int pool_new(lua_State *L)
{
    shl_shingler *t = shl_checkshingler(L, 1);
    shl_shingler *h = shl_checkshingler(L, 2);
    shl_pool *u;
    lua_Integer threads, sig_k, fasta_k;
    sh_error err;
    luaL_checktype(L, 3, LUA_TTABLE);
    if (memcmp(&t->sp, &h->sp, sizeof t->sp) != 0)
        return luaL_error(L, "the text and HTML shinglers must make the same kind of sketch with the same rules");
    threads = shl_opt_int(L, 3, "threads", 1);
    sig_k = shl_opt_int(L, 3, "sig_k", 0);
    luaL_argcheck(L, threads >= 1 && threads <= 256, 3, "threads must be 1 to 256");
    luaL_argcheck(L, sig_k >= 0 && sig_k <= 4096, 3, "sig_k must be 0 to 4096");
    u = (shl_pool *)shl_newhandle(L, sizeof *u, SHL_POOL);
    u->ref_text = u->ref_html = LUA_NOREF;
    u->cfg.text = &t->sh;
    u->cfg.html = &h->sh;
    u->cfg.params = t->sp;
    u->cfg.threads = (int)threads;
    u->cfg.want_full = shl_opt_bool(L, 3, "full", 0);
    u->cfg.sig_k = (uint32_t)sig_k;
    u->cfg.skip_binary = shl_opt_bool(L, 3, "skip_binary", 1);
    u->cfg.max_bytes = (size_t)shl_opt_num(L, 3, "max_bytes", 0);
    u->cfg.mail = shl_opt_bool(L, 3, "mail", 1);
    u->cfg.max_shingles = (size_t)shl_opt_num(L, 3, "max_shingles", 0);
    luaL_argcheck(L, u->cfg.max_shingles == 0 || u->cfg.max_shingles >= 1, 3, "max_shingles must be a positive count");
    fasta_k = shl_opt_int(L, 3, "fasta_k", 0);
    if (fasta_k) {
        if (!(u->fasta = (sh_fasta *)malloc(sizeof *u->fasta))) return luaL_error(L, "out of memory");
        if (sh_fasta_init(u->fasta, &t->sh, (unsigned)(fasta_k > 0 && fasta_k <= SH_FASTA_MAX_K ? fasta_k : 0), &err) != SH_OK)
            return shl_raise(L, &err);
        u->c_ex.extract = sh_fasta_extract;
        u->c_ex.arg = u->fasta;
        u->cfg.extractor = &u->c_ex;
    } else if (shl_opt_bool(L, 3, "midi", 0)) {
        if (!(u->midi = (sh_midi *)malloc(sizeof *u->midi))) return luaL_error(L, "out of memory");
        sh_midi_init(u->midi, &t->sh);
        u->c_ex.extract = sh_midi_extract;
        u->c_ex.arg = u->midi;
        u->cfg.extractor = &u->c_ex;
    } else if ((u->worker = shl_worker_extractor(L, 3, &t->sh)) != NULL) {
        u->cfg.extractor = u->worker;
    }
    if (sh_pool_new(&u->pool, &u->cfg, &err) != SH_OK) return shl_raise(L, &err);
    lua_pushvalue(L, 1);
    u->ref_text = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, 2);
    u->ref_html = luaL_ref(L, LUA_REGISTRYINDEX);
    return 1;
}

static shl_pool *check_pool(lua_State *L, int i)
{
    shl_pool *u = (shl_pool *)luaL_checkudata(L, i, SHL_POOL);
    luaL_argcheck(L, u->pool != NULL, i, "the pool is closed");
    return u;
}

sh_pool *shl_checkpool(lua_State *L, int i)
{
    return check_pool(L, i)->pool;
}

/* pool:close(): stops using the shinglers; also __gc and __close. */
static int pool_close(lua_State *L)
{
    shl_pool *u = (shl_pool *)luaL_checkudata(L, 1, SHL_POOL);
    if (u->pool) { sh_pool_free(u->pool); u->pool = NULL; }
    shl_worker_free(u->worker);
    u->worker = NULL;
    free(u->fasta);
    u->fasta = NULL;
    free(u->midi);
    u->midi = NULL;
    luaL_unref(L, LUA_REGISTRYINDEX, u->ref_text);
    luaL_unref(L, LUA_REGISTRYINDEX, u->ref_html);
    u->ref_text = u->ref_html = LUA_NOREF;
    return 0;
}

/* Read a Lua list of { text = s | path = p, html = bool } into ins; the strings
 * stay referenced by the list during the call. */
sh_doc_in *shl_read_docs(lua_State *L, int t, size_t *n_out)
{
    size_t n = shl_rawlen(L, t), i;
    sh_doc_in *ins = (sh_doc_in *)lua_newuserdata(L, (n ? n : 1) * sizeof *ins); /* freed by the GC */
    for (i = 0; i < n; i++) {
        int d;
        lua_rawgeti(L, t, (int)(i + 1));
        d = lua_gettop(L);
        if (lua_type(L, d) != LUA_TTABLE) luaL_error(L, "document %d is not a table", (int)(i + 1));
        memset(&ins[i], 0, sizeof ins[i]);
        lua_getfield(L, d, "text");
        if (!lua_isnil(L, -1)) ins[i].data = luaL_checklstring(L, -1, &ins[i].len);
        lua_pop(L, 1);
        ins[i].path = shl_opt_str(L, d, "path", NULL);
        ins[i].html = shl_opt_bool(L, d, "html", 0);
        lua_getfield(L, d, "url"); /* a document given as text is named by its URL in errors */
        ins[i].name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        lua_pop(L, 1);
        if (!ins[i].data && !ins[i].path) luaL_error(L, "document %d has neither text nor path", (int)(i + 1));
        lua_pop(L, 1);
    }
    *n_out = n;
    return ins;
}

/* A batch of results in a box: whatever the pool allocated is released when
 * the box is, so a Lua error while the results become tables loses nothing. */
typedef struct outs_box { size_t n; sh_doc_out o[1]; } outs_box;

static void release_outs(void *p)
{
    outs_box *b = (outs_box *)p;
    sh_pool_release(b->o, b->n);
    b->n = 0;
}

static sh_doc_out *new_outs(lua_State *L, size_t n)
{
    outs_box *b = (outs_box *)shl_newbox(L, offsetof(outs_box, o) + (n ? n : 1) * sizeof(sh_doc_out), release_outs);
    b->n = n;
    return b->o;
}

/* Push the list of results of outs[0..n). */
static void push_outs(lua_State *L, const sh_doc_out *outs, size_t n)
{
    size_t i;
    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        lua_createtable(L, 0, 5);
        if (outs[i].status == SH_OK) {
            shl_pushsketch(L, outs[i].sketch); lua_setfield(L, -2, "sketch");
            if (outs[i].full) { shl_pushsketch(L, outs[i].full); lua_setfield(L, -2, "full"); }
            shl_pushu64(L, outs[i].raw_fp); lua_setfield(L, -2, "raw");
            shl_pushu64(L, outs[i].canon_fp); lua_setfield(L, -2, "canonical");
            shl_pushu64(L, outs[i].set_fp); lua_setfield(L, -2, "set");
            SHL_SETI(L, "tokens", outs[i].n_tokens);
        } else {
            lua_pushstring(L, outs[i].err); lua_setfield(L, -2, "error");
        }
        lua_rawseti(L, -2, (int)(i + 1));
    }
}

/* pool:sketch(docs) -> list of { sketch = , full = (with the option full), raw = , canonical = , set = ,
 * tokens = } or { error = msg } */
static int pool_sketch(lua_State *L)
{
    shl_pool *u = check_pool(L, 1);
    size_t n;
    sh_doc_in *ins;
    sh_doc_out *outs;
    sh_error err;
    luaL_checktype(L, 2, LUA_TTABLE);
    ins = shl_read_docs(L, 2, &n);
    outs = new_outs(L, n);
    if (sh_pool_run(u->pool, ins, outs, n, &err) != SH_OK) return shl_raise(L, &err);
    push_outs(L, outs, n);
    shl_box_done(L, -2);
    return 1;
}

/* A batch sketched in the background (pool:start): the documents, their
 * list and the pool are kept referenced until job:wait. */
typedef struct shl_job {
    sh_doc_out *outs;         /* malloc'ed, NULL once released */
    size_t n;
    uint64_t batch;           /* its number among the pool's batches */
    int ref_pool, ref_docs, ref_ins;
} shl_job;

/* Wait for the job's batch (a closed pool waited for it when it closed; a
 * batch started after it waited for it when it started). */
static void job_finish(lua_State *L, shl_job *j)
{
    if (j->ref_pool == LUA_NOREF) return;
    lua_rawgeti(L, LUA_REGISTRYINDEX, j->ref_pool);
    {
        shl_pool *u = (shl_pool *)lua_touserdata(L, -1);
        if (u && u->pool && u->batches == j->batch) sh_pool_wait(u->pool);
    }
    lua_pop(L, 1);
    luaL_unref(L, LUA_REGISTRYINDEX, j->ref_pool);
    luaL_unref(L, LUA_REGISTRYINDEX, j->ref_docs);
    luaL_unref(L, LUA_REGISTRYINDEX, j->ref_ins);
    j->ref_pool = j->ref_docs = j->ref_ins = LUA_NOREF;
}

/* job:close(): waits for the batch and drops its results; also __gc. */
static int job_close(lua_State *L)
{
    shl_job *j = (shl_job *)luaL_checkudata(L, 1, SHL_JOB);
    job_finish(L, j);
    if (j->outs) { sh_pool_release(j->outs, j->n); free(j->outs); j->outs = NULL; }
    return 0;
}

/* pool:start(docs) -> job: sketch docs on the pool's threads while this
 * thread goes on (reads the next batch, writes the last one to an index);
 * job:wait() returns what pool:sketch(docs) would. One batch of a pool at a
 * time: starting another waits for this one. */
static int pool_start(lua_State *L)
{
    shl_pool *u = check_pool(L, 1);
    size_t n;
    sh_doc_in *ins;
    shl_job *j;
    sh_error err;
    luaL_checktype(L, 2, LUA_TTABLE);
    ins = shl_read_docs(L, 2, &n);
    j = (shl_job *)shl_newhandle(L, sizeof *j, SHL_JOB);
    j->ref_pool = j->ref_docs = j->ref_ins = LUA_NOREF;
    if (!(j->outs = (sh_doc_out *)calloc(n ? n : 1, sizeof *j->outs))) return luaL_error(L, "out of memory");
    j->n = n;
    lua_pushvalue(L, -2);
    j->ref_ins = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, 2);
    j->ref_docs = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, 1);
    j->ref_pool = luaL_ref(L, LUA_REGISTRYINDEX);
    if (sh_pool_start(u->pool, ins, j->outs, n, &err) != SH_OK) return shl_raise(L, &err);
    j->batch = ++u->batches;
    return 1;
}

/* job:wait() -> the list of results (as pool:sketch) */
static int job_wait(lua_State *L)
{
    shl_job *j = (shl_job *)luaL_checkudata(L, 1, SHL_JOB);
    luaL_argcheck(L, j->outs != NULL, 1, "the job was waited for or closed");
    job_finish(L, j);
    push_outs(L, j->outs, j->n);
    sh_pool_release(j->outs, j->n);
    free(j->outs);
    j->outs = NULL;
    return 1;
}

/* ---- phase 1 ---------------------------------------------------------------- */

/* core.phase1(dir, pool [, { sources = bool }]) -> writer. sources (with a
 * pool that makes full sets): documents given with a path, or with source,
 * at and at_len (a line of a plain JSON Lines file, core.jsonl), keep their
 * source in sources.bin instead of their full set in shingles.bin
 * (core/verifysets.h). */
static int p1_new(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    shl_pool *pool = check_pool(L, 2);
    int sources = lua_istable(L, 3) && shl_opt_bool(L, 3, "sources", 0);
    shl_p1 *u = (shl_p1 *)shl_newhandle(L, sizeof *u, SHL_P1);
    sh_sketch_params id;
    sh_error err;
    sh_sketch_identity(pool->cfg.text, &pool->cfg.params, 0, &id);
    if (sh_p1_open(&u->p1, dir, &pool->cfg, &id, &err) != SH_OK) return shl_fail(L, &err);
    if (sources && pool->cfg.want_full) {
        char cwd[4096];
        if (!getcwd(cwd, sizeof cwd)) { sh_p1_abort(&u->p1); return luaL_error(L, "cannot find the working directory"); }
        if (sh_p1_sources(&u->p1, dir, cwd, &err) != SH_OK) { sh_p1_abort(&u->p1); return shl_fail(L, &err); }
    }
    u->open = 1;
    return 1;
}

static shl_p1 *check_p1(lua_State *L)
{
    shl_p1 *u = (shl_p1 *)luaL_checkudata(L, 1, SHL_P1);
    luaL_argcheck(L, u->open, 1, "the phase-1 writer is closed");
    return u;
}

/* Append a batch to the writer; on failure the writer is abandoned. */
static int p1_append(lua_State *L, shl_p1 *u, const sh_doc_out *outs, size_t n, const sh_doc_src *srcs)
{
    sh_error err;
    if (sh_p1_add_src(&u->p1, outs, srcs, n, &err) != SH_OK) {
        sh_p1_abort(&u->p1);
        u->open = 0;
        return shl_fail(L, &err);
    }
    return 0;
}

static void check_writer_pool(lua_State *L, const shl_p1 *u, const shl_pool *pool)
{
    if (pool->cfg.want_full != u->p1.want_full || pool->cfg.sig_k != u->p1.sig_k)
        luaL_error(L, "the pool must be the one the writer was opened with");
}

/* Where each document of the list at index t (ins read from it) came from,
 * when the writer keeps sources (NULL else); a userdata on the stack, the
 * strings referenced by the list. */
static sh_doc_src *p1_sources(lua_State *L, const shl_p1 *u, int t, const sh_doc_in *ins, size_t n)
{
    sh_doc_src *srcs;
    size_t i;
    if (!u->p1.sources) return NULL;
    srcs = (sh_doc_src *)lua_newuserdata(L, (n ? n : 1) * sizeof *srcs);
    for (i = 0; i < n; i++) {
        sh_doc_src *sr = &srcs[i];
        memset(sr, 0, sizeof *sr);
        sr->html = ins[i].html;
        if (!ins[i].data && ins[i].path) {
            sr->kind = SH_SRC_FILE;
            sr->name = ins[i].path;
            continue;
        }
        lua_rawgeti(L, t, (int)(i + 1));
        lua_getfield(L, -1, "source");
        lua_getfield(L, -2, "at");
        lua_getfield(L, -3, "at_len");
        if (lua_type(L, -3) == LUA_TSTRING && lua_isnumber(L, -2) && lua_isnumber(L, -1) && lua_tonumber(L, -2) >= 0 &&
            lua_tonumber(L, -1) >= 0) {
            sr->kind = SH_SRC_JSONL;
            sr->name = lua_tostring(L, -3);
            sr->off = (uint64_t)lua_tonumber(L, -2);
            sr->len = (uint64_t)lua_tonumber(L, -1);
        }
        lua_pop(L, 4);
    }
    return srcs;
}

/* Append a sketched batch; pushes ok count, { [i] = error message } (or
 * nil, message, code when the writer fails). */
static int p1_take(lua_State *L, shl_p1 *u, const sh_doc_out *outs, size_t n, const sh_doc_src *srcs)
{
    size_t i, ok = 0;
    if (p1_append(L, u, outs, n, srcs)) return 3;
    lua_newtable(L);
    for (i = 0; i < n; i++) {
        if (outs[i].status == SH_OK) { ok++; continue; }
        lua_pushstring(L, outs[i].err);
        lua_rawseti(L, -2, (int)(i + 1));
    }
    lua_pushinteger(L, (lua_Integer)ok);
    lua_insert(L, -2);
    return 2;
}

/* w:add(pool, docs) -> ok count, { [i] = error message } for skipped documents */
static int p1_add(lua_State *L)
{
    shl_p1 *u = check_p1(L);
    shl_pool *pool = check_pool(L, 2);
    size_t n;
    sh_doc_in *ins;
    sh_doc_out *outs;
    sh_doc_src *srcs;
    sh_error err;
    int r, box;
    luaL_checktype(L, 3, LUA_TTABLE);
    check_writer_pool(L, u, pool);
    ins = shl_read_docs(L, 3, &n);
    srcs = p1_sources(L, u, 3, ins, n);
    outs = new_outs(L, n);
    box = lua_gettop(L);
    if (sh_pool_run(pool->pool, ins, outs, n, &err) != SH_OK) return shl_raise(L, &err);
    r = p1_take(L, u, outs, n, srcs);
    if (r == 2) shl_box_done(L, box);
    return r;
}

/* w:add_job(pool, job) -> as w:add: the batch of a pool:start(docs) job of
 * this pool appended (waited for first), so that phase 1 sketches the next
 * batch while this thread appends the last one (pipeline.lua). The job's
 * results are released. */
static int p1_add_job(lua_State *L)
{
    shl_p1 *u = check_p1(L);
    shl_pool *pool = check_pool(L, 2);
    shl_job *j = (shl_job *)luaL_checkudata(L, 3, SHL_JOB);
    sh_doc_src *srcs = NULL;
    int r;
    check_writer_pool(L, u, pool);
    luaL_argcheck(L, j->outs != NULL, 3, "the job was waited for or closed");
    lua_rawgeti(L, LUA_REGISTRYINDEX, j->ref_pool);
    luaL_argcheck(L, lua_touserdata(L, -1) == (void *)pool, 3, "the job is of another pool");
    lua_pop(L, 1);
    /* the documents and their sh_doc_in stay on the stack once the job lets them go */
    lua_rawgeti(L, LUA_REGISTRYINDEX, j->ref_docs);
    lua_rawgeti(L, LUA_REGISTRYINDEX, j->ref_ins);
    job_finish(L, j);
    srcs = p1_sources(L, u, lua_gettop(L) - 1, (const sh_doc_in *)lua_touserdata(L, -1), j->n);
    r = p1_take(L, u, j->outs, j->n, srcs);
    sh_pool_release(j->outs, j->n);
    free(j->outs);
    j->outs = NULL;
    return r;
}

/* w:add_sketches({ { sketch, full, raw, canonical, set, sig } | { error = msg }, ... })
 * -> ok count: documents sketched in Lua (Shingler:sketch_doc, for rule sets
 * with Lua steps and feature extractors), appended like a pool batch. The
 * entries carry everything: the writer computes nothing of its own, so the
 * files are those the pool would have written. */
static int p1_add_sketches(lua_State *L)
{
    shl_p1 *u = check_p1(L);
    size_t n, i, ok = 0;
    sh_doc_out *outs;
    uint64_t *sigs;
    luaL_checktype(L, 2, LUA_TTABLE);
    n = shl_rawlen(L, 2);
    /* scratch the collector owns: the entries only point into the list */
    outs = (sh_doc_out *)lua_newuserdata(L, (n ? n : 1) * sizeof *outs);
    sigs = (uint64_t *)lua_newuserdata(L, (n ? n : 1) * (size_t)u->p1.sig_k * 8 + 8);
    memset(outs, 0, (n ? n : 1) * sizeof *outs);
    for (i = 0; i < n; i++) {
        sh_doc_out *o = &outs[i];
        int e;
        lua_rawgeti(L, 2, (int)(i + 1));
        e = lua_gettop(L);
        luaL_argcheck(L, lua_istable(L, e), 2, "each entry is { sketch, full, raw, canonical, set, sig } or { error = msg }");
        if (shl_opt_str(L, e, "error", NULL)) {
            o->status = SH_EFORMAT;
            snprintf(o->err, sizeof o->err, "%s", shl_opt_str(L, e, "error", NULL));
            lua_pop(L, 1);
            continue;
        }
        lua_getfield(L, e, "sketch"); o->sketch = shl_checksketch(L, lua_gettop(L)); lua_pop(L, 1);
        lua_getfield(L, e, "full");
        if (!lua_isnil(L, -1)) o->full = shl_checksketch(L, lua_gettop(L));
        lua_pop(L, 1);
        lua_getfield(L, e, "raw"); o->raw_fp = shl_checku64(L, lua_gettop(L)); lua_pop(L, 1);
        lua_getfield(L, e, "canonical"); o->canon_fp = shl_checku64(L, lua_gettop(L)); lua_pop(L, 1);
        lua_getfield(L, e, "set"); o->set_fp = shl_checku64(L, lua_gettop(L)); lua_pop(L, 1);
        if (u->p1.want_full && !o->full)
            return luaL_error(L, "entry %d needs its full sketch (exact verification is on)", (int)(i + 1));
        if (u->p1.sig_k) {
            size_t len, j;
            const char *s;
            lua_getfield(L, e, "sig");
            s = lua_tolstring(L, -1, &len);
            if (!s || len != 8 * (size_t)u->p1.sig_k)
                return luaL_error(L, "entry %d needs its min-hash signature of %d values (sketch_doc's sig)", (int)(i + 1),
                                  (int)u->p1.sig_k);
            o->sig = sigs + i * u->p1.sig_k;
            for (j = 0; j < u->p1.sig_k; j++) o->sig[j] = sh_load_le64(s + 8 * j);
            lua_pop(L, 1);
        }
        o->n_tokens = o->sketch->n_tokens;
        lua_pop(L, 1);
        ok++;
    }
    if (p1_append(L, u, outs, n, NULL)) return 3;
    lua_pushinteger(L, (lua_Integer)ok);
    return 1;
}

static int p1_commit(lua_State *L)
{
    shl_p1 *u = check_p1(L);
    sh_error err;
    u->open = 0;
    if (sh_p1_commit(&u->p1, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushinteger(L, (lua_Integer)u->p1.n_docs);
    return 1;
}

/* w:abort() (and close, __gc, __close): an unfinished phase 1 leaves no file. */
static int p1_close(lua_State *L)
{
    shl_p1 *u = (shl_p1 *)luaL_checkudata(L, 1, SHL_P1);
    if (u->open) { sh_p1_abort(&u->p1); u->open = 0; }
    return 0;
}

/* ---- the phases ------------------------------------------------------------- */

static int c_dedupe(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    sh_dedupe_stats st;
    sh_error err;
    if (sh_dedupe(dir, &st, &err) != SH_OK) return shl_fail(L, &err);
    shl_push_dedupe_stats(L, &st);
    return 1;
}

/* core.pairs(dir, { memory, max_df, temp_dir, threads, sync_later, progress }) -> stats, or nil, err
 * (sync_later: pairs.bin is not fsynced; the caller syncs the directory before it counts) */
static int c_pairs(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    sh_pairs_config c;
    sh_pairs_stats st;
    sh_error err;
    shl_progress lp;
    lua_Integer max_df;
    luaL_checktype(L, 2, LUA_TTABLE);
    memset(&c, 0, sizeof c);
    c.memory = (size_t)shl_opt_num(L, 2, "memory", 256.0 * 1024 * 1024);
    max_df = shl_opt_int(L, 2, "max_df", 1000);
    luaL_argcheck(L, max_df >= 2 && max_df <= (lua_Integer)UINT32_MAX, 2, "max_df must be at least 2");
    c.max_df = (uint32_t)max_df;
    c.temp_dir = shl_opt_str(L, 2, "temp_dir", NULL);
    c.threads = (int)shl_opt_int(L, 2, "threads", 1);
    luaL_argcheck(L, c.threads >= 1 && c.threads <= 256, 2, "threads must be 1 to 256");
    c.sync_later = shl_opt_bool(L, 2, "sync_later", 0);
    shl_get_progress(L, 2, &lp, &c.progress, &c.progress_ud);
    if (sh_pairs(dir, &c, &st, &err) != SH_OK) return shl_fail(L, &err);
    shl_push_pairs_stats(L, &st);
    return 1;
}


/* The trampoline for a Lua predicate: the function is at stack index 3 of
 * the c_decide call. As with progress, everything that can raise runs under
 * lua_pcall; an error is kept (its message on the stack) and ends phase 4. */
typedef struct lua_accept {
    lua_State *L;
    int fn, failed, ok;
    uint32_t a, b, shared, na, nb;
    const sh_estimate *e;
} lua_accept;

static int call_accept(lua_State *L)
{
    lua_accept *x = (lua_accept *)lua_touserdata(L, 2);
    lua_pushvalue(L, 1);
    lua_createtable(L, 0, 8);
    SHL_SETI(L, "a", (lua_Integer)x->a + 1);
    SHL_SETI(L, "b", (lua_Integer)x->b + 1);
    SHL_SETI(L, "shared", x->shared);
    SHL_SETN(L, "resemblance", x->e->resemblance);
    SHL_SETN(L, "containment_ab", x->e->contain_ab);
    SHL_SETN(L, "containment_ba", x->e->contain_ba);
    SHL_SETI(L, "size_a", x->na);
    SHL_SETI(L, "size_b", x->nb);
    lua_call(L, 1, 1);
    x->ok = lua_toboolean(L, -1);
    return 0;
}

static int accept_lua(void *ud, uint32_t a, uint32_t b, uint32_t shared, const sh_estimate *e, uint32_t na, uint32_t nb)
{
    lua_accept *x = (lua_accept *)ud;
    x->a = a; x->b = b; x->shared = shared; x->e = e; x->na = na; x->nb = nb;
    lua_pushcfunction(x->L, call_accept);
    lua_pushvalue(x->L, x->fn);
    lua_pushlightuserdata(x->L, x);
    if (lua_pcall(x->L, 2, 0, 0) != 0) {
        x->failed = 1; /* the message stays on the stack for c_decide */
        return -1;
    }
    return x->ok;
}

static void free_fullsets(void *p)
{
    sh_fullsets **box = (sh_fullsets **)p;
    sh_fullsets_free(*box);
    *box = NULL;
}

static int accept_all(void *ud, uint32_t a, uint32_t b, uint32_t shared, const sh_estimate *e, uint32_t na, uint32_t nb)
{
    (void)ud; (void)a; (void)b; (void)shared; (void)e; (void)na; (void)nb;
    return 1;
}

/* core.verify_sets(dir, pool, { policy, threshold, candidate, every, fields = { text = name }, progress })
 * -> { documents, values, bytes }: the full sets of the candidates of phase 4
 * made again from their sources (core/verifysets.h); every: of every
 * document (methods whose candidates are not pairs.bin's, a Lua predicate). */
static int c_verify_sets(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    shl_pool *pool = check_pool(L, 2);
    sh_decide_config c;
    sh_verify_sets_stats st;
    sh_jsonl_fields f;
    shl_progress lp;
    sh_error err;
    int every;
    lua_Number memory;
    sh_fullsets **box;
    int bi;
    luaL_checktype(L, 3, LUA_TTABLE);
    shl_read_decide(L, 3, &c);
    every = shl_opt_bool(L, 3, "every", 0);
    if (shl_opt_bool(L, 3, "all_pairs", 0)) c.accept = accept_all; /* sh_candidates: every pair */
    memset(&f, 0, sizeof f);
    lua_getfield(L, 3, "fields");
    if (lua_istable(L, -1)) {
        f.text = shl_opt_str(L, lua_gettop(L), "text", NULL); /* referenced by the table */
        f.url = shl_opt_str(L, lua_gettop(L), "url", NULL);
        f.id = shl_opt_str(L, lua_gettop(L), "id", NULL);
        f.date = shl_opt_str(L, lua_gettop(L), "date", NULL);
    }
    if (!pool->cfg.want_full) return luaL_error(L, "the pool must make full sets (option full)");
    memory = shl_opt_num(L, 3, "memory", 0);
    box = (sh_fullsets **)shl_newbox(L, sizeof *box, free_fullsets); /* holds the sets until phase 4 is done */
    *box = NULL;
    bi = lua_gettop(L);
    shl_get_progress(L, 3, &lp, &c.progress, &c.progress_ud);
    if (sh_verify_sets(dir, pool->pool, &c, every, &f, memory > 0 ? (size_t)memory : 0, box, &st, &err) != SH_OK)
        return shl_fail(L, &err);
    lua_createtable(L, 0, 5);
    SHL_SETI(L, "documents", st.documents);
    SHL_SETI(L, "values", st.values);
    SHL_SETI(L, "bytes", st.bytes);
    lua_pushboolean(L, st.in_memory);
    lua_setfield(L, -2, "in_memory");
    lua_pushboolean(L, st.from_counts);
    lua_setfield(L, -2, "from_counts");
    if (*box) { lua_pushvalue(L, bi); lua_setfield(L, -2, "sets"); }
    return 1;
}

/* core.candidates(dir, { policy, threshold, candidate, threads, chunk_pairs, max_df })
 * -> { pairs, candidates, flags, from_counts }: the pairs of pairs.bin whose
 * estimate passes the policy at candidate (sh_candidates), flags a byte per
 * pair (1: a candidate); from_counts true when the estimates came from the
 * shared counts (max_df given, pairest.h), false from the sketches */
static int c_candidates(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    sh_decide_config c;
    sh_recfile pf;
    sh_error err;
    char path[4096];
    unsigned char *flags;
    uint64_t n, k = 0;
    int from = 0;
    luaL_checktype(L, 2, LUA_TTABLE);
    shl_read_decide(L, 2, &c);
    snprintf(path, sizeof path, "%s/pairs.bin", dir);
    if (sh_recfile_open(&pf, path, SH_MAGIC_PAIRS, sizeof(sh_pairrec), 0, &err) != SH_OK) return shl_fail(L, &err);
    n = pf.count;
    sh_recfile_close(&pf);
    flags = (unsigned char *)lua_newuserdata(L, (size_t)n + 1);
    if (sh_candidates(dir, &c, NULL, flags, &k, &from, &err) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, 0, 4);
    SHL_SETI(L, "pairs", n);
    SHL_SETI(L, "candidates", k);
    lua_pushlstring(L, (const char *)flags, (size_t)n);
    lua_setfield(L, -2, "flags");
    lua_pushboolean(L, from);
    lua_setfield(L, -2, "from_counts");
    return 1;
}

/* core.verify_sets_remove(dir [, sets]): fullsets.bin and fullsets.idx, and
 * the sets verify_sets held in memory, after phase 4 */
static int c_verify_sets_remove(lua_State *L)
{
    sh_verify_sets_remove(luaL_checkstring(L, 1));
    if (shl_tobox(L, 2)) shl_box_done(L, 2);
    return 0;
}

/* core.decide(dir, { policy, threshold, candidate, verify, progress } [, predicate]) */
static int c_decide(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    sh_decide_config c;
    sh_decide_stats st;
    sh_error err;
    lua_accept x;
    shl_progress lp;
    luaL_checktype(L, 2, LUA_TTABLE);
    shl_read_decide(L, 2, &c);
    if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TFUNCTION);
    lua_getfield(L, 2, "fullsets"); /* core.verify_sets' sets, held by the table during the call */
    if (shl_tobox(L, -1)) c.fullsets = *(sh_fullsets **)shl_tobox(L, -1);
    lua_pop(L, 1);
    lua_settop(L, 3);
    shl_get_progress(L, 2, &lp, &c.progress, &c.progress_ud);
    memset(&x, 0, sizeof x);
    if (!lua_isnil(L, 3)) {
        x.L = L;
        x.fn = 3;
        c.accept = accept_lua;
        c.accept_ud = &x;
    }
    if (sh_decide(dir, &c, &st, &err) != SH_OK) {
        if (c.accept && x.failed) {
            lua_pushnil(L);
            lua_pushfstring(L, "the policy function failed: %s", lua_tostring(L, -2));
            return 2;
        }
        return shl_fail(L, &err);
    }
    shl_push_decide_stats(L, &st);
    return 1;
}


/* The alternatives to phases 2-4 share their arguments and results:
 * core.supershingle|lsh|greedy(dir, { policy, threshold, candidate, verify,
 * memory, temp_dir, check, bands, rows, meta, meta_w, progress })
 * -> decide stats [, pair stats], or nil, err */
static int run_alt(lua_State *L, int method)
{
    sh_alt_config c;
    shl_progress lp;
    sh_decide_stats st;
    sh_pairs_stats ps;
    sh_error err;
    sh_status s;
    const char *dir = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    shl_read_alt(L, 2, &c, &lp);
    if (method == 0) s = sh_supershingle(dir, &c, &st, &ps, &err);
    else if (method == 1) s = sh_lsh(dir, &c, &st, &ps, &err);
    else s = sh_greedy(dir, &c, &st, &err);
    if (s != SH_OK) return shl_fail(L, &err);
    shl_push_decide_stats(L, &st);
    if (method == 2) return 1;
    shl_push_pairs_stats(L, &ps);
    return 2;
}

static int c_supershingle(lua_State *L) { return run_alt(L, 0); }
static int c_lsh(lua_State *L) { return run_alt(L, 1); }
static int c_greedy(lua_State *L) { return run_alt(L, 2); }

/* ---- the run's files read back ------------------------------------------------ */

/* A mapped run file in a box, unmapped when the box is released. */
static void close_recfile(void *p)
{
    sh_recfile_close((sh_recfile *)p);
}

static sh_recfile *new_recfile(lua_State *L)
{
    return (sh_recfile *)shl_newbox(L, sizeof(sh_recfile), close_recfile);
}

/* core.read_clusters(dir) -> cluster ids, doc ids (parallel lists, 1-based) */
static int c_read_clusters(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    sh_recfile *f = new_recfile(L);
    const sh_clusterrec *r;
    size_t n, i;
    sh_error err;
    if (sh_run_clusters(f, dir, &r, &n, &err) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, (int)n, 0);
    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)r[i].cluster + 1);
        lua_rawseti(L, -3, (int)(i + 1));
        lua_pushinteger(L, (lua_Integer)r[i].doc + 1);
        lua_rawseti(L, -2, (int)(i + 1));
    }
    shl_box_done(L, -3);
    return 2;
}

/* core.read_links(dir) -> list of { a, b, r, cab, cba [, xr, xcab, xcba] } */
static int c_read_links(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    sh_recfile *f = new_recfile(L);
    const sh_linkrec *r;
    size_t n, i;
    sh_error err;
    if (sh_run_links(f, dir, &r, &n, &err) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        lua_createtable(L, 8, 0);
        lua_pushinteger(L, (lua_Integer)r[i].a + 1); lua_rawseti(L, -2, 1);
        lua_pushinteger(L, (lua_Integer)r[i].b + 1); lua_rawseti(L, -2, 2);
        lua_pushnumber(L, r[i].r); lua_rawseti(L, -2, 3);
        lua_pushnumber(L, r[i].cab); lua_rawseti(L, -2, 4);
        lua_pushnumber(L, r[i].cba); lua_rawseti(L, -2, 5);
        if (r[i].xr >= 0) {
            lua_pushnumber(L, r[i].xr); lua_rawseti(L, -2, 6);
            lua_pushnumber(L, r[i].xcab); lua_rawseti(L, -2, 7);
            lua_pushnumber(L, r[i].xcba); lua_rawseti(L, -2, 8);
        }
        lua_rawseti(L, -2, (int)(i + 1));
    }
    shl_box_done(L, -2);
    return 1;
}

/* core.read_docs(dir) -> reps, dups, statuses, tokens (parallel lists, 1-based ids) */
static int c_read_docs(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    sh_recfile *f = new_recfile(L);
    const sh_docrec *r;
    size_t n, i;
    sh_error err;
    if (sh_run_docs(f, dir, &r, &n, &err) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, (int)n, 0);
    lua_createtable(L, (int)n, 0);
    lua_createtable(L, (int)n, 0);
    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)r[i].rep + 1); lua_rawseti(L, -5, (int)(i + 1));
        lua_pushinteger(L, r[i].dup); lua_rawseti(L, -4, (int)(i + 1));
        lua_pushinteger(L, r[i].status); lua_rawseti(L, -3, (int)(i + 1));
        lua_pushinteger(L, (lua_Integer)r[i].n_tokens); lua_rawseti(L, -2, (int)(i + 1));
    }
    shl_box_done(L, -5);
    return 4;
}

static void push_estimate(lua_State *L, const sh_estimate *e)
{
    lua_createtable(L, 0, 3);
    SHL_SETN(L, "resemblance", e->resemblance);
    SHL_SETN(L, "containment", e->contain_ab);
    SHL_SETN(L, "contained", e->contain_ba);
}

/* core.pair_estimates(dir, as, bs) -> { { resemblance, containment, contained
 * [, exact = { ... }] }, ... }: the scores of chosen pairs of a finished run
 * (1-based ids), estimated from its sketches, and exact when it kept the
 * full shingle sets; or nil, err, code */
static int c_pair_estimates(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    size_t n, i;
    uint32_t *ab;
    sh_estimate *e;
    sh_error err;
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_checktype(L, 3, LUA_TTABLE);
    n = shl_rawlen(L, 2);
    luaL_argcheck(L, shl_rawlen(L, 3) == n, 3, "the two lists of documents must have the same length");
    ab = (uint32_t *)shl_newbox(L, (n ? n : 1) * 2 * sizeof *ab, NULL);
    e = (sh_estimate *)shl_newbox(L, (n ? n : 1) * 2 * sizeof *e, NULL);
    for (i = 0; i < n; i++) {
        lua_Integer x, y;
        lua_rawgeti(L, 2, (int)(i + 1));
        lua_rawgeti(L, 3, (int)(i + 1));
        x = luaL_checkinteger(L, -2);
        y = luaL_checkinteger(L, -1);
        luaL_argcheck(L, x >= 1 && y >= 1 && x <= 0xffffffff && y <= 0xffffffff, 2, "document ids start at 1");
        ab[i] = (uint32_t)(x - 1);
        ab[n + i] = (uint32_t)(y - 1);
        lua_pop(L, 2);
    }
    if (sh_pair_estimates(dir, ab, ab + n, n, e, e + n, &err) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        push_estimate(L, &e[i]);
        if (e[n + i].resemblance >= 0) {
            push_estimate(L, &e[n + i]);
            lua_setfield(L, -2, "exact");
        }
        lua_rawseti(L, -2, (int)(i + 1));
    }
    return 1;
}

static int c_now(lua_State *L)
{
    lua_pushnumber(L, sh_now());
    return 1;
}

/* core.cputime() -> seconds of CPU (user + system) this process has used, all threads */
static int c_cputime(lua_State *L)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) { lua_pushnumber(L, 0); return 1; }
    lua_pushnumber(L, (lua_Number)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (lua_Number)ru.ru_stime.tv_sec +
                          ru.ru_stime.tv_usec / 1e6);
    return 1;
}

void shl_open_cluster(lua_State *L)
{
    static const luaL_Reg pool_m[] = { { "sketch", pool_sketch }, { "start", pool_start }, { NULL, NULL } };
    static const luaL_Reg job_m[] = { { "wait", job_wait }, { NULL, NULL } };
    static const luaL_Reg p1_m[] = { { "add", p1_add }, { "add_job", p1_add_job }, { "add_sketches", p1_add_sketches }, { "commit", p1_commit },
                                     { "abort", p1_close }, { NULL, NULL } };
    static const luaL_Reg funcs[] = {
        { "pool", pool_new }, { "phase1", p1_new }, { "dedupe", c_dedupe }, { "pairs", c_pairs },
        { "decide", c_decide }, { "verify_sets", c_verify_sets }, { "candidates", c_candidates }, { "verify_sets_remove", c_verify_sets_remove }, { "supershingle", c_supershingle }, { "lsh", c_lsh }, { "greedy", c_greedy },
        { "read_clusters", c_read_clusters }, { "read_links", c_read_links }, { "read_docs", c_read_docs },
        { "pair_estimates", c_pair_estimates }, { "now", c_now }, { "cputime", c_cputime }, { NULL, NULL }
    };
    shl_newclass(L, SHL_POOL, pool_m, NULL, pool_close);
    shl_newclass(L, SHL_JOB, job_m, NULL, job_close);
    shl_newclass(L, SHL_P1, p1_m, NULL, p1_close);
    shl_setfuncs(L, funcs);
}
