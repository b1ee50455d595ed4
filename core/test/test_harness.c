/* The test harness itself (test.h): a test function that fails a check, or
 * that makes no check at all, is counted as failed; one whose checks all hold
 * passes. The inner runs' messages go to /dev/null so the log shows no
 * failure that is expected. */
#include "test.h"

#include <fcntl.h>
#include <unistd.h>

static void makes_no_check(void) {}
static void fails_a_check(void) { CHECK(1 + 1 == 3); }
static void passes_its_checks(void) { CHECK(1 + 1 == 2); CHECK_EQ_U64(2, 2); CHECK_NEAR(0.5, 0.5, 0); }

static void counts_a_test_without_checks_as_failed(void)
{
    int passed = test_passed_, failed = test_failed_, err = dup(2), null = open("/dev/null", O_WRONLY);
    int new_failed, new_passed;
    fflush(stderr);
    if (null >= 0) dup2(null, 2);
    RUN(makes_no_check);
    RUN(fails_a_check);
    RUN(passes_its_checks);
    fflush(stderr);
    if (err >= 0) dup2(err, 2);
    if (null >= 0) close(null);
    if (err >= 0) close(err);
    new_failed = test_failed_ - failed;
    new_passed = test_passed_ - passed;
    test_passed_ = passed;  /* the inner runs are not tests of the suite */
    test_failed_ = failed;
    test_cur_failed_ = 0;
    CHECK(new_failed == 2);
    CHECK(new_passed == 1);
}

int main(void)
{
    RUN(counts_a_test_without_checks_as_failed);
    return TEST_END();
}
