/* posenc.c: sinusoidal positional encoding (see posenc.h). */
#include "config.h"

#include <math.h>

#include "attnscope/attention/posenc.h"

void
posenc_sinusoidal(struct matrix *out)
{
    const int d = out->cols;

    for (int pos = 0; pos < out->rows; pos++) {
        float *row = matrix_row(out, pos);
        for (int j = 0; j < d; j++) {
            /* Columns 2i and 2i+1 share the frequency 1 / 10000^(2i/d). */
            int two_i = j - (j % 2);
            double angle = (double)pos / pow(10000.0, (double)two_i / (double)d);
            row[j] = (float)(j % 2 == 0 ? sin(angle) : cos(angle));
        }
    }
}
