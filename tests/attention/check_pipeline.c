/*
 * check_pipeline.c: every table of the book's chapter 3, through the same
 * pipeline_create() and pipeline_stage_view() the front ends use.
 *
 * The expected numbers are PyTorch's (6 decimals): the book's classes run
 * by PyTorch on the book's embeddings (tests/oracle/torch_attention.py
 * re-makes any of them).  The tolerance is 1e-6.
 */
#include "config.h"

#include "pipeline_harness.h"

#define TOL 1e-6

static void
book(struct pipeline *p, enum attn_variant variant, uint64_t seed)
{
    struct attention_config cfg;

    attention_config_init(&cfg);
    attention_config_set_variant(&cfg, variant);
    cfg.seed = seed;
    run(p, &cfg, "Your journey starts with one step", &book_vocab);
}

static void
expect_stage(const struct pipeline *p, enum pipeline_stage s, int head, const float *want,
             int rows, int cols, const char *what)
{
    struct pipeline_view v;

    pipeline_stage_view(p, s, head, &v);
    expect_matrix_near(&v.m, want, rows, cols, TOL, what);
}

static void
expect_param(const struct pipeline *p, const char *name, const float *want, int rows, int cols)
{
    for (int i = 0; i < p->params.count; i++) {
        if (strcmp(p->params.p[i].name, name) == 0) {
            expect_matrix_near(&p->params.p[i].m, want, rows, cols, TOL, name);
            return;
        }
    }
    ck_abort_msg("no parameter named %s", name);
}

/* Section 1: no trainable weights. */
/*
 * params_column names the weights behind every column the view's W shows: for
 * every variant with parameters, with and without biases, every head and
 * column, x times the column (plus its bias) is the queries', keys' and
 * values' column the core computed, and z times out_proj's the output's.
 */
START_TEST(parameter_columns_make_the_stages)
{
    const enum attn_variant variants[] = { ATTN_V1, ATTN_V2, ATTN_CAUSAL, ATTN_WRAPPER, ATTN_MHA };
    const enum pipeline_stage made[] = { STAGE_QUERIES, STAGE_KEYS, STAGE_VALUES };

    for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++)
        for (int bias = 0; bias < 2; bias++) {
            struct attention_config cfg;
            struct pipeline p;
            struct pipeline_view x;
            int hd;
            attention_config_init(&cfg);
            attention_config_set_variant(&cfg, variants[k]);
            if (attention_variant_info(variants[k])->heads) {
                cfg.heads = 2;
                cfg.d_out = 4;
            }
            cfg.qkv_bias = bias;
            run(&p, &cfg, "Your journey starts with one step", &book_vocab);
            hd = p.st.shape.head_dim;
            pipeline_stage_view(&p, STAGE_INPUTS, 0, &x);
            for (int h = 0; h < p.st.shape.heads; h++)
                for (int r = PARAM_QUERY; r <= PARAM_VALUE; r++)
                    for (int c = 0; c < hd; c++) {
                        struct param_column pc;
                        struct pipeline_view out;
                        ck_assert_int_eq(params_column(&p.params, (enum param_role)r, h, hd, c, &pc), 0);
                        /* (SelfAttention_v1's torch.rand matrices have no biases.) */
                        ck_assert(bias == (pc.bias != NULL) || (variants[k] == ATTN_V1 && pc.bias == NULL));
                        pipeline_stage_view(&p, made[r], 0, &out);
                        for (int i = 0; i < x.m.rows; i++) {
                            double sum = pc.bias != NULL ? pc.bias->m.data[pc.out] : 0.0;
                            for (int in = 0; in < x.m.cols; in++)
                                sum += (double)MAT_AT(&x.m, i, in) * param_weight_at(pc.weight, in, pc.out);
                            ck_assert_msg(fabs(sum - MAT_AT(&out.m, i, h * hd + c)) < 1e-5,
                                          "variant %d bias %d head %d role %d column %d row %d", (int)variants[k],
                                          bias, h, r, c, i);
                        }
                    }
            if (attention_variant_has_out_proj(variants[k])) {
                struct pipeline_view z;
                struct pipeline_view out;
                pipeline_stage_view(&p, STAGE_CONTEXT, 0, &z);
                pipeline_stage_view(&p, STAGE_OUTPUT, 0, &out);
                for (int c = 0; c < out.m.cols; c++) {
                    struct param_column pc;
                    ck_assert_int_eq(params_column(&p.params, PARAM_OUT, 0, hd, c, &pc), 0);
                    for (int i = 0; i < z.m.rows; i++) {
                        double sum = pc.bias->m.data[pc.out];
                        for (int in = 0; in < z.m.cols; in++)
                            sum += (double)MAT_AT(&z.m, i, in) * param_weight_at(pc.weight, in, pc.out);
                        ck_assert(fabs(sum - MAT_AT(&out.m, i, c)) < 1e-5);
                    }
                }
            } else {
                struct param_column pc;
                ck_assert_int_eq(params_column(&p.params, PARAM_OUT, 0, hd, 0, &pc), -1);
            }
            pipeline_destroy(&p);
        }
}
END_TEST

