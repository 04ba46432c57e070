/*
 * finetune_setup.c - the book's set-up around its chapter-6 and chapter-7 fine-tunings
 * (finetune_setup.h), each step as the book's Python takes it.
 */
#include "finetune_setup.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "classifier_train.h"
#include "mygpt/checkpoint.h"
#include "mygpt/generate.h"
#include "mygpt/lora.h"
#include "mygpt/print.h"
#include "mygpt/tensor.h"
#include "train_step.h"

const char *const SPAM_FILES[3] = {"sms_spam_train.csv", "sms_spam_validation.csv", "sms_spam_test.csv"};

static const char *const SPLIT_NAMES[3] = {"Training", "Validation", "Test"};

static mygpt_status fail(mygpt_error *err, mygpt_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err->code = st;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return st;
}

mygpt_config book_test_mode_config(int num_classes)
{
    return (mygpt_config){.vocab_size = 50257, .embed_dim = 12, .num_heads = 2, .num_layers = 1, .max_seq_len = 120,
                          .arch = MYGPT_ARCH_LLMS_FROM_SCRATCH, .num_classes = num_classes};
}

mygpt_status finetune_model_load(mygpt_gpt **out, const char *path, mygpt_error *err)
{
    char file[4200];
    struct stat sb;
    *out = NULL;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) { // a Hugging Face folder
        if ((size_t)snprintf(file, sizeof file, "%s/model.safetensors", path) >= sizeof file)
            return fail(err, MYGPT_EINVAL, "%s: the path is too long", path);
        path = file;
    }
    mygpt_gpt *g;
    mygpt_status st = mygpt_model_load(&g, path, err);
    if (st != MYGPT_OK)
        return st;
    if (g->weights != MYGPT_WEIGHTS_FP32)
        st = fail(err, MYGPT_EINVAL, "%s holds %s weights, for inference: fine-tuning needs float32 ('mygpt quantize "
                  "IN OUT --weights fp32' writes them)", path, mygpt_weights_name(g->weights));
    else if (g->config.vocab_size != 50257)
        st = fail(err, MYGPT_EINVAL, "%s has a vocabulary of %d tokens, not GPT-2's 50257: the book's data are GPT-2's "
                  "tokens", path, g->config.vocab_size);
    if (st != MYGPT_OK) {
        mygpt_gpt_free(g);
        return st;
    }
    *out = g;
    return MYGPT_OK;
}

/* ---- chapter 6 ---------------------------------------------------------------------------- */

mygpt_status spam_datasets_load(mygpt_spam_dataset ds[3], const char *dir, const mygpt_tokenizer *tok,
                                size_t max_length, mygpt_error *err)
{
    memset(ds, 0, 3 * sizeof *ds);
    mygpt_status st = MYGPT_OK;
    // train_dataset = SpamDataset("train.csv", max_length=None, tokenizer=tokenizer);
    // val_dataset, test_dataset: max_length=train_dataset.max_length
    for (int s = 0; s < 3 && st == MYGPT_OK; s++) {
        char path[4200];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, SPAM_FILES[s]) >= sizeof path)
            st = fail(err, MYGPT_EINVAL, "the path of %s in %s is too long", SPAM_FILES[s], dir);
        else
            st = mygpt_spam_dataset_load(&ds[s], path, tok, s ? ds[0].max_length : max_length, MYGPT_ENDOFTEXT_ID,
                                         SPAM_CLASSES, err);
    }
    if (st != MYGPT_OK)
        spam_datasets_free(ds);
    return st;
}

void spam_datasets_free(mygpt_spam_dataset ds[3])
{
    for (int s = 0; s < 3; s++)
        mygpt_spam_dataset_free(&ds[s]);
}

mygpt_status spam_loaders_init(spam_loaders *l, const mygpt_spam_dataset ds[3], size_t batch_size, mygpt_error *err)
{
    memset(l, 0, sizeof *l);
    // DataLoader(train_dataset, batch_size, shuffle=True, drop_last=True); val and test in order
    mygpt_status st = mygpt_spam_loader_init(&l->train, &ds[0], batch_size, 1, err);
    if (st == MYGPT_OK)
        st = mygpt_spam_loader_init(&l->train_eval, &ds[0], batch_size, 1, err);
    if (st == MYGPT_OK)
        st = mygpt_spam_loader_init(&l->val, &ds[1], batch_size, 0, err);
    if (st == MYGPT_OK)
        st = mygpt_spam_loader_init(&l->test, &ds[2], batch_size, 0, err);
    if (st != MYGPT_OK)
        spam_loaders_free(l);
    return st;
}

