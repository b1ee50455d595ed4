/* Tokens of source code: the "code" rule set of shingle.rules (its Lua
 * function rules.code_tokens is the reference this equals token for token),
 * after "Syntactic Clustering of the Web", "Intellectual property and
 * plagiarism": identifiers, numbers and string literals are normalised to
 * ID, NUM and STR and comments dropped, so that renaming variables,
 * changing literals or reformatting does not hide copied code. Keywords of
 * C, Lua, Python and Java stay themselves, and each operator of up to three
 * characters is one token.
 *
 * Reentrant; all state is in the caller's sh_tokens. */
#ifndef SHINGLE_CODETOK_H
#define SHINGLE_CODETOK_H

#include <stddef.h>
#include "canon.h"

/* Tokenize in[0..n) into out (its previous contents are discarded), with the
 * source span of each token; level (resolved, not SH_SIMD_AUTO) chooses the
 * scanner, every level giving the same tokens. Any bytes are accepted
 * (bytes >= 0x80 are identifier characters, as UTF-8 letters are; control
 * characters separate). Errors: SH_ENOMEM. */
sh_status sh_code_tokenize(const char *in, size_t n, sh_simd level, sh_tokens *out, sh_error *err);

#endif