START_TEST(simple_attention)
{
    static const float scores[] = {
        0.999500f, 0.954400f, 0.942200f, 0.475300f, 0.457600f, 0.631000f,
        0.954400f, 1.495000f, 1.475400f, 0.843400f, 0.707000f, 1.086500f,
        0.942200f, 1.475400f, 1.457000f, 0.829600f, 0.715400f, 1.060500f,
        0.475300f, 0.843400f, 0.829600f, 0.493700f, 0.347400f, 0.656500f,
        0.457600f, 0.707000f, 0.715400f, 0.347400f, 0.665400f, 0.293500f,
        0.631000f, 1.086500f, 1.060500f, 0.656500f, 0.293500f, 0.945000f,
    };
    static const float weights[] = {
        0.209835f, 0.200581f, 0.198149f, 0.124228f, 0.122049f, 0.145158f,
        0.138548f, 0.237891f, 0.233274f, 0.123992f, 0.108182f, 0.158114f,
        0.139008f, 0.236921f, 0.232602f, 0.124204f, 0.110800f, 0.156464f,
        0.143527f, 0.207394f, 0.204552f, 0.146192f, 0.126295f, 0.172039f,
        0.152611f, 0.195839f, 0.197491f, 0.136687f, 0.187859f, 0.129514f,
        0.138471f, 0.218364f, 0.212759f, 0.142048f, 0.098806f, 0.189552f,
    };
    static const float context[] = {
        0.442059f, 0.593099f, 0.578989f, 0.441866f, 0.651482f, 0.568309f,
        0.443128f, 0.649595f, 0.567073f, 0.430390f, 0.629828f, 0.551027f,
        0.467102f, 0.590993f, 0.526597f, 0.417725f, 0.650323f, 0.564535f,
    };
    struct pipeline p;

    book(&p, ATTN_SIMPLE, 123);
    ck_assert_int_eq(p.params.count, 0);
    expect_stage(&p, STAGE_SCORES, 0, scores, 6, 6, "scores");
    expect_stage(&p, STAGE_SCALED, 0, scores, 6, 6, "scaled (simple does not scale)");
    expect_stage(&p, STAGE_WEIGHTS, 0, weights, 6, 6, "weights");
    expect_stage(&p, STAGE_CONTEXT, 0, context, 6, 3, "context");
    expect_stage(&p, STAGE_OUTPUT, 0, context, 6, 3, "output (= context)");
    pipeline_destroy(&p);
}
END_TEST

/* Section 2: SelfAttention_v1, seed 123. */
START_TEST(self_attention_v1)
{
    static const float wq[] = { 0.296112f, 0.516562f, 0.251671f, 0.688557f, 0.073972f, 0.866522f };
    static const float wk[] = { 0.136580f, 0.102479f, 0.184056f, 0.726447f, 0.315254f, 0.687107f };
    static const float wv[] = { 0.075635f, 0.196638f, 0.316412f, 0.401740f, 0.118568f, 0.827395f };
    static const float queries[] = {
        0.230914f, 1.096610f, 0.430637f, 1.455058f, 0.430046f, 1.434288f,
        0.235525f, 0.798959f, 0.298321f, 0.656544f, 0.256827f, 1.053261f,
    };
    static const float keys[] = {
        0.366914f, 0.764558f, 0.443316f, 1.141863f, 0.436061f, 1.115641f,
        0.240834f, 0.670630f, 0.182706f, 0.329231f, 0.327464f, 0.964190f,
    };
    static const float values[] = {
        0.185511f, 0.881197f, 0.395133f, 1.003746f, 0.387946f, 0.983096f,
        0.239286f, 0.549310f, 0.149199f, 0.334586f, 0.322124f, 0.786291f,
    };
    static const float scores[] = {
        0.923147f, 1.354546f, 1.324116f, 0.791031f, 0.403228f, 1.132956f,
        1.270483f, 1.852384f, 1.811107f, 1.079517f, 0.557731f, 1.543971f,
        1.254386f, 1.828406f, 1.787677f, 1.065446f, 0.550784f, 1.523751f,
        0.697268f, 1.016713f, 0.994054f, 0.592528f, 0.306074f, 0.847474f,
        0.611424f, 0.881934f, 0.862554f, 0.512144f, 0.270660f, 0.730723f,
        0.899512f, 1.316534f, 1.287053f, 0.768201f, 0.393690f, 1.099645f,
    };
    static const float weights[] = {
        0.155097f, 0.210417f, 0.205938f, 0.141264f, 0.107384f, 0.179901f,
        0.150020f, 0.226384f, 0.219872f, 0.131070f, 0.090629f, 0.182026f,
        0.150343f, 0.225610f, 0.219206f, 0.131541f, 0.091414f, 0.181887f,
        0.159085f, 0.199401f, 0.196232f, 0.147728f, 0.120641f, 0.176912f,
        0.160999f, 0.194937f, 0.192284f, 0.150084f, 0.126525f, 0.175170f,
        0.155742f, 0.209156f, 0.204841f, 0.141932f, 0.108911f, 0.179418f,
    };
    static const float context[] = {
        0.299582f, 0.805314f, 0.306100f, 0.821030f, 0.305781f, 0.820296f,
        0.294766f, 0.793866f, 0.292706f, 0.789084f, 0.299010f, 0.804037f,
    };
    struct pipeline p;

    book(&p, ATTN_V1, 123);
    expect_param(&p, "W_query", wq, 3, 2);
    expect_param(&p, "W_key", wk, 3, 2);
    expect_param(&p, "W_value", wv, 3, 2);
    expect_stage(&p, STAGE_QUERIES, 0, queries, 6, 2, "queries");
    expect_stage(&p, STAGE_KEYS, 0, keys, 6, 2, "keys");
    expect_stage(&p, STAGE_VALUES, 0, values, 6, 2, "values");
    expect_stage(&p, STAGE_SCORES, 0, scores, 6, 6, "scores");
    expect_stage(&p, STAGE_WEIGHTS, 0, weights, 6, 6, "weights");
    expect_stage(&p, STAGE_CONTEXT, 0, context, 6, 2, "context");
    pipeline_destroy(&p);
}
END_TEST