void spam_loaders_free(spam_loaders *l)
{
    mygpt_spam_loader_free(&l->train);
    mygpt_spam_loader_free(&l->train_eval);
    mygpt_spam_loader_free(&l->val);
    mygpt_spam_loader_free(&l->test);
}

mygpt_status spam_print_accuracies(FILE *out, mygpt_gpt *g, spam_loaders *l, mygpt_rng *rng, size_t num_batches,
                                   int64_t *x, int64_t *y, mygpt_error *err)
{
    mygpt_spam_loader *loaders[3] = {&l->train_eval, &l->val, &l->test};
    for (int s = 0; s < 3; s++) {
        double acc;
        mygpt_status st = classifier_loader_accuracy(g, loaders[s], s == 0, rng, num_batches, x, y, &acc, err);
        if (st != MYGPT_OK)
            return st;
        fprintf(out, "%s accuracy: %.2f%%\n", SPLIT_NAMES[s], acc * 100);
    }
    return MYGPT_OK;
}

mygpt_status spam_finetune_print(FILE *out, mygpt_trainer *tr, spam_loaders *l, mygpt_rng *rng, double lr,
                                 long epochs, int64_t *x, int64_t *y, mygpt_error *err)
{
    mygpt_rng_seed(rng, 123);
    mygpt_optimizer opt;
    mygpt_adamw_init(&opt, lr);
    opt.weight_decay = 0.1;
    const classifier_run run = {.epochs = epochs, .eval_freq = 50, .eval_iter = 5};
    long seen;
    mygpt_status st = classifier_train(out, tr, &opt, &l->train, &l->train_eval, &l->val, rng, &run, x, y, &seen, err);
    mygpt_optimizer_free(&opt);
    if (st != MYGPT_OK)
        return st;
    fprintf(out, "Examples seen: %ld\n", seen);
    return spam_print_accuracies(out, tr->model, l, rng, 0, x, y, err); // calc_accuracy_loader over every batch
}

mygpt_status spam_print_losses(FILE *out, mygpt_gpt *g, spam_loaders *l, mygpt_rng *rng, size_t num_batches,
                               int64_t *x, int64_t *y, mygpt_error *err)
{
    mygpt_spam_loader *loaders[3] = {&l->train_eval, &l->val, &l->test};
    for (int s = 0; s < 3; s++) {
        double loss;
        mygpt_status st = classifier_loader_loss(g, loaders[s], s == 0, rng, num_batches, x, y, &loss, err);
        if (st != MYGPT_OK)
            return st;
        char shown[64];
        fprintf(out, "%s loss: %s\n", SPLIT_NAMES[s], mygpt_py_fixed_str(shown, sizeof shown, loss, 3));
    }
    return MYGPT_OK;
}

mygpt_status classifier_from_lm(mygpt_gpt **out, const mygpt_gpt *lm, int num_classes, mygpt_error *err)
{
    *out = NULL;
    if (num_classes < 1 || lm->config.num_classes > 0)
        return fail(err, MYGPT_EINVAL, "%s", num_classes < 1 ? "a classifier needs at least one class"
                                                             : "the model has a classification head already");
    mygpt_config cfg = lm->config;
    cfg.num_classes = num_classes;
    mygpt_gpt *g;
    mygpt_status st = mygpt_gpt_alloc(&g, &cfg, err);
    if (st != MYGPT_OK)
        return st;
    // the language model's tensors as they are, every one but its head
    const int n = mygpt_state_dict_len(&cfg), n_lm = mygpt_state_dict_len(&lm->config);
    for (int j = 0; j < n; j++) {
        mygpt_state_entry e;
        mygpt_state_dict_entry(&cfg, &g->params, j, &e);
        if (e.tensor == MYGPT_PARAM_lmw || e.tensor == MYGPT_PARAM_lmb)
            continue;
        for (int k = 0; k < n_lm; k++) {
            mygpt_state_entry f;
            mygpt_state_dict_entry(&lm->config, &lm->params, k, &f);
            if (f.tensor == e.tensor && f.layer == e.layer && f.numel == e.numel) {
                memcpy(e.data, f.data, e.numel * sizeof *e.data);
                break;
            }
        }
    }
    // torch.manual_seed(123); model.out_head = torch.nn.Linear(emb_dim, num_classes)
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, MYGPT_CLASSIFIER_SEED);
    st = mygpt_init_linear(&rng, g->params.lmw, g->params.lmb, (size_t)cfg.embed_dim, (size_t)num_classes, err);
    if (st != MYGPT_OK) {
        mygpt_gpt_free(g);
        return st;
    }
    *out = g;
    return MYGPT_OK;
}

