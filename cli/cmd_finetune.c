/*
 * cmd_finetune.c - `mygpt finetune --task classify|instruct`: the book's two fine-tunings
 * (Build a Large Language Model (From Scratch), chapter 6's gpt_class_finetune.py and
 * chapter 7's gpt_instruction_finetuning.py) on a model of the user's, with the book's
 * defaults and its printed log, or with appendix E's LoRA adapters alone (--lora): the
 * set-up and the loops are trainer/'s, the ones the chapters 81, 86 and 87 run.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "book_train.h"
#include "classifier_train.h"
#include "commands.h"
#include "finetune_setup.h"
#include "model_args.h"
#include "mygpt/checkpoint.h"
#include "mygpt/data.h"
#include "mygpt/lora.h"
#include "mygpt/tokenizer.h"
#include "mygpt/train.h"
#include "output.h"
#include "train_extras.h"

/* The book's defaults of each task: gpt_class_finetune.py's and gpt_instruction_finetuning.py's */
typedef struct task_defaults {
    const char *name;
    long long epochs, eval_freq, eval_iter, batch;
    double lr, weight_decay;
} task_defaults;

static const task_defaults TASKS[2] = {
    {"classify", 5, 50, 5, 8, 5e-5, 0.1},
    {"instruct", 2, 5, 5, 8, 5e-5, 0.1},
};

/* The fresh models a user may try the command on (no checkpoint): the book's --test_mode one */
typedef struct finetune_preset {
    const char *name, *what;
    mygpt_config (*config)(int num_classes);
} finetune_preset;

static const finetune_preset PRESETS[] = {
    {"test", "the book's --test_mode GPTModel: emb_dim 12, 2 heads, 1 layer, context 120, no qkv bias",
     book_test_mode_config},
};

/* The book's two example texts for classify_review */
static const char *const REVIEWS[2] = {
    "You are a winner you have been specially selected to receive $1000 cash or a $2000 award.",
    "Hey, just wanted to check if we're still on for dinner tonight? Let me know!",
};

