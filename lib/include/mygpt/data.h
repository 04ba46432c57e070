/*
 * mygpt/data.h - the data a program reads: a whole file, the data folder every program
 * shares, CSV files, LLMs-from-scratch's DataLoader over a token stream (with the UTF-8
 * lengths that split a text as Python does), the book's chapter-6 SpamDataset and its
 * chapter-7 instruction data.
 */
#ifndef MYGPT_DATA_H
#define MYGPT_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/error.h"
#include "mygpt/rng.h"
#include "mygpt/tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* ---- files (file.c, datadir.c) ---------------------------------------------------- */

/* Reads a whole regular file into *data (malloc'd, NUL-terminated; *len bytes without
 * the NUL), by the size it has when opened. A directory, device, FIFO or socket is
 * refused, never waited on. Errors: MYGPT_EIO (cannot open or read, the message names
 * the file and why), MYGPT_ENOMEM. */
mygpt_status mygpt_read_file(const char *path, char **data, size_t *len, mygpt_error *err);

/* mygpt_read_file for a file whose format bounds it (a vocabulary, a config.json): one
 * larger than max bytes is refused before it is read (MYGPT_EINVAL, naming the file
 * and the limit). */
mygpt_status mygpt_read_file_max(const char *path, size_t max, char **data, size_t *len, mygpt_error *err);

/* Writes len bytes of data to path whole or not at all, as checkpoints are written (a
 * temporary beside path, synced and renamed over it, Ctrl-C held meanwhile): a failed
 * write leaves the old file as it was. A symbolic link, a directory or a device is
 * refused (MYGPT_EINVAL); a failed write is MYGPT_EIO with the reason. */
mygpt_status mygpt_write_file(const char *path, const char *data, size_t len, mygpt_error *err);

/* mygpt_write_file that never replaces a file at path, as mygpt_checkpoint_save_new. */
mygpt_status mygpt_write_file_new(const char *path, const char *data, size_t len, mygpt_error *err);

/* The first bytes of what is at path, for a program that replaces a file only when it is
 * one of its own kind: MYGPT_HEAD_ABSENT when nothing is there; MYGPT_HEAD_OTHER when it
 * is no regular file (a link, a FIFO, a folder, a device: never followed or opened) or
 * cannot be read; else how many bytes (at most cap - 1, cap > 0) were read into head,
 * which ends in a NUL after them (the bytes may hold NULs of their own). */
#define MYGPT_HEAD_ABSENT (-1)
#define MYGPT_HEAD_OTHER (-2)
long mygpt_file_head(const char *path, char *head, size_t cap);

/* The data folder (GPT-2's encoder.json and vocab.bpe, the-verdict.txt), the same
 * rule for every program: $MYGPT_DATA when set; else, beside the running program,
 * ../data (a build tree: meson links build/data to the folder configured with
 * -Ddata_dir, by default the source tree's data/) or ../share/mygpt (an installed
 * tree: PREFIX/bin/../share/mygpt). No path is compiled into the binaries. Writes the
 * folder into out (n bytes); MYGPT_EIO when none exists (out = ""). */
mygpt_status mygpt_data_dir(char *out, size_t n, mygpt_error *err);

/* ---- CSV files (csv.c) ------------------------------------------------------------- */

/* A comma-separated file as pandas.read_csv reads it: a header line, then records of
 * the header's number of fields. A field in double quotes may hold commas, line breaks
 * (kept as they are, \r\n too) and "" for one quote; a quote inside a plain field is a
 * quote. Lines end in \n or \r\n; blank lines are skipped; a UTF-8 byte-order mark is
 * skipped. */
typedef struct mygpt_csv {
    size_t cols;   /* fields per record: the header's */
    size_t rows;   /* records after the header */
    char **field;  /* (rows + 1, cols): row 0 the header; each NUL-terminated */
    size_t *len;   /* (rows + 1, cols): each field's bytes */
    size_t *line;  /* (rows + 1): the line (1 = the first) each record starts on */
    char *text;    /* the fields' bytes */
} mygpt_csv;

