/* print_format.c: --format's names, and a table printed in each format (see print_format.h, print.h). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attnscope/base/utf8.h"
#include "attnscope/files/csvio.h"
#include "front/cli/print.h"
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

void
print_label(FILE *out, const char *s, int width, int right)
{
    int w = utf8_width(s);
    int cut = w > width;
    int shown;
    size_t bytes = utf8_prefix(s, cut ? width - 1 : width, &shown);
    int pad = width - shown - cut;

    if (right)
        fprintf(out, "%*s", pad, "");
    fwrite(s, 1, bytes, out);
    if (cut)
        fputc('~', out);
    if (!right)
        fprintf(out, "%*s", pad, "");
}

static void
format_value(char *buf, size_t size, float v, int digits)
{
    if (isnan(v))
        snprintf(buf, size, "nan");
    else if (isinf(v))
        snprintf(buf, size, v < 0 ? "-inf" : "inf");
    else
        snprintf(buf, size, "%.*f", digits, (double)v);
}


static void
index_label(char *buf, size_t size, const char *const *names, const char *prefix, int i)
{
    if (names != NULL)
        snprintf(buf, size, "%s", names[i]);
    else
        snprintf(buf, size, "%s%d", prefix, i);
}

static void
print_text_table(FILE *out, const struct table *t, int digits)
{
    char buf[64];
    int label_w = 1;
    int col_w = 1;

    fprintf(out, "%s\n", t->title);
    for (int i = 0; i < t->m->rows; i++) {
        int w;
        index_label(buf, sizeof buf, t->rows, t->row_prefix, i);
        w = utf8_width(buf) + (t->mark != NULL && t->mark[i]);
        label_w = w > label_w ? w : label_w;
    }
    label_w = label_w > LABEL_MAX_WIDTH ? LABEL_MAX_WIDTH : label_w;
    for (int i = 0; i < t->m->rows; i++)
        for (int j = 0; j < t->m->cols; j++) {
            format_value(buf, sizeof buf, MAT_AT(t->m, i, j), digits);
            col_w = (int)strlen(buf) > col_w ? (int)strlen(buf) : col_w;
        }
    for (int j = 0; j < t->m->cols; j++) {
        int w;
        index_label(buf, sizeof buf, t->cols, t->col_prefix, j);
        w = utf8_width(buf);
        if (w > col_w)
            col_w = w > LABEL_MAX_WIDTH ? LABEL_MAX_WIDTH : w;
    }

    fprintf(out, "  %*s", label_w, "");
    for (int j = 0; j < t->m->cols; j++) {
        index_label(buf, sizeof buf, t->cols, t->col_prefix, j);
        fputs("  ", out);
        print_label(out, buf, col_w, 1);
    }
    fputc('\n', out);
    for (int i = 0; i < t->m->rows; i++) {
        index_label(buf, sizeof buf, t->rows, t->row_prefix, i);
        if (t->mark != NULL && t->mark[i])
            strncat(buf, "*", sizeof buf - strlen(buf) - 1);
        fputs("  ", out);
        print_label(out, buf, label_w, 0);
        for (int j = 0; j < t->m->cols; j++) {
            format_value(buf, sizeof buf, MAT_AT(t->m, i, j), digits);
            fprintf(out, "  %*s", col_w, buf);
        }
        fputc('\n', out);
    }
    fputc('\n', out);
}

/* A label as a CSV field, a Markdown cell or LaTeX text. */
static void
put_escaped(FILE *out, const char *s, enum print_format f)
{
    if (f == PRINT_CSV) {
        csvio_write_field(out, s);
        return;
    }
    for (; *s; s++) {
        if (f == PRINT_MARKDOWN && (*s == '|' || *s == '\\' || *s == '*' || *s == '_'))
            fputc('\\', out);
        if (f == PRINT_LATEX) {
            switch (*s) {
            case '&': case '%': case '$': case '#': case '_': case '{': case '}':
                fputc('\\', out);
                break;
            case '~':
                fputs("\\textasciitilde{}", out);
                continue;
            case '^':
                fputs("\\textasciicircum{}", out);
                continue;
            case '\\':
                fputs("\\textbackslash{}", out);
                continue;
            default:
                break;
            }
        }
        fputc(*s, out);
    }
}

static void
put_value(FILE *out, float v, int digits, enum print_format f)
{
    char buf[64];

    if (f == PRINT_LATEX && isinf(v))
        fputs(v < 0 ? "$-\\infty$" : "$\\infty$", out);
    else if (f == PRINT_LATEX && !isnan(v) && v < 0) {
        format_value(buf, sizeof buf, v, digits);
        fprintf(out, "$-$%s", buf + 1);
    } else {
        format_value(buf, sizeof buf, v, digits);
        fputs(buf, out);
    }
}

/* CSV, Markdown and LaTeX tables, for slides and handouts. */
static void
print_other_table(FILE *out, const struct table *t, int digits, enum print_format f)
{
    char buf[64];
    const char *sep = f == PRINT_CSV ? "," : f == PRINT_MARKDOWN ? " | " : " & ";
    const char *end = f == PRINT_CSV ? "\n" : f == PRINT_MARKDOWN ? " |\n" : " \\\\\n";

    if (f == PRINT_CSV) {
        fprintf(out, "# %s\n", t->title);
    } else if (f == PRINT_MARKDOWN) {
        fputs("**", out);
        put_escaped(out, t->title, f);
        fputs("**\n\n| ", out);
    } else {
        fprintf(out, "%% %s\n\\begin{tabular}{l", t->title);
        for (int j = 0; j < t->m->cols; j++)
            fputc('r', out);
        fputs("}\n\\hline\n", out);
    }
    for (int j = 0; j < t->m->cols; j++) {
        fputs(sep, out);
        index_label(buf, sizeof buf, t->cols, t->col_prefix, j);
        put_escaped(out, buf, f);
    }
    fputs(end, out);
    if (f == PRINT_MARKDOWN) {
        fputs("|---", out);
        for (int j = 0; j < t->m->cols; j++)
            fputs("|---:", out);
        fputs("|\n", out);
    } else if (f == PRINT_LATEX) {
        fputs("\\hline\n", out);
    }
    for (int i = 0; i < t->m->rows; i++) {
        if (f == PRINT_MARKDOWN)
            fputs("| ", out);
        index_label(buf, sizeof buf, t->rows, t->row_prefix, i);
        put_escaped(out, buf, f);
        for (int j = 0; j < t->m->cols; j++) {
            fputs(sep, out);
            put_value(out, MAT_AT(t->m, i, j), digits, f);
        }
        fputs(end, out);
    }
    if (f == PRINT_LATEX)
        fputs("\\hline\n\\end{tabular}\n", out);
    fputc('\n', out);
}

void
print_table(FILE *out, const struct table *t, const struct print_options *po)
{
    if (po->format == PRINT_TEXT)
        print_text_table(out, t, po->digits);
    else
        print_other_table(out, t, po->digits, po->format);
}