static int usage(void)
{
    printf("usage: mygpt finetune --task classify|instruct [--checkpoint FILE|DIR | --preset test --seed S]\n"
           "                      [--data PATH] [--epochs N] [--lr LR] [--weight-decay WD] [--batch B]\n"
           "                      [--max-length T] [--eval-freq E] [--eval-iter K] [--mask-instructions]\n"
           "                      [--entries N] [--max-new N] [--threads K] [--lora R [--lora-alpha A]]\n"
           "                      [--save FILE] [--responses FILE] [--force]\n"
           "\n"
           "The book's fine-tunings (Build a Large Language Model (From Scratch)), as its scripts\n"
           "run them, printing what they print.\n"
           "\n"
           "--task classify (chapter 6, gpt_class_finetune.py): the SMS spam texts of --data DIR\n"
           "  (sms_spam_train.csv, sms_spam_validation.csv, sms_spam_test.csv; default: the data\n"
           "  folder) padded with <|endoftext|> to the training set's longest text, or cut and\n"
           "  padded to --max-length; the model's output head replaced by nn.Linear(emb_dim, 2)\n"
           "  after torch.manual_seed(123); everything frozen but the last block, the final\n"
           "  LayerNorm and the head; train_classifier_simple with AdamW. Prints its log\n"
           "  ('Ep 1 (Step 000000): Train loss ..., Val loss ...' every --eval-freq steps over\n"
           "  --eval-iter batches, each epoch's accuracies), then the training, validation and test\n"
           "  accuracies over every batch, and classify_review of the book's two texts, spam or\n"
           "  not spam. Defaults: 5 epochs, lr 5e-5, weight decay 0.1, batch 8, eval-freq 50,\n"
           "  eval-iter 5.\n"
           "--task instruct (chapter 7, gpt_instruction_finetuning.py): --data FILE (default: the\n"
           "  data folder's instruction-data.json), split 85/5/10 %% in file order (--entries N:\n"
           "  the first N of each part, as the script's --test_mode takes 10), batches of\n"
           "  custom_collate_fn (allowed_max_length --max-length: default 1024, or the model's\n"
           "  context when shorter), the instruction tokens masked in the targets with\n"
           "  --mask-instructions (the book's exercise 7.2); the initial losses, then\n"
           "  train_model_simple's log and a greedy sample of the first validation entry after\n"
           "  each epoch; then the greedy responses to the test entries (max_new_tokens 256,\n"
           "  --max-new to change it, stopping at <|endoftext|>) written with --responses FILE as\n"
           "  the book writes instruction-data-with-response.json (without it a line on stderr\n"
           "  says they were not saved). Defaults: 2 epochs, lr 5e-5,\n"
           "  weight decay 0.1, batch 8, eval-freq 5, eval-iter 5.\n"
           "\n"
           "The model: --checkpoint FILE, whatever `generate --checkpoint` reads (mygpt's, the\n"
           "book's GPTModel state_dict as chapter 5 and `mygpt train` save it, Hugging Face's\n"
           "GPT-2 of any size), or DIR, a Hugging Face GPT-2 folder (DIR/model.safetensors and its\n"
           "config.json): the book's run is --checkpoint on GPT-2 small (classify) or medium\n"
           "(instruct). Without it, a fresh model to try the command on: --preset test (the only\n"
           "one, and the default: the book's --test_mode GPTModel, emb_dim 12, 2 heads, 1 layer,\n"
           "context 120) drawn after torch.manual_seed(--seed, default 123); its numbers are\n"
           "chapters 81's and 86's. The generator is then seeded with 123 before the training,\n"
           "as the scripts do. --threads K: OpenMP threads (the same bits for any K).\n"
           "\n");
    printf("--lora R [--lora-alpha A] (the book's appendix E; exercise 7.4 for instruct): every\n"
           "parameter frozen and every nn.Linear wrapped in LinearWithLoRA of rank R and alpha A\n"
           "(default R), W x + b + (A / R) (x A_r) B_r: prints the trainable counts before, after\n"
           "freezing and of the adapters, and trains the adapters alone (classify: after the\n"
           "accuracies of 10 batches, as the appendix; its lr 8e-4 is then the default). On a\n"
           "Hugging Face GPT-2, whose head is the token embedding, instruct first unties the head\n"
           "as the book's GPTModel holds it (out_head, a copy of wte), so the head is wrapped and\n"
           "the counts and draws are exercise 7.4's. Its code (and the printed appendix) scales by\n"
           "alpha alone: --lora 16 --lora-alpha 256 is its scale.\n"
           "\n"
           "--save FILE: the fine-tuned model, a checkpoint `mygpt chat --checkpoint FILE` talks\n"
           "to (instruct) or the classifier; with --lora the adapters alone, for\n"
           "`mygpt chat|generate --checkpoint CHECKPOINT --adapters FILE` or `mygpt merge`\n"
           "(so --lora --save needs --checkpoint; for classify, a classifier: this command's\n"
           "--epochs 0 --save makes one). --save and --responses never replace a file that is\n"
           "there, unless --force, and never each other or a file the command reads, even then.\n"
           "The GPT-2 vocabulary comes from the data folder.\n");
    return 0;
}

/* A file a run will write (cli_check_output): 0, or EXIT_USAGE after one line naming the flag. */
static int check_output(const char *cmd, const parsed_args *a, const char *flag)
{
    const char *path = args_get(a, flag);
    char label[32];
    snprintf(label, sizeof label, "--%s", flag);
    return path ? cli_check_output(cmd, label, path, args_has(a, "force")) : 0;
}

/* The model to tune: --checkpoint's (a folder: its model.safetensors) or the preset's
 * drawn from rng, with a classification head of num_classes (0: none) drawn as the book's
 * chapter 6 draws it. 0, or the exit code after one line. */
static int load_model(const char *cmd, const parsed_args *a, mygpt_rng *rng, int num_classes, mygpt_gpt **g)
{
    mygpt_error err = {0};
    *g = NULL;
    if (!args_has(a, "checkpoint")) {
        const char *name = args_has(a, "preset") ? args_get(a, "preset") : "test";
        for (size_t i = 0; i < sizeof PRESETS / sizeof PRESETS[0]; i++)
            if (strcmp(name, PRESETS[i].name) == 0) {
                const mygpt_config cfg = PRESETS[i].config(num_classes);
                const mygpt_status st = mygpt_gpt_create_from(g, &cfg, rng, &err);
                return st == MYGPT_OK ? 0 : cli_fail(cmd, st, &err);
            }
        cli_error(cmd, "--preset: '%s' is not a preset (test: %s)", name, PRESETS[0].what);
        return EXIT_USAGE;
    }
    const mygpt_status st = finetune_model_load(g, args_get(a, "checkpoint"), &err);
    if (st != MYGPT_OK) {
        const mygpt_error inner = err;
        snprintf(err.message, sizeof err.message, "--checkpoint: %.*s", (int)sizeof err.message - 16, inner.message);
        return cli_fail(cmd, st, &err);
    }
    return 0;
}