/* Section 3: SelfAttention_v2 and CausalAttention, seed 789. */
static const float v2_scores[] = {
    0.289909f, 0.071622f, 0.076033f, -0.013813f, 0.134360f, -0.051128f,
    0.465642f, 0.172260f, 0.175087f, 0.025936f, 0.177114f, 0.008511f,
    0.459436f, 0.170318f, 0.173081f, 0.025889f, 0.174514f, 0.008958f,
    0.264155f, 0.102392f, 0.103648f, 0.018641f, 0.097318f, 0.012225f,
    0.218288f, 0.087353f, 0.088188f, 0.017709f, 0.078567f, 0.014443f,
    0.340782f, 0.127034f, 0.129031f, 0.019793f, 0.128969f, 0.007757f,
};
static const float v2_causal_weights[] = {
    1.000000f, 0.000000f, 0.000000f, 0.000000f, 0.000000f, 0.000000f,
    0.551678f, 0.448322f, 0.000000f, 0.000000f, 0.000000f, 0.000000f,
    0.379967f, 0.309714f, 0.310319f, 0.000000f, 0.000000f, 0.000000f,
    0.275843f, 0.246028f, 0.246247f, 0.231882f, 0.000000f, 0.000000f,
    0.217515f, 0.198281f, 0.198398f, 0.188753f, 0.197053f, 0.000000f,
    0.193472f, 0.166333f, 0.166568f, 0.154186f, 0.166561f, 0.152880f,
};

START_TEST(self_attention_v2)
{
    static const float wq[] = { 0.316059f, 0.456809f, 0.511835f, -0.168285f, -0.337877f, -0.091774f };
    static const float wk[] = { 0.405806f, -0.470421f, 0.236805f, 0.213361f, -0.260051f, -0.510543f };
    static const float wv[] = { 0.252570f, -0.141478f, -0.196181f, 0.519107f, -0.085168f, -0.204327f };
    static const float weights[] = {
        0.192126f, 0.164646f, 0.165161f, 0.154994f, 0.172115f, 0.150958f,
        0.204125f, 0.165883f, 0.166215f, 0.149578f, 0.166453f, 0.147746f,
        0.203562f, 0.165924f, 0.166249f, 0.149815f, 0.166417f, 0.148033f,
        0.186888f, 0.166688f, 0.166836f, 0.157104f, 0.166091f, 0.156392f,
        0.183045f, 0.166859f, 0.166957f, 0.158841f, 0.165825f, 0.158474f,
        0.193472f, 0.166333f, 0.166568f, 0.154186f, 0.166561f, 0.152880f,
    };
    static const float context[] = {
        -0.073890f, 0.071290f, -0.074811f, 0.070309f, -0.074856f, 0.070242f,
        -0.076002f, 0.068450f, -0.076328f, 0.067943f, -0.075444f, 0.069305f,
    };
    struct pipeline p;

    book(&p, ATTN_V2, 789);
    ck_assert_int_eq(p.cfg.mask, ATTN_MASK_NONE);
    expect_param(&p, "W_query.weight", wq, 2, 3);
    expect_param(&p, "W_key.weight", wk, 2, 3);
    expect_param(&p, "W_value.weight", wv, 2, 3);
    expect_stage(&p, STAGE_SCORES, 0, v2_scores, 6, 6, "scores");
    expect_stage(&p, STAGE_WEIGHTS, 0, weights, 6, 6, "weights");
    expect_stage(&p, STAGE_CONTEXT, 0, context, 6, 2, "context");
    pipeline_destroy(&p);
}
END_TEST

