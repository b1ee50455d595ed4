/* MIDI files as interval sequences (midi.h). Positions below are 1-based,
 * as in the Lua extractor, so the error messages name the same bytes. */
#include <stdio.h>
#include <string.h>
#include "grow.h"
#include "midi.h"
#include "sort.h"

void sh_midi_init(sh_midi *m, const sh_shingler *sh)
{
    int d;
    m->sh = sh;
    for (d = -255; d <= 255; d++) {
        char tok[8];
        const int len = snprintf(tok, sizeof tok, "i%d", d);
        m->id[255 + d] = sh_token_id(sh, tok, (size_t)len);
    }
}

typedef long long pos_t;

/* A variable-length quantity at *i (at most 4 bytes, none past limit):
 * 1 with *v and *i after it, else 0. */
static int vlq(const unsigned char *s, pos_t *i, pos_t limit, pos_t *v)
{
    pos_t x = 0;
    int k;
    for (k = 0; k < 4; k++) {
        unsigned b;
        if (*i > limit) return 0;
        b = s[*i - 1];
        (*i)++;
        x = x * 128 + (b & 127);
        if (b < 128) { *v = x; return 1; }
    }
    return 0;
}

static pos_t be(const unsigned char *p, int bytes)
{
    pos_t v = 0;
    int k;
    for (k = 0; k < bytes; k++) v = v * 256 + p[k];
    return v;
}

#define MAX_TIME ((pos_t)1 << 55)

sh_status sh_midi_features(const sh_midi *m, const char *in, size_t n_in, const char *path, sh_work *w, sh_error *err)
{
    const unsigned char *s = (const unsigned char *)in;
    const char *where = path ? path : "MIDI data";
    const pos_t n = (pos_t)n_in;
    pos_t pos, tr, ntracks;
    size_t notes = 0, k, first, nid = 0;
    uint64_t *key;
    w->n_ids = 0;
    if (n < 14 || memcmp(s, "MThd", 4) != 0)
        return sh_error_set(err, SH_EFORMAT, 0, "%s: not a MIDI file (no MThd header at byte 0)", where);
    ntracks = be(s + 10, 2);
    pos = 9 + be(s + 4, 4);
    for (tr = 0; tr < ntracks; tr++) {
        pos_t len, i, stop, t = 0;
        int status = -1;
        if (pos + 7 > n)
            return sh_error_set(err, SH_EFORMAT, (size_t)(pos - 1), "%s: truncated before a track header at byte %lld",
                                where, pos - 1);
        if (memcmp(s + pos - 1, "MTrk", 4) != 0)
            return sh_error_set(err, SH_EFORMAT, (size_t)(pos - 1), "%s: expected a track (MTrk) at byte %lld", where,
                                pos - 1);
        len = be(s + pos + 3, 4);
        i = pos + 8;
        stop = pos + 7 + len < n ? pos + 7 + len : n;
        while (i <= stop) {
            pos_t dt, l, at;
            unsigned b;
            if (!vlq(s, &i, stop, &dt))
                return sh_error_set(err, SH_EFORMAT, (size_t)stop, "%s: bad delta time near byte %lld", where, stop);
            t += dt;
            if (t >= MAX_TIME)
                return sh_error_set(err, SH_EFORMAT, (size_t)i, "%s: note times past 2^55 ticks", where);
            if (i > n) break;
            b = s[i - 1];
            if (b >= 0x80) { status = (int)b; i++; }
            if (status < 0)
                return sh_error_set(err, SH_EFORMAT, (size_t)(i - 1),
                                    "%s: running status without a status byte at byte %lld", where, i - 1);
            if (status == 0xFF) {
                at = i + 1;
                i = at;
                if (!vlq(s, &i, stop, &l))
                    return sh_error_set(err, SH_EFORMAT, (size_t)at, "%s: bad meta event near byte %lld", where, at);
                i += l;
                status = -1;
            } else if (status == 0xF0 || status == 0xF7) {
                at = i;
                if (!vlq(s, &i, stop, &l))
                    return sh_error_set(err, SH_EFORMAT, (size_t)at, "%s: bad sysex near byte %lld", where, at);
                i += l;
                status = -1;
            } else if ((status & 0xF0) == 0x90) {
                if (i + 1 > n) break;
                if (s[i] > 0) { /* velocity 0 is a note off */
                    if (!sh_grow((void **)&w->vals, &w->cap_vals, notes + 1, sizeof *w->vals, 1024))
                        return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu notes", notes + 1);
                    w->vals[notes++] = (uint64_t)t << 8 | s[i - 1];
                }
                i += 2;
            } else if ((status & 0xF0) == 0xC0 || (status & 0xF0) == 0xD0) {
                i += 1;
            } else {
                i += 2;
            }
        }
        pos = pos + 8 + len;
    }
    /* by time, then pitch: the lowest note of each onset comes first */
    key = w->vals;
    sh_sort_u64(key, notes);
    if (notes > 1 && sh_work_reserve_ids(w, notes - 1) != SH_OK)
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu intervals", notes - 1);
    for (k = 1, first = 0; k < notes; k++) {
        if (key[k] >> 8 == key[first] >> 8) continue;
        w->ids[nid++] = m->id[255 + (int)(key[k] & 0xff) - (int)(key[first] & 0xff)];
        first = k;
    }
    w->n_ids = nid;
    w->n_vals = 0;
    return SH_OK;
}

sh_status sh_midi_extract(void *midi, const char *data, size_t len, const char *path, sh_work *w, int *features,
                          sh_error *err)
{
    *features = 0;
    return sh_midi_features((const sh_midi *)midi, data, len, path, w, err);
}