/* The numbers a run takes, each the user's or the book's */
typedef struct finetune_opts {
    int instruct;
    int64_t epochs, eval_freq, eval_iter, batch, max_length, entries, max_new, lora_rank;
    double lr, weight_decay, lora_alpha;
    uint64_t seed;
} finetune_opts;

/* --save: the model, or its adapters alone under --lora */
static int save_model(const char *cmd, const parsed_args *a, const mygpt_gpt *g)
{
    if (!args_has(a, "save"))
        return 0;
    const int adapters = g->config.lora_rank > 0, force = args_has(a, "force");
    mygpt_error err = {0}; // without --force, never over a file that appeared while it trained
    const mygpt_status st = adapters ? (force ? mygpt_checkpoint_save_adapters : mygpt_checkpoint_save_adapters_new)(
                                           g, args_get(a, "save"), &err)
                                     : (force ? mygpt_checkpoint_save : mygpt_checkpoint_save_new)(
                                           g, args_get(a, "save"), &err);
    if (st != MYGPT_OK)
        return cli_write_fail(cmd, st, &err);
    if (!adapters) {
        cli_say(stdout, "Model saved as %s", args_get(a, "save"));
        return 0;
    }
    struct stat sb; // --lora --save comes with --checkpoint; a Hugging Face folder's model is its model.safetensors
    const char *base = args_get(a, "checkpoint");
    const int folder = base && stat(base, &sb) == 0 && S_ISDIR(sb.st_mode);
    cli_say(stdout, "LoRA adapters saved as %s (for --checkpoint %s%s --adapters %s)", args_get(a, "save"),
           base ? base : "?", folder ? "/model.safetensors" : "", args_get(a, "save"));
    return 0;
}

/* --lora: the counts and replace_linear_with_lora (A drawn from rng), then a trainer that
 * trains the adapters alone; without it a trainer of every parameter. 0, or the exit code. */
static int lora_trainer(const char *cmd, const finetune_opts *o, mygpt_gpt *g, mygpt_rng *rng, mygpt_trainer **tr)
{
    mygpt_error err = {0};
    const mygpt_status st = o->lora_rank > 0 ? lora_wrap_print(stdout, g, (int)o->lora_rank, o->lora_alpha, rng, tr, &err)
                                             : mygpt_trainer_create(tr, g, &err);
    return st == MYGPT_OK ? 0 : cli_fail(cmd, st, &err);
}

/* The classifier to tune: a fresh model's head drawn as chapter 81 draws it (from rng),
 * a classifier of 2 classes as it is (this command's --save), or a language model (*lm,
 * kept) with its head replaced by a new one of 2 classes; dropout off. 0, or the exit
 * code after one line. */
static int classifier_model(const char *cmd, const parsed_args *a, const finetune_opts *o, mygpt_rng *rng,
                            mygpt_gpt **lm, mygpt_gpt **g)
{
    int rc;
    if ((rc = load_model(cmd, a, rng, args_has(a, "checkpoint") ? 0 : 2, lm)))
        return rc;
    mygpt_error err = {0};
    mygpt_status st;
    if ((*lm)->config.num_classes == 2) { // the preset's, or a classifier already (this command's --save)
        *g = *lm;
        *lm = NULL;
    } else if ((*lm)->config.num_classes > 0) {
        cli_error(cmd, "--checkpoint: a classifier of %d classes: the spam texts have 2", (*lm)->config.num_classes);
        return EXIT_USAGE;
    } else if (o->lora_rank > 0 && args_has(a, "save")) {
        cli_error(cmd, "--lora --save: the adapters alone would lack the new 2-class head, which is not in %s: save "
                       "the classifier first (--epochs 0 --save CLASSIFIER), then tune it with --checkpoint "
                       "CLASSIFIER --lora %lld --save ADAPTERS", args_get(a, "checkpoint"), (long long)o->lora_rank);
        return EXIT_USAGE;
    } else if ((st = classifier_from_lm(g, *lm, 2, &err)) != MYGPT_OK) {
        return cli_fail(cmd, st, &err);
    }
    (*g)->config.dropout = 0.0; // BASE_CONFIG's drop_rate
    return 0;
}