START_TEST(causal_attention_seed_789)
{
    static const float masked[] = {
        0.289909f, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY,
        0.465642f, 0.172260f, -INFINITY, -INFINITY, -INFINITY, -INFINITY,
        0.459436f, 0.170318f, 0.173081f, -INFINITY, -INFINITY, -INFINITY,
        0.264155f, 0.102392f, 0.103648f, 0.018641f, -INFINITY, -INFINITY,
        0.218288f, 0.087353f, 0.088188f, 0.017709f, 0.078567f, -INFINITY,
        0.340782f, 0.127034f, 0.129031f, 0.019793f, 0.128969f, 0.007757f,
    };
    static const float context[] = {
        -0.087218f, 0.028590f, -0.099069f, 0.050095f, -0.099945f, 0.063350f,
        -0.098255f, 0.048948f, -0.051446f, 0.109844f, -0.075444f, 0.069305f,
    };
    struct pipeline p;

    book(&p, ATTN_CAUSAL, 789);
    ck_assert_int_eq(p.cfg.mask, ATTN_MASK_CAUSAL);
    expect_stage(&p, STAGE_SCORES, 0, v2_scores, 6, 6, "scores");
    expect_stage(&p, STAGE_MASKED, 0, masked, 6, 6, "masked");
    expect_stage(&p, STAGE_WEIGHTS, 0, v2_causal_weights, 6, 6, "causal weights");
    expect_stage(&p, STAGE_CONTEXT, 0, context, 6, 2, "causal context");
    pipeline_destroy(&p);
}
END_TEST

/* Section 4: the book reseeds with 123 and drops out the causal weights above. */
static void
book_dropout(struct pipeline *p, enum rng_path path)
{
    struct attention_config cfg;

    attention_config_init(&cfg);
    attention_config_set_variant(&cfg, ATTN_CAUSAL);
    cfg.seed = 789;
    cfg.dropout = 0.5;
    cfg.dropout_reseed = true;
    cfg.dropout_seed = 123;
    cfg.rng_path = path;
    run(p, &cfg, "Your journey starts with one step", &book_vocab);
}

START_TEST(book_dropout_default_path)
{
    static const float dropped[] = {
        2.000000f, 0.000000f, 0.000000f, 0.000000f, 0.000000f, 0.000000f,
        0.000000f, 0.000000f, 0.000000f, 0.000000f, 0.000000f, 0.000000f,
        0.759934f, 0.619427f, 0.620638f, 0.000000f, 0.000000f, 0.000000f,
        0.000000f, 0.492057f, 0.492494f, 0.000000f, 0.000000f, 0.000000f,
        0.000000f, 0.396562f, 0.000000f, 0.377506f, 0.000000f, 0.000000f,
        0.000000f, 0.332666f, 0.333136f, 0.308372f, 0.333122f, 0.000000f,
    };
    struct pipeline p;

    book_dropout(&p, RNG_PATH_DEFAULT);
    expect_stage(&p, STAGE_WEIGHTS, 0, v2_causal_weights, 6, 6, "weights before dropout");
    expect_stage(&p, STAGE_DROPPED, 0, dropped, 6, 6, "dropped (default path)");
    ck_assert(p.st.keep != NULL && p.st.draw != NULL);
    ck_assert_int_eq(p.st.keep[0], 1);
    ck_assert_int_eq(p.st.keep[2], 0);
    ck_assert_float_eq(p.st.dropout_scale, 2.0f);
    pipeline_destroy(&p);
}
END_TEST

START_TEST(book_dropout_mkl_path)
{
    /* Printed with 4 decimals by an MKL build (a reader's published chapter-3 notes show this table). */
    static const float dropped[] = {
        2.0000f, 0, 0, 0, 0, 0,
        0, 0.8966f, 0, 0, 0, 0,
        0, 0, 0.6206f, 0, 0, 0,
        0.5517f, 0.4921f, 0, 0, 0, 0,
        0.4350f, 0, 0, 0, 0, 0,
        0, 0.3327f, 0, 0, 0, 0,
    };
    struct pipeline p;
    struct pipeline_view v;

    book_dropout(&p, RNG_PATH_MKL);
    pipeline_stage_view(&p, STAGE_DROPPED, 0, &v);
    expect_matrix_near(&v.m, dropped, 6, 6, 5e-5, "dropped (MKL path)");
    pipeline_destroy(&p);
}
END_TEST

/* Section 5: CausalAttention(3, 2, 6, 0.0), seed 123. */
static const float causal_123_context[] = {
    -0.451920f, 0.221605f, -0.587435f, 0.005776f, -0.630023f, -0.063183f,
    -0.567457f, -0.084253f, -0.552562f, -0.098068f, -0.529901f, -0.108068f,
};

START_TEST(causal_attention_seed_123)
{
    struct pipeline p;

    book(&p, ATTN_CAUSAL, 123);
    expect_stage(&p, STAGE_CONTEXT, 0, causal_123_context, 6, 2, "context");
    pipeline_destroy(&p);
}
END_TEST

