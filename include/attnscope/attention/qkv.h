/*
 * qkv.h: queries, keys and values given directly, not computed.
 *
 * Some lessons start from Q, K and V themselves (attention as a soft
 * dictionary lookup: three queries against four keys).  attnscope reads them
 * from queries.csv, keys.csv and values.csv in a folder, in the layout
 * --export writes (a header row, then a label and the values on each row).
 * The queries' labels name the rows of every stage, the keys' labels its
 * columns; there may be more keys than queries or fewer.
 */
#ifndef ATTNSCOPE_QKV_H
#define ATTNSCOPE_QKV_H

#include "attnscope/files/csvio.h"
#include "attnscope/kernels/matrix.h"
#include "attnscope/base/status.h"

struct qkv_given {
    struct matrix q;          /* (nq, d) */
    struct matrix k;          /* (nk, d) */
    struct matrix v;          /* (nk, d) */
    const char **q_labels;    /* (nq) into table[0] */
    const char **k_labels;    /* (nk) into table[1] */
    struct csvio_table table[3];
};

/*
 * Reads dir/queries.csv, dir/keys.csv and dir/values.csv.  The three must
 * have the same number of value columns, and keys and values the same rows;
 * otherwise the message names the file and the shapes.
 */
enum attn_status qkv_load(struct qkv_given *g, const char *dir, struct attn_error *err);
void qkv_destroy(struct qkv_given *g);

#endif