/* The classifier's trainer: with --lora, appendix E's torch.manual_seed(123) and the
 * accuracies of 10 batches, then the counts and replace_linear_with_lora (its A drawn
 * after that shuffle) and only the adapters train; else every parameter frozen but the
 * last block, final_norm and the new head. --save then checked as it will find its place.
 * x, y: room for a batch. 0, or the exit code after one line. */
static int classifier_trainer(const char *cmd, const parsed_args *a, const finetune_opts *o, mygpt_gpt *g,
                              spam_loaders *l, mygpt_rng *rng, int64_t *x, int64_t *y, mygpt_trainer **tr)
{
    mygpt_error err = {0};
    mygpt_status st;
    int rc;
    if (o->lora_rank > 0) {
        mygpt_rng_seed(rng, 123);
        if ((st = spam_print_accuracies(stdout, g, l, rng, 10, x, y, &err)) != MYGPT_OK)
            return cli_fail(cmd, st, &err);
        if ((rc = lora_trainer(cmd, o, g, rng, tr)))
            return rc;
    } else if ((st = mygpt_trainer_create(tr, g, &err)) != MYGPT_OK ||
               (st = mygpt_trainer_freeze_for_classification(*tr, &err)) != MYGPT_OK) {
        return cli_fail(cmd, st, &err);
    }
    if (args_has(a, "save") && (st = mygpt_checkpoint_check_save(g, args_get(a, "save"), &err)) != MYGPT_OK)
        return cli_fail(cmd, st, &err);
    return 0;
}

/* gpt_class_finetune.py's run */
static int run_classify(const char *cmd, const parsed_args *a, const finetune_opts *o, mygpt_tokenizer *tok,
                        const char *dir)
{
    mygpt_error err = {0};
    mygpt_spam_dataset ds[3];
    mygpt_status st = spam_datasets_load(ds, dir, tok, (size_t)o->max_length, &err);
    if (st != MYGPT_OK)
        return cli_fail(cmd, st, &err);
    int rc = 0;
    spam_loaders l = {0};
    mygpt_gpt *lm = NULL, *g = NULL;
    mygpt_trainer *tr = NULL;
    mygpt_optimizer opt = {0};
    int64_t *x = NULL, *y = NULL;
    // torch.manual_seed(123): the loaders; the model (a fresh one drawn here)
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, o->seed);
    if ((st = spam_loaders_init(&l, ds, (size_t)o->batch, &err)) != MYGPT_OK) {
        rc = cli_fail(cmd, st, &err);
        goto done;
    }
    if (l.train.num_batches == 0) {
        cli_error(cmd, "--batch %lld: more than the %zu training texts (the loader drops a short batch)",
                  (long long)o->batch, ds[0].n);
        rc = EXIT_USAGE;
        goto done;
    }
    if ((rc = classifier_model(cmd, a, o, &rng, &lm, &g)))
        goto done;
    const size_t T = ds[0].max_length;
    if (T > (size_t)g->config.max_seq_len) {
        cli_error(cmd, "%s/%s: its texts are padded to %zu tokens, more than the model's context of %d: give "
                       "--max-length %d or less", dir, SPAM_FILES[0], T, g->config.max_seq_len, g->config.max_seq_len);
        rc = EXIT_USAGE;
        goto done;
    }
    x = malloc((size_t)o->batch * T * sizeof *x);
    y = malloc((size_t)o->batch * sizeof *y);
    if (!x || !y) {
        cli_error(cmd, "out of memory");
        rc = EXIT_RUNTIME;
        goto done;
    }
    if ((rc = classifier_trainer(cmd, a, o, g, &l, &rng, x, y, &tr)))
        goto done;
    // torch.manual_seed(123); optimizer = AdamW(model.parameters(), lr=5e-5, weight_decay=0.1);
    // train_classifier_simple(num_epochs, eval_freq, eval_iter)
    mygpt_rng_seed(&rng, 123);
    mygpt_adamw_init(&opt, o->lr);
    opt.weight_decay = o->weight_decay;
    const classifier_run run = {.epochs = (long)o->epochs, .eval_freq = (long)o->eval_freq,
                                .eval_iter = (size_t)o->eval_iter};
    const double t0 = cli_now_s();
    if ((st = classifier_train(stdout, tr, &opt, &l.train, &l.train_eval, &l.val, &rng, &run, x, y, NULL, &err)) !=
        MYGPT_OK) {
        rc = train_loop_fail(cmd, st, &err);
        goto done;
    }
    fprintf(stderr, "mygpt finetune: training completed in %.2f minutes\n", (cli_now_s() - t0) / 60);
    // train_accuracy = calc_accuracy_loader(train_loader, model, device), val, test: every batch
    if ((st = spam_print_accuracies(stdout, g, &l, &rng, 0, x, y, &err)) != MYGPT_OK) {
        rc = cli_fail(cmd, st, &err);
        goto done;
    }
    // classify_review(text, model, tokenizer, device, max_length=train_dataset.max_length)
    for (int i = 0; i < 2; i++) {
        int label;
        if ((st = classify_review(g, tok, REVIEWS[i], T, &label, NULL, &err)) != MYGPT_OK) {
            rc = cli_fail(cmd, st, &err);
            goto done;
        }
        printf("%s\n%s\n", REVIEWS[i], label == 1 ? "spam" : "not spam");
    }
    rc = save_model(cmd, a, g);
