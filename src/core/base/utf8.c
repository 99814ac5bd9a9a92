/* utf8.c: UTF-8 and display widths (see utf8.h). */
#include "config.h"

#include <string.h>

#include "attnscope/base/utf8.h"

int
utf8_length(const unsigned char *s, size_t avail)
{
    unsigned char c;
    int len;
    uint32_t min;
    uint32_t cp;

    if (avail == 0)
        return 0;
    c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        cp = c & 0x1Fu;
        min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        cp = c & 0x0Fu;
        min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        cp = c & 0x07u;
        min = 0x10000;
    } else {
        return 0;
    }
    if ((size_t)len > avail)
        return 0;
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    /* Overlong forms, UTF-16 surrogates and code points past U+10FFFF. */
    if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return 0;
    return len;
}

int
utf8_decode(const char *s, uint32_t *cp)
{
    const unsigned char *p = (const unsigned char *)s;
    int len;

    if (p[0] < 0x80) {
        *cp = p[0];
        return p[0] != '\0';
    }
    len = utf8_length(p, strnlen(s, 4));
    if (len == 0) {
        *cp = 0xFFFD;
        return 1;
    }
    *cp = len == 1 ? p[0] : p[0] & (0x7Fu >> len);
    for (int i = 1; i < len; i++)
        *cp = (*cp << 6) | (p[i] & 0x3Fu);
    return len;
}

int
utf8_encode(uint32_t cp, char *buf)
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
utf8_prev(const char *s, size_t pos)
{
    if (pos == 0)
        return 0;
    pos--;
    while (pos > 0 && ((unsigned char)s[pos] & 0xC0) == 0x80)
        pos--;
    return pos;
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

/* Whether cp is in one of n sorted, disjoint ranges (a binary search). */
static int
in_ranges(uint32_t cp, const struct range *r, size_t n)
{
    size_t lo = 0;
    size_t hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < r[mid].lo)
            hi = mid;
        else if (cp > r[mid].hi)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

int
utf8_char_width(uint32_t cp)
{
    if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
        return 0;
    if (cp < 0x300) /* Latin: below every zero-width and wide range, most of any screen */
        return 1;
    if (in_ranges(cp, zero_width, sizeof zero_width / sizeof zero_width[0]))
        return 0;
    if (in_ranges(cp, wide, sizeof wide / sizeof wide[0]))
        return 2;
    return 1;
}

int
utf8_width(const char *s)
{
    int w = 0;
    int n;
    uint32_t cp;

    while ((n = utf8_decode(s, &cp)) > 0) {
        s += n;
        w += utf8_char_width(cp);
    }
    return w;
}

size_t
utf8_prefix(const char *s, int width, int *cols)
{
    size_t pos = 0;
    int used = 0;
    int n;
    uint32_t cp;

    while ((n = utf8_decode(s + pos, &cp)) > 0) {
        int w = utf8_char_width(cp);
        if (used + w > width)
            break;
        used += w;
        pos += (size_t)n;
    }
    if (cols != NULL)
        *cols = used;
    return pos;
}

int
utf8_control_length(const unsigned char *s, size_t avail)
{
    if (avail >= 1 && (s[0] < 0x20 || s[0] == 0x7F))
        return 1;
    if (avail >= 2 && s[0] == 0xC2 && s[1] >= 0x80 && s[1] <= 0x9F)
        return 2;
    /* Bidirectional formatting: U+061C, U+200E/F, U+202A-E and U+2066-9 reorder what follows. */
    if (avail >= 2 && s[0] == 0xD8 && s[1] == 0x9C)
        return 2;
    if (avail >= 3 && s[0] == 0xE2 && s[1] == 0x80 &&
        (s[2] == 0x8E || s[2] == 0x8F || (s[2] >= 0xAA && s[2] <= 0xAE)))
        return 3;
    if (avail >= 3 && s[0] == 0xE2 && s[1] == 0x81 && s[2] >= 0xA6 && s[2] <= 0xA9)
        return 3;
    return 0;
}

size_t
utf8_text_span(const unsigned char *s, size_t len, const char *allowed)
{
    size_t i = 0;

    while (i < len) {
        int n = utf8_length(s + i, len - i);
        if (n == 0)
            break;
        if (utf8_control_length(s + i, len - i) > 0 && (s[i] == '\0' || strchr(allowed, s[i]) == NULL))
            break;
        i += (size_t)n;
    }
    return i;
}