/* Parses len bytes of data (name: the file, for the messages). Strict: what pandas
 * would read another way, or not at all, is MYGPT_EFORMAT with "NAME line L: why": a
 * record with a different number of fields, a quoted field not closed, text after a
 * closing quote, a carriage return not before a line feed, a NUL byte, text that is not
 * UTF-8, an empty file. MYGPT_ENOMEM. */
mygpt_status mygpt_csv_parse(mygpt_csv *csv, const char *name, const char *data, size_t len,
                             mygpt_error *err);

/* mygpt_csv_parse of the file at path (mygpt_read_file's errors too). */
mygpt_status mygpt_csv_read(mygpt_csv *csv, const char *path, mygpt_error *err);

/* Record row's field col (row 0: the header), its bytes in *len when len is not NULL;
 * NULL outside the table. */
const char *mygpt_csv_field(const mygpt_csv *csv, size_t row, size_t col, size_t *len);

void mygpt_csv_free(mygpt_csv *csv);

/* ---- the data loader (dataloader.c): LLMs-from-scratch's create_dataloader_v1 ---- */

/* Windows of max_length tokens every stride tokens (targets shifted by one), grouped
 * into batches as torch's DataLoader groups them: in order, or in the order a
 * RandomSampler draws (shuffle=True), with or without the last short batch. */
typedef struct mygpt_dataloader {
    const int64_t *ids;   /* the token stream (not owned) */
    size_t n;
    size_t max_length, stride, batch_size;
    size_t num_windows;   /* len(range(0, n - max_length, stride)) */
    size_t num_batches;   /* num_windows / batch_size, rounded up unless drop_last */
    int drop_last;        /* 1 (the default of mygpt_dataloader_init): drop a short batch */
    int64_t *order;       /* the epoch's window order (malloc'd), or NULL: 0, 1, 2, ... */
} mygpt_dataloader;

/* Sets up the windows; drop_last = 1, in order. Fails if a size is zero. */
mygpt_status mygpt_dataloader_init(mygpt_dataloader *dl, const int64_t *ids, size_t n,
                                   size_t batch_size, size_t max_length, size_t stride,
                                   mygpt_error *err);

/* drop_last=False keeps the last short batch (num_batches rounds up). */
void mygpt_dataloader_set_drop_last(mygpt_dataloader *dl, int drop_last);

/* What `for x, y in loader:` draws from the global generator when it starts an epoch
 * (iter(loader) in torch 1.13): one int64 for the iterator's base seed, always; then,
 * when shuffle, RandomSampler's seed (random64() mod 2^63) for a fresh generator whose
 * randperm(num_windows) is the epoch's order. Without shuffle the order is 0, 1, 2, ...
 * MYGPT_ENOMEM if the order cannot be stored. */
mygpt_status mygpt_dataloader_epoch(mygpt_dataloader *dl, mygpt_rng *global, int shuffle,
                                    mygpt_error *err);

/* Rows of batch b: batch_size, or fewer for the last batch without drop_last. */
size_t mygpt_dataloader_batch_rows(const mygpt_dataloader *dl, size_t b);

/* Batch b (0 <= b < num_batches) of the current epoch: inputs and targets, each
 * (rows, max_length) with rows = mygpt_dataloader_batch_rows(dl, b). */
mygpt_status mygpt_dataloader_batch(const mygpt_dataloader *dl, size_t b, int64_t *inputs,
                                    int64_t *targets, mygpt_error *err);

void mygpt_dataloader_free(mygpt_dataloader *dl);

/* What iter(DataLoader) draws from the global generator in torch 1.13, for any loader of
 * n items: one int64 for the iterator's base seed, always; then, when order is not NULL
 * (shuffle=True), RandomSampler's seed (random64() mod 2^63) for a fresh generator whose
 * randperm(n) it writes to order[0..n). */
