/*
 * replay.c: runs a fuzz harness over saved inputs, without libFuzzer.
 *
 *     replay-csv FILE|DIR...
 *
 * Every file given, and every file in every folder given, is read and
 * passed to LLVMFuzzerTestOneInput() once.  A crash or a sanitizer report
 * fails the run; the name of the input is printed before it is tried, so
 * the log says which one.
 */
#include "config.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fuzz.h"

static int
replay_file(const char *path, int verbose)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t len = 0;
    size_t cap = 0;
    size_t n;

    if (f == NULL) {
        fprintf(stderr, "replay: %s: cannot open\n", path);
        return -1;
    }
    do {
        if (len == cap) {
            unsigned char *grown;
            cap = cap ? cap * 2 : 4096;
            grown = realloc(buf, cap);
            if (grown == NULL) {
                fprintf(stderr, "replay: %s: out of memory\n", path);
                free(buf);
                fclose(f);
                return -1;
            }
            buf = grown;
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    fclose(f);
    if (verbose)
        fprintf(stderr, "replay: %s\n", path);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int
compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays every regular file in dir, in name order; returns how many or -1. */
static int
replay_dir(const char *dir, int verbose)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    int count = 0;
    int cap = 0;
    int done = 0;

    if (d == NULL) {
        fprintf(stderr, "replay: %s: cannot open the folder\n", dir);
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (count == cap) {
            char **grown;
            cap = cap ? cap * 2 : 64;
            grown = realloc(names, (size_t)cap * sizeof *names);
            if (grown == NULL)
                break;
            names = grown;
        }
        names[count] = malloc(strlen(dir) + strlen(e->d_name) + 2);
        if (names[count] == NULL)
            break;
        sprintf(names[count], "%s/%s", dir, e->d_name);
        count++;
    }
    closedir(d);
    qsort(names, (size_t)count, sizeof *names, compare_names);
    for (int i = 0; i < count; i++) {
        if (done >= 0 && replay_file(names[i], verbose) == 0)
            done++;
        else
            done = -1;
        free(names[i]);
    }
    free(names);
    return done;
}

int
main(int argc, char **argv)
{
    int total = 0;
    int verbose = getenv("REPLAY_VERBOSE") != NULL;

    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        int n;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: no such file or folder\n", argv[i]);
            return 1;
        }
        n = S_ISDIR(st.st_mode) ? replay_dir(argv[i], verbose) : replay_file(argv[i], verbose) + 1;
        if (n < 0)
            return 1;
        total += n;
    }
    printf("%s: replayed %d inputs\n", argv[0], total);
    return 0;
}