/* Section 6: MultiHeadAttentionWrapper, two heads, seed 123. */
START_TEST(multi_head_wrapper)
{
    static const float context[] = {
        -0.451920f, 0.221605f, 0.477196f, 0.106348f,
        -0.587435f, 0.005776f, 0.589073f, 0.325660f,
        -0.630023f, -0.063183f, 0.620196f, 0.385963f,
        -0.567457f, -0.084253f, 0.547769f, 0.358925f,
        -0.552562f, -0.098068f, 0.532089f, 0.342797f,
        -0.529901f, -0.108068f, 0.507653f, 0.349348f,
    };
    struct pipeline p;

    book(&p, ATTN_WRAPPER, 123);
    ck_assert_int_eq(p.st.shape.heads, 2);
    ck_assert_int_eq(p.params.count, 6);
    ck_assert_str_eq(p.params.p[3].name, "heads.1.W_query.weight");
    expect_stage(&p, STAGE_CONTEXT, 0, context, 6, 4, "concatenated context");
    expect_stage(&p, STAGE_OUTPUT, 0, context, 6, 4, "output (= context)");
    pipeline_destroy(&p);
}
END_TEST

/* Section 7: MultiHeadAttention(3, 2, 6, 0.0, num_heads=2), seed 123. */
START_TEST(multi_head_attention)
{
    static const float head0[] = {
        1.000000f, 0.000000f, 0.000000f, 0.000000f, 0.000000f, 0.000000f,
        0.477589f, 0.522411f, 0.000000f, 0.000000f, 0.000000f, 0.000000f,
        0.314009f, 0.343414f, 0.342578f, 0.000000f, 0.000000f, 0.000000f,
        0.245816f, 0.255895f, 0.255615f, 0.242674f, 0.000000f, 0.000000f,
        0.196683f, 0.209038f, 0.208692f, 0.192884f, 0.192703f, 0.000000f,
        0.164883f, 0.172608f, 0.172393f, 0.162485f, 0.162370f, 0.165262f,
    };
    static const float head1[] = {
        1.000000f, 0.000000f, 0.000000f, 0.000000f, 0.000000f, 0.000000f,
        0.498758f, 0.501242f, 0.000000f, 0.000000f, 0.000000f, 0.000000f,
        0.332462f, 0.333789f, 0.333749f, 0.000000f, 0.000000f, 0.000000f,
        0.246312f, 0.250487f, 0.250360f, 0.252841f, 0.000000f, 0.000000f,
        0.202478f, 0.199472f, 0.199562f, 0.197818f, 0.200670f, 0.000000f,
        0.162451f, 0.166691f, 0.166562f, 0.169100f, 0.164981f, 0.170215f,
    };
    static const float context[] = {
        -0.451920f, 0.221605f, -0.588925f, 0.012245f, -0.631329f, -0.057555f,
        -0.568469f, -0.083234f, -0.554060f, -0.096409f, -0.531105f, -0.107728f,
    };
    static const float output[] = {
        0.319018f, 0.485763f, 0.294346f, 0.389676f, 0.285575f, 0.359278f,
        0.269264f, 0.387327f, 0.263871f, 0.392796f, 0.257474f, 0.402783f,
    };
    struct pipeline p;

    book(&p, ATTN_MHA, 123);
    ck_assert_int_eq(p.st.shape.head_dim, 1);
    expect_stage(&p, STAGE_WEIGHTS, 0, head0, 6, 6, "head 0 weights");
    expect_stage(&p, STAGE_WEIGHTS, 1, head1, 6, 6, "head 1 weights");
    expect_stage(&p, STAGE_CONTEXT, 0, context, 6, 2, "concatenated context");
    expect_stage(&p, STAGE_OUTPUT, 0, output, 6, 2, "output");
    pipeline_destroy(&p);
}
END_TEST

/* Section 8: "Hello shiny sun", a worked example of chapter-3 study notes, the query "shiny". */
START_TEST(hello_shiny_sun)
{
    static const float scores[] = { 0.784200f, 1.356900f, 1.248700f };
    static const float weights[] = { 0.229134f, 0.406265f, 0.364602f };
    static const float context[] = { 0.398960f, 0.385424f, 0.860951f };
    struct attention_config cfg;
    struct vocab v;
    struct pipeline p;
    struct pipeline_view view;
    struct matrix row;

    ck_assert_int_eq(vocab_load_csv(&v, test_path("samples/hello-shiny-sun.csv"), NULL), ATTN_OK);
    attention_config_init(&cfg);
    attention_config_set_variant(&cfg, ATTN_SIMPLE);
    run(&p, &cfg, "Hello shiny sun!", &v);
    ck_assert_int_eq(p.tokens.count, 4);
    ck_assert_int_eq(p.made_up[3], 1);

    /* Rows 0..2 of a 4-token sentence see the '!' as a fourth key; use the 3-token one. */
    pipeline_destroy(&p);
    run(&p, &cfg, "Hello shiny sun", &v);
    pipeline_stage_view(&p, STAGE_SCORES, 0, &view);
    row = matrix_view(matrix_row(&view.m, 1), 1, 3);
    expect_matrix_near(&row, scores, 1, 3, TOL, "scores of shiny");
    pipeline_stage_view(&p, STAGE_WEIGHTS, 0, &view);
    row = matrix_view(matrix_row(&view.m, 1), 1, 3);
    expect_matrix_near(&row, weights, 1, 3, TOL, "weights of shiny");
    pipeline_stage_view(&p, STAGE_CONTEXT, 0, &view);
    row = matrix_view(matrix_row(&view.m, 1), 1, 3);
    expect_matrix_near(&row, context, 1, 3, TOL, "context of shiny");
    pipeline_destroy(&p);
    vocab_destroy(&v);
}
END_TEST