done:
    free(x);
    free(y);
    mygpt_optimizer_free(&opt);
    mygpt_trainer_free(tr);
    mygpt_gpt_free(g);
    mygpt_gpt_free(lm);
    spam_loaders_free(&l);
    spam_datasets_free(ds);
    return rc;
}

/* The language model to tune (a classifier is refused), dropout off. 0, or the exit code
 * after one line. */
static int language_model(const char *cmd, const parsed_args *a, mygpt_rng *rng, mygpt_gpt **g)
{
    const int rc = load_model(cmd, a, rng, 0, g);
    if (rc)
        return rc;
    if ((*g)->config.num_classes > 0) {
        cli_error(cmd, "--checkpoint: a classifier (a head of %d classes), not a language model: it has no text to "
                       "write", (*g)->config.num_classes);
        return EXIT_USAGE;
    }
    (*g)->config.dropout = 0.0; // BASE_CONFIG's drop_rate
    return 0;
}

/* The greedy responses to the test entries, as instruction-data-with-response.json,
 * written to --responses; without it a line on stderr says they were not kept, and how to
 * keep them. 0, or the exit code after one line. */
static int write_responses(const char *cmd, const parsed_args *a, const finetune_opts *o, mygpt_gpt *g,
                           const mygpt_tokenizer *tok, const instruct_splits *split)
{
    mygpt_error err = {0};
    char *json = NULL;
    size_t json_len = 0;
    int rc = 0;
    printf("Generating responses\n");
    fflush(stdout);
    mygpt_status st = instruct_responses_json(g, tok, split->test, split->n_test, (int)o->max_new, &json, &json_len,
                                              &err);
    if (st != MYGPT_OK) {
        rc = cli_fail(cmd, st, &err);
    } else if (!args_has(a, "responses")) {
        fprintf(stderr, "mygpt %s: the responses to the %zu test entries were not saved: --responses FILE writes "
                        "them (the book's instruction-data-with-response.json)\n", cmd, split->n_test);
    } else {
        if ((st = (args_has(a, "force") ? mygpt_write_file : mygpt_write_file_new)(args_get(a, "responses"), json,
                                                                                    json_len, &err)) != MYGPT_OK)
            rc = cli_write_fail(cmd, st, &err);
        else
            cli_say(stdout, "Responses saved as %s", args_get(a, "responses"));
    }
    free(json);
    return rc;
}

/* The language model's trainer: with --lora, exercise 7.4's counts and
 * replace_linear_with_lora on the book's GPTModel (a GPT-2's head untied, as
 * load_weights_into_gpt copies wte into out_head), A drawn after GPTModel(BASE_CONFIG)'s
 * own draws (a checkpoint's model drew them before its weights were loaded), the adapters
 * alone training; else every parameter. --save then checked as it will find its place.
 * 0, or the exit code after one line. */
