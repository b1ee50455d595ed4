/* What the binding files of shingle.core share (core/lua/l_aux.c): errors,
 * the option readers, boxes that own C memory across a Lua error, handle
 * classes, and the shingler and sketch userdata. Nothing here is exported
 * from core.so but luaopen_shingle_core. */
#ifndef SHINGLE_LSHINGLE_H
#define SHINGLE_LSHINGLE_H

#include "compat.h"
#include "sketch.h"
#include "pool.h"
#include "sketchfile.h"

#define SHL_SHINGLER "shingle.Shingler"
#define SHL_SKETCH "shingle.Sketch"
#define SHL_ZSTREAM "shingle.ZStream"

/* ---- errors --------------------------------------------------------------
 * Misuse raises; environmental failure (I/O, a corrupt file) returns
 * nil, message, code name (STYLE.md, "Errors"). */

/* Raise a Lua error carrying the message of err. */
int shl_raise(lua_State *L, const sh_error *err);
/* Return nil, message, code name ("EIO", "EFORMAT", ...). */
int shl_fail(lua_State *L, const sh_error *err);

/* ---- options: the fields of an options table at index t ------------------
 * An absent (nil) field gives def; a field of the wrong type raises naming
 * the option. Strings stay referenced by the table while it is alive. */
lua_Integer shl_opt_int(lua_State *L, int t, const char *k, lua_Integer def);
lua_Number shl_opt_num(lua_State *L, int t, const char *k, lua_Number def);
int shl_opt_bool(lua_State *L, int t, const char *k, int def);
const char *shl_opt_str(lua_State *L, int t, const char *k, const char *def);
uint64_t shl_opt_u64(lua_State *L, int t, const char *k, uint64_t def);
/* The index in names (NULL-terminated) of the field's value, def's when nil. */
int shl_opt_enum(lua_State *L, int t, const char *k, const char *def, const char *const names[]);
/* A policy name (core/policy.h). */
int shl_opt_policy(lua_State *L, int t, const char *k, int def);

/* Set field k of the table on top to an integer or a number. */
#define SHL_SETI(L, k, v) (lua_pushinteger((L), (lua_Integer)(v)), lua_setfield((L), -2, (k)))
#define SHL_SETN(L, k, v) (lua_pushnumber((L), (lua_Number)(v)), lua_setfield((L), -2, (k)))

/* ---- boxes ---------------------------------------------------------------
 * As lauxlib's newbox: a userdata that owns C memory, so that nothing malloc
 * returned is lost when a Lua error unwinds. Make the box first, then let
 * the engine allocate into it; the memory is freed when the box is collected
 * (or closed: __close under 5.4), or at once with shl_box_done. */

/* Push a box of size bytes (zeroed) whose contents fin releases (fin may be
 * NULL); returns the contents. */
void *shl_newbox(lua_State *L, size_t size, void (*fin)(void *));
/* Push a box holding one malloc'ed pointer, freed with free(); returns the
 * slot to store it in (NULL until stored). */
void **shl_newptrbox(lua_State *L);
/* Release the contents of the box at index i now (idempotent). */
void shl_box_done(lua_State *L, int i);
/* The contents of the box at index i, or NULL if it is not a box or released. */
void *shl_tobox(lua_State *L, int i);

/* ---- handle classes ------------------------------------------------------
 * Register metatable name with methods (its __index) and meta. close, the
 * one idempotent close of the handle, becomes __gc, __close (Lua 5.4) and
 * the method close (unless methods has one). */
void shl_newclass(lua_State *L, const char *name, const luaL_Reg *methods, const luaL_Reg *meta, lua_CFunction close);
/* Push a new handle of class name: size bytes, zeroed (its engine pointer
 * NULL, so the close is safe on any failure before the engine filled it). */
void *shl_newhandle(lua_State *L, size_t size, const char *name);

/* ---- the shingler and sketches -------------------------------------------- */

/* The shingler userdata: configuration, tables and scratch, inline. */
typedef struct shl_shingler {
    sh_shingler sh;
    sh_sketch_params sp;  /* kind, s, m, floor, rules */
    sh_work work;
    int closed;
} shl_shingler;

