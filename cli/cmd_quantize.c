/*
 * cmd_quantize.c - `mygpt quantize IN OUT --weights bf16|int8|fp32`: a checkpoint's weights
 * stored in fewer bytes (mygpt/quantize.h), saved as a safetensors file that loads on
 * its own (BF16, or I8 tensors with F32 "<name>.scales", the format in __metadata__).
 */
#include <stdio.h>

#include "args.h"
#include "commands.h"
#include "mygpt/checkpoint.h"
#include "mygpt/quantize.h"
#include "model_args.h"
#include "output.h"

static const char QUANTIZE_USAGE[] =
    "usage: mygpt quantize IN OUT --weights bf16|int8|fp32 [--force]\n"
    "\n"
    "Reads the checkpoint IN (mygpt's, the book's state_dict or Hugging Face's GPT-2,\n"
    "a training state: the weights of its step, or llama2.c's model file),\n"
    "stores every matmul weight and the token embedding as bfloat16 (rounded as\n"
    "tensor.to(torch.bfloat16)) or int8 (per output row, groups of 64 inputs sharing the\n"
    "float32 scale max|w| / 127; q = round(w / scale), ties to even) and writes OUT in\n"
    "IN's layout with those tensors quantized. LayerNorm parameters, biases and the\n"
    "position embedding stay float32. The quantized model is the float32 model of the\n"
    "dequantized weights, bit for bit: mygpt generate --checkpoint OUT gives the tokens\n"
    "of --checkpoint IN --weights int8. --weights fp32 writes a quantized IN's dequantized\n"
    "float32 model (what training and LoRA take). OUT must not be IN; a file there already\n"
    "is replaced only with --force. A llama model\n"
    "goes to an OUT ending in .bin as llama2.c's file (run.c reads it: float32 weights,\n"
    "rotary pairs interleaved).\n";

/* `mygpt quantize IN OUT`: the checkpoint with its weights stored as bf16 or int8;
 * returns the exit status. */
int cmd_quantize(int argc, char **argv)
{
    const char *cmd = "quantize";
    static const arg_spec ARGS[] = {WEIGHTS_FLAG, {"force", 0, 0}, {NULL, 0, 0}};
    parsed_args a;
    int rc = cli_parse_or_help(cmd, argc, argv, ARGS, 1, QUANTIZE_USAGE, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (a.npositional != 2) {
        cli_error(cmd, "give the checkpoint to read and the file to write: mygpt quantize IN OUT --weights int8");
        return EXIT_USAGE;
    }
    if (!args_has(&a, "weights")) {
        cli_error(cmd, "--weights bf16|int8|fp32 is required");
        return EXIT_USAGE;
    }
    const char *in = a.positional[0], *out = a.positional[1];
    char model[2][4200];
    cli_file model_files[2];
    cli_checkpoint_files("IN", in, model_files, model);
    const cli_file files[] = {{"OUT", out, 1, 0}, model_files[0], model_files[1]};
    if ((rc = cli_distinct_files(cmd, files, 3)))
        return rc;
    if ((rc = cli_check_output(cmd, "OUT", out, args_has(&a, "force"))))
        return rc;
    mygpt_error err = {0};
    mygpt_status st;
    mygpt_gpt *g = NULL;
    if ((st = mygpt_model_load(&g, in, &err)) != MYGPT_OK)
        return cli_fail(cmd, st, &err);
    // what OUT's format cannot hold (a gpt2's config.json beside OUT, llama2.c's float32)
    // refused before anything is written
    if ((rc = apply_weights(cmd, &a, g)) == 0 && (st = mygpt_model_check_save(g, out, &err)) != MYGPT_OK)
        rc = cli_fail(cmd, st, &err);
    if (rc == 0 && (st = mygpt_model_save(g, out, &err)) != MYGPT_OK)
        rc = cli_write_fail(cmd, st, &err); // a full disk: a runtime failure, 1
    if (rc == 0)
        cli_say(stdout, "%s: %s weights, %.1f MB of weights read per token (float32: %.1f MB)", out,
               mygpt_weights_name(g->weights), mygpt_weights_bytes_per_token(&g->config, g->weights) / 1e6,
               mygpt_weights_bytes_per_token(&g->config, MYGPT_WEIGHTS_FP32) / 1e6);
    mygpt_gpt_free(g);
    return rc;
}