static int instruct_trainer(const char *cmd, const parsed_args *a, const finetune_opts *o, mygpt_gpt *g,
                            mygpt_rng *rng, mygpt_trainer **tr)
{
    mygpt_error err = {0};
    mygpt_status st;
    int rc;
    if (o->lora_rank > 0 && g->config.arch == MYGPT_ARCH_GPT2 && (st = mygpt_lora_untie_head(g, &err)) != MYGPT_OK)
        return cli_fail(cmd, st, &err);
    if (o->lora_rank > 0 && args_has(a, "checkpoint") && (st = mygpt_gpt_skip_init(&g->config, rng, &err)) != MYGPT_OK)
        return cli_fail(cmd, st, &err);
    if ((rc = lora_trainer(cmd, o, g, rng, tr)))
        return rc;
    if (args_has(a, "save") && (st = mygpt_checkpoint_check_save(g, args_get(a, "save"), &err)) != MYGPT_OK)
        return cli_fail(cmd, st, &err);
    return 0;
}

/* gpt_instruction_finetuning.py's run */
static int run_instruct(const char *cmd, const parsed_args *a, const finetune_opts *o, mygpt_tokenizer *tok,
                        const char *path)
{
    mygpt_error err = {0};
    instruct_splits split;
    mygpt_status st = instruct_splits_read(&split, path, (size_t)o->entries, &err);
    if (st != MYGPT_OK)
        return cli_fail(cmd, st, &err);
    int rc = 0;
    instruct_loaders l = {0};
    int have_loaders = 0;
    mygpt_gpt *g = NULL;
    mygpt_trainer *tr = NULL;
    mygpt_optimizer opt = {0};
    int64_t *x = NULL, *y = NULL, *start = NULL;
    size_t n_start = 0;
    if (split.n_train < (size_t)o->batch || split.n_val == 0) {
        cli_error(cmd, "--data: %s: %zu training entries and %zu validation entries: too few for a batch of %lld "
                       "and an evaluation", path, split.n_train, split.n_val, (long long)o->batch);
        rc = EXIT_USAGE;
        goto done;
    }
    // torch.manual_seed(123); the loaders; the model (a fresh one drawn here, a checkpoint read)
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, o->seed);
    if ((rc = language_model(cmd, a, &rng, &g)))
        goto done;
    const int context = g->config.max_seq_len;
    int64_t allowed = o->max_length ? o->max_length : (context < 1024 ? context : 1024);
    if (allowed > context) {
        cli_error(cmd, "--max-length %lld: more than the model's context of %d", (long long)allowed, context);
        rc = EXIT_USAGE;
        goto done;
    }
    if ((st = instruct_loaders_init(&l, &split, tok, (size_t)o->batch, (size_t)allowed, args_has(a, "mask-instructions"),
                                    &err)) != MYGPT_OK) {
        rc = cli_fail(cmd, st, &err);
        goto done;
    }
    have_loaders = 1;
    instruct_print_lengths(stdout, &split);
    cli_say(stdout, "Loaded model: %s", args_has(a, "checkpoint") ? args_get(a, "checkpoint") : "Small test model");
    printf("--------------------------------------------------\n");
    if ((rc = instruct_trainer(cmd, a, o, g, &rng, &tr)))
        goto done;
    x = malloc(l.room * sizeof *x);
    y = malloc(l.room * sizeof *y);
    if (!x || !y) {
        cli_error(cmd, "out of memory");
        rc = EXIT_RUNTIME;
        goto done;
    }
    if ((st = instruct_print_initial_losses(stdout, g, &l, &rng, (size_t)o->eval_iter, x, y, &err)) != MYGPT_OK ||
        (st = instruct_encode_prompt(tok, &split.val[0], &start, &n_start, &err)) != MYGPT_OK) {
        rc = cli_fail(cmd, st, &err);
        goto done;
    }
    // torch.manual_seed(123); optimizer = AdamW(lr=0.00005, weight_decay=0.1);
    // train_model_simple(..., start_context=format_input(val_data[0]))
    mygpt_adamw_init(&opt, o->lr);
    opt.weight_decay = o->weight_decay;
    mygpt_rng_seed(&rng, 123);
    tr->dropout_rng = &rng;
    const book_run run = {.epochs = (long)o->epochs, .eval_every = (long)o->eval_freq,
                          .eval_batches = (size_t)o->eval_iter, .tok = tok, .prompt = start, .n_prompt = n_start,
                          .sample_tokens = 50};
    long steps;
    const double t0 = cli_now_s();
    if ((st = book_train_loaders(stdout, tr, &opt, &l.l_train, &l.l_train_eval, &l.l_val, &rng, &run, x, y, &steps,
                                 &err)) != MYGPT_OK) {
        rc = train_loop_fail(cmd, st, &err);
        goto done;
    }
    fprintf(stderr, "mygpt finetune: training completed in %.2f minutes\n", (cli_now_s() - t0) / 60);
    printf("--------------------------------------------------\n");
    if ((rc = save_model(cmd, a, g)))
        goto done;
    rc = write_responses(cmd, a, o, g, tok, &split);
