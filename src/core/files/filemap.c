/* filemap.c: a model's file mapped from the page cache, a shrinking file caught (see filemap.h). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "attnscope/files/filemap.h"

/* The mappings open at once (a model's shards; more are read instead of mapped). */
#define FILEMAP_SLOTS 256

/*
 * What the signal handler reads: each mapping's range and its damage.  A
 * slot is filled before its base is published and emptied by clearing its
 * base first, so the handler never sees a half-made one.
 */
struct slot {
    volatile uintptr_t base;
    volatile size_t len;
    volatile sig_atomic_t damaged;
};

static struct slot slots[FILEMAP_SLOTS];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction before; /* the SIGBUS action in place before ours */
static bool installed;

struct filemap {
    unsigned char *data;
    size_t len;
    int slot;
    char *path;
};

/* Puts the previous action back for a fault not ours: re-run, the read kills as it would have. */
static void
not_ours(int sig, siginfo_t *info, void *uc)
{
    if ((before.sa_flags & SA_SIGINFO) && before.sa_sigaction != NULL) {
        before.sa_sigaction(sig, info, uc);
        return;
    }
    if (before.sa_handler != SIG_DFL && before.sa_handler != SIG_IGN &&
        before.sa_handler != NULL) {
        before.sa_handler(sig);
        return;
    }
    signal(sig, SIG_DFL);
}

bool
filemap_repair(const void *addr)
{
    const uintptr_t at = (uintptr_t)addr;
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

    for (int i = 0; i < FILEMAP_SLOTS; i++) {
        const uintptr_t base = slots[i].base;
        const size_t len = slots[i].len;
        if (base != 0 && at >= base && at - base < len) {
            const uintptr_t from = at / page * page;
            /* zeros from the page that failed to the mapping's end: the reads go on */
            if (mmap((void *)from, base + len - from, PROT_READ | PROT_WRITE,
                     MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
                return false;
            slots[i].damaged = 1;
            return true;
        }
    }
    return false;
}

static void
on_sigbus(int sig, siginfo_t *info, void *uc)
{
    if (!filemap_repair(info->si_addr))
        not_ours(sig, info, uc);
}

/* Installs the handler once (the slots lock held). */
static int
install(void)
{
    struct sigaction sa;

    if (installed)
        return 0;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &before) != 0)
        return -1;
    installed = true;
    return 0;
}

struct filemap *
filemap_open(int fd, const char *path, size_t len, struct attn_error *err)
{
    struct filemap *fm = calloc(1, sizeof *fm);
    int slot = -1;
    void *data;

    if (fm == NULL || (fm->path = strdup(path)) == NULL) {
        free(fm);
        attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    if (len == 0) {
        filemap_close(fm);
        attn_fail(err, ATTN_EPARSE, "%s: empty, nothing to map", path);
        return NULL;
    }
    /* (no reserve: the pages are the file's, and a copy is made only of a page changed) */
    data = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, fd, 0);
    if (data == MAP_FAILED) {
        attn_fail(err, ATTN_EIO, "%s: cannot be mapped: %s", path, strerror(errno));
        filemap_close(fm);
        return NULL;
    }
    fm->data = data;
    fm->len = len;
    pthread_mutex_lock(&slots_lock);
    for (int i = 0; i < FILEMAP_SLOTS && slot < 0; i++)
        if (slots[i].base == 0)
            slot = i;
    if (slot >= 0 && install() == 0) {
        slots[slot].len = len;
        slots[slot].damaged = 0;
        __atomic_store_n(&slots[slot].base, (uintptr_t)data, __ATOMIC_RELEASE);
        fm->slot = slot;
    } else
        slot = -1;
    pthread_mutex_unlock(&slots_lock);
    if (slot < 0) {
        attn_fail(err, ATTN_ELIMIT, "%s: too many files mapped at once", path);
        fm->slot = -1;
        filemap_close(fm);
        return NULL;
    }
    return fm;
}

void
filemap_close(struct filemap *fm)
{
    if (fm == NULL)
        return;
    if (fm->data != NULL && fm->slot >= 0) {
        pthread_mutex_lock(&slots_lock);
        __atomic_store_n(&slots[fm->slot].base, (uintptr_t)0, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&slots_lock);
    }
    if (fm->data != NULL)
        munmap(fm->data, fm->len);
    free(fm->path);
    free(fm);
}

unsigned char *
filemap_data(const struct filemap *fm)
{
    return fm->data;
}

size_t
filemap_len(const struct filemap *fm)
{
    return fm->len;
}

bool
filemap_holds(const struct filemap *fm, const void *p, size_t bytes)
{
    const uintptr_t base = (uintptr_t)fm->data, at = (uintptr_t)p;

    return at >= base && at - base <= fm->len && bytes <= fm->len - (at - base);
}

bool
filemap_damaged(const struct filemap *fm)
{
    return fm->slot >= 0 && slots[fm->slot].damaged != 0;
}

enum attn_status
filemap_check(const struct filemap *fm, struct attn_error *err)
{
    if (!filemap_damaged(fm))
        return ATTN_OK;
    return attn_fail(err, ATTN_EIO,
                     "%s: the file became shorter (truncated or replaced) while attnscope was "
                     "reading its weights from it; what was computed from it is dropped: "
                     "open the model again",
                     fm->path);
}
