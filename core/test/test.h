/* A minimal unit-test harness for the C core: each test_*.c is one executable
 * whose main() calls RUN(fn) for every test function and returns TEST_END().
 * Every CHECK counts as one assertion; the closing line "N passed, N failed"
 * counts test functions (a function fails if any of its checks fails, or if
 * it made no check at all: a test that asserts nothing cannot fail, so it is
 * counted as failed), so .ci/run can add the C tests to the busted specs. */
#ifndef SHINGLE_TEST_H
#define SHINGLE_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int test_passed_, test_failed_, test_cur_failed_;
static long test_cur_checks_;

#define TEST_FAIL_AT_(...) do { test_cur_failed_ = 1; fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } while (0)

#define CHECK(cond) do { test_cur_checks_++; if (!(cond)) \
    TEST_FAIL_AT_("CHECK failed: %s", #cond); } while (0)

#define CHECK_EQ_U64(a, b) do { uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b); test_cur_checks_++; \
    if (a_ != b_) TEST_FAIL_AT_("%s == %s failed: 0x%016" PRIx64 " != 0x%016" PRIx64, #a, #b, a_, b_); } while (0)

#define CHECK_NEAR(a, b, tol) do { double a_ = (a), b_ = (b); test_cur_checks_++; \
    if (!(a_ - b_ <= (tol) && b_ - a_ <= (tol))) \
        TEST_FAIL_AT_("%s ~= %s failed: %.9g vs %.9g", #a, #b, a_, b_); } while (0)

#define RUN(fn) do { test_cur_failed_ = 0; test_cur_checks_ = 0; fn(); \
    if (!test_cur_failed_ && test_cur_checks_ == 0) { test_cur_failed_ = 1; \
        fprintf(stderr, "%s made no check: a test that asserts nothing cannot fail\n", #fn); } \
    if (test_cur_failed_) { test_failed_++; fprintf(stderr, "FAIL %s\n", #fn); } \
    else test_passed_++; } while (0)

#define TEST_END() (printf("%d passed, %d failed\n", test_passed_, test_failed_), \
    test_failed_ ? 1 : 0)

#endif