void mygpt_loader_iter(mygpt_rng *global, int64_t *order, size_t n);

/* ---- the book's chapter-7 instruction data (instruct.c) ----------------------------- */

/* format_input(entry) of the book's chapter 7, Alpaca's template:
 *
 *   Below is an instruction that describes a task. Write a response that appropriately
 *   completes the request.\n\n### Instruction:\n{instruction}[\n\n### Input:\n{input}]
 *
 * (the first sentence pair on one line; the Input part only when input is neither NULL
 * nor empty). *out: a malloc'd string the caller frees. MYGPT_EINVAL without an
 * instruction, MYGPT_ENOMEM. The response follows MYGPT_INSTRUCT_RESPONSE. */
mygpt_status mygpt_instruct_prompt(char **out, const char *instruction, const char *input, mygpt_error *err);
#define MYGPT_INSTRUCT_RESPONSE "\n\n### Response:\n"

/* One entry of instruction-data.json: {"instruction": ..., "input": ..., "output": ...},
 * each a NUL-terminated UTF-8 string ("" for an empty input). */
typedef struct mygpt_instruct_entry {
    char *instruction, *input, *output;
} mygpt_instruct_entry;

/* The entries of a file, in file order (json.load(file) of the book's list). */
typedef struct mygpt_instruct_data {
    size_t n;
    mygpt_instruct_entry *entry; /* (n) */
} mygpt_instruct_data;

/* Parses len bytes of text (name: the file, for the messages): a JSON array of objects,
 * each with the string members instruction, input and output (others are ignored).
 * MYGPT_EFORMAT naming the file and the entry for: malformed JSON, a document that is
 * not an array, an entry that is not an object, a key missing, given twice or not a
 * string, a string holding "\u0000", more than 64 levels of nesting; MYGPT_ENOMEM. *d
 * is then empty. */
mygpt_status mygpt_instruct_data_parse(mygpt_instruct_data *d, const char *name, const char *text, size_t len,
                                       mygpt_error *err);

/* mygpt_instruct_data_parse of the file at path (mygpt_read_file's errors too). */
mygpt_status mygpt_instruct_data_read(mygpt_instruct_data *d, const char *path, mygpt_error *err);

void mygpt_instruct_data_free(mygpt_instruct_data *d);

/* Entries [from, from + n) of d (those of them there are), as InstructionDataset's
 * tokenizer.encode takes their texts, before any is encoded: MYGPT_EFORMAT for one holding
 * <|endoftext|>, naming the file (name) and the entry's index in it, 0-based as the
 * reader's errors ("instruction-data.json: entry 39 holds <|endoftext|>, ..."). */
mygpt_status mygpt_instruct_data_check(const mygpt_instruct_data *d, const char *name, size_t from, size_t n,
                                       mygpt_error *err);

/* The book's split of n entries in file order: train_portion = int(n * 0.85),
 * test_portion = int(n * 0.1) (double products, truncated, as Python computes them),
 * validation the rest. The training entries are [0, train), the test entries
 * [train, train + test), the validation entries [train + test, n). */
void mygpt_instruct_split(size_t n, size_t *train, size_t *test, size_t *val);

/* InstructionDataset(data, tokenizer): every entry's full text, format_input(entry) +
 * MYGPT_INSTRUCT_RESPONSE + output, encoded with GPT-2's tokenizer; and, for the book's
 * exercise 7.2, the tokens of format_input(entry) encoded alone. */
typedef struct mygpt_instruct_dataset {
    size_t n;           /* entries */
    size_t *start;      /* (n + 1): entry i's tokens are ids[start[i] .. start[i + 1]) */
    size_t *prompt_len; /* (n): len(tokenizer.encode(format_input(entry))) */
    int64_t *ids;       /* (start[n]) */
} mygpt_instruct_dataset;

