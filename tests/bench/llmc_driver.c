/*
 * llmc_driver.c: llm.c's CPU forward of GPT-2 small (its train_gpt2.c,
 * https://github.com/karpathy/llm.c), timed as `bench gpt2` times
 * attnscope's: random weights of GPT-2 small's shapes, one sequence of T
 * tokens, every position's logits (llm.c also makes their softmax), a
 * warm-up forward first (llm.c allocates its activations on the first).
 *
 * Not part of the build or of CI: tests/bench/llmc fetches llm.c and
 * compiles this file against it, as its own Makefile compiles train_gpt2
 * (-Ofast, OpenMP; OMP_NUM_THREADS threads).
 *
 *   llmc_driver T REPS   prints "llmc_T<TAB>median_ms<TAB>min_ms<TAB>max_ms"
 */
#define main llmc_train_main /* train_gpt2.c's own main, unused */
#include "train_gpt2.c"
#undef main

static double
seconds(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int
by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
    const GPT2Config small = { 1024, 50257, 50304, 12, 12, 768 };
    GPT2 model;
    unsigned seed = 1;
    double times[101];
    int T, reps, *inputs;

    if (argc < 3 || (T = atoi(argv[1])) < 1 || T > 1024 || (reps = atoi(argv[2])) < 1 ||
        reps > 101) {
        fprintf(stderr, "usage: llmc_driver T REPS (T 1-1024, REPS 1-101)\n");
        return 2;
    }
    memset(&model, 0, sizeof model);
    model.config = small;
    fill_in_parameter_sizes(model.param_sizes, model.config);
    for (int i = 0; i < NUM_PARAMETER_TENSORS; i++)
        model.num_parameters += model.param_sizes[i];
    model.params_memory = malloc_and_point_parameters(&model.params, model.param_sizes);
    for (size_t i = 0; i < model.num_parameters; i++) {
        seed = seed * 1664525u + 1013904223u;
        model.params_memory[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * 0.2f;
    }
    model.mean_loss = -1.0f;
    inputs = malloc((size_t)T * sizeof *inputs);
    for (int i = 0; i < T; i++)
        inputs[i] = (i * 7919) % 50257;
    gpt2_forward(&model, inputs, NULL, 1, (size_t)T); /* the activations allocated */
    for (int r = 0; r < reps; r++) {
        const double t0 = seconds();
        gpt2_forward(&model, inputs, NULL, 1, (size_t)T);
        times[r] = (seconds() - t0) * 1e3;
    }
    qsort(times, (size_t)reps, sizeof *times, by_value);
    printf("llmc_%d\t%.3f\t%.3f\t%.3f\n", T, times[reps / 2], times[0], times[reps - 1]);
    gpt2_free(&model);
    free(inputs);
    return 0;
}