done:
    free(start);
    free(x);
    free(y);
    mygpt_optimizer_free(&opt);
    mygpt_trainer_free(tr);
    mygpt_gpt_free(g);
    if (have_loaders)
        instruct_loaders_free(&l);
    instruct_splits_free(&split);
    return rc;
}

/* --task and the numbers of the run, each the user's or the book's, into *o (--threads
 * into *threads); 0, or EXIT_USAGE after the error. */
static int read_opts(const char *cmd, const parsed_args *a, finetune_opts *o, int64_t *threads)
{
    const char *task = args_get(a, "task");
    if (!task) {
        cli_error(cmd, "--task classify|instruct is required");
        return EXIT_USAGE;
    }
    if (strcmp(task, "classify") == 0)
        o->instruct = 0;
    else if (strcmp(task, "instruct") == 0)
        o->instruct = 1;
    else {
        cli_error(cmd, "--task: '%s' is not classify or instruct", task);
        return EXIT_USAGE;
    }
    const task_defaults *d = &TASKS[o->instruct];
    o->epochs = d->epochs, o->eval_freq = d->eval_freq, o->eval_iter = d->eval_iter, o->batch = d->batch;
    o->lr = d->lr, o->weight_decay = d->weight_decay, o->max_new = 256, o->seed = 123;
    if (args_i64_in(cmd, a, "epochs", 0, 1 << 20, 0, &o->epochs) ||
        args_i64_in(cmd, a, "eval-freq", 1, 1 << 30, 0, &o->eval_freq) ||
        args_i64_in(cmd, a, "eval-iter", 1, 1 << 30, 0, &o->eval_iter) ||
        args_i64_in(cmd, a, "batch", 1, 1 << 20, 0, &o->batch) ||
        args_i64_in(cmd, a, "max-length", 1, 1 << 24, 0, &o->max_length) ||
        args_i64_in(cmd, a, "entries", 1, 1 << 30, 0, &o->entries) ||
        args_i64_in(cmd, a, "max-new", 0, 1 << 20, 0, &o->max_new) ||
        args_i64_in(cmd, a, "threads", 1, 256, 0, threads) || args_double_min(cmd, a, "lr", 0, &o->lr) ||
        args_i64_in(cmd, a, "lora", 1, MYGPT_LORA_MAX_RANK, 0, &o->lora_rank) ||
        args_double_min(cmd, a, "weight-decay", 0, &o->weight_decay) ||
        (args_has(a, "seed") && parse_seed(cmd, "seed", args_get(a, "seed"), &o->seed)))
        return EXIT_USAGE;
    o->lora_alpha = (double)o->lora_rank; // the book's runs: alpha = rank
    if (args_has(a, "lora-alpha") && !args_has(a, "lora")) {
        cli_error(cmd, "--lora-alpha goes with --lora R");
        return EXIT_USAGE;
    }
    if (args_has(a, "lora-alpha")) { // a number the adapters' file holds and reads back
        if (parse_double(cmd, "lora-alpha", args_get(a, "lora-alpha"), &o->lora_alpha))
            return EXIT_USAGE;
        if (!(o->lora_alpha >= MYGPT_LORA_ALPHA_MIN && o->lora_alpha <= MYGPT_LORA_ALPHA_MAX)) {
            cli_error(cmd, "--lora-alpha must be from %g to %g, got %s", MYGPT_LORA_ALPHA_MIN, MYGPT_LORA_ALPHA_MAX,
                      args_get(a, "lora-alpha"));
            return EXIT_USAGE;
        }
    }
    if (o->lora_rank > 0 && !o->instruct && !args_has(a, "lr"))
        o->lr = 8e-4; // appendix E's
    if (o->lora_rank > 0 && args_has(a, "save") && !args_has(a, "checkpoint")) {
        cli_error(cmd, "--lora --save writes the adapters alone: they need their model as a file (--checkpoint)");
        return EXIT_USAGE;
    }
    if (args_has(a, "checkpoint") && (args_has(a, "preset") || args_has(a, "seed"))) {
        cli_error(cmd, "--preset and --seed draw a fresh model: they cannot be used with --checkpoint");
        return EXIT_USAGE;
    }
    if (!o->instruct && (args_has(a, "mask-instructions") || args_has(a, "responses") || args_has(a, "entries") ||
                        args_has(a, "max-new"))) {
        cli_error(cmd, "--mask-instructions, --responses, --entries and --max-new go with --task instruct");
        return EXIT_USAGE;
    }
    return 0;
}