/* Section 8: the soft dictionary lookup of the lecture notes "Transformers" (A. Zhitomirsky), Q, K, V given, / sqrt(4). */
START_TEST(soft_dictionary_lookup)
{
    static const float weights[] = {
        0.000000f, 1.000000f, 0.000000f, 0.000000f,
        0.000000f, 0.000000f, 0.500000f, 0.500000f,
        0.500000f, 0.500000f, 0.000000f, 0.000000f,
    };
    static const float output[] = {
        10.000000f, 0.000000f, 2.000000f, 550.000000f, 5.500000f, 0.000000f,
        5.500000f, 0.000000f, 1.500000f,
    };
    struct qkv_given g;
    struct attention_config cfg;
    struct pipeline p;
    struct pipeline_source src = { .qkv = &g };
    struct attn_error err;
    struct pipeline_view v;

    ck_assert_msg(qkv_load(&g, test_path("samples/soft-dictionary"), &err) == ATTN_OK, "%s", err.msg);
    attention_config_init(&cfg);
    attention_config_set_variant(&cfg, ATTN_SIMPLE);
    cfg.scale = true;
    cfg.scale_dim = 4;
    ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_float_eq(p.st.divisor, 2.0f);
    ck_assert(!pipeline_stage_present(&p, STAGE_INPUTS));
    expect_stage(&p, STAGE_WEIGHTS, 0, weights, 3, 4, "weights");
    expect_stage(&p, STAGE_OUTPUT, 0, output, 3, 3, "output");
    pipeline_stage_view(&p, STAGE_KEYS, 0, &v);
    ck_assert_str_eq(v.row_labels[3], "k4");
    pipeline_stage_view(&p, STAGE_WEIGHTS, 0, &v);
    ck_assert_str_eq(v.row_labels[2], "q3");
    ck_assert_str_eq(v.col_labels[3], "k4");
    pipeline_destroy(&p);

    attention_config_set_variant(&cfg, ATTN_MHA);
    ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "--variant simple only") != NULL, "%s", err.msg);
    qkv_destroy(&g);
}
END_TEST

START_TEST(eval_mode_draws_no_dropout)
{
    struct attention_config cfg;
    struct pipeline a;
    struct pipeline b;
    struct pipeline_view va;
    struct pipeline_view vb;

    attention_config_init(&cfg);
    cfg.dropout = 0.5;
    cfg.train = false;
    run(&a, &cfg, "Your journey starts with one step", &book_vocab);
    ck_assert(!a.st.dropout_on);
    pipeline_stage_view(&a, STAGE_DROPPED, 1, &va);
    pipeline_stage_view(&a, STAGE_WEIGHTS, 1, &vb);
    ck_assert_mem_eq(va.m.data, vb.m.data, matrix_size(&va.m) * sizeof(float));

    cfg.train = true;
    run(&b, &cfg, "Your journey starts with one step", &book_vocab);
    ck_assert(b.st.dropout_on);
    pipeline_stage_view(&b, STAGE_DROPPED, 1, &va);
    ck_assert_msg(memcmp(va.m.data, vb.m.data, matrix_size(&va.m) * sizeof(float)) != 0,
                  "training mode with p = 0.5 should change the weights");
    pipeline_destroy(&a);
    pipeline_destroy(&b);
}
END_TEST

START_TEST(dropout_pass_is_the_next_forward_call)
{
    /* Two forward calls of one PyTorch module draw two masks in a row. */
    struct attention_config cfg;
    struct pipeline first;
    struct pipeline second;
    struct rng r;
    unsigned char keep[72];

    attention_config_init(&cfg);
    cfg.dropout = 0.5;
    run(&first, &cfg, "Your journey starts with one step", &book_vocab);
    cfg.dropout_pass = 1;
    run(&second, &cfg, "Your journey starts with one step", &book_vocab);

    r = first.rng_after_params;
    rng_bernoulli(&r, RNG_PATH_DEFAULT, 0.5, keep, NULL, 72);
    rng_bernoulli(&r, RNG_PATH_DEFAULT, 0.5, keep, NULL, 72);
    ck_assert_mem_eq(second.st.keep, keep, 72);
    ck_assert_msg(memcmp(first.st.keep, second.st.keep, 72) != 0, "the masks should differ");
    pipeline_destroy(&first);
    pipeline_destroy(&second);
}
END_TEST

