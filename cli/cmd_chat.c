/*
 * cmd_chat.c - `mygpt chat`: talk to a model tuned on the book's chapter-7 instructions.
 * Each line read becomes the instruction of the book's template (mygpt_instruct_prompt,
 * then MYGPT_INSTRUCT_RESPONSE); the response streams token by token from generate's
 * loop (the KV cache, the sampler of `mygpt generate`) and ends at <|endoftext|> or
 * where the model starts a new "###" section of the template. The turns so far go, as
 * text, before the next prompt, as many as the model's context holds.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "model_args.h"
#include "mygpt/data.h"
#include "mygpt/generate.h"
#include "mygpt/print.h"
#include "mygpt/tokenizer.h"
#include "output.h"

#define SYSTEM_SEPARATOR "\n\n"    // between --system's text and the first turn

/* Ctrl-C on a terminal while a response is written: it stops there */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* SIGINT to on_interrupt (during a response) or back to its default (ending the program) */
static void catch_interrupt(int on)
{
    struct sigaction sa = {0};
    sa.sa_handler = on ? on_interrupt : SIG_DFL;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, NULL);
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* ---- the response as it streams ---------------------------------------------- */

/* Where a response of n bytes ends: before its first "###", where the model starts a new
 * section of the template (*stop set); otherwise, unless the response is over (final),
 * before a "#" or "##" at its end that may still become one. Either way without the
 * trailing white space, as the book's .strip() does. */
static size_t response_end(const char *r, size_t n, int final, int *stop)
{
    size_t end = n;
    *stop = 0;
    for (size_t i = 0; i + 3 <= n && !*stop; i++)
        if (memcmp(r + i, "###", 3) == 0)
            *stop = 1, end = i;
    if (!*stop && !final)
        while (end > 0 && n - end < 2 && r[end - 1] == '#')
            end--;
    while (end > 0 && is_blank(r[end - 1]))
        end--;
    return end;
}

/* The response's bytes so far; those shown on stdout are r[start .. shown) */
typedef struct response {
    const mygpt_tokenizer *tok;
    char *r;
    size_t len, cap;
    size_t shown;
    int stopped;   // a "###": the generation ends there
    int failed;    // out of memory, or a token that would not decode
} response;

/* The response's leading white space is not part of it (the book's .strip()) */
static size_t response_start(const response *c)
{
    size_t s = 0;
    while (s < c->len && is_blank(c->r[s]))
        s++;
    return s;
}

/* Shows what the stop rule lets through and has not been shown yet */
static void show_response(response *c, int final)
{
    const size_t end = response_end(c->r, c->len, final, &c->stopped), start = response_start(c);
    const size_t from = c->shown > start ? c->shown : start;
    if (end > from) {
        fwrite(c->r + from, 1, end - from, stdout);
        fflush(stdout); // token by token, into a pipe too
        c->shown = end;
    }
}

/* generate's callback: the token's bytes join the response; nonzero stops the loop */
static int on_token(int64_t id, void *user)
{
    response *c = user;
    char *bytes = NULL;
    size_t n = 0;
    if (mygpt_decode(c->tok, &id, 1, &bytes, &n, NULL) != MYGPT_OK) {
        c->failed = 1;
        return 1;
    }
    if (c->len + n + 1 > c->cap) {
        const size_t cap = 2 * (c->len + n + 1);
        char *r = realloc(c->r, cap);
        if (!r) {
            free(bytes);
            c->failed = 1;
            return 1;
        }
        c->r = r, c->cap = cap;
    }
    memcpy(c->r + c->len, bytes, n);
    c->len += n;
    free(bytes);
    show_response(c, 0);
    return c->stopped || interrupted || ferror(stdout); // a failed write: nobody reads the next token
}

/* ---- the conversation ----------------------------------------------------------- */

/* --system's text, then the turns kept (each the template with its instruction and
 * the response after MYGPT_INSTRUCT_RESPONSE), each ended by <|endoftext|> as the
 * tuned model ends a response. A turn is bytes with their length: a NUL byte of a line
 * (or a response) is text, which the tokenizer reads as tiktoken does. */