mygpt_status classify_review(mygpt_gpt *g, const mygpt_tokenizer *tok, const char *text, size_t max_length,
                             int *label, double *prob, mygpt_error *err)
{
    const size_t context = (size_t)g->config.max_seq_len;
    if (max_length == 0 || max_length > context)
        return fail(err, MYGPT_EINVAL, "classify_review: a row of %zu tokens does not fit the model's context of %zu",
                    max_length, context);
    if (strstr(text, MYGPT_ENDOFTEXT)) // tiktoken's encode refuses a special token in text
        return fail(err, MYGPT_EFORMAT, "the text holds %s, which tokenizer.encode refuses", MYGPT_ENDOFTEXT);
    int64_t *ids;
    size_t n;
    mygpt_status st = mygpt_encode(tok, text, strlen(text), &ids, &n, err);
    if (st != MYGPT_OK)
        return st;
    int64_t *row = malloc(max_length * sizeof *row); // (1, max_length)
    if (!row) {
        free(ids);
        return fail(err, MYGPT_ENOMEM, "out of memory for %zu tokens", max_length);
    }
    // input_ids[:min(max_length, supported_context_length)] + [pad_token_id] * (max_length - len(input_ids))
    const size_t keep = n < max_length ? n : max_length;
    memcpy(row, ids, keep * sizeof *row);
    for (size_t j = keep; j < max_length; j++)
        row[j] = MYGPT_ENDOFTEXT_ID;
    free(ids);
    // with torch.no_grad(): logits = model(input_tensor)[:, -1, :]; torch.argmax(logits, dim=-1)
    st = mygpt_gpt_forward(g, row, 1, (int)max_length, err);
    if (st == MYGPT_OK) {
        const int K = mygpt_head_size(&g->config);
        const float *last = g->acts.logits + (max_length - 1) * (size_t)K; // (K)
        const size_t bad = mygpt_first_nonfinite(last, (size_t)K);
        if (bad < (size_t)K) { // finite weights that overflow: no class (generate refuses so too)
            free(row);
            return fail(err, MYGPT_ERANGE, "the model's logit %zu is %g: its weights compute no class", bad,
                        (double)last[bad]);
        }
        int best = 0;
        for (int k = 1; k < K; k++) // argmax: the first of equal maxima
            if (last[k] > last[best])
                best = k;
        *label = best;
        double sum = 0; // torch.softmax(logits, dim=-1)[label] = 1 / sum_k exp(logits_k - logits_label)
        for (int k = 0; k < K; k++)
            sum += exp((double)last[k] - (double)last[best]);
        if (prob)
            *prob = 1.0 / sum;
    }
    free(row);
    return st;
}

/* ---- chapter 7 ---------------------------------------------------------------------------- */

mygpt_status instruct_splits_read(instruct_splits *s, const char *path, size_t limit, mygpt_error *err)
{
    memset(s, 0, sizeof *s);
    mygpt_status st = mygpt_instruct_data_read(&s->data, path, err); // data = json.load(file)
    if (st != MYGPT_OK)
        return st;
    // train_data = data[:train_portion], test_data = data[train_portion:train_portion + test_portion],
    // val_data = data[train_portion + test_portion:]
    mygpt_instruct_split(s->data.n, &s->n_train, &s->n_test, &s->n_val);
    s->train = s->data.entry;
    s->test = s->data.entry + s->n_train;
    s->val = s->data.entry + s->n_train + s->n_test;
    if (limit > 0) { // test_mode: train_data[:10], val_data[:10], test_data[:10]
        s->n_train = s->n_train < limit ? s->n_train : limit;
        s->n_test = s->n_test < limit ? s->n_test : limit;
        s->n_val = s->n_val < limit ? s->n_val : limit;
    }
    // InstructionDataset(train_data), (val_data), (test_data) encode every entry kept, before training
    const size_t at_test = (size_t)(s->test - s->data.entry), at_val = (size_t)(s->val - s->data.entry);
    if ((st = mygpt_instruct_data_check(&s->data, path, 0, s->n_train, err)) != MYGPT_OK ||
        (st = mygpt_instruct_data_check(&s->data, path, at_val, s->n_val, err)) != MYGPT_OK ||
        (st = mygpt_instruct_data_check(&s->data, path, at_test, s->n_test, err)) != MYGPT_OK) {
        instruct_splits_free(s);
        return st;
    }
    return MYGPT_OK;
}