/* The outputs apart from each other and from every file read (data the task's --data
 * path), --force or not, and each a path that can take it. 0, or EXIT_USAGE after the
 * error. */
static int check_files(const char *cmd, const parsed_args *a, const finetune_opts *o, const char *data)
{
    char model[2][4200], splits[3][4400], vocab[2][4200], conf[4200];
    cli_file tokenizer[2], checkpoint[2];
    tokenizer_files(tokenizer, vocab);
    cli_checkpoint_files("--checkpoint", args_get(a, "checkpoint"), checkpoint, model);
    for (int k = 0; k < 3; k++)
        snprintf(splits[k], sizeof splits[k], "%s/%s", data, SPAM_FILES[k]);
    const cli_file files[] = {{"--save", args_get(a, "save"), 1, 0},
                              cli_save_config_file(args_get(a, "save"), o->lora_rank == 0, conf), // not read yet
                              {"--responses", args_get(a, "responses"), 1, 0},
                              checkpoint[0],
                              checkpoint[1],
                              {"--data", o->instruct ? data : NULL, 0, 0},
                              {"--data", o->instruct ? NULL : splits[0], 0, 0},
                              {"--data", o->instruct ? NULL : splits[1], 0, 0},
                              {"--data", o->instruct ? NULL : splits[2], 0, 0},
                              tokenizer[0],
                              tokenizer[1]};
    int rc = cli_distinct_files(cmd, files, (int)(sizeof files / sizeof files[0]));
    if (!rc && !(rc = check_output(cmd, a, "save")))
        rc = check_output(cmd, a, "responses");
    return rc;
}

int cmd_finetune(int argc, char **argv)
{
    const char *cmd = "finetune";
    static const arg_spec ARGS[] = {
        {"task", 1, 0},              {"checkpoint", ARG_PATH, 0}, {"preset", 1, 0},    {"seed", 1, 0},
        {"data", ARG_PATH, 0},       {"epochs", 1, 0},            {"lr", 1, 0},        {"weight-decay", 1, 0},
        {"batch", 1, 0},             {"max-length", 1, 0},        {"eval-freq", 1, 0}, {"eval-iter", 1, 0},
        {"mask-instructions", 0, 0}, {"entries", 1, 0},           {"max-new", 1, 0},   {"threads", 1, 0},
        {"save", ARG_PATH, 0},       {"responses", ARG_PATH, 0},  {"force", 0, 0},     {"lora", 1, 0},
        {"lora-alpha", 1, 0},        {NULL, 0, 0}};
    parsed_args a;
    int rc = args_parse(cmd, argc, argv, ARGS, 0, &a);
    if (rc < 0)
        return usage();
    if (rc)
        return rc;
    finetune_opts o = {0};
    int64_t threads = 0;
    if ((rc = read_opts(cmd, &a, &o, &threads)))
        return rc;
    // the data: the user's, or the data folder's files
    char dir[4096], data[4200];
    mygpt_error err = {0};
    mygpt_status st = mygpt_data_dir(dir, sizeof dir, &err);
    if (st != MYGPT_OK)
        return cli_fail(cmd, st, &err);
    if (args_has(&a, "data"))
        snprintf(data, sizeof data, "%s", args_get(&a, "data"));
    else
        snprintf(data, sizeof data, o.instruct ? "%s/instruction-data.json" : "%s", dir);
    if ((rc = check_files(cmd, &a, &o, data)))
        return rc;
    if (threads > 0)
        omp_set_num_threads((int)threads);
    mygpt_tokenizer *tok;
    if ((st = mygpt_tokenizer_load_dir(&tok, dir, &err)) != MYGPT_OK)
        return cli_fail(cmd, st, &err);
    rc = o.instruct ? run_instruct(cmd, &a, &o, tok, data) : run_classify(cmd, &a, &o, tok, data);
    mygpt_tokenizer_free(tok);
    return rc;
}
