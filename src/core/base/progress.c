/* progress.c: the long computation under way (see progress.h). */
#include "config.h"

#include <stdatomic.h>
#include <stddef.h>

#include "attnscope/base/progress.h"

static _Atomic(const char *) what;
static atomic_long done;
static atomic_long total;
static atomic_int stop;

void
progress_begin(const char *name, long steps)
{
    atomic_store(&done, 0);
    atomic_store(&total, steps);
    atomic_store(&what, name);
}

void
progress_step(long steps)
{
    atomic_store(&done, steps);
}

void
progress_end(void)
{
    atomic_store(&what, NULL);
}

void
progress_reset(void)
{
    atomic_store(&what, NULL);
    atomic_store(&stop, 0);
}

void
progress_stop(void)
{
    atomic_store(&stop, 1);
}

bool
progress_stopped(void)
{
    return atomic_load_explicit(&stop, memory_order_relaxed) != 0;
}

const char *
progress_now(long *d, long *t)
{
    *d = atomic_load(&done);
    *t = atomic_load(&total);
    return atomic_load(&what);
}
