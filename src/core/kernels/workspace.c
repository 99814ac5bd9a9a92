/* workspace.c: per-thread reusable memory (see workspace.h). */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "attnscope/kernels/workspace.h"

static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static _Thread_local struct attn_workspace *mine;

static void
free_workspace(void *p)
{
    struct attn_workspace *ws = p;

    workspace_release(ws);
    free(ws);
}

/* The main thread ends with exit(), which runs no key destructors. */
static void
free_main(void)
{
    if (mine != NULL) {
        pthread_setspecific(key, NULL);
        free_workspace(mine);
        mine = NULL;
    }
}

static void
make_key(void)
{
    pthread_key_create(&key, free_workspace);
    atexit(free_main);
}

struct attn_workspace *
workspace_thread(void)
{
    if (mine == NULL) {
        pthread_once(&key_once, make_key);
        mine = calloc(1, sizeof *mine);
        if (mine != NULL)
            pthread_setspecific(key, mine);
    }
    return mine;
}

/* At least floats floats in *buf (*have of them), grown as needed; NULL when memory runs out. */
static float *
grown(float **buf, size_t *have, size_t floats)
{
    if (floats > *have) {
        float *bigger = realloc(*buf, floats * sizeof(float));
        if (bigger == NULL)
            return NULL;
        *buf = bigger;
        *have = floats;
    }
    return *buf;
}

float *
workspace_widened(struct attn_workspace *ws, size_t floats)
{
    return ws != NULL ? grown(&ws->widened, &ws->widened_floats, floats) : NULL;
}

float *
workspace_scratch(struct attn_workspace *ws, size_t floats)
{
    return ws != NULL ? grown(&ws->scratch, &ws->scratch_floats, floats) : NULL;
}

void *
workspace_arena_get(struct attn_workspace *ws, size_t bytes, size_t *got)
{
    void *arena = NULL;

    if (ws != NULL && ws->spare != NULL && ws->spare_bytes >= bytes &&
        ws->spare_bytes <= 2 * bytes + (64u << 20)) {
        arena = ws->spare;
        *got = ws->spare_bytes;
        ws->spare = NULL;
        ws->spare_bytes = 0;
        return arena;
    }
    /* Large arenas ask for 2 MiB pages: far fewer faults. */
    if (posix_memalign(&arena, bytes >= (4u << 20) ? (2u << 20) : 64, bytes > 0 ? bytes : 64) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (bytes >= (4u << 20))
        madvise(arena, bytes, MADV_HUGEPAGE);
#endif
    *got = bytes;
    return arena;
}

void
workspace_arena_put(struct attn_workspace *ws, void *arena, size_t bytes)
{
    if (arena == NULL)
        return;
    if (ws != NULL && (ws->spare == NULL || ws->spare_bytes < bytes)) {
        free(ws->spare);
        ws->spare = arena;
        ws->spare_bytes = bytes;
        return;
    }
    free(arena);
}

void
workspace_release(struct attn_workspace *ws)
{
    if (ws == NULL)
        return;
    free(ws->scratch);
    free(ws->widened);
    free(ws->spare);
    memset(ws, 0, sizeof *ws);
}
