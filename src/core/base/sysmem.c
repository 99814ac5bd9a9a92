/* sysmem.c: the machine's memory, and what is available of it (see sysmem.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "attnscope/base/sysmem.h"

size_t
sysmem_total(void)
{
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long size = sysconf(_SC_PAGESIZE);

    return pages > 0 && size > 0 ? (size_t)pages * (size_t)size : 0;
}

/* The number at the start of a small file (a cgroup's memory.max: "max" is none), or 0. */
static unsigned long long
file_number(const char *path)
{
    FILE *f = fopen(path, "r");
    unsigned long long v = 0;

    if (f != NULL) {
        if (fscanf(f, "%llu", &v) != 1)
            v = 0;
        fclose(f);
    }
    return v;
}

/* What this process's cgroup (v2) may still take: memory.max - memory.current, or 0 (no limit). */
static size_t
cgroup_room(void)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    char line[4096];
    char path[4200];
    size_t room = 0;

    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        unsigned long long max, now;
        if (strncmp(line, "0::", 3) != 0)
            continue;
        line[strcspn(line, "\n")] = '\0';
        snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", line + 3);
        max = file_number(path);
        snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.current", line + 3);
        now = file_number(path);
        if (max > 0)
            room = max > now ? (size_t)(max - now) : 1;
        break;
    }
    if (f != NULL)
        fclose(f);
    return room;
}

size_t
sysmem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    size_t avail = 0;
    size_t room;

    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        unsigned long long kib;
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
            avail = (size_t)kib * 1024;
            break;
        }
    }
    if (f != NULL)
        fclose(f);
    if (avail == 0)
        avail = sysmem_total();
    room = cgroup_room();
    return room > 0 && (avail == 0 || room < avail) ? room : avail;
}
