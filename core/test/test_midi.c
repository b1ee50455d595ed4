/* MIDI intervals (core/midi.c): a melody's interval tokens, chords from
 * their lowest note across tracks, the errors, and every prefix and byte
 * change of a file read without reading past it (run under ASan by
 * scripts/test.sh). The Lua extractor (lua/shingle/extractors/midi.lua) is
 * compared with this, token for token and error for error, in
 * spec/worker_spec.lua. */
#include <stdlib.h>
#include "../midi.h"
#include "test.h"

static sh_shingler sh;
static sh_midi mid;

static void make(void)
{
    sh_shingler_config c;
    sh_error err;
    memset(&c, 0, sizeof c);
    c.w = 4;
    c.k = 64;
    c.seed = 0x5348494E474CULL;
    sh_shingler_init(&sh, &c, &err);
    sh_midi_init(&mid, &sh);
}

static uint64_t tok(const char *s) { return sh_token_id(&sh, s, strlen(s)); }

/* "MThd" (6 bytes: format 1, ntracks, 480 ticks) then the tracks. */
static size_t file(unsigned char *out, const unsigned char *const *tracks, const size_t *lens, int nt)
{
    static const unsigned char hd[] = { 'M', 'T', 'h', 'd', 0, 0, 0, 6, 0, 1 };
    size_t n = 0;
    int t;
    memcpy(out, hd, sizeof hd);
    n = sizeof hd;
    out[n++] = 0;
    out[n++] = (unsigned char)nt;
    out[n++] = 0x01;
    out[n++] = 0xE0;
    for (t = 0; t < nt; t++) {
        memcpy(out + n, "MTrk", 4);
        out[n + 4] = out[n + 5] = 0;
        out[n + 6] = (unsigned char)(lens[t] >> 8);
        out[n + 7] = (unsigned char)lens[t];
        memcpy(out + n + 8, tracks[t], lens[t]);
        n += 8 + lens[t];
    }
    return n;
}

static void a_melody_and_chords_across_tracks(void)
{
    /* track 1: 60 at 0 (with 64: a chord), 67 at 128, 59 at 256 (running
     * status, a note-off as velocity 0 between), meta and sysex events */
    static const unsigned char t1[] = { 0x00, 0x90, 60, 64, 0x00, 64, 70, 0x81, 0x00, 67, 1, 0x00, 67, 0,
                                        0x00, 0xFF, 0x03, 0x01, 'x', 0x00, 0xF0, 0x01, 0xF7, 0x81, 0x00, 0x90, 59, 9,
                                        0x00, 0xFF, 0x2F, 0x00 };
    /* track 2: 48 at 128 (below 67: the onset's lowest note), 50 at 300 */
    static const unsigned char t2[] = { 0x81, 0x00, 0x91, 48, 50, 0x81, 0x2C, 0x91, 50, 50, 0x00, 0xFF, 0x2F, 0x00 };
    const unsigned char *tr[] = { t1, t2 };
    const size_t lens[] = { sizeof t1, sizeof t2 };
    unsigned char f[256];
    const size_t n = file(f, tr, lens, 2);
    sh_work w;
    sh_error err;
    memset(&w, 0, sizeof w);
    CHECK(sh_midi_features(&mid, (const char *)f, n, "a.mid", &w, &err) == SH_OK);
    /* onsets 0 (60), 128 (48), 256 (59), 300 (50) */
    CHECK(w.n_ids == 3);
    CHECK_EQ_U64(w.ids[0], tok("i-12"));
    CHECK_EQ_U64(w.ids[1], tok("i11"));
    CHECK_EQ_U64(w.ids[2], tok("i-9"));
    sh_work_free(&w);
}

static void errors_name_the_file_and_the_byte(void)
{
    static const unsigned char bad_meta[] = { 0x00, 0xFF, 0x03, 0x80 };
    static const unsigned char no_status[] = { 0x00, 0x40, 0x40 };
    const unsigned char *tr[1];
    size_t lens[1];
    unsigned char f[64];
    size_t n;
    sh_work w;
    sh_error err;
    memset(&w, 0, sizeof w);
    CHECK(sh_midi_features(&mid, "GIF89a not midi", 15, "x.gif", &w, &err) == SH_EFORMAT);
    CHECK(strcmp(err.msg, "x.gif: not a MIDI file (no MThd header at byte 0)") == 0);
    tr[0] = bad_meta;
    lens[0] = sizeof bad_meta;
    n = file(f, tr, lens, 1);
    CHECK(sh_midi_features(&mid, (const char *)f, n, NULL, &w, &err) == SH_EFORMAT);
    CHECK(strcmp(err.msg, "MIDI data: bad meta event near byte 26") == 0);
    tr[0] = no_status;
    lens[0] = sizeof no_status;
    n = file(f, tr, lens, 1);
    CHECK(sh_midi_features(&mid, (const char *)f, n, "r.mid", &w, &err) == SH_EFORMAT);
    CHECK(strcmp(err.msg, "r.mid: running status without a status byte at byte 23") == 0);
    CHECK(sh_midi_features(&mid, (const char *)f, 20, "t.mid", &w, &err) == SH_EFORMAT);
    CHECK(strcmp(err.msg, "t.mid: truncated before a track header at byte 14") == 0);
    sh_work_free(&w);
}

/* Every prefix, and every byte set to each value: no read past the input
 * (ASan), and a result either way. */
static void every_prefix_and_byte_change_is_read_within_bounds(void)
{
    static const unsigned char t1[] = { 0x00, 0x90, 60, 64, 0x00, 64, 70, 0x81, 0x00, 67, 1, 0x00, 0xFF, 0x03, 0x02,
                                        'a', 'b', 0x00, 0xF0, 0x02, 0x01, 0xF7, 0x00, 0xC0, 5, 0x00, 0xFF, 0x2F, 0x00 };
    const unsigned char *tr[] = { t1 };
    const size_t lens[] = { sizeof t1 };
    unsigned char f[128];
    const size_t n = file(f, tr, lens, 1);
    size_t i, ok = 0, bad = 0;
    sh_work w;
    sh_error err;
    memset(&w, 0, sizeof w);
    for (i = 0; i <= n; i++) {
        char *p = (char *)malloc(i ? i : 1); /* exactly i bytes: ASan sees a read past them */
        memcpy(p, f, i);
        if (sh_midi_features(&mid, p, i, "p.mid", &w, &err) == SH_OK) ok++; else bad++;
        free(p);
    }
    for (i = 0; i < n; i++) {
        int b;
        for (b = 0; b < 256; b++) {
            char *p = (char *)malloc(n);
            memcpy(p, f, n);
            p[i] = (char)b;
            if (sh_midi_features(&mid, p, n, "b.mid", &w, &err) == SH_OK) ok++; else bad++;
            free(p);
        }
    }
    CHECK(ok > 0 && bad > 0);
    sh_work_free(&w);
}

int main(void)
{
    make();
    RUN(a_melody_and_chords_across_tracks);
    RUN(errors_name_the_file_and_the_byte);
    RUN(every_prefix_and_byte_change_is_read_within_bounds);
    return TEST_END();
}
