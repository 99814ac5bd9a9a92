/* families.c: the model families attnscope has (see family.h). */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "attnscope/pipeline/family.h"

const struct family *const families[] = { &family_book, &family_model, NULL };

const struct family *
family_find(const char *name)
{
    for (size_t i = 0; families[i] != NULL; i++)
        if (strcmp(families[i]->name, name) == 0)
            return families[i];
    return NULL;
}
