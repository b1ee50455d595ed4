/* Prints the binary interface of core/include/shingle.h as this compiler
 * lays it out: the value of every constant and the size and field offsets of
 * every public struct, one per line, in the form of core/include/shingle.abi
 * (the recorded ABI of the major version). spec/capi_spec.lua builds it
 * against the installed header with pkg-config and compares the two: a
 * changed value, size or offset is an ABI break, which needs a new major
 * version (docs/capi.md, "Stability"). */
#include <shingle.h>
#include <stddef.h>
#include <stdio.h>

#define CONST(name) printf("const %s %ld\n", #name, (long)(name))
#define SIZE(type) printf("size %s %zu\n", #type, sizeof(type))
#define FIELD(type, field) printf("field %s.%s %zu %zu\n", #type, #field, offsetof(type, field), sizeof(((type *)0)->field))

int main(void)
{
    CONST(SHINGLE_VERSION_MAJOR);
    CONST(SHINGLE_OK);
    CONST(SHINGLE_ENOMEM);
    CONST(SHINGLE_EINVAL);
    CONST(SHINGLE_EUTF8);
    CONST(SHINGLE_EFORMAT);
    CONST(SHINGLE_EMISMATCH);
    CONST(SHINGLE_EIO);
    CONST(SHINGLE_ENOTFOUND);
    CONST(SHINGLE_ERANGE);
    CONST(SHINGLE_EBUSY);
    CONST(SHINGLE_ELIMIT);
    CONST(SHINGLE_INDEX_READONLY);
    CONST(SHINGLE_INDEX_CREATE);
    CONST(SHINGLE_POLICY_RESEMBLANCE);
    CONST(SHINGLE_POLICY_CONTAINMENT);
    CONST(SHINGLE_POLICY_EITHER);
    CONST(SHINGLE_POLICY_BOTH);

    SIZE(shingle_estimate);
    FIELD(shingle_estimate, resemblance);
    FIELD(shingle_estimate, containment);
    FIELD(shingle_estimate, contained);
    FIELD(shingle_estimate, both);
    FIELD(shingle_estimate, sample);

    SIZE(shingle_hit);
    FIELD(shingle_hit, id);
    FIELD(shingle_hit, shared);
    FIELD(shingle_hit, resemblance);
    FIELD(shingle_hit, containment);
    FIELD(shingle_hit, contained);

    SIZE(shingle_document);
    FIELD(shingle_document, id);
    FIELD(shingle_document, cluster);
    FIELD(shingle_document, shingles);
    FIELD(shingle_document, tokens);
    FIELD(shingle_document, relation);
    FIELD(shingle_document, url_len);
    FIELD(shingle_document, sweep_len);

    SIZE(shingle_input);
    FIELD(shingle_input, url);
    FIELD(shingle_input, url_len);
    FIELD(shingle_input, text);
    FIELD(shingle_input, len);
    FIELD(shingle_input, html);

    SIZE(shingle_added);
    FIELD(shingle_added, id);
    FIELD(shingle_added, status);
    return 0;
}
