/* The one source of shingle's version: the C module exports it as
 * shingle.core._VERSION (the facade as shingle.version and shingle._VERSION),
 * `shingle --version` prints it, and a C program can test it at compile time.
 * Bump it here only; spec/version_spec.lua checks every place that shows it. */
#ifndef SHINGLE_VERSION_H
#define SHINGLE_VERSION_H

#define SH_VERSION_MAJOR 0
#define SH_VERSION_MINOR 1
#define SH_VERSION_PATCH 0
#define SH_VERSION_STRING "0.1.0"
/* one number that orders versions: major * 10000 + minor * 100 + patch */
#define SH_VERSION_NUMBER (SH_VERSION_MAJOR * 10000 + SH_VERSION_MINOR * 100 + SH_VERSION_PATCH)

#endif
