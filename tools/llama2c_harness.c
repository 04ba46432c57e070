/*
 * llama2c_harness.c - prints what llama2.c's own run.c computes, for
 * tools/reference_llama2c.py (never built by meson, never part of mygpt). It is compiled
 * against a llama2.c checkout's run.c, which it includes whole (TESTING leaves out its
 * main), so every number below is run.c's.
 *
 *   harness encode TOK.bin VOCAB   stdin: one text a line, as hex; stdout per text:
 *                                  HEX<TAB>ids(bos 1, eos 0)<TAB>ids(bos 0, eos 1)<TAB>printed
 *                                  (printed: the hex of what run.c's generate prints for
 *                                  the first ids after their BOS: decode then safe_printf)
 *   harness pieces TOK.bin VOCAB   per id and prev in {0, 1}: ID PREV HEX(decode) PRINTS
 *   harness sample                 stdin: lines "N TEMPERATURE TOPP SEED DRAWS" then a line
 *                                  of N logits (float32 bits in hex); stdout per case: the
 *                                  tokens of DRAWS calls of sample() (each on a fresh copy
 *                                  of the logits), then the generator's state; a case
 *                                  where no token reaches top-p's cut-off (run.c would
 *                                  read outside its array) is refused
 *   harness rng SEED COUNT         random_u32 and random_f32 (bits in hex), COUNT times
 */
#define TESTING
#include "run.c"

static void print_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%02x", (unsigned char)s[i]);
    if (n == 0)
        printf("-");
}

/* What safe_printf would print of piece, appended to out. */
static size_t printed(const char *piece, char *out)
{
    if (piece == NULL || piece[0] == '\0')
        return 0;
    if (piece[1] == '\0' && !(isprint((unsigned char)piece[0]) || isspace((unsigned char)piece[0])))
        return 0;
    size_t n = strlen(piece);
    memcpy(out, piece, n);
    return n;
}

static void print_ids(const int *ids, int n)
{
    for (int i = 0; i < n; i++)
        printf(i ? " %d" : "%d", ids[i]);
    if (n == 0)
        printf("-");
}

static int encode_texts(Tokenizer *t)
{
    static char line[1 << 16], text[1 << 15];
    while (fgets(line, sizeof line, stdin)) {
        size_t hl = strcspn(line, "\n"), n = 0;
        line[hl] = '\0';
        for (size_t i = 0; strcmp(line, "-") != 0 && i + 1 < hl; i += 2) {
            unsigned b;
            sscanf(line + i, "%2x", &b);
            text[n++] = (char)b;
        }
        text[n] = '\0';
        int *ids = malloc((n + 3) * sizeof *ids), *ide = malloc((n + 3) * sizeof *ide), m, me;
        encode(t, text, 1, 0, ids, &m);
        encode(t, text, 0, 1, ide, &me);
        char *out = malloc(16 * (size_t)m + 1);
        size_t len = 0;
        for (int i = 1; i < m; i++)
            len += printed(decode(t, ids[i - 1], ids[i]), out + len);
        print_hex(text, n);
        printf("\t");
        print_ids(ids, m);
        printf("\t");
        print_ids(ide, me);
        printf("\t");
        print_hex(out, len);
        printf("\n");
        free(ids);
        free(ide);
        free(out);
    }
    return 0;
}

static int print_pieces(Tokenizer *t)
{
    for (int id = 0; id < t->vocab_size; id++) {
        for (int prev = 0; prev < 2; prev++) {
            char *p = decode(t, prev, id), out[64];
            size_t shown = printed(p, out);
            printf("%d %d ", id, prev);
            print_hex(p, strlen(p));
            printf(" %d\n", shown > 0);
        }
    }
    return 0;
}

/* 0 when sample() would find no top-p candidate (run.c then reads probindex[-1]). */
static int reaches_cutoff(const float *logits, float *work, int n, float temperature, float topp)
{
    if (temperature == 0.0f || topp <= 0 || topp >= 1)
        return 1;
    for (int i = 0; i < n; i++)
        work[i] = logits[i] / temperature;
    softmax(work, n);
    const float cutoff = (1.0f - topp) / (n - 1);
    for (int i = 0; i < n; i++)
        if (work[i] >= cutoff)
            return 1;
    return 0;
}

static int sample_cases(void)
{
    int n, draws;
    float temperature, topp;
    unsigned long long seed;
    while (scanf("%d %f %f %llu %d", &n, &temperature, &topp, &seed, &draws) == 5) {
        float *logits = malloc(n * sizeof *logits), *work = malloc(n * sizeof *work);
        for (int i = 0; i < n; i++) {
            unsigned bits;
            if (scanf("%x", &bits) != 1)
                return 1;
            memcpy(&logits[i], &bits, 4);
        }
        if (!reaches_cutoff(logits, work, n, temperature, topp)) {
            fprintf(stderr, "no probability reaches top-p's cut-off: run.c reads outside its array\n");
            return 1;
        }
        Sampler s;
        build_sampler(&s, n, temperature, topp, seed);
        for (int d = 0; d < draws; d++) {
            memcpy(work, logits, n * sizeof *work);
            printf(d ? " %d" : "%d", sample(&s, work));
        }
        printf("\t%llu\n", s.rng_state);
        free_sampler(&s);
        free(logits);
        free(work);
    }
    return 0;
}

static int rng_draws(unsigned long long seed, int count)
{
    for (int i = 0; i < count; i++) {
        unsigned long long copy = seed;
        unsigned u = random_u32(&seed);
        float f = random_f32(&copy);
        unsigned bits;
        memcpy(&bits, &f, 4);
        printf(i ? " %u:%08x" : "%u:%08x", u, bits);
    }
    printf("\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && (strcmp(argv[1], "encode") == 0 || strcmp(argv[1], "pieces") == 0)) {
        Tokenizer t;
        build_tokenizer(&t, argv[2], atoi(argv[3]));
        int rc = argv[1][0] == 'e' ? encode_texts(&t) : print_pieces(&t);
        free_tokenizer(&t);
        return rc;
    }
    if (argc == 2 && strcmp(argv[1], "sample") == 0)
        return sample_cases();
    if (argc == 4 && strcmp(argv[1], "rng") == 0)
        return rng_draws(strtoull(argv[2], NULL, 10), atoi(argv[3]));
    fprintf(stderr, "usage: harness encode|pieces TOK VOCAB | sample | rng SEED COUNT\n");
    return 2;
}