void instruct_splits_free(instruct_splits *s)
{
    mygpt_instruct_data_free(&s->data);
    memset(s, 0, sizeof *s);
}

void instruct_print_lengths(FILE *out, const instruct_splits *s)
{
    fprintf(out, "Training set length: %zu\nValidation set length: %zu\nTest set length: %zu\n", s->n_train,
            s->n_val, s->n_test);
    fprintf(out, "--------------------------------------------------\n");
}

mygpt_status instruct_loaders_init(instruct_loaders *l, const instruct_splits *s, const mygpt_tokenizer *tok,
                                   size_t batch_size, size_t allowed_max_length, int mask, mygpt_error *err)
{
    memset(l, 0, sizeof *l);
    // DataLoader(InstructionDataset(train_data), batch_size, collate_fn=partial(custom_collate_fn,
    // allowed_max_length=...), shuffle=True, drop_last=True); val_loader: shuffle=False, drop_last=False
    mygpt_status st = mygpt_instruct_dataset_init(&l->train_ds, s->train, s->n_train, tok, err);
    if (st == MYGPT_OK)
        st = mygpt_instruct_dataset_init(&l->val_ds, s->val, s->n_val, tok, err);
    if (st == MYGPT_OK)
        st = mygpt_instruct_loader_init(&l->train, &l->train_ds, batch_size, 1, allowed_max_length, mask, err);
    if (st == MYGPT_OK)
        st = mygpt_instruct_loader_init(&l->train_eval, &l->train_ds, batch_size, 1, allowed_max_length, mask, err);
    if (st == MYGPT_OK)
        st = mygpt_instruct_loader_init(&l->val, &l->val_ds, batch_size, 0, allowed_max_length, mask, err);
    if (st != MYGPT_OK) {
        instruct_loaders_free(l);
        return st;
    }
    l->l_train = book_instructions(&l->train);
    l->l_train_eval = book_instructions(&l->train_eval);
    l->l_val = book_instructions(&l->val);
    l->room = batch_size * (l->train.max_length > l->val.max_length ? l->train.max_length : l->val.max_length);
    return MYGPT_OK;
}

void instruct_loaders_free(instruct_loaders *l)
{
    mygpt_instruct_loader_free(&l->train);
    mygpt_instruct_loader_free(&l->train_eval);
    mygpt_instruct_loader_free(&l->val);
    mygpt_instruct_dataset_free(&l->train_ds);
    mygpt_instruct_dataset_free(&l->val_ds);
}

mygpt_status instruct_print_initial_losses(FILE *out, mygpt_gpt *g, instruct_loaders *l, mygpt_rng *rng,
                                           size_t num_batches, int64_t *x, int64_t *y, mygpt_error *err)
{
    // with torch.no_grad(): calc_loss_loader(train_loader / val_loader, model, device, num_batches=5)
    double loss[2];
    mygpt_status st = book_loss(g, &l->l_train_eval, 1, rng, num_batches, x, y, &loss[0], err);
    if (st == MYGPT_OK)
        st = book_loss(g, &l->l_val, 0, rng, num_batches, x, y, &loss[1], err);
    if (st != MYGPT_OK)
        return st;
    fprintf(out, "Initial losses\n");
    for (int k = 0; k < 2; k++) { // print("   Training loss:", train_loss): Python's repr
        mygpt_strbuf sb = {0};
        if (mygpt_py_float_repr(&sb, loss[k]) != MYGPT_OK)
            return fail(err, MYGPT_ENOMEM, "%s", "out of memory for a number");
        fprintf(out, "%s %s\n", k ? "   Validation loss:" : "   Training loss:", mygpt_sb_str(&sb));
        mygpt_sb_free(&sb);
    }
    return MYGPT_OK;
}

mygpt_status instruct_encode_prompt(const mygpt_tokenizer *tok, const mygpt_instruct_entry *e, int64_t **ids,
                                    size_t *n, mygpt_error *err)
{
    char *prompt;
    mygpt_status st = mygpt_instruct_prompt(&prompt, e->instruction, e->input, err);
    if (st != MYGPT_OK)
        return st;
    st = mygpt_encode(tok, prompt, strlen(prompt), ids, n, err);
    free(prompt);
    return st;
}

