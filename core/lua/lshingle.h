/* Internal declarations shared by the binding files of shingle.core. */
#ifndef SHINGLE_LSHINGLE_H
#define SHINGLE_LSHINGLE_H

#include "compat.h"
#include "sketch.h"

#define SHL_SHINGLER "shingle.Shingler"
#define SHL_SKETCH "shingle.Sketch"

/* The shingler userdata: configuration, tables and scratch, inline. */
typedef struct shl_shingler {
    sh_shingler sh;
    sh_sketch_params sp;  /* kind, s, m, rules */
    sh_work work;
    int closed;
} shl_shingler;

/* A sketch userdata holds its sh_sketch inline (values included). */
sh_sketch *shl_checksketch(lua_State *L, int i);
/* Push a copy of a (does not take ownership). */
void shl_pushsketch(lua_State *L, const sh_sketch *a);

void shl_open_sketch(lua_State *L);    /* leaves the Sketch metatable registered */
void shl_open_shingler(lua_State *L);  /* registers the Shingler metatable; sets module.new */
void shl_open_util(lua_State *L);
void shl_open_cluster(lua_State *L);
void shl_open_io(lua_State *L);
void shl_open_index(lua_State *L);    /* the LMDB index */       /* WARC reader, link extraction */  /* the pipeline: pool, phases */      /* rabin, mix, confidence ... into the module table on top */
void shl_open_collections(lua_State *L); /* web graph, trivial clusters, growing, view */
void shl_open_proc(lua_State *L);       /* exec */

/* Raise a Lua error carrying the message of err. */
int shl_raise(lua_State *L, const sh_error *err);
/* Return nil, message, code name. */
int shl_fail(lua_State *L, const sh_error *err);

#endif