/* A pass whose earlier calls draw more than 2^32 numbers is refused, created or stepped to. */
START_TEST(dropout_pass_skips_are_bounded)
{
    static char sentence[1000 * 3];
    struct attention_config cfg;
    struct attention_config next;
    struct pipeline p;
    struct pipeline_source src = { .sentence = sentence, .vocab = &book_vocab };
    struct attn_error err;

    words_of_a(sentence, 1000);
    attention_config_init(&cfg);
    cfg.dropout = 0.1;
    cfg.dropout_pass = 2148; /* 2148 x 2 x 1000 x 1000 > 2^32 */
    ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_ELIMIT);
    ck_assert_msg(strstr(err.msg, "pass 2147 at most here") != NULL, "%s", err.msg);
    cfg.dropout_pass = 3;
    ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(p.tokens.count, 1000);
    next = cfg;
    next.dropout_pass = 1000000;
    ck_assert(pipeline_attend_only(&p, &next));
    ck_assert_int_eq(pipeline_reattend(&p, &next, &err), ATTN_ELIMIT);
    ck_assert_msg(strstr(err.msg, "--dropout-pass 1000000") != NULL, "%s", err.msg);
    ck_assert_int_eq(p.cfg.dropout_pass, 3); /* the last good state stays */
    /* The MKL path skips a call with one draw: no bound. */
    next.rng_path = RNG_PATH_MKL;
    ck_assert_msg(pipeline_reattend(&p, &next, &err) == ATTN_OK, "%s", err.msg);
    pipeline_destroy(&p);
}
END_TEST

START_TEST(fully_masked_row_is_nan_like_pytorch)
{
    const float x[] = { -INFINITY, -INFINITY, -INFINITY, 1.0f, -INFINITY, 2.0f };
    float y[6];

    attention_softmax_rows(x, y, 2, 3);
    for (int j = 0; j < 3; j++)
        ck_assert(isnan(y[j]));
    ck_assert_float_eq(y[4], 0.0f);
    ck_assert_float_eq_tol(y[3] + y[5], 1.0f, 1e-7f);
}
END_TEST

START_TEST(no_mask_lets_tokens_see_the_future)
{
    struct attention_config cfg;
    struct pipeline p;
    struct pipeline_view v;

    attention_config_init(&cfg);
    cfg.mask = ATTN_MASK_NONE;
    run(&p, &cfg, "Your journey starts with one step", &book_vocab);
    pipeline_stage_view(&p, STAGE_WEIGHTS, 0, &v);
    ck_assert(MAT_AT(&v.m, 0, 5) > 0.0f);
    pipeline_stage_view(&p, STAGE_MASKED, 0, &v);
    ck_assert(isfinite(MAT_AT(&v.m, 0, 5)));
    pipeline_destroy(&p);
}
END_TEST

START_TEST(temperature_and_scaling_change_the_divisor)
{
    struct attention_config cfg;
    struct pipeline p;

    attention_config_init(&cfg);
    cfg.d_out = 8;
    cfg.heads = 2;
    cfg.temperature = 0.5;
    run(&p, &cfg, "Your journey starts with one step", &book_vocab);
    ck_assert_float_eq(p.st.divisor, 1.0f); /* sqrt(4) * 0.5 */
    pipeline_destroy(&p);
    cfg.scale = false;
    run(&p, &cfg, "Your journey starts with one step", &book_vocab);
    ck_assert_float_eq(p.st.divisor, 0.5f);
    pipeline_destroy(&p);
}
END_TEST

START_TEST(positional_encoding_is_added)
{
    struct attention_config cfg;
    struct pipeline p;

    attention_config_init(&cfg);
    cfg.positional = true;
    run(&p, &cfg, "Your journey starts with one step", &book_vocab);
    ck_assert(pipeline_stage_present(&p, STAGE_POSITIONAL));
    /* Position 0: sin 0 = 0 and cos 0 = 1 alternate. */
    ck_assert_float_eq(MAT_AT(&p.positional, 0, 0), 0.0f);
    ck_assert_float_eq(MAT_AT(&p.positional, 0, 1), 1.0f);
    ck_assert_float_eq_tol(MAT_AT(&p.positional, 1, 0), (float)sin(1.0), 1e-7f);
    ck_assert_float_eq_tol(MAT_AT(&p.inputs, 1, 0), 0.55f + (float)sin(1.0), 1e-6f);
    pipeline_destroy(&p);
}
END_TEST

/*
 * The learned positional embedding: nn.Embedding(n, d_in) drawn after the
 * weights (check_oracle holds PyTorch's numbers): switching it on changes no
 * weight, moves dropout's draws, and an edited sentence (another n) draws it
 * again as a fresh pipeline does.
 */
