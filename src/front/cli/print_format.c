/* print_format.c: --format's names (see print_format.h). */
#include "config.h"

#include <string.h>

#include "front/cli/print_format.h"

int
print_format_parse(const char *name, enum print_format *f)
{
    static const char *const names[] = { "text", "csv", "markdown", "latex" };

    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++) {
        if (strcmp(name, names[i]) == 0) {
            *f = (enum print_format)i;
            return 0;
        }
    }
    return -1;
}
