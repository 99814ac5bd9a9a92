/* print_header.c: the header of a trained model's --print (see print.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "attnscope/base/status.h"
#include "attnscope/decoder/mixer.h"
#include "attnscope/families/model/family_model.h"
#include "front/cli/print.h"
#include "render/parts/parts.h"


/*
 * Gemma 3's and Olmo 3's parts, the --print header's second lines: which
 * layers slide and their RoPE, and the block's norms under the file's names.
 */
static void
print_window_parts(FILE *out, const struct decoder_model *m)
{
    const struct decoder_config *c = &m->cfg;
    const struct decoder_rope_scaling *sc = &c->rope_scaling;

    if (c->sliding_window > 0) {
        fprintf(out, "  sliding layers (each query sees the last %d keys):", c->sliding_window);
        for (int l = 0; l < c->n_layer; l++)
            if (decoder_window(c, l) > 0)
                fprintf(out, " %d", l);
        fprintf(out, "; full:");
        for (int l = 0; l < c->n_layer; l++)
            if (decoder_window(c, l) == 0)
                fprintf(out, " %d", l);
        if (c->sliding_rope_full)
            fprintf(out, "\n  RoPE base %g%s on every layer, the sliding ones too\n", c->rope_theta,
                    sc->yarn ? " with YaRN" : "");
        else
            fprintf(out, "\n  RoPE base %g on the sliding layers, %g%s on the full ones\n",
                    c->rope_local_theta > 0.0 ? c->rope_local_theta : c->rope_theta,
                    c->rope_theta,
                    sc->yarn     ? " with YaRN"
                    : sc->linear ? " stretched linearly"
                    : sc->llama3 ? " with llama3's stretch"
                                 : "");
    }
    {
        /* In the block's order: those it has (a pre-norm block has no output norms). */
        const bool pre = decoder_pre_norms(c), post = decoder_post_norms(c);
        const struct {
            bool has;
            const char *stage;
            enum arch_role role;
        } norms[] = { { pre, "ln1", ROLE_ATTN_NORM }, { post, "output_normed", ROLE_ATTN_POST_NORM },
                      { pre, "ln2", ROLE_FFN_NORM }, { post, "mlp_normed", ROLE_FFN_POST_NORM } };
        const char *sep = "";
        fprintf(out, "  norms%s:", c->norm_plus_one ? " (scaling by 1 + w)" : "");
        for (size_t k = 0; k < sizeof norms / sizeof norms[0]; k++)
            if (norms[k].has) {
                fprintf(out, "%s %s %s", sep, norms[k].stage, decoder_part_name(m, norms[k].role));
                sep = ",";
            }
        fprintf(out, "%s\n", pre ? "" : "; none before attention or the MLP (post-norm)");
    }
}

/* Which layers are Gated DeltaNet, their sizes, how a value head finds its key head, their names. */
static void
print_gdn_parts(FILE *out, const struct decoder_model *d)
{
    const struct decoder_config *c = &d->cfg;

    fprintf(out, "  Gated DeltaNet on layers");
    for (int l = 0; l < c->n_layer; l++)
        if (!decoder_attends(c, l))
            fprintf(out, " %d", l);
    fprintf(out, " (%d key heads of %d, %d value heads of %d, value head j reading key head %s; "
                 "a convolution of %d taps): %s, %s, %s, %s, %s\n",
            c->gdn.k_heads, c->gdn.k_dim, c->gdn.v_heads, c->gdn.v_dim,
            c->gdn.tiled ? "j % key heads (tiled)" : "j / (value heads / key heads)", c->gdn.conv,
            decoder_part_name(d, ROLE_GDN_QKV), decoder_part_name(d, ROLE_GDN_Z),
            decoder_part_name(d, ROLE_GDN_B), decoder_part_name(d, ROLE_GDN_A),
            decoder_part_name(d, ROLE_GDN_OUT));
}