/* Encodes entries[0 .. n). Errors: MYGPT_EFORMAT for an entry whose text holds
 * <|endoftext|> (tiktoken's encode refuses it; the message names the entry), the
 * tokenizer's, MYGPT_ENOMEM. */
mygpt_status mygpt_instruct_dataset_init(mygpt_instruct_dataset *ds, const mygpt_instruct_entry *entries, size_t n,
                                         const mygpt_tokenizer *tok, mygpt_error *err);

void mygpt_instruct_dataset_free(mygpt_instruct_dataset *ds);

/* The tokens of entry i: *len = ds->start[i + 1] - ds->start[i] of them (NULL and 0 for an
 * i that is not below ds->n). */
const int64_t *mygpt_instruct_item(const mygpt_instruct_dataset *ds, size_t i, size_t *len);

/* The length T of custom_collate_fn's tensors for items of these lengths: the longest
 * item's, then at most allowed_max_length (0: the book's None, no limit). */
size_t mygpt_instruct_collate_length(const size_t *lengths, size_t B, size_t allowed_max_length);

/* The items of a batch for custom_collate_fn: B token lists and, for the book's exercise
 * 7.2, the lengths of their prompts. */
typedef struct mygpt_instruct_items {
    const int64_t *const *items;  /* (B): items[b] holds lengths[b] tokens           */
    const size_t *lengths;        /* (B)                                             */
    const size_t *prompt_lengths; /* (B), or NULL: no prompt masked                   */
    size_t B;
} mygpt_instruct_items;

/* custom_collate_fn of the book's chapter 7 over B items (items[b]: lengths[b] tokens):
 * each item gets one pad_id and is padded with pad_id to the longest item + 1 tokens;
 * inputs are that row without its last token, targets without its first; in targets
 * every pad_id after the first becomes -100 (MYGPT_IGNORE_INDEX of mygpt/train.h, the
 * loss's ignore_index); with prompt_lengths (NULL: none; the book's exercise 7.2,
 * custom_collate_with_masking_fn) targets[:prompt_lengths[b] - 1] becomes -100 too, as
 * Python slices (a prompt length of 0 masks all but the last target); then both are cut
 * to allowed_max_length (0: not cut). Writes inputs and targets (B, T) with T =
 * mygpt_instruct_collate_length (in *T). MYGPT_EINVAL when B is 0 or an item is NULL
 * with tokens. */
mygpt_status mygpt_instruct_collate(int64_t *inputs, int64_t *targets, size_t *T, const mygpt_instruct_items *batch,
                                    size_t allowed_max_length, int64_t pad_id, mygpt_error *err);

/* The T of mygpt_instruct_batch for these rows (rows outside the dataset not counted):
 * what inputs and targets must hold B * T values for. */
size_t mygpt_instruct_batch_length(const mygpt_instruct_dataset *ds, const int64_t *rows, size_t B,
                                   size_t allowed_max_length);

/* How the book collates entries of the dataset: cut to allowed_max_length (0: the book's
 * None), their prompts masked in the targets when mask_instruction (exercise 7.2). */
typedef struct mygpt_instruct_collation {
    size_t allowed_max_length;
    int mask_instruction;
} mygpt_instruct_collation;

/* One batch of DataLoader(dataset, collate_fn=custom_collate_fn): the entries rows[0 ..
 * B) of ds collated with pad 50256 as how says; inputs and targets (B, T), T in *T.
 * Errors: a row outside the dataset (MYGPT_ERANGE), mygpt_instruct_collate's,
 * MYGPT_ENOMEM. */
mygpt_status mygpt_instruct_batch(const mygpt_instruct_dataset *ds, const int64_t *rows, size_t B,
                                  const mygpt_instruct_collation *how, int64_t *inputs, int64_t *targets, size_t *T,
                                  mygpt_error *err);

