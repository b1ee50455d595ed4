#include "policy.h"

#include <string.h>

static const char *const names[SH_POLICIES] = { "resemblance", "containment", "either", "both" };

int sh_policy_passes(sh_policy p, double t, const sh_estimate *e)
{
    double c = e->contain_ab > e->contain_ba ? e->contain_ab : e->contain_ba;
    switch (p) {
    case SH_POLICY_RESEMBLANCE: return e->resemblance >= t;
    case SH_POLICY_CONTAINMENT: return c >= t;
    case SH_POLICY_EITHER: return e->resemblance >= t || c >= t;
    case SH_POLICY_BOTH: return e->resemblance >= t && c >= t;
    }
    return 0;
}

const char *sh_policy_name(sh_policy p)
{
    return (unsigned)p < SH_POLICIES ? names[p] : "?";
}

int sh_policy_parse(const char *name, sh_policy *p)
{
    int i;
    for (i = 0; i < SH_POLICIES; i++)
        if (strcmp(names[i], name) == 0) { *p = (sh_policy)i; return 1; }
    return 0;
}
