/* text.c: UTF-8 and display widths (see text.h). */
#include "config.h"

#include <string.h>

#include "render/text.h"

int
text_decode(const char *s, uint32_t *cp)
{
    const unsigned char *p = (const unsigned char *)s;
    int len;
    uint32_t c;

    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    }
    if (p[0] >= 0xC2 && p[0] <= 0xDF) {
        len = 2;
        c = p[0] & 0x1Fu;
    } else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
        len = 3;
        c = p[0] & 0x0Fu;
    } else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
        len = 4;
        c = p[0] & 0x07u;
    } else {
        *cp = 0xFFFD;
        return 1;
    }
    for (int i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            *cp = 0xFFFD;
            return 1;
        }
        c = (c << 6) | (p[i] & 0x3Fu);
    }
    *cp = c;
    return len;
}

struct range {
    uint32_t lo;
    uint32_t hi;
};

static const struct range zero_width[] = {
    { 0x0300, 0x036F }, { 0x0483, 0x0489 }, { 0x0591, 0x05BD }, { 0x0610, 0x061A },
    { 0x064B, 0x065F }, { 0x0E31, 0x0E31 }, { 0x0E34, 0x0E3A }, { 0x200B, 0x200F },
    { 0x20D0, 0x20FF }, { 0xFE00, 0xFE0F }, { 0xFE20, 0xFE2F },
};

static const struct range wide[] = {
    { 0x1100, 0x115F },   { 0x2E80, 0x303E },   { 0x3041, 0x33FF },   { 0x3400, 0x4DBF },
    { 0x4E00, 0x9FFF },   { 0xA000, 0xA4CF },   { 0xAC00, 0xD7A3 },   { 0xF900, 0xFAFF },
    { 0xFE30, 0xFE4F },   { 0xFF00, 0xFF60 },   { 0xFFE0, 0xFFE6 },   { 0x1F300, 0x1F64F },
    { 0x1F900, 0x1F9FF }, { 0x20000, 0x2FFFD }, { 0x30000, 0x3FFFD },
};

static int
in_ranges(uint32_t cp, const struct range *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cp >= r[i].lo && cp <= r[i].hi)
            return 1;
    return 0;
}

int
text_char_width(uint32_t cp)
{
    if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
        return 0;
    if (in_ranges(cp, zero_width, sizeof zero_width / sizeof zero_width[0]))
        return 0;
    if (in_ranges(cp, wide, sizeof wide / sizeof wide[0]))
        return 2;
    return 1;
}

int
text_width(const char *s)
{
    int w = 0;

    while (*s) {
        uint32_t cp;
        s += text_decode(s, &cp);
        w += text_char_width(cp);
    }
    return w;
}

int
text_encode(uint32_t cp, char *buf)
{
    if (cp < 0x80) {
        buf[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        buf[0] = (char)(0xC0 | (cp >> 6));
        buf[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        buf[0] = (char)(0xE0 | (cp >> 12));
        buf[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        buf[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    buf[0] = (char)(0xF0 | (cp >> 18));
    buf[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    buf[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    buf[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

size_t
text_wrap(const char *s, int width, size_t *next)
{
    size_t pos = 0;
    size_t last_space = 0;
    int have_space = 0;
    int cols = 0;

    while (s[pos] != '\0' && s[pos] != '\n') {
        uint32_t cp;
        int len = text_decode(s + pos, &cp);
        int w = text_char_width(cp);
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
        pos = (size_t)text_decode(s, &cp); /* too narrow for one character: take it anyway */
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
