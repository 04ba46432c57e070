/*
 * instruct.c - the book's chapter-7 instruction data: the Alpaca-style prompt that
 * format_input builds (Raschka, section 7.2), which instruction fine-tuning trains on
 * and a chat wraps each line in.
 */
#include <stdlib.h>
#include <string.h>

#include "mygpt/data.h"
#include "base/base.h"

#define PREAMBLE                                                                                                 \
    "Below is an instruction that describes a task. Write a response that appropriately completes the request."
#define INSTRUCTION_HEADER "\n\n### Instruction:\n"
#define INPUT_HEADER "\n\n### Input:\n"

mygpt_status mygpt_instruct_prompt(char **out, const char *instruction, const char *input, mygpt_error *err)
{
    *out = NULL;
    if (!instruction)
        return mygpt_fail(err, MYGPT_EINVAL, "an entry needs an instruction");
    const int has_input = input && input[0]; // the book: `if entry["input"] else ""`
    const size_t len = strlen(PREAMBLE INSTRUCTION_HEADER) + strlen(instruction) +
                       (has_input ? strlen(INPUT_HEADER) + strlen(input) : 0);
    char *s = malloc(len + 1);
    if (!s)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a prompt of %zu bytes", len);
    strcpy(s, PREAMBLE INSTRUCTION_HEADER);
    strcat(s, instruction);
    if (has_input) {
        strcat(s, INPUT_HEADER);
        strcat(s, input);
    }
    *out = s;
    return MYGPT_OK;
}