typedef struct conversation {
    const char *system;   // NULL without --system
    mygpt_strbuf *turns;
    int first, n;         // turns[first .. n) are kept; the older ones were dropped
} conversation;

/* Appends n bytes of valid UTF-8 (what has been read as UTF-8 already, the template):
 * the public strbuf's append, which copies them as they are */
static void append(mygpt_strbuf *sb, const char *s, size_t n)
{
    mygpt_sb_append_replaced(sb, s, n);
}

/* The text the model reads into *t: the system text, the turns from `first` on, then
 * prompt. MYGPT_ENOMEM. */
static mygpt_status conversation_text(const conversation *cv, int first, const mygpt_strbuf *prompt,
                                      mygpt_strbuf *t)
{
    mygpt_sb_free(t);
    if (cv->system) {
        append(t, cv->system, strlen(cv->system));
        append(t, SYSTEM_SEPARATOR, strlen(SYSTEM_SEPARATOR));
    }
    for (int i = first; i < cv->n; i++) {
        append(t, cv->turns[i].data, cv->turns[i].len);
        append(t, MYGPT_ENDOFTEXT, strlen(MYGPT_ENDOFTEXT));
    }
    append(t, prompt->data, prompt->len);
    return t->failed ? MYGPT_ENOMEM : MYGPT_OK;
}

/* s as Python's bytes.decode("utf-8", errors="replace") reads it (malloc'd), so a
 * --system text of any bytes still encodes (a line and a response: chat_turn) */
static char *valid_utf8(const char *s, size_t n)
{
    mygpt_strbuf sb = {0};
    if (mygpt_sb_append_replaced(&sb, s, n) != MYGPT_OK || sb.failed) {
        mygpt_sb_free(&sb);
        return NULL;
    }
    char *out = strdup(mygpt_sb_str(&sb));
    mygpt_sb_free(&sb);
    return out;
}

typedef struct chat {
    const char *cmd;
    mygpt_gpt *g;
    const mygpt_tokenizer *tok;
    mygpt_rng rng;
    mygpt_sampling sampling;
    int max_new, print_ids;
    int terminal;        // standard input is one: Ctrl-C stops a response
    conversation cv;
    int said_dropped, said_cropped, said_empty;
    int answered;        // a response so far had text
} chat;

static int out_of_memory(const char *cmd)
{
    cli_error(cmd, "out of memory");
    return EXIT_RUNTIME;
}

/* The conversation and then prompt as the model reads them: their text into *text, its
 * ids into *ids (*n of them), the oldest turns dropped while they and a whole response do
 * not fit in the context; the first drop and the first prompt still too long each said
 * once. 0, or the exit code after saying why not. */
static int fit_context(chat *ch, const mygpt_strbuf *prompt, mygpt_strbuf *text, int64_t **ids, size_t *n)
{
    const char *cmd = ch->cmd;
    const int M = ch->g->config.max_seq_len;
    const int first_before = ch->cv.first;
    int rc;
    for (;;) {
        free(*ids);
        *ids = NULL;
        if (conversation_text(&ch->cv, ch->cv.first, prompt, text) != MYGPT_OK)
            return out_of_memory(cmd);
        if ((rc = encode_text(cmd, ch->tok, text->data, text->len, ids, n)))
            return rc;
        if (*n + (size_t)ch->max_new <= (size_t)M || ch->cv.first == ch->cv.n)
            break;
        mygpt_sb_free(&ch->cv.turns[ch->cv.first++]);
    }
    if (ch->cv.first > first_before && !ch->said_dropped) {
        char dropped[64] = "the oldest turn was dropped";
        if (ch->cv.first > 1)
            snprintf(dropped, sizeof dropped, "the %d oldest turns were dropped", ch->cv.first);
        fprintf(stderr, "mygpt %s: turn %d: the conversation and a response of %d tokens outgrew the model's context "
                        "of %d: %s, and more will be as it goes on%s\n",
                cmd, ch->cv.n + 1, ch->max_new, M, dropped,
                ch->max_new * 2 > M ? " (a smaller --max-new leaves room for earlier turns)" : "");
        ch->said_dropped = 1;
    }
    if (*n > (size_t)M && !ch->said_cropped) {
        say_cropped(cmd, "prompt", (int)*n, M);
        ch->said_cropped = 1;
    }
    return 0;
}

