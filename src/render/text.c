/* text.c: word wrap and percentages (see text.h). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render/text.h"

size_t
text_wrap(const char *s, int width, size_t *next)
{
    size_t pos = 0;
    size_t last_space = 0;
    int have_space = 0;
    int cols = 0;

    while (s[pos] != '\0' && s[pos] != '\n') {
        uint32_t cp;
        int len = utf8_decode(s + pos, &cp);
        int w = utf8_char_width(cp);
        if (cols + w > width)
            break;
        if (cp == ' ') {
            last_space = pos;
            have_space = 1;
        }
        cols += w;
        pos += (size_t)len;
    }
    if (pos == 0 && s[0] != '\0' && s[0] != '\n') {
        uint32_t cp;
        pos = (size_t)utf8_decode(s, &cp); /* too narrow for one character: take it anyway */
        *next = pos;
    } else if (s[pos] != '\0' && s[pos] != '\n' && have_space) {
        *next = last_space;
        pos = last_space;
    } else {
        *next = pos;
    }
    if (s[*next] == '\n')
        (*next)++;
    while (s[*next] == ' ')
        (*next)++;
    return pos;
}

void
text_percent(char *out, size_t size, double p)
{
    const double pc = 100.0 * p;
    int digits = 0;

    if (pc > 0.0 && pc < 0.00005) { /* (would round to 0 at four decimals) */
        snprintf(out, size, "<0.0001%%");
        return;
    }
    while (pc > 0.0 && digits < 4 && pc < 0.95 * pow(10.0, -digits))
        digits++;
    snprintf(out, size, "%.*f%%", digits, pc);
}