/* Captions follow the configuration (issue 13, item 18): no "scaled" unscaled, no "(+ PE)" without PE. */
START_TEST(captions_follow_the_configuration)
{
    struct attention_config cfg;
    struct pipeline p;

    attention_config_init(&cfg);
    attention_config_set_variant(&cfg, ATTN_SIMPLE);
    run(&p, &cfg, "Your journey starts with one step", &book_vocab);
    ck_assert_str_eq(pipeline_stage_formula(&p, STAGE_WEIGHTS), "softmax(scores) by row");
    ck_assert_str_eq(pipeline_stage_formula(&p, STAGE_INPUTS), "x = embeddings");
    /* No weights (issue 27, item 19): the scores are x x^T, the context weights times x. */
    ck_assert_str_eq(pipeline_stage_formula(&p, STAGE_SCORES), "x x^T");
    ck_assert_str_eq(pipeline_stage_formula(&p, STAGE_CONTEXT), "dropped x (V = x)");
    pipeline_destroy(&p);
    attention_config_init(&cfg);
    attention_config_set_variant(&cfg, ATTN_V1);
    run(&p, &cfg, "Your journey starts with one step", &book_vocab);
    ck_assert_str_eq(pipeline_stage_formula(&p, STAGE_SCORES), "Q K^T"); /* one head: no _h */
    ck_assert_str_eq(pipeline_stage_formula(&p, STAGE_CONTEXT), "dropped V");
    pipeline_destroy(&p);
    attention_config_init(&cfg);
    run(&p, &cfg, "Your journey starts with one step", &book_vocab);
    ck_assert_str_eq(pipeline_stage_formula(&p, STAGE_SCORES), "Q_h K_h^T"); /* mha's two heads */
    pipeline_destroy(&p);
    attention_config_init(&cfg);
    cfg.scale = false;
    cfg.positional = true;
    run(&p, &cfg, "Your journey starts with one step", &book_vocab);
    ck_assert_str_eq(pipeline_stage_formula(&p, STAGE_WEIGHTS), "softmax(masked) by row");
    ck_assert_str_eq(pipeline_stage_formula(&p, STAGE_INPUTS), "x = embeddings + PE");
    pipeline_destroy(&p);
    attention_config_init(&cfg);
    run(&p, &cfg, "Your journey starts with one step", &book_vocab);
    ck_assert_str_eq(pipeline_stage_formula(&p, STAGE_WEIGHTS), "softmax(scaled) by row");
    pipeline_destroy(&p);
}
END_TEST

/*
 * A token the sentence repeats is labelled with its position, everywhere
 * (issue 13, item 11), from its second time on (issue 27, item 16).
 */
START_TEST(repeated_tokens_are_told_apart)
{
    static const char *const want[] = { "the", "cat", "saw", "the#3", "dog" };
    struct attention_config cfg;
    struct pipeline p;
    struct pipeline_view v;
    struct pipeline_selection sel;

    attention_config_init(&cfg);
    run(&p, &cfg, "the cat saw the dog", &book_vocab);
    pipeline_stage_view(&p, STAGE_WEIGHTS, 0, &v);
    for (int i = 0; i < 5; i++) {
        ck_assert_str_eq(p.query_labels[i], want[i]);
        ck_assert_str_eq(v.row_labels[i], want[i]);
        ck_assert_str_eq(v.col_labels[i], want[i]);
    }
    ck_assert_str_eq(p.tokens.text[3], "the"); /* the sentence itself is unchanged */
    ck_assert_int_eq(pipeline_select(&p, "weights.h0", &sel), 0);
    pipeline_destroy(&p);
    /* Without repeats the labels are the tokens. */
    run(&p, &cfg, "Your journey starts with one step", &book_vocab);
    ck_assert_ptr_eq(p.query_labels, (const char *const *)p.tokens.text);
    pipeline_destroy(&p);
}
END_TEST

static Suite *
pipeline_suite(void)
{
    Suite *s = suite_create("pipeline");
    TCase *book_tc = tcase_create("chapter 3 reference");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(book_tc, 30);
    TCase *knobs = tcase_create("knobs");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(knobs, 30);

    tcase_add_checked_fixture(book_tc, setup, teardown);
    tcase_add_test(book_tc, simple_attention);
    tcase_add_test(book_tc, parameter_columns_make_the_stages);
    tcase_add_test(book_tc, self_attention_v1);
    tcase_add_test(book_tc, self_attention_v2);
    tcase_add_test(book_tc, causal_attention_seed_789);
    tcase_add_test(book_tc, book_dropout_default_path);
    tcase_add_test(book_tc, book_dropout_mkl_path);
    tcase_add_test(book_tc, causal_attention_seed_123);
    tcase_add_test(book_tc, multi_head_wrapper);
    tcase_add_test(book_tc, multi_head_attention);
    tcase_add_test(book_tc, hello_shiny_sun);
    tcase_add_test(book_tc, soft_dictionary_lookup);
    suite_add_tcase(s, book_tc);

    tcase_add_checked_fixture(knobs, setup, teardown);
    tcase_add_test(knobs, eval_mode_draws_no_dropout);
    tcase_add_test(knobs, dropout_pass_is_the_next_forward_call);
    tcase_add_test(knobs, dropout_pass_skips_are_bounded);
    tcase_add_test(knobs, fully_masked_row_is_nan_like_pytorch);
    tcase_add_test(knobs, no_mask_lets_tokens_see_the_future);
    tcase_add_test(knobs, temperature_and_scaling_change_the_divisor);
    tcase_add_test(knobs, positional_encoding_is_added);
    tcase_add_test(knobs, repeated_tokens_are_told_apart);
    tcase_add_test(knobs, captions_follow_the_configuration);
    suite_add_tcase(s, knobs);
    return s;
}

TEST_MAIN(pipeline_suite)
