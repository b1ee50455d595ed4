/* The decision rule of phase 4 ("Syntactic Clustering of the Web", "The
 * clustering algorithm": "decide if the document pair exceeds our
 * threshold"), of the alternatives to it and of the index: a pair is linked
 * when its resemblance, its containment in either direction, either of them
 * or both reach the threshold. One test, so that the pipeline and the index
 * link exactly the same pairs. */
#ifndef SHINGLE_POLICY_H
#define SHINGLE_POLICY_H

#include "sketch.h"

typedef enum sh_policy {
    SH_POLICY_RESEMBLANCE = 0,  /* r(A, B) >= t */
    SH_POLICY_CONTAINMENT = 1,  /* max(c(A, B), c(B, A)) >= t */
    SH_POLICY_EITHER = 2,       /* either of the two */
    SH_POLICY_BOTH = 3          /* both */
} sh_policy;

#define SH_POLICIES 4

/* 1 if the scores in e (estimated or exact) pass policy p at threshold t. */
int sh_policy_passes(sh_policy p, double t, const sh_estimate *e);

/* The policy's name ("resemblance", "containment", "either", "both"; "?"
 * for a value out of range). */
const char *sh_policy_name(sh_policy p);

/* The policy called name, into *p: 1, or 0 when no policy has that name. */
int sh_policy_parse(const char *name, sh_policy *p);

#endif
