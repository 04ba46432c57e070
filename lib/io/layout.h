/*
 * io/layout.h - private to the library: how a model's parameter table lies in a
 * checkpoint file (layout.c). The file names its tensors as the model's state_dict does,
 * or as Hugging Face's GPT-2 does for a gpt2 model ("h.0.attn.c_attn.weight": W_q, W_k
 * and W_v fused into one tensor, every Conv1D weight stored transposed, (in, out)); the
 * values are float32, or a quantized model's stored bf16 or int8 (with int8's scales as
 * "<name>.scales"). These functions name the file's tensors and move their bytes.
 */
#ifndef MYGPT_IO_LAYOUT_H
#define MYGPT_IO_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mygpt/gpt.h"
#include "mygpt/weights.h"
#include "model/quantized.h"

/* One tensor of a file: the table's rows it holds (several when Hugging Face fuses them:
 * c_attn = W_q | W_k | W_v), of one layer (-1: the whole model), stored transposed
 * when it is a Conv1D weight (in, out). */
typedef struct file_tensor {
    char name[112];
    int ndim;
    int64_t shape[2];
    int parts, rows[3], layer;
    bool transposed;
} file_tensor;

/* Which tensors of a model a file holds: everything but the LoRA adapters (a model's
 * checkpoint), or the adapters only (mygpt_checkpoint_save_adapters) */
typedef enum file_kind { FILE_MODEL, FILE_ADAPTERS } file_kind;

/* Which way bytes move between a file's tensor and the model's */
typedef enum move_dir { FROM_FILE, TO_FILE } move_dir;

/* The tensors of cfg's model in its file layout (Hugging Face's for gpt2, the
 * state_dict's otherwise), in state_dict order, into out (room for
 * mygpt_state_dict_len(cfg) of them): returns their count. The adapters go by the book's
 * state_dict names whatever the layout. */
int mygpt_file_tensors(const mygpt_config *cfg, file_tensor *out, file_kind kind);

/* Where the table's tensors are, as bytes of es each: the parameters' floats (es 4), or
 * a quantized model's stored values (es 1 or 2) */
typedef struct tensor_bytes {
    char *base[MYGPT_NUM_PARAM_TENSORS];
    size_t es;
} tensor_bytes;

tensor_bytes mygpt_float_bytes(const mygpt_params *w);
tensor_bytes mygpt_quantized_bytes(const mygpt_quantized *qz);

/* Copies between the file's bytes of tensor t and the tensors tb points at: TO_FILE
 * writes file (numel elements) from them, FROM_FILE fills them from file. Conv1D's
 * (in, out) is the transpose of nn.Linear's (out, in); fused parts sit side by side
 * along out. */
void mygpt_move_tensor(const mygpt_config *cfg, const tensor_bytes *tb, const file_tensor *t, void *file,
                       move_dir dir);

/* An int8 file tensor's scales: its parts' (rows, groups) one after another (fused
 * parts along rows, whatever the layout of the values), as a float32 tensor named
 * "<name>.scales": their count, and their move as mygpt_move_tensor's. */
size_t mygpt_scales_len(const mygpt_config *cfg, const file_tensor *t);
void mygpt_move_scales(const mygpt_config *cfg, const mygpt_quantized *qz, const file_tensor *t, float *file,
                       move_dir dir);

/* Whether file tensor t is stored quantized in a model of format w */
bool mygpt_is_quantized(const mygpt_config *cfg, const file_tensor *t, mygpt_weights w);

/* The first of the nt file tensors ts stored as float32 in a model of format wf whose
 * values (at floats) hold a NaN or an infinity: its index, *value the first such value;
 * or -1 when every one is finite. */
int mygpt_nonfinite_tensor(const mygpt_config *cfg, const tensor_bytes *floats, const file_tensor *ts, int nt,
                           mygpt_weights wf, double *value);

/* The first of the nt file tensors ts stored quantized (qz, format wf) whose values, or
 * int8's scales, the recipe never gives (the check of mygpt_weights_traits_of(wf)): its
 * index, with the check's reason in err and *part the part that holds it (the reason's
 * index counts in that part as the model holds it: (out, in), row by row); or -1 when
 * every one is such a value. */
int mygpt_unquantized_tensor(const mygpt_config *cfg, const mygpt_quantized *qz, const file_tensor *ts, int nt,
                             mygpt_weights wf, int *part, mygpt_error *err);

/* Whether name is a buffer a state_dict holds besides the parameters: the causal masks
 * of the course's blocks, of the book's and of Hugging Face's ("attn.bias", and older
 * "masked_bias") */
bool mygpt_is_buffer(const char *name);
#endif
