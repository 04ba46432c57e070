/*
 * test_cli_lora.c - LoRA (the book's appendix E) through the tool: finetune --lora saves
 * adapters that chat, generate --adapters and merge read alike, a GPT-2 checkpoint's tied
 * head untied as the book's GPTModel holds it, adapters whose merge overflows refused.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "data.h"
#include "mygpt/checkpoint.h"
#include "mygpt/lora.h"
#include "mygpt/quantize.h"

/* In dir: BASE with --adapters ad.safetensors, and `mygpt merge BASE ad.safetensors
 * merged.safetensors` (rank 4, alpha 8), generate the same greedy tokens, other than
 * BASE's own */
static void adapters_and_their_merge_generate_alike(const char *dir, const char *base)
{
    char with[2][4096], words[1200];
    proc_result r;
    for (int k = 0; k < 2; k++) { // the adapters on their model, then merged into it
        if (k) {
            snprintf(words, sizeof words, "merge DIR/%s DIR/ad.safetensors DIR/merged.safetensors", base);
            run_in_dir(words, dir, NULL, &r);
            cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
            cr_expect(strstr(r.out, "(rank 4, alpha 8) merged into its weights") != NULL, "%s", r.out);
            proc_result_free(&r);
        }
        snprintf(words, sizeof words, "generate --checkpoint DIR/%s%s --ids 1,2,3 --max-new 8 --no-stream",
                 k ? "merged.safetensors" : base, k ? "" : " --adapters DIR/ad.safetensors");
        run_in_dir(words, dir, NULL, &r);
        cr_assert_eq(r.status, 0, "%s: exit %d: %s", words, r.status, r.err);
        snprintf(with[k], sizeof with[k], "%s", r.out);
        proc_result_free(&r);
    }
    cr_expect_str_eq(with[1], with[0], "the merged model generates other tokens than its adapters");
    snprintf(words, sizeof words, "generate --checkpoint DIR/%s --ids 1,2,3 --max-new 8 --no-stream", base);
    run_in_dir(words, dir, NULL, &r);
    cr_expect(strcmp(r.out, with[0]) != 0, "the trained adapters change no token: the test proves nothing");
    proc_result_free(&r);
}

/* Exercise 7.4 on a GPT-2 checkpoint: its tied head is untied as the book's GPTModel holds
 * it (out_head, a copy of wte), so the head is wrapped and counted as the exercise counts
 * it; the adapters load onto the GPT-2 file (untying it again) and merge into it */
