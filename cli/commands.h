/* commands.h - the subcommands of the mygpt tool; each returns the exit status. */
#ifndef MYGPT_CLI_COMMANDS_H
#define MYGPT_CLI_COMMANDS_H

int cmd_randn(int argc, char **argv);
int cmd_rand(int argc, char **argv);
int cmd_randint(int argc, char **argv);
int cmd_randperm(int argc, char **argv);
int cmd_init(int argc, char **argv);
int cmd_forward(int argc, char **argv);
int cmd_params(int argc, char **argv);
int cmd_init_gpt(int argc, char **argv);
int cmd_encode(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_loss(int argc, char **argv);
int cmd_grad(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_chat(int argc, char **argv);
int cmd_finetune(int argc, char **argv);
int cmd_attention(int argc, char **argv);
int cmd_quantize(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_download(int argc, char **argv);
int cmd_classify(int argc, char **argv);

#endif
