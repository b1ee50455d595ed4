/* MIDI files as melodies, for sketching music as a token sequence: the MIDI
 * extractor of lua/shingle/extractors/midi.lua, whose Lua function is the
 * reference this equals token for token and error for error. The tokens
 * are the intervals between successive note onsets ("i5", "i-3": a
 * transposed copy gives the same sequence); note-on events of all tracks of
 * a Standard MIDI File (formats 0 and 1) are merged by time, and a chord
 * counts from its lowest note. */
#ifndef SHINGLE_MIDI_H
#define SHINGLE_MIDI_H

#include <stddef.h>
#include <stdint.h>
#include "shingler.h"

/* The token ids of the 511 intervals "i-255" .. "i255" under one shingler;
 * immutable once made (threads may share one). */
typedef struct sh_midi {
    const sh_shingler *sh;
    uint64_t id[511]; /* id[255 + d]: the id of the token "i<d>" */
} sh_midi;

void sh_midi_init(sh_midi *m, const sh_shingler *sh);

/* The token ids of the intervals of the MIDI file in[0..n) into
 * w->ids[0..w->n_ids) (ready for sh_shingle_ids); w->vals holds the notes
 * meanwhile. Errors (SH_EFORMAT), their messages starting with path (or
 * "MIDI data") as the Lua extractor's: not a MIDI file, a truncated or
 * missing track header, a bad delta time, meta or sysex length, running
 * status without a status byte; also for note times past 2^55 ticks (which
 * only a file over a gigabyte can reach; the Lua extractor takes them);
 * SH_ENOMEM. */
sh_status sh_midi_features(const sh_midi *m, const char *in, size_t n, const char *path, sh_work *w, sh_error *err);

/* The MIDI extractor for the thread pool (pool.h's sh_extractor, its arg an
 * sh_midi): a sequence, to be shingled. */
sh_status sh_midi_extract(void *midi, const char *data, size_t len, const char *path, sh_work *w, int *features,
                          sh_error *err);

#endif
