/*
 * check_digest.c: a file's SHA-256 (src/core/files/digest.c), the check
 * --verify makes of an Ollama blob against its name.  A file is hashed in
 * a streaming pass: --verify of a 2 GiB blob held 2,059 MiB (issue 48);
 * here 256 MiB is hashed under a limit of 64 MiB more than the process
 * holds.  The expected sums are sha256sum's: of "abc" (FIPS 180-2's
 * example), and of 268,435,456 zero bytes (`head -c 268435456 /dev/zero |
 * sha256sum`).
 */
#include "config.h"

#include <fcntl.h>
#include <sys/wait.h>

#include "attnscope/files/digest.h"
#include "testutil.h"

START_TEST(a_small_file_has_its_sum)
{
    char hex[65];
    char path[300];
    struct attn_error err;

    test_write_text(dir, "abc", "abc");
    snprintf(path, sizeof path, "%s/abc", dir);
    ck_assert_int_eq(digest_sha256_file(path, 16, hex, &err), ATTN_OK);
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ck_assert(digest_file_is(path, 16, hex));
    /* Past the limit given: refused, naming the file. */
    ck_assert_int_eq(digest_sha256_file(path, 2, hex, &err), ATTN_ELIMIT);
    ck_assert_msg(strstr(err.msg, path) != NULL, "%s", err.msg);
    /* A FIFO is said to be one, never waited on. */
    snprintf(path, sizeof path, "%s/fifo", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    ck_assert_int_ne(digest_sha256_file(path, 16, hex, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "is a FIFO, not a file") != NULL, "%s", err.msg);
}
END_TEST

START_TEST(a_large_file_is_hashed_in_bounded_memory)
{
    const off_t size = (off_t)256 << 20;
    char path[300];
    pid_t pid;
    int fd, status;

    snprintf(path, sizeof path, "%s/blob", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, size), 0); /* (sparse: zeros that take no disk) */
    close(fd);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        char hex[65];
        struct attn_error err;
#if !defined(__SANITIZE_ADDRESS__)
        /* (AddressSanitizer reserves terabytes of address space: RLIMIT_AS cannot be used) */
        struct rlimit small;
        small.rlim_cur = small.rlim_max = test_address_space() + ((rlim_t)64 << 20);
        if (setrlimit(RLIMIT_AS, &small) != 0)
            _exit(3);
#endif
        if (digest_sha256_file(path, SIZE_MAX, hex, &err) != ATTN_OK) {
            fprintf(stderr, "%s\n", err.msg);
            _exit(4);
        }
        _exit(strcmp(hex, "a6d72ac7690f53be6ae46ba88506bd97302a093f7108472bd9efc3cefda06484") == 0
                  ? 0
                  : 5);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %d",
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}
END_TEST

static Suite *
digest_suite(void)
{
    Suite *s = suite_create("digest");
    TCase *tc = tcase_create("sha256");

    tcase_add_checked_fixture(tc, test_tmpdir_setup, test_tmpdir_teardown);
    /* (a hang guard: 256 MiB hashed, under a loaded CI or the sanitizers) */
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_small_file_has_its_sum);
    tcase_add_test(tc, a_large_file_is_hashed_in_bounded_memory);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(digest_suite)