/* The header of a trained model's --print: what it is, the layer, the knobs. */
void
print_model_header(FILE *out, const struct pipeline *p, const struct family_model_state *g)
{
    const struct decoder_config *c = &g->model->dec.cfg;
    struct pipeline_scaling sc;
    char capped[96];
    char num[32];
    /* A folder's name may hold anything a file name can: shown escaped, never raw. */
    char name[4 * sizeof g->model->name];
    char dir[4 * sizeof g->model->dir];

    char about[4 * sizeof g->model->about];

    attn_escape_text(name, sizeof name, g->model->name);
    attn_escape_text(dir, sizeof dir,
                     g->model->weights[0] != '\0' ? g->model->weights : g->model->dir);
    attn_escape_text(about, sizeof about, g->model->about);
    if (c->positions == DECODER_POSITIONS_ROPE) {
        /* A Llama-style model: its architecture, grouped keys, the names its files use. */
        fprintf(out, "attnscope: %s (%s from %s: %d layers, %d query heads of %d sharing %d key "
                     "and value heads, n_embd %d, vocabulary %d, context %d)\n",
                name, g->model->dec.title, dir, c->n_layer, c->n_head, decoder_head_dim(c), decoder_kv_heads(c), c->d_model,
                c->vocab_size, c->n_ctx);
        fprintf(out, "  %s\n", about);
        if (c->sliding_window > 0 || decoder_post_norms(c))
            print_window_parts(out, &g->model->dec);
        else if (g->model->dec.names == DECODER_NAMES_BOOK)
            fprintf(out, "  the book's names: ln1 is trf_blocks.L.norm1, queries ... output are "
                         "att.W_query, W_key, W_value and out_proj, gate, fc and mlp ff.fc1, fc2 "
                         "and fc3\n");
        else if (g->model->dec.names == DECODER_NAMES_GGUF)
            fprintf(out, "  llama.cpp's names: ln1 is blk.L.attn_norm, queries ... output "
                         "attn_q ... attn_output, gate, fc and mlp ffn_gate, ffn_up and ffn_down\n");
        else
            fprintf(out, "  Hugging Face's names: ln1 is model.layers.L.input_layernorm, queries ... "
                         "output self_attn.q_proj ... o_proj, gate, fc and mlp mlp.gate_proj, "
                         "up_proj and down_proj\n");
        if (c->gdn.v_heads > 0)
            print_gdn_parts(out, &g->model->dec);
        if (c->moe.n_experts > 0) {
            /* (a mixture's sparse layers have no gate, fc and mlp of their own: these instead) */
            const struct decoder_model *d = &g->model->dec;
            const bool fused = d->blocks[0].experts != NULL && d->blocks[0].experts[0].fused;
            fprintf(out, "  its sparse layers' router is %s, each expert's %s%s%s and %s\n",
                    decoder_part_name(d, ROLE_FFN_ROUTER),
                    decoder_part_name(d, fused ? ROLE_EXPERT_GATE_UP : ROLE_EXPERT_GATE),
                    fused ? "" : ", ", fused ? "" : decoder_part_name(d, ROLE_EXPERT_UP),
                    decoder_part_name(d, ROLE_EXPERT_DOWN));
            if (c->moe.d_shared > 0)
                fprintf(out, "  and a shared expert for every token (%s, %s and %s), times "
                             "the sigmoid of %s\n",
                        decoder_part_name(d, ROLE_SHARED_GATE), decoder_part_name(d, ROLE_SHARED_UP),
                        decoder_part_name(d, ROLE_SHARED_DOWN),
                        decoder_part_name(d, ROLE_SHARED_ROUTER));
        }
    } else {
    fprintf(out, "attnscope: %s (%s from %s: %d layers, %d heads of %d, n_embd %d, vocabulary "
                 "%d, context %d%s)\n",
            name, g->model->dec.title, dir, c->n_layer, c->n_head, c->d_model / c->n_head, c->d_model,
            c->vocab_size, c->n_ctx, c->n_classes > 0 ? ", a classifier" : "");
    fprintf(out, "  %s\n", about);
    if (g->model->dec.names == DECODER_NAMES_BOOK)
        fprintf(out, "  the book's GPTModel: ln1 is trf_blocks.L.norm1, queries ... output are "
                     "att.W_query, W_key, W_value and out_proj, fc and mlp ff.layers.0 and 2\n");
    else if (g->model->dec.names == DECODER_NAMES_GGUF)
        fprintf(out, "  llama.cpp's names: ln1 is blk.L.attn_norm, queries, keys and values "
                     "attn_qkv, output attn_output, fc and mlp ffn_up and ffn_down\n");
    else if (g->model->dec.names == DECODER_NAMES_OPENAI)
        fprintf(out, "  OpenAI's names: ln1 is model/hL/ln_1, queries, keys and values "
                     "attn/c_attn, output attn/c_proj, fc and mlp mlp/c_fc and c_proj\n");
    else
        fprintf(out, "  Hugging Face's names: ln1 is h.L.ln_1, queries, keys and values attn.c_attn, "
                     "output attn.c_proj, fc and mlp mlp.c_fc and c_proj\n");
    }
    if (g->model->chat_used[0] != '\0')
        fprintf(out, "  %s\n", g->model->chat_used);
    if (g->ablated_heads > 0)
        fprintf(out, "  %d head%s ablated (--ablate): %s context zeroed before %s\n",
                g->ablated_heads, g->ablated_heads == 1 ? "" : "s",
                g->ablated_heads == 1 ? "its" : "their",
                decoder_part_name(&g->model->dec, ROLE_ATTN_OUT));
    if (g->experts_off_count > 0) {
        const int E = c->moe.n_experts;
        fprintf(out, "  switched off (--expert-off, their router logits -inf):");
        for (int l = 0; l < c->n_layer; l++)
            for (int e = 0; e < E; e++)
                if (g->experts_off[(size_t)l * (size_t)E + (size_t)e])
                    fprintf(out, " expert %d of layer %d", e, l);
        fputc('\n', out);
    }
    if (c->sinks)
        fprintf(out, "  attention sinks: a learned logit per head in every softmax%s\n",
                g->knobs.sinks_off ? ", switched off (--no-sinks: their logits -inf)"
                                   : ", dropped after it (a row's weights sum to 1 minus the "
                                     "sink's share)");
    if (p->decoder != NULL && !decoder_mixer_of(p->decoder, p->layer)->attention_stages) {
        /* (a layer that mixes the tokens otherwise has no scores, mask or scaling to say) */
        const struct decoder_mixer *mx = decoder_mixer_of(p->decoder, p->layer);
        fprintf(out, "  layer %d of 0-%d: %s, no scores: it keeps %s\n\n", p->layer,
                p->layers - 1, mx->name, mx->keeps);
        return;
    }
    pipeline_scaling_of(p, &sc);
    fprintf(out, "  layer %d of 0-%d, mask %s", p->layer, p->layers - 1,
            p->cfg.mask == ATTN_MASK_CAUSAL ? "causal" : "none");
    if (p->window > 0)
        fprintf(out, " within a sliding window of %d keys", p->window);
    fprintf(out, ", scores / %g", (double)sc.divisor);
    if (sc.symbol != NULL)
        fprintf(out, " (%s = %s%s)", sc.symbol, sc.spelled, sc.temperature ? " * T" : "");
    fputs(softcap_print(p, capped, sizeof capped), out); /* (render/parts/softcap.c) */
    if (p->cfg.temperature != 1.0) {
        attn_shortest(num, sizeof num, p->cfg.temperature);
        fprintf(out, ", temperature %s", num);
    }
    fprintf(out, "\n\n");
}