/* The turn kept as the model will read it again: the prompt and the response shown.
 * 0, or EXIT_RUNTIME after saying so. */
static int keep_turn(chat *ch, const mygpt_strbuf *prompt, const response *resp)
{
    int stop;
    const size_t start = response_start(resp), end = response_end(resp->r, resp->len, 1, &stop);
    mygpt_strbuf *turns = realloc(ch->cv.turns, (size_t)(ch->cv.n + 1) * sizeof *turns);
    if (!turns)
        return out_of_memory(ch->cmd);
    ch->cv.turns = turns;
    mygpt_strbuf turn = {0};
    append(&turn, prompt->data, prompt->len);
    append(&turn, resp->r ? resp->r + start : "", end > start ? end - start : 0);
    if (turn.failed) {
        mygpt_sb_free(&turn);
        return out_of_memory(ch->cmd);
    }
    ch->cv.turns[ch->cv.n++] = turn;
    return 0;
}

/* A model whose responses so far all had nothing to show (it ended each at once, or wrote
 * only white space or "###"): said once on stderr, with the likely reason, a model that
 * was not tuned to follow instructions (a tuned model's empty answer among others is not) */
static void say_if_empty(chat *ch, const response *resp)
{
    int stop;
    if (response_end(resp->r, resp->len, 1, &stop) > response_start(resp))
        ch->answered = 1;
    if (ch->said_empty || ch->answered || interrupted)
        return;
    fprintf(stderr, "mygpt %s: the model answered nothing (%s): is it instruction-tuned? (mygpt finetune --task "
                    "instruct --save FILE makes one)\n", ch->cmd,
            resp->len ? "only white space or \"###\"" : "it ended the response before any text");
    ch->said_empty = 1;
}

/* One turn: the prompt of the instruction (len bytes, a NUL among them kept) after the
 * conversation (its oldest turns dropped while it and a whole response do not fit in the
 * context), the response streamed, the turn kept. 0, or the exit code after saying why. */
static int chat_turn(chat *ch, const char *instruction, size_t len)
{
    const char *cmd = ch->cmd;
    mygpt_error err = {0};
    mygpt_status st;
    char *head = NULL;
    mygpt_strbuf prompt = {0}, text = {0};
    int64_t *ids = NULL, *out = NULL;
    size_t n = 0;
    response resp = {ch->tok, NULL, 0, 0, 0, 0, 0};
    int rc = 0;
    // format_input's template up to its instruction (the instruction is its end, there
    // being no input), then the line's bytes as UTF-8 reads them, then the response's header
    if ((st = mygpt_instruct_prompt(&head, "", NULL, &err)) == MYGPT_ENOMEM)
        goto oom;
    if (st != MYGPT_OK) {
        rc = cli_fail(cmd, st, &err);
        goto done;
    }
    append(&prompt, head, strlen(head));
    append(&prompt, instruction, len); // U+FFFD for what is not UTF-8, a NUL kept
    append(&prompt, MYGPT_INSTRUCT_RESPONSE, strlen(MYGPT_INSTRUCT_RESPONSE));
    if (prompt.failed)
        goto oom;
    if ((rc = fit_context(ch, &prompt, &text, &ids, &n)))
        goto done;
    if (!(out = malloc((n + (size_t)ch->max_new) * sizeof *out)))
        goto oom;
    int nout = 0;
    if (ch->terminal)
        catch_interrupt(1);
    const mygpt_generation gen = {.max_new = ch->max_new, .sampling = ch->sampling, .eos = MYGPT_ENDOFTEXT_ID,
                                  .use_cache = 1, .on_token = on_token, .user = &resp};
    st = mygpt_generate(ch->g, &ch->rng, ids, (int)n, &gen, out, &nout, &err);
    if (ch->terminal)
        catch_interrupt(0);
    if (st != MYGPT_OK) {
        if (resp.shown > response_start(&resp)) // the reply cut short: the error on a line of its own
            printf("\n");
        rc = sampling_fail(cmd, &ch->sampling, st, &err);
        goto done;
    }
    if (resp.failed)
        goto oom; // the ids are the model's own, so only memory can fail
    show_response(&resp, 1);
    printf("\n");
    say_if_empty(ch, &resp);
    if (ch->print_ids) {
        for (int i = (int)n; i < nout; i++)
            printf(i > (int)n ? " %lld" : "%lld", (long long)out[i]);
        printf("\n");
    }
    if ((rc = out_flush(cmd))) // no next line is read for an output that takes nothing
        goto done;
    rc = keep_turn(ch, &prompt, &resp);
    goto done;
oom:
    cli_error(cmd, "out of memory");
    rc = EXIT_RUNTIME;
done:
    free(head);
    mygpt_sb_free(&prompt);
    mygpt_sb_free(&text);
    free(ids);
    free(out);
    free(resp.r);
    return rc;
}