mygpt_status instruct_respond(mygpt_gpt *g, const mygpt_tokenizer *tok, const mygpt_instruct_entry *e, int max_new,
                              int use_cache, char **response, int64_t **new_ids, size_t *n_new, mygpt_error *err)
{
    int64_t *prompt, *out = NULL;
    size_t np, len = 0;
    int nout = 0;
    char *text = NULL;
    *response = NULL;
    if (new_ids)
        *new_ids = NULL;
    mygpt_status st = instruct_encode_prompt(tok, e, &prompt, &np, err);
    if (st != MYGPT_OK)
        return st;
    if (!(out = malloc((np + (size_t)max_new) * sizeof *out))) {
        free(prompt);
        return fail(err, MYGPT_ENOMEM, "out of memory for a response of %d tokens", max_new);
    }
    // generate(model, idx=text_to_token_ids(input_text), max_new_tokens, context_size, eos_id=50256)
    const mygpt_generation greedy = {.max_new = max_new, .sampling = {0}, .eos = MYGPT_ENDOFTEXT_ID,
                                     .use_cache = use_cache};
    st = mygpt_generate(g, NULL, prompt, (int)np, &greedy, out, &nout, err);
    // generated_text[len(input_text):].replace("### Response:", "").strip()
    if (st == MYGPT_OK)
        st = mygpt_decode(tok, out + np, (size_t)nout - np, &text, &len, err);
    if (st == MYGPT_OK)
        st = mygpt_instruct_response(response, text, len, err);
    if (st == MYGPT_OK && new_ids) {
        *n_new = (size_t)nout - np;
        memmove(out, out + np, *n_new * sizeof *out);
        *new_ids = out;
        out = NULL;
    }
    free(text);
    free(out);
    free(prompt);
    return st;
}

mygpt_status instruct_responses_json(mygpt_gpt *g, const mygpt_tokenizer *tok, const mygpt_instruct_entry *entries,
                                     size_t n, int max_new, char **json, size_t *len, mygpt_error *err)
{
    char **responses = calloc(n ? n : 1, sizeof *responses);
    if (!responses)
        return fail(err, MYGPT_ENOMEM, "out of memory for %zu responses", n);
    mygpt_status st = MYGPT_OK;
    // for i, entry in enumerate(test_data): ... test_data[i]["model_response"] = response_text
    for (size_t i = 0; i < n && st == MYGPT_OK; i++)
        st = instruct_respond(g, tok, &entries[i], max_new, 1, &responses[i], NULL, NULL, err);
    // json.dump(test_data, file, indent=4)
    if (st == MYGPT_OK)
        st = mygpt_instruct_json(json, len, entries, (const char *const *)responses, n, err);
    for (size_t i = 0; i < n; i++)
        free(responses[i]);
    free(responses);
    return st;
}

/* ---- appendix E: LoRA --------------------------------------------------------------------- */

void print_trainable_count(FILE *out, const char *what, unsigned long long n)
{
    mygpt_strbuf sb = {0};
    mygpt_py_int_commas(&sb, (long long)n);
    fprintf(out, "Total trainable %s: %s\n", what, sb.failed ? "?" : mygpt_sb_str(&sb));
    mygpt_sb_free(&sb);
}

mygpt_status lora_wrap_print(FILE *out, mygpt_gpt *g, int rank, double alpha, mygpt_rng *rng, mygpt_trainer **tr,
                             mygpt_error *err)
{
    // sum(p.numel() for p in model.parameters() if p.requires_grad), before and after
    // for param in model.parameters(): param.requires_grad = False
    mygpt_trainer *counter;
    *tr = NULL;
    mygpt_status st = mygpt_trainer_create(&counter, g, err);
    if (st != MYGPT_OK)
        return st;
    print_trainable_count(out, "parameters before", mygpt_trainer_trainable_count(counter));
    st = mygpt_trainer_set_trainable(counter, "", 0, NULL, err);
    if (st == MYGPT_OK)
        print_trainable_count(out, "parameters after", mygpt_trainer_trainable_count(counter));
    mygpt_trainer_free(counter); // its gradients are sized for the model without adapters
    // replace_linear_with_lora(model, rank, alpha): the new A and B are all that trains
    if (st == MYGPT_OK)
        st = mygpt_lora_add(g, rank, alpha, rng, err);
    if (st == MYGPT_OK)
        st = mygpt_trainer_create(tr, g, err);
    if (st == MYGPT_OK && (st = mygpt_trainer_freeze_for_lora(*tr, err)) == MYGPT_OK)
        print_trainable_count(out, "LoRA parameters", mygpt_trainer_trainable_count(*tr));
    if (st != MYGPT_OK) {
        mygpt_trainer_free(*tr);
        *tr = NULL;
    }
    return st;
}
