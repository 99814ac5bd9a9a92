/*
 * inspect.h: how one cell was made, in numbers.
 *
 * For a score: q_i, k_j and the sum of their products.  For a weight: the
 * row's scaled scores, their exponentials and the sum.  For a dropped weight:
 * the keep/drop draw, the 1/(1-p) rescale and the row's new sum.  For a
 * context value: the weighted sum of values.  And likewise for the other
 * stages.  The text is plain lines; the view wraps and colours it.
 */
#ifndef ATTNSCOPE_RENDER_INSPECT_H
#define ATTNSCOPE_RENDER_INSPECT_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/pipeline/pipeline.h"
#include "render/explain.h"

/*
 * Writes the explanation of cell (row, col) of stage s, head head, into buf:
 * a title line, then lines of arithmetic, separated by '\n'.  max_terms
 * bounds the terms of a sum spelled out (the rest are summarised).
 * mask_matrix: the mask stage shows the mask itself.  utf8: products are
 * written with a multiplication sign rather than '*'.
 */
void inspect_cell(const struct pipeline *p, enum view_stage s, int head, int row, int col,
                  bool mask_matrix, int max_terms, bool utf8, char *buf, size_t size);

/*
 * The same for cell (row, col) of the parameters stage s uses (the view's
 * W: Q K V or output), shown as "x times this matrix", the bias last: the
 * parameter's own name and indices, what the cell does, where its value
 * came from and how the weight is stored.
 */
void inspect_param_cell(const struct pipeline *p, enum view_stage s, int head, int row, int col,
                        char *buf, size_t size);

#endif