/* --checkpoint's model into ch->g, refused unless it is a language model of GPT-2's
 * vocabulary, its weights packed once (every token of every turn reads them), and GPT-2's
 * tokenizer into *tok (ch->tok). 0, or the exit code after saying why not. */
static int open_model(chat *ch, const parsed_args *a, mygpt_tokenizer **tok)
{
    const char *cmd = ch->cmd;
    mygpt_error err = {0};
    mygpt_status st;
    int rc;
    if ((rc = load_checkpoint(cmd, a, &ch->g)))
        return rc;
    if (ch->g->config.vocab_size != 50257) {
        cli_error(cmd, "%s: a vocabulary of %d tokens, not GPT-2's 50257: chat reads and writes GPT-2's tokens",
                  args_get(a, "checkpoint"), ch->g->config.vocab_size);
        return EXIT_USAGE;
    }
    if (ch->g->config.num_classes > 0) {
        cli_error(cmd, "%s: a classifier (a head of %d classes), not a language model: it has no text to say",
                  args_get(a, "checkpoint"), ch->g->config.num_classes);
        return EXIT_USAGE;
    }
    if ((rc = load_tokenizer(cmd, tok)))
        return rc;
    ch->tok = *tok;
    if ((st = mygpt_gpt_pack(ch->g, &err)) != MYGPT_OK)
        return cli_fail(cmd, st, &err);
    return 0;
}

/* The conversation: a turn for every line of standard input that is not blank (a prompt
 * "> " before each on a terminal), until the input ends. 0, or the exit code after saying
 * why it stopped. */
static int converse(chat *ch, const char *checkpoint)
{
    const char *cmd = ch->cmd;
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    const int terminal = isatty(STDIN_FILENO);
    ch->terminal = terminal;
    if (terminal)
        fprintf(stderr, "mygpt chat: %s, a context of %d tokens. Type an instruction; Ctrl-C stops a response, "
                        "Ctrl-D ends.\n", checkpoint, ch->g->config.max_seq_len);
    for (;;) {
        if (terminal) {
            printf("> ");
            fflush(stdout);
        }
        ssize_t got = getline(&line, &cap, stdin);
        if (got < 0)
            break;
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
            got--;
        ssize_t i = 0;
        while (i < got && is_blank(line[i]))
            i++;
        if (i == got)
            continue;
        if ((rc = chat_turn(ch, line, (size_t)got))) {
            free(line);
            return rc;
        }
    }
    free(line);
    if (ferror(stdin)) { // closed, a folder: bad input
        cli_error(cmd, "cannot read standard input");
        rc = EXIT_USAGE;
    } else if (terminal) {
        printf("\n"); // Ctrl-D: the shell's prompt on a line of its own
    }
    return rc;
}

