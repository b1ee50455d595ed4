/* A minimal unit-test harness for the C core: each test_*.c is one executable
 * whose main() calls RUN(fn) for every test function and returns TEST_END().
 * Every CHECK counts as one assertion; the closing line "N passed, N failed"
 * counts test functions (a function fails if any of its checks fails), so
 * .ci/run can add the C tests to the busted specs. */
#ifndef SHINGLE_TEST_H
#define SHINGLE_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int test_passed_, test_failed_, test_cur_failed_;

#define CHECK(cond) do { if (!(cond)) { test_cur_failed_ = 1; \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)

#define CHECK_EQ_U64(a, b) do { uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b); \
    if (a_ != b_) { test_cur_failed_ = 1; fprintf(stderr, \
    "%s:%d: %s == %s failed: 0x%016" PRIx64 " != 0x%016" PRIx64 "\n", \
    __FILE__, __LINE__, #a, #b, a_, b_); } } while (0)

#define CHECK_NEAR(a, b, tol) do { double a_ = (a), b_ = (b); \
    if (!(a_ - b_ <= (tol) && b_ - a_ <= (tol))) { test_cur_failed_ = 1; fprintf(stderr, \
    "%s:%d: %s ~= %s failed: %.9g vs %.9g\n", __FILE__, __LINE__, #a, #b, a_, b_); } } while (0)

#define RUN(fn) do { test_cur_failed_ = 0; fn(); \
    if (test_cur_failed_) { test_failed_++; fprintf(stderr, "FAIL %s\n", #fn); } \
    else test_passed_++; } while (0)

#define TEST_END() (printf("%d passed, %d failed\n", test_passed_, test_failed_), \
    test_failed_ ? 1 : 0)

#endif