/* DataLoader(InstructionDataset, batch_size, shuffle, drop_last, num_workers=0,
 * collate_fn=partial(custom_collate_fn, allowed_max_length=...)) over a dataset (not
 * owned), the prompts masked in the targets when mask_instruction (exercise 7.2's
 * custom_collate_with_masking_fn): each batch padded to its own longest item. */
typedef struct mygpt_instruct_loader {
    const mygpt_instruct_dataset *ds;
    size_t batch_size;
    size_t num_batches;        /* len(loader): n / batch_size, rounded up unless drop_last */
    int drop_last;
    size_t allowed_max_length; /* 0: the book's None */
    int mask_instruction;
    size_t max_length;         /* the longest T a batch can have: room for inputs and targets */
    int64_t *order;            /* the epoch's order of the entries (malloc'd), or NULL: 0, 1, 2, ... */
} mygpt_instruct_loader;

/* Fails if batch_size is 0. */
mygpt_status mygpt_instruct_loader_init(mygpt_instruct_loader *dl, const mygpt_instruct_dataset *ds,
                                        size_t batch_size, int drop_last, size_t allowed_max_length,
                                        int mask_instruction, mygpt_error *err);

/* Starts an epoch (`for x, y in loader:`): mygpt_loader_iter's draws from global.
 * MYGPT_ENOMEM if the order cannot be stored. */
mygpt_status mygpt_instruct_loader_epoch(mygpt_instruct_loader *dl, mygpt_rng *global, int shuffle,
                                         mygpt_error *err);

/* Rows of batch b: batch_size, or fewer for the last batch without drop_last (0 past the end). */
size_t mygpt_instruct_loader_batch_rows(const mygpt_instruct_loader *dl, size_t b);

/* Batch b of the current epoch: inputs and targets (rows, T), T (<= dl->max_length) in
 * *T. Errors: b past the end (MYGPT_ERANGE), mygpt_instruct_batch's. */
mygpt_status mygpt_instruct_loader_batch(const mygpt_instruct_loader *dl, size_t b, int64_t *inputs,
                                         int64_t *targets, size_t *T, mygpt_error *err);

void mygpt_instruct_loader_free(mygpt_instruct_loader *dl);

/* The book's response text from the bytes of the tokens generated after the prompt
 * (token_ids_to_text of prompt and response, then generated_text[len(input_text):]):
 * read as bytes.decode("utf-8", errors="replace") does, every "### Response:" removed,
 * then Python's str.strip() (Unicode whitespace at both ends). *out: malloc'd,
 * NUL-terminated. MYGPT_ENOMEM. */
mygpt_status mygpt_instruct_response(char **out, const char *bytes, size_t n, mygpt_error *err);

/* What json.dump(test_data, file, indent=4) writes after the book adds
 * entry["model_response"]: a list of objects with the keys instruction, input, output,
 * model_response (responses[i] for entry i; NULL: the entries alone), strings as
 * Python's ensure_ascii writes them (\uXXXX for anything outside space..~, surrogate
 * pairs above U+FFFF, \n \t \" \\ ...; a byte of no valid UTF-8 character as
 * \ufffd), no newline at the end. *out: malloc'd (*len bytes). An input NULL is written
 * "". MYGPT_EINVAL for an entry with no instruction or output, or a NULL response;
 * MYGPT_ENOMEM. */
mygpt_status mygpt_instruct_json(char **out, size_t *len, const mygpt_instruct_entry *entries,
                                 const char *const *responses, size_t n, mygpt_error *err);

/* ---- the book's chapter-6 SpamDataset and its DataLoader (spam.c) ---------------- */

/* SpamDataset(csv_file, tokenizer, max_length, pad_token_id): the texts of a Label,Text
 * file encoded with GPT-2's tokenizer, each cut to max_length tokens and padded with
 * pad_token_id up to it (mygpt_spam_dataset_row); the labels as they are (1 = spam in the
 * book's files). The encoded texts are kept unpadded, so a file with one long text costs
 * its tokens' memory, not its rows times that text's length. */