Test(cli_lora, a_gpt2_checkpoint_is_untied_as_the_books_gptmodel, .timeout = 600)
{
    data_file_or_skip("instruction-data.json");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-untie-XXXXXX", base[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(base, sizeof base, "%s/gpt2.safetensors", dir);
    const mygpt_config cfg = {.vocab_size = 50257, .embed_dim = 12, .num_heads = 2, .num_layers = 1,
                              .max_seq_len = 120, .arch = MYGPT_ARCH_GPT2, .qkv_bias = 1};
    mygpt_gpt *g;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 123, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, base, NULL), MYGPT_OK);
    const size_t tied = g->num_parameters;
    mygpt_gpt_free(g);
    proc_result r;
    run_in_dir("finetune --task instruct --checkpoint DIR/gpt2.safetensors --lora 4 --lora-alpha 8 --entries 4 "
                 "--batch 2 --epochs 1 --eval-freq 1 --eval-iter 1 --max-new 6 --lr 1e-1 --save DIR/ad.safetensors",
                 dir, NULL, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    char want[160]; // out_head's 50257 x 12 counted beside the tied model's; its adapter 12 x 4 + 4 x 50257
    snprintf(want, sizeof want, "\nTotal trainable parameters before: %zu,%03zu,%03zu\n", (tied + 50257 * 12) / 1000000,
             (tied + 50257 * 12) / 1000 % 1000, (tied + 50257 * 12) % 1000);
    cr_expect(strstr(r.out, want) && strstr(r.out, "\nTotal trainable LoRA parameters: 201,940\n"), "%s\nwanted %s",
              r.out, want);
    proc_result_free(&r);
    adapters_and_their_merge_generate_alike(dir, "gpt2.safetensors");
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* finetune --lora trains adapters alone and saves them; chat and generate read them with
 * --adapters, and mygpt merge folds them into a checkpoint that generates the same tokens;
 * the misuses are one line and status 2 */
Test(cli_lora, finetune_saves_adapters_that_chat_generate_and_merge_read, .timeout = 600)
{
    data_file_or_skip("instruction-data.json");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-lora-XXXXXX", base[300], other[300], same[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(base, sizeof base, "%s/base.safetensors", dir);
    snprintf(other, sizeof other, "%s/other.safetensors", dir);
    snprintf(same, sizeof same, "%s/same.safetensors", dir);
    // the book's --test_mode GPTModel as a file, and one of another width
    mygpt_config cfg = {.vocab_size = 50257, .embed_dim = 12, .num_heads = 2, .num_layers = 1,
                        .max_seq_len = 120, .arch = MYGPT_ARCH_LLMS_FROM_SCRATCH};
    save_new_model(base, &cfg, 123);
    save_new_model(same, &cfg, 7); // the same shape, other weights
    char classifier[300];
    snprintf(classifier, sizeof classifier, "%s/classifier.safetensors", dir);
    cfg.num_classes = 2; // the same with the book's 2-class head
    save_new_model(classifier, &cfg, 123);
    cfg.num_classes = 0;
    cfg.embed_dim = 16;
    save_new_model(other, &cfg, 1);
    proc_result r;
    run_in_dir("finetune --task instruct --checkpoint DIR/base.safetensors --lora 4 --lora-alpha 8 --entries 4 "
                 "--batch 2 --epochs 1 --eval-freq 1 --eval-iter 1 --max-new 6 --lr 1e-2 --save DIR/ad.safetensors",
                 dir, NULL, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    // 12 x 4 + 4 x 12 for each of W_query, W_key, W_value, out_proj; 12 x 4 + 4 x 48 and 48 x 4 + 4 x 12
    // for the feed-forward; 12 x 4 + 4 x 50257 for out_head
    cr_expect(strstr(r.out, "\nTotal trainable parameters after: 0\nTotal trainable LoRA parameters: 201,940\n") &&
                  strstr(r.out, "\nLoRA adapters saved as "), "%s", r.out);
    proc_result_free(&r);
    adapters_and_their_merge_generate_alike(dir, "base.safetensors");
    char model[300], adapters[300];
    snprintf(model, sizeof model, "%s/base.safetensors", dir);
    snprintf(adapters, sizeof adapters, "%s/ad.safetensors", dir);
    char *argv[] = {MYGPT_EXE, "chat", "--checkpoint", model, "--adapters", adapters, "--max-new", "6", NULL};
    cr_assert_eq(run_process_input(argv, "Name a color.\n", &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_eq(count_lines(r.out), 1, "'%s'", r.out);
    proc_result_free(&r);
    static const char *const bad[][2] = {
        {"finetune --task classify --lora-alpha 8", "--lora-alpha goes with --lora"},
        {"finetune --task classify --lora 0", "--lora"},
        {"finetune --task instruct --lora 4 --save DIR/x.safetensors", "need their model as a file"},
        {"merge DIR/base.safetensors DIR/ad.safetensors DIR/merged.safetensors", "is there already"},
        {"merge DIR/base.safetensors DIR/ad.safetensors DIR/base.safetensors --force", "is the file BASE reads"},
        {"merge DIR/base.safetensors DIR/base.safetensors DIR/y.safetensors", "not a file of LoRA adapters"},
        {"merge DIR/other.safetensors DIR/ad.safetensors DIR/y.safetensors", "adapters are for another model"},
        {"merge DIR/classifier.safetensors DIR/ad.safetensors DIR/y.safetensors",
         "ad.safetensors: the adapters are for a head of 50257 outputs, this model's has 2 (adapters go on the model "
         "they were trained on"},
        {"generate --adapters DIR/ad.safetensors --ids 1,2 --max-new 1 --seed 1 --vocab 300 --embed 8 --heads 2 "
         "--layers 1", "needs --checkpoint"},
        {"generate --checkpoint DIR/base.safetensors --adapters DIR/ad.safetensors --ids 1,2 --max-new 1 "
         "--weights int8", "merge them"},
        {"generate --checkpoint DIR/ad.safetensors --ids 1,2 --max-new 1", "LoRA adapters only"},
        // onto a model of the same shape, or the model they are merged into
        {"merge DIR/same.safetensors DIR/ad.safetensors DIR/y.safetensors",
         "ad.safetensors: the adapters were trained on another base model (checksum "},
        {"generate --checkpoint DIR/same.safetensors --adapters DIR/ad.safetensors --ids 1,2 --max-new 1",
         "the adapters were trained on another base model"},
        {"chat --checkpoint DIR/same.safetensors --adapters DIR/ad.safetensors", "trained on another base model"},
        {"merge DIR/merged.safetensors DIR/ad.safetensors DIR/y.safetensors",
         "ad.safetensors: the adapters are already merged into this model"},
        {"generate --checkpoint DIR/merged.safetensors --adapters DIR/ad.safetensors --ids 1,2 --max-new 1",
         "already merged"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_in_dir(bad[i][0], dir, NULL, &r);
        cr_expect_eq(r.status, 2, "%s: exit %d: %s", bad[i][0], r.status, r.err);
        cr_expect_eq(count_lines(r.err), 1, "%s: %s", bad[i][0], r.err);
        cr_expect(strstr(r.err, bad[i][1]) != NULL, "%s: '%s' lacks '%s'", bad[i][0], r.err, bad[i][1]);
        cr_expect_str_empty(r.out, "%s", bad[i][0]);
        proc_result_free(&r);
    }
    // the counts the book's appendix E prints for GPT-2 small with its 2-class head, without building it
    run_in_dir("params --vocab 50257 --embed 768 --heads 12 --layers 12 --max-seq 1024 --arch llms-from-scratch "
                 "--qkv-bias --classes 2 --lora 16", dir, NULL, &r);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\nLoRA adapters       (rank 16):     2666528\nTotal parameters:                  127107874\n"),
              "124,441,346 + 2,666,528: %s", r.out);
    proc_result_free(&r);
    static const char *const names[] = {"base.safetensors", "other.safetensors", "same.safetensors", "ad.safetensors",
                                        "merged.safetensors", "classifier.safetensors"};
    remove_test_dir(dir, names, sizeof names / sizeof names[0]);
}

/* A test's folder (dir, a mkdtemp template, made) and its files' paths (300 bytes each):
 * paths[0] the base, DIR/NAME.safetensors, paths[1] DIR/ad.safetensors, paths[2]
 * DIR/out.safetensors; returns a small model of the book's (C embed) drawn from seed 3,
 * and *rng seeded with 1 for the adapters */
static mygpt_gpt *lora_setup(char *dir, const char *name, int embed, char *paths[3], mygpt_rng *rng)
{
    cr_assert_not_null(mkdtemp(dir));
    snprintf(paths[0], 300, "%s/%s.safetensors", dir, name);
    snprintf(paths[1], 300, "%s/ad.safetensors", dir);
    snprintf(paths[2], 300, "%s/out.safetensors", dir);
    const mygpt_config cfg = {.vocab_size = 50, .embed_dim = embed, .num_heads = 2, .num_layers = 1,
                              .max_seq_len = 16, .arch = MYGPT_ARCH_LLMS_FROM_SCRATCH};
    mygpt_gpt *g;
    *rng = (mygpt_rng){0};
    mygpt_rng_seed(rng, 1);
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 3, NULL), MYGPT_OK);
    return g;
}

/* Adapters of finite values (3e38) whose merge overflows float32: merge and --adapters
 * refuse them with one line, and merge writes nothing */
Test(cli_lora, adapters_whose_merge_is_not_finite_are_refused, .timeout = 60)
{
    char dir[] = "/tmp/mygpt-lora-huge-XXXXXX", base[300], ad[300], out[300];
    mygpt_rng rng;
    mygpt_gpt *g = lora_setup(dir, "base", 8, (char *[3]){base, ad, out}, &rng);
    cr_assert_eq(mygpt_checkpoint_save(g, base, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_lora_add(g, 2, 2.0, &rng, NULL), MYGPT_OK);
    for (int j = 0; j < mygpt_state_dict_len(&g->config); j++) {
        mygpt_state_entry e;
        mygpt_state_dict_entry(&g->config, &g->params, j, &e);
        for (size_t k = 0; strstr(e.name, ".lora.") && k < e.numel; k++)
            e.data[k] = 3e38f;
    }
    cr_assert_eq(mygpt_checkpoint_save_adapters(g, ad, NULL), MYGPT_OK, "finite adapters are saved");
    mygpt_gpt_free(g);
    static const char *const runs[] = {"merge DIR/base.safetensors DIR/ad.safetensors DIR/out.safetensors",
                                       "generate --checkpoint DIR/base.safetensors --adapters DIR/ad.safetensors "
                                       "--ids 1,2 --max-new 1"};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        proc_result r;
        run_in_dir(runs[i], dir, NULL, &r);
        cr_expect_eq(r.status, 2, "%s: exit %d: %s", runs[i], r.status, r.err);
        cr_expect_eq(count_lines(r.err), 1, "%s: %s", runs[i], r.err);
        cr_expect(strstr(r.err, "ad.safetensors: merged, the adapters make ") && strstr(r.err, "overflows float32"),
                  "%s: %s", runs[i], r.err);
        cr_expect_str_empty(r.out, "%s: %s", runs[i], r.out);
        proc_result_free(&r);
    }
    cr_expect(access(out, F_OK) != 0, "merge wrote the overflowed model");
    unlink(base);
    unlink(ad);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Adapters on a quantized base (int8): merge and --adapters (generate) refuse them in one line
 * naming the base and how to get its float32 weights, not the library's "cannot add
 * adapters: the model is quantized", which names no file; merge writes nothing */
Test(cli_lora, adapters_on_a_quantized_base_name_the_base, .timeout = 60)
{
    char dir[] = "/tmp/mygpt-lora-q8-XXXXXX", base[300], ad[300], out[300];
    mygpt_rng rng;
    mygpt_gpt *g = lora_setup(dir, "q8", 64, (char *[3]){base, ad, out}, &rng); // int8: groups of 64 inputs
    const mygpt_config cfg = g->config;
    cr_assert_eq(mygpt_lora_add(g, 2, 2.0, &rng, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save_adapters(g, ad, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 3, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_gpt_quantize(g, MYGPT_WEIGHTS_INT8, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, base, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    static const char *const runs[][2] = {
        {"merge DIR/q8.safetensors DIR/ad.safetensors DIR/out.safetensors", "BASE "},
        {"generate --checkpoint DIR/q8.safetensors --adapters DIR/ad.safetensors --ids 1,2 --max-new 1",
         "--checkpoint "}};
    for (size_t i = 0; i < 2; i++) {
        proc_result r;
        run_in_dir(runs[i][0], dir, NULL, &r);
        char want[400];
        snprintf(want, sizeof want, "%s%s holds int8 weights: LoRA adapters go on float32 ones", runs[i][1], base);
        expect_one_line_refusal(&r, 2, want, runs[i][0]);
        proc_result_free(&r);
    }
    cr_expect(access(out, F_OK) != 0, "merge wrote a model");
    unlink(base);
    unlink(ad);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}