/* The shingler at index i; raises if it is not one, or is closed. */
shl_shingler *shl_checkshingler(lua_State *L, int i);

/* A sketch userdata holds its sh_sketch inline (values included). */
sh_sketch *shl_checksketch(lua_State *L, int i);
/* Push a new sketch userdata with room for n values; the caller fills it. */
sh_sketch *shl_newsketch(lua_State *L, size_t n);
/* Push a copy of a (does not take ownership). */
void shl_pushsketch(lua_State *L, const sh_sketch *a);

/* ---- shared by the pool and the sketch-file writer ------------------------------- */

/* The pool under a core.pool userdata; the documents of a Lua list for it
 * ({ text | path, html }; the list keeps the strings alive during the call). */
struct sh_pool *shl_checkpool(lua_State *L, int i);
struct sh_doc_in *shl_read_docs(lua_State *L, int t, size_t *n);

/* Sketch-file keys to and from Lua (strings, numbers; nil/false for none),
 * and the writer and reader under their userdata (core/lua/l_sketchfile.c). */
void shl_tokey(lua_State *L, int i, sh_skkey *k);
void shl_pushkey(lua_State *L, const sh_skkey *k);
sh_skfile_writer *shl_checkskwriter(lua_State *L, int i);
sh_skfile_reader *shl_checkskreader(lua_State *L, int i);

/* w->ids (and n_ids) from the Lua list at index t: strings are tokens,
 * hashed as canonical tokens are (sh_token_id), integers (or 8-byte strings
 * where integers are not 64-bit, as shl_checku64 takes them) are ids as they
 * are. Raises naming the item that is neither. */
void shl_ids_from_list(lua_State *L, int t, const sh_shingler *sh, sh_work *w);

/* An extractor for the thread pool (core/pool.h) that runs Lua on the
 * workers, one Lua state each (l_worker.c): from the options table at
 * index o, field "lua" = { config = SOURCE, path = package.path, cpath =
 * package.cpath }, SOURCE being a Lua chunk that returns the sketcher
 * configuration (lua/shingle/worker.lua). sh: the shingler whose token ids
 * the worker's lists get. Returns NULL when the options have no "lua";
 * otherwise a malloc'ed extractor freed with shl_worker_free. */
sh_extractor *shl_worker_extractor(lua_State *L, int o, const sh_shingler *sh);
void shl_worker_free(sh_extractor *ex);

/* ---- the parts of the module ------------------------------------------------ */
void shl_open_aux(lua_State *L);         /* the box metatable */
void shl_open_sketch(lua_State *L);      /* Sketch, load, is_sketch */
void shl_open_shingler(lua_State *L);    /* Shingler, new */
void shl_open_util(lua_State *L);        /* rabin, mix, confidence ... */
void shl_open_cluster(lua_State *L);     /* the pipeline: pool, phases, run files */
void shl_open_report(lua_State *L);      /* the report of a cluster run: pairs.jsonl in bulk */
void shl_open_io(lua_State *L);          /* WARC reader, link extraction */
void shl_open_index(lua_State *L);       /* the LMDB index */
void shl_open_collections(lua_State *L); /* web graph, trivial clusters, growing, view */
void shl_open_proc(lua_State *L);       /* exec */
void shl_open_outdir(lua_State *L);   /* locks and fsync for outputs that appear whole */
void shl_open_jsonl(lua_State *L);    /* JSON Lines input */
void shl_open_ixcheck(lua_State *L);  /* checking an index */
void shl_open_guard(lua_State *L);    /* the command line's last word on a crash */
void shl_open_zio(lua_State *L);         /* compressed input: core.zopen, zread, zdecompress */
void shl_open_mail(lua_State *L);        /* email: core.mail_sniff, mail_render, mbox */
void shl_open_sketchfile(lua_State *L);  /* sketch files: core.sketch_writer, sketch_reader */
void shl_open_lsh(lua_State *L);         /* the in-memory LSH index: core.lsh_index, lsh_shape */
/* The stream under a core.zopen userdata (raises if closed). */
struct sh_zstream *shl_checkzstream(lua_State *L, int i);
void shl_open_json(lua_State *L);     /* JSON text for the output writer */

#endif