typedef struct mygpt_spam_dataset {
    size_t n;           /* texts */
    size_t max_length;  /* tokens per row: the one asked for, else the longest text's */
    size_t longest;     /* the longest encoded text's tokens, before any cut */
    int64_t pad_id;     /* what fills a row after its text */
    size_t *start;      /* (n + 1): text i's tokens are ids[start[i] .. start[i + 1]), uncut */
    int64_t *ids;       /* (start[n]) */
    int64_t *labels;    /* (n) */
} mygpt_spam_dataset;

/* Reads path (mygpt_csv_read) and encodes every text; max_length 0 is the book's None
 * (the longest text's length: validation and test take the training set's), and past
 * MYGPT_MAX_DIM (mygpt/attention.h) MYGPT_EINVAL. Besides the CSV's errors, MYGPT_EFORMAT
 * with the file and line (a record's first line) for: a header other than Label,Text, no
 * record after it, a label that is not decimal digits
 * or not below num_classes (the classifier's: checked here, before any training), a text
 * pandas reads as missing (empty, "NA", "nan", ...), a text holding <|endoftext|>
 * (tiktoken's encode refuses it). */
mygpt_status mygpt_spam_dataset_load(mygpt_spam_dataset *ds, const char *path, const mygpt_tokenizer *tok,
                                     size_t max_length, int64_t pad_id, int num_classes, mygpt_error *err);

/* Row i as the dataset gives it (__getitem__'s ids): row (max_length) receives text i's
 * first max_length tokens, then pad_id up to max_length (nothing for an i not below n). */
void mygpt_spam_dataset_row(const mygpt_spam_dataset *ds, size_t i, int64_t *row);
void mygpt_spam_dataset_free(mygpt_spam_dataset *ds);

/* DataLoader(dataset, batch_size, shuffle, drop_last, num_workers=0) over a SpamDataset
 * (not owned): batches of rows as torch groups them, in order or in RandomSampler's. */
typedef struct mygpt_spam_loader {
    const mygpt_spam_dataset *ds;
    size_t batch_size;
    size_t num_batches; /* len(loader): n / batch_size, rounded up unless drop_last */
    int drop_last;
    int64_t *order;     /* the epoch's order of the rows (malloc'd), or NULL: 0, 1, 2, ... */
} mygpt_spam_loader;

/* Fails if batch_size is 0. */
mygpt_status mygpt_spam_loader_init(mygpt_spam_loader *dl, const mygpt_spam_dataset *ds, size_t batch_size,
                                    int drop_last, mygpt_error *err);

/* Starts an epoch (`for x, y in loader:`): mygpt_loader_iter's draws from global.
 * MYGPT_ENOMEM if the order cannot be stored. */
mygpt_status mygpt_spam_loader_epoch(mygpt_spam_loader *dl, mygpt_rng *global, int shuffle, mygpt_error *err);

/* Rows of batch b: batch_size, or fewer for the last batch without drop_last (0 past the end). */
size_t mygpt_spam_loader_batch_rows(const mygpt_spam_loader *dl, size_t b);

/* Batch b of the current epoch: inputs (rows, max_length) and labels (rows). */
mygpt_status mygpt_spam_loader_batch(const mygpt_spam_loader *dl, size_t b, int64_t *inputs, int64_t *labels,
                                     mygpt_error *err);

void mygpt_spam_loader_free(mygpt_spam_loader *dl);

/* Python's len(text) for UTF-8 text (code points), and the byte offset of code point
 * `chars` (text[:chars] is the first offset bytes): for splits like int(0.9 * len(text)). */
size_t mygpt_utf8_length(const char *text, size_t len);
size_t mygpt_utf8_offset(const char *text, size_t len, size_t chars);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
