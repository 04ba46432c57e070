/*
 * train_session.h - one run of `mygpt train`, from its settings to its last file: the
 * text split and tokenised, the model built (or read with --init-from), the course's loop
 * (--steps) or the book's (--epochs, book_train.c), and around every step the progress
 * line, the loss log, the training state every --checkpoint-every steps and on Ctrl-C,
 * --resume, --data-parallel. cli/cmd_train.c reads the flags into train_settings and
 * calls train_session_run; every message is said here, with the tool's status.
 */
#ifndef MYGPT_TRAIN_SESSION_H
#define MYGPT_TRAIN_SESSION_H

#include <stdint.h>

#include "mygpt/gpt.h"
#include "mygpt/train.h"

/* Everything a run is told, checked as the flags were read (train_session_run trusts it) */
typedef struct train_settings {
    const char *cmd;            /* the messages' "mygpt CMD:"                            */
    uint64_t seed;              /* torch.manual_seed: the model, the loaders, dropout     */
    mygpt_config cfg;           /* the model's; with --init-from only its dropout counts  */
    const char *text;           /* --text: the first 90% of its characters train          */
    const char *tokenizer;      /* --tokenizer: llama2.c's tokenizer.bin, or NULL: GPT-2's */
    int64_t T, B;               /* --context, --batch                                     */
    int64_t steps;              /* --steps (the course's loop), or 0                      */
    int64_t epochs;             /* --epochs (the book's loop), or 0                       */
    int64_t eval_every;         /* --eval-every                                           */
    int64_t eval_batches;       /* --eval-batches, or 0: every batch                      */
    int64_t sample_tokens;      /* --sample-tokens                                        */
    const char *sample_prompt;  /* --sample-prompt, or NULL                               */
    int adamw;                  /* --optimizer: 1 adamw, 0 sgd                            */
    double lr, momentum;        /* --lr, --momentum                                       */
    double weight_decay;        /* --weight-decay, or -1: the optimizer's own             */
    int decay_groups;           /* --decay-groups: no decay on tensors of 1 dimension     */
    mygpt_lr_schedule schedule; /* appendix D's (peak --lr); total_steps set for --steps  */
    int scheduled;              /* --warmup or --cosine was given                         */
    int warmup_given;           /* --warmup was given (it may be 0)                       */
    double clip;                /* --clip-grad, or 0                                      */
    const char *init_from;      /* --init-from FILE, or NULL                              */
    /* the model flags given beside --init-from, which must agree with its checkpoint:
     * --vocab, --embed, --heads, --layers, --max-seq, --kv-heads, --ffn-hidden,
     * --multiple-of (each NULL when not given), --arch */
    const char *sizes[8], *arch;
    int qkv_bias;               /* --qkv-bias was given                                   */
    int untied_head;            /* --untied-head was given                                */
    const char *run_dir;        /* the run's folder (runs/NAME, --out DIR), or NULL      */
    const char *save;           /* the model's file: --save FILE, the folder's, or NULL   */
    const char *log;            /* the log: --log FILE.csv, the folder's, or NULL         */
    const char *best;           /* --keep-best: the lowest validation loss's model, or NULL */
    int state_at_end;           /* the state is saved at the run's end too (a folder's)   */
    const char *resume;         /* --resume FILE, or NULL                                 */
    const char *state;          /* where the training state goes                          */
    const char *state_refused;  /* or why it may not go there (then nothing is saved)     */
    int64_t checkpoint_every;   /* --checkpoint-every K, or 0                             */
    int data_parallel;          /* --data-parallel                                        */
    int check_replicas;         /* --check-replicas                                       */
} train_settings;

/* The schedule's length (total steps of the run, which `length` names: "--steps" or
 * "--epochs") set in s, and whether the library takes it; 0, or EXIT_USAGE after one line
 * naming the flags. The values were checked as flags were read: what is left is a cosine
 * with no step after the warmup. */
int train_schedule_check(const char *cmd, mygpt_lr_schedule *s, long long total, const char *length);

/* Runs the training s describes, printing what `mygpt train` prints, writing its files
 * (--save, --log and its plot, the training state). Returns the exit status: 0, or the
 * status after its message (1 when the training diverged); a run that Ctrl-C stopped
 * ends the program as Ctrl-C ends it, once its state is saved. */
int train_session_run(const train_settings *s);

#endif