static const char CHAT_USAGE[] =
    "usage: mygpt chat --checkpoint FILE [--adapters FILE] [--system TEXT] [--max-new N] [--seed S]\n"
    "                  [--temperature T] [--top-k K] [--top-p P] [--print-ids]\n"
    "                  [--weights fp32|bf16|int8]\n"
    "\n"
    "Talk to a model tuned on the book's chapter-7 instructions. Each line read is the\n"
    "instruction of the book's template (\"Below is an instruction...### Instruction:\n"
    "LINE ### Response:\"); the response streams token by token (N new tokens at most,\n"
    "256 by default, as the book) and ends at <|endoftext|> or before a \"###\" (a new\n"
    "section of the template, not shown), without white space around it. The turns so\n"
    "far go before the next prompt, each ended by <|endoftext|>; the oldest are dropped\n"
    "when the conversation and a response of N tokens no longer fit in the model's\n"
    "context, and a prompt still too long is read from its last max_seq_len tokens, as\n"
    "generate does (one line on stderr says so). --system TEXT goes first, before the\n"
    "turns, and is never dropped. Greedy by default; --temperature, --top-k and --top-p\n"
    "as generate's; --seed S (default 123) is torch.manual_seed(S) before the first\n"
    "response. --print-ids prints each response's token ids on a line after it. An\n"
    "empty line is skipped; end with Ctrl-D (EOF). On a terminal it prompts with \"> \",\n"
    "and Ctrl-C stops a response (at the prompt it ends the chat, as in a pipe); in a\n"
    "pipe it prints only the responses, one line each (a response may hold newlines).\n"
    "The checkpoint: whatever generate reads, with GPT-2's vocabulary; the tokenizer\n"
    "comes from the data folder. --adapters FILE: the LoRA adapters mygpt finetune --lora\n"
    "saved for that checkpoint (or one file: mygpt merge).\n";

/* `mygpt chat`: a conversation with a checkpoint tuned on the book's instructions, a
 * line in and its response streamed out, until the input ends; returns the exit status. */
int cmd_chat(int argc, char **argv)
{
    const char *cmd = "chat";
    static const arg_spec ARGS[] = {CHECKPOINT_FLAGS, {"system", 1, 0}, {"max-new", 1, 0}, {"seed", 1, 0},
                                    SAMPLING_FLAGS,      {"print-ids", 0, 0}, WEIGHTS_FLAG,      {NULL, 0, 0}};
    parsed_args a;
    int rc = cli_parse_or_help(cmd, argc, argv, ARGS, 0, CHAT_USAGE, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (!args_has(&a, "checkpoint")) {
        cli_error(cmd, "--checkpoint FILE is required: the model to talk to");
        return EXIT_USAGE;
    }
    chat ch = {.cmd = cmd, .print_ids = args_has(&a, "print-ids")};
    int64_t max_new = 256; // the book's max_new_tokens for a response
    uint64_t seed = 123;
    if (args_i64_in(cmd, &a, "max-new", 1, 1 << 20, 0, &max_new) || read_sampling(cmd, &a, &ch.sampling) ||
        (args_has(&a, "seed") && parse_seed(cmd, "seed", args_get(&a, "seed"), &seed)))
        return EXIT_USAGE;
    ch.max_new = (int)max_new;
    ch.cv.system = args_get(&a, "system");
    char *system = NULL;
    if (ch.cv.system && !(ch.cv.system = system = valid_utf8(ch.cv.system, strlen(ch.cv.system)))) {
        cli_error(cmd, "out of memory");
        return EXIT_RUNTIME;
    }
    mygpt_tokenizer *tok = NULL;
    if (!(rc = open_model(&ch, &a, &tok))) {
        mygpt_rng_seed(&ch.rng, seed);
        rc = converse(&ch, args_get(&a, "checkpoint"));
    }
    for (int i = ch.cv.first; i < ch.cv.n; i++)
        mygpt_sb_free(&ch.cv.turns[i]);
    free(ch.cv.turns);
    free(system);
    mygpt_tokenizer_free(tok);
    mygpt_gpt_free(ch.g);
    return rc;
}
