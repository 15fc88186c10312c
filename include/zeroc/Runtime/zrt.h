/*===- zrt.h - the C ABI between generated code and zeroc's runtime -------===*
 *
 * Generated training programs (lib/Target/Cpp, lib/Target/Cuda) call only
 * what this header declares; the CPU runtime (lib/Runtime/Cpu, MPI +
 * OpenBLAS) and the CUDA runtime (lib/Runtime/Cuda, NCCL + cuBLASLt)
 * implement it. The generated code also defines `zeroc_program()`, which
 * describes the program's state and entry points to the runtime's `main`.
 *
 * Conventions: tensors are dense, row-major, in the element type `dtype`;
 * bf16 values are uint16_t bit patterns (the upper half of an f32), rounded
 * to nearest even; kernels compute in f32 whatever the storage type. Every
 * function that can fail reports through zrt_fail(), which prints the
 * message with the rank and aborts every rank (MPI_Abort): a collective
 * program cannot go on when one rank cannot.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZEROC_RUNTIME_ZRT_H
#define ZEROC_RUNTIME_ZRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The element types, in one table: X(ENUM, VALUE, C_TYPE, BYTES, NAME,
 * IS_FLOAT) for each. NAME is the MLIR element type's spelling ("f32") and
 * the name in messages; C_TYPE is the storage (bf16: uint16_t bit
 * patterns). Values are 0, 1, 2, ... in order. The enum, zrt_dtype_size,
 * zrt_dtype_name, the runtimes' MPI and NCCL types, the kernels' dispatch
 * and the compiler's emitter (lib/Target/Cpp) all expand this table, so a
 * dtype is added here once. */
#define ZRT_DTYPES(X)                                                          \
  X(ZRT_F32, 0, float, 4, "f32", 1)                                            \
  X(ZRT_BF16, 1, uint16_t, 2, "bf16", 1)                                       \
  X(ZRT_I32, 2, int32_t, 4, "i32", 0)                                          \
  X(ZRT_I64, 3, int64_t, 8, "i64", 0)

typedef enum zrt_dtype {
#define ZRT_DTYPE_ENUMERATOR_(e, value, ctype, bytes, name, is_float) e = value,
  ZRT_DTYPES(ZRT_DTYPE_ENUMERATOR_)
#undef ZRT_DTYPE_ENUMERATOR_
} zrt_dtype;

/* How many dtypes the table has: the valid values are [0, ZRT_NUM_DTYPES). */
#define ZRT_DTYPE_COUNT_(e, value, ctype, bytes, name, is_float) +1
enum { ZRT_NUM_DTYPES = 0 ZRT_DTYPES(ZRT_DTYPE_COUNT_) };
#undef ZRT_DTYPE_COUNT_

/* Whether `dtype` is one of the table's. */
static inline int zrt_dtype_valid(int dtype) {
  return dtype >= 0 && dtype < ZRT_NUM_DTYPES;
}

/* "f32", "bf16", ...; "unknown" for a value outside the table. */
static inline const char *zrt_dtype_name(zrt_dtype dtype) {
  switch (dtype) {
#define ZRT_DTYPE_NAME_(e, value, ctype, bytes, name, is_float)                \
  case e:                                                                      \
    return name;
    ZRT_DTYPES(ZRT_DTYPE_NAME_)
#undef ZRT_DTYPE_NAME_
  }
  return "unknown";
}

/* Bytes of one element of `dtype` (the table's BYTES); fails on a value
 * outside the table. */
size_t zrt_dtype_size(zrt_dtype dtype);

/* Reports a fatal error on this rank (printf-style) and stops every rank. */
void zrt_fail(const char *format, ...)
#ifdef __GNUC__
    __attribute__((noreturn, format(printf, 1, 2)))
#endif
    ;

/*===----------------------------------------------------------------------===*
 * Memory, accounted per category as the static memory report splits it.
 *===----------------------------------------------------------------------===*/

typedef enum zrt_mem_category {
  ZRT_MEM_PARAMETERS = 0,
  ZRT_MEM_GRADIENTS = 1,
  ZRT_MEM_OPTIMIZER_STATES = 2,
  ZRT_MEM_GATHERED_PARAMETERS = 3,
  ZRT_MEM_GRADIENT_BUCKETS = 4,
  ZRT_MEM_ACTIVATIONS = 5,
  ZRT_MEM_CATEGORIES = 6,
} zrt_mem_category;

/* 64-byte aligned, uninitialized; `bytes` is counted in `category` until the
 * matching zrt_free. Never returns NULL (fails instead). */
void *zrt_alloc(size_t bytes, zrt_mem_category category);
void zrt_free(void *ptr, size_t bytes, zrt_mem_category category);
/* Current and peak bytes of a category on this rank. */
int64_t zrt_mem_current(zrt_mem_category category);
int64_t zrt_mem_peak(zrt_mem_category category);

/*===----------------------------------------------------------------------===*
 * Collectives over the data-parallel group (a 1-D grid of every rank).
 * Sums only. `*_start` returns at once; the buffers must stay untouched
 * until zrt_wait on the request returns. Counts are elements.
 *
 * `stream` orders the collective with the caller's work: on a GPU it is
 * the stream (a cudaStream_t; NULL: the compute stream) whose work so far
 * the collective waits for, and which zrt_wait makes wait for the
 * collective; the CPU runtime ignores it. Generated code calls these the
 * same way for both runtimes; the CUDA runtime issues NCCL on its own
 * communication stream, ordered with `stream` by events.
 *
 * In place (the same for both runtimes, as NCCL defines it):
 *   all-reduce      send == recv;
 *   reduce-scatter  recv == send + rank * recv_count: the rank's result
 *                   lands in its own slot of the full buffer;
 *   all-gather      send == recv + rank * send_count: the rank's input is
 *                   its own slot of the full buffer.
 * The rest of an in-place reduce-scatter's buffer is undefined afterwards.
 * Any other overlap of send and recv is allowed and goes through a
 * temporary (one extra copy of recv). Costs: CUDA does every in-place form
 * in place. The CPU runtime uses MPI_IN_PLACE; for a reduce-scatter, MPI
 * leaves rank r's result at the start of the buffer, so zrt_wait copies
 * recv_count elements from there to the rank's slot on every rank but 0.
 *===----------------------------------------------------------------------===*/

typedef struct zrt_comm zrt_comm;        /* the world group; NULL = default */
typedef struct zrt_request zrt_request;  /* one collective in flight */

int zrt_rank(const zrt_comm *comm);
int zrt_world_size(const zrt_comm *comm);

/* recv[i] = sum over ranks of send[i], i < count. */
zrt_request *zrt_all_reduce_start(zrt_comm *comm, const void *send, void *recv,
                                  size_t count, zrt_dtype dtype, void *stream);
/* send has world_size * recv_count elements; rank r receives the sum of
 * elements [r*recv_count, (r+1)*recv_count). */
zrt_request *zrt_reduce_scatter_start(zrt_comm *comm, const void *send,
                                      void *recv, size_t recv_count,
                                      zrt_dtype dtype, void *stream);
/* recv holds every rank's send_count elements, in rank order. */
zrt_request *zrt_all_gather_start(zrt_comm *comm, const void *send, void *recv,
                                  size_t send_count, zrt_dtype dtype,
                                  void *stream);
/* Completes the request and recycles it. CPU: blocks until the collective
 * is done (the time spent here is the rank's exposed communication). GPU:
 * makes the start's `stream` wait for it and returns at once (the host
 * never blocks on a collective). Each request is waited for exactly once. */
void zrt_wait(zrt_request *request);

/* The collectives, as the runtimes count them and traces name them. */
typedef enum zrt_collective {
  ZRT_ALL_REDUCE = 0,
  ZRT_REDUCE_SCATTER = 1,
  ZRT_ALL_GATHER = 2,
} zrt_collective;

/* Bytes this rank sent, by ring-algorithm accounting of the counts passed
 * above (all-reduce 2(N-1)/N*n, reduce-scatter and all-gather (N-1)/N*n,
 * n = the full buffer), and seconds blocked in zrt_wait. */
int64_t zrt_comm_bytes_sent(void);
double zrt_comm_seconds_waited(void);

/*===----------------------------------------------------------------------===*
 * Kernels that generated code calls for what is not a fused elementwise
 * loop. Shapes are in elements; `rows` is the product of all dimensions but
 * the last.
 *===----------------------------------------------------------------------===*/

/* Whether zrt_matmul reads an operand as stored or transposed. */
typedef enum zrt_trans {
  ZRT_NO_TRANS = 0,
  ZRT_TRANS = 1,
} zrt_trans;

/* c[b] = op(a[b]) @ op(b[b]) for b < batch, with op = transpose where the
 * operand's flag is ZRT_TRANS; a[b] is M x K after op, b[b] K x N after op.
 * A stride of 0 shares one matrix across the batch. */
void zrt_matmul(zrt_dtype dtype, const void *a, const void *b, void *c,
                int64_t batch, int64_t m, int64_t n, int64_t k,
                zrt_trans trans_a, zrt_trans trans_b, int64_t stride_a,
                int64_t stride_b, int64_t stride_c);

/* zrt_matmul plus bias (n elements, the dtype's) added to every row of every
 * c[b]: a linear layer, train.matmul_bias. The output is preset to the bias
 * and the product accumulated into it (sgemm's, cuBLASLt's beta = 1; on the
 * CPU tile by tile), instead of zeroing it and adding the bias in a pass of
 * its own; the bias joins each element's f32 sum (rounded once), so
 * results may differ from zrt_matmul followed by the add in the last bits. */
void zrt_matmul_bias(zrt_dtype dtype, const void *a, const void *b,
                     const void *bias, void *c, int64_t batch, int64_t m,
                     int64_t n, int64_t k, zrt_trans trans_a,
                     zrt_trans trans_b, int64_t stride_a, int64_t stride_b,
                     int64_t stride_c);

void zrt_layernorm(zrt_dtype dtype, const void *x, const void *weight,
                   const void *bias, void *y, int64_t rows, int64_t cols,
                   double eps);
/* dx; dweight and dbias are the sums over rows (overwritten). */
void zrt_layernorm_grad(zrt_dtype dtype, const void *dy, const void *x,
                        const void *weight, void *dx, void *dweight,
                        void *dbias, int64_t rows, int64_t cols, double eps);

void zrt_softmax(zrt_dtype dtype, const void *x, void *y, int64_t rows,
                 int64_t cols);
void zrt_softmax_grad(zrt_dtype dtype, const void *dy, const void *y, void *dx,
                      int64_t rows, int64_t cols);

/* What zrt_causal_mask writes above the diagonal. */
typedef enum zrt_mask_fill {
  ZRT_MASK_NEG_INF = 0, /* scores before a softmax */
  ZRT_MASK_ZERO = 1,    /* the gradient of those scores */
} zrt_mask_fill;

/* On [batch, t, s]: entries with j > i become -inf or 0 as `fill` says. */
void zrt_causal_mask(zrt_dtype dtype, const void *x, void *y, int64_t batch,
                     int64_t t, int64_t s, zrt_mask_fill fill);

/* Which keys a query of zrt_attention sees. */
typedef enum zrt_attention_mask {
  ZRT_ATTENTION_FULL = 0,   /* every key */
  ZRT_ATTENTION_CAUSAL = 1, /* keys j <= i */
} zrt_attention_mask;

/* q: [bh, t, d] (bh = batch * heads); k and v: [bh / group, s, d], query
 * head h reading key/value head h / group (grouped-query attention; group
 * 1 is multi-head attention); out: [bh, t, d]. dk and dv sum over the
 * group's query heads. */
void zrt_attention(zrt_dtype dtype, const void *q, const void *k,
                   const void *v, void *out, int64_t bh, int64_t group,
                   int64_t t, int64_t s, int64_t d, double scale,
                   zrt_attention_mask mask);
void zrt_attention_grad(zrt_dtype dtype, const void *dout, const void *q,
                        const void *k, const void *v, void *dq, void *dk,
                        void *dv, int64_t bh, int64_t group, int64_t t,
                        int64_t s, int64_t d, double scale,
                        zrt_attention_mask mask);
/* zrt_attention and zrt_attention_grad with the probabilities P [bh, t, s]
 * dropped out before the product with v, exactly as zrt_dropout(P, n =
 * bh * t * s, inner, rows, row_offset, global_rows, p, seed, step) drops
 * them (the same mask): out = (P * M) v. */
void zrt_attention_dropout(zrt_dtype dtype, const void *q, const void *k,
                           const void *v, void *out, int64_t bh,
                           int64_t group, int64_t t, int64_t s, int64_t d,
                           double scale, zrt_attention_mask mask,
                           int64_t inner, int64_t rows, int64_t row_offset,
                           int64_t global_rows, double p, uint64_t seed,
                           int64_t step);
void zrt_attention_dropout_grad(zrt_dtype dtype, const void *dout,
                                const void *q, const void *k, const void *v,
                                void *dq, void *dk, void *dv, int64_t bh,
                                int64_t group, int64_t t, int64_t s,
                                int64_t d, double scale,
                                zrt_attention_mask mask, int64_t inner,
                                int64_t rows, int64_t row_offset,
                                int64_t global_rows, double p, uint64_t seed,
                                int64_t step);

/* y = x * rsqrt(mean(x^2, row) + eps) * weight, per row of `cols`; the
 * statistics in f32 or wider whatever the dtype. */
void zrt_rmsnorm(zrt_dtype dtype, const void *x, const void *weight, void *y,
                 int64_t rows, int64_t cols, double eps);
/* dx; dweight is the sum over rows (overwritten). */
void zrt_rmsnorm_grad(zrt_dtype dtype, const void *dy, const void *x,
                      const void *weight, void *dx, void *dweight,
                      int64_t rows, int64_t cols, double eps);

/* Rotary embeddings (train.rope) of `rows` rows of d features (d even):
 * row r is at position (r / period) % positions and its pairs (2i, 2i+1)
 * (style 0, interleaved) or (i, i + d/2) (style 1, rotate-half) turn by
 * position * theta^(-2i/d), or by its opposite when inverse != 0. */
void zrt_rope(zrt_dtype dtype, const void *x, void *y, int64_t rows,
              int64_t d, int64_t positions, int64_t period, double theta,
              int style, int inverse);
/* zrt_rope with each pair's inverse frequency scaled as rope_scaling says
 * (zeroc/Support/Rope.h): original 0 is linear scaling by `factor` (1:
 * none), original > 0 Llama 3's llama3 scaling. */
void zrt_rope_scaled(zrt_dtype dtype, const void *x, void *y, int64_t rows,
                     int64_t d, int64_t positions, int64_t period,
                     double theta, int style, int inverse, double factor,
                     double low_freq_factor, double high_freq_factor,
                     double original);

/* y = x[offsets + i * strides] (train.slice); y has out_shape. */
void zrt_slice(zrt_dtype dtype, const void *x, void *y, int rank,
               const int64_t *in_shape, const int64_t *offsets,
               const int64_t *strides, const int64_t *out_shape);
/* dx (in_shape) = zeros with dy (out_shape) at the slice's positions. */
void zrt_slice_grad(zrt_dtype dtype, const void *dy, void *dx, int rank,
                    const int64_t *in_shape, const int64_t *offsets,
                    const int64_t *strides, const int64_t *out_shape);

/* train.dropout: y[i] = keep(i) ? x[i] * (1 / (1 - p)) : 0 for i < n, with keep
 * from zeroc/Support/Random.h's Philox stream `seed` at `step` and the
 * element's global position: x is viewed as [outer, rows, inner] whose
 * rows are global rows [row_offset, row_offset + rows) of global_rows. */
void zrt_dropout(zrt_dtype dtype, const void *x, void *y, int64_t n,
                 int64_t inner, int64_t rows, int64_t row_offset,
                 int64_t global_rows, double p, uint64_t seed, int64_t step);

/* *loss = mean over rows of logsumexp(logits[r]) - logits[r][targets[r]];
 * a target outside [0, cols) fails naming it. `loss` is one f32 of
 * zrt_alloc memory (on the device for a GPU: no host synchronisation). */
void zrt_cross_entropy(zrt_dtype dtype, const void *logits,
                       const void *targets, zrt_dtype target_dtype,
                       int64_t rows, int64_t cols, float *loss);
/* dlogits = *dloss * (softmax(logits) - onehot(targets)) / rows; `dloss`
 * is one f32 of zrt_alloc memory. */
void zrt_cross_entropy_grad(zrt_dtype dtype, const float *dloss,
                            const void *logits, const void *targets,
                            zrt_dtype target_dtype, void *dlogits,
                            int64_t rows, int64_t cols);
/* zrt_cross_entropy with PyTorch's ignore_index and label_smoothing: with
 * has_ignore_index, the rows whose target is ignore_index (which may be
 * outside [0, cols), as -100) count for nothing and the mean is over the
 * others (NaN when there is none); a row's loss is (1 - e) * (logsumexp -
 * logits[r][target]) + e * (logsumexp - mean(logits[r])), e =
 * label_smoothing in [0, 1). With a non-NULL `count` (one f32 of zrt_alloc
 * memory: a data-parallel part's share of the global count), the sum of
 * the rows' losses is divided by *count instead, and a part with no row
 * counted gives 0. */
void zrt_cross_entropy_ex(zrt_dtype dtype, const void *logits,
                          const void *targets, zrt_dtype target_dtype,
                          int64_t rows, int64_t cols, int has_ignore_index,
                          int64_t ignore_index, double label_smoothing,
                          const float *count, float *loss);
/* Its gradient: *dloss / counted (or / *count) * (softmax - (1 - e) *
 * onehot - e / cols) on the rows that count, 0 on the ignored ones (all of
 * them when none counts). */
void zrt_cross_entropy_grad_ex(zrt_dtype dtype, const float *dloss,
                               const void *logits, const void *targets,
                               zrt_dtype target_dtype, void *dlogits,
                               int64_t rows, int64_t cols,
                               int has_ignore_index, int64_t ignore_index,
                               double label_smoothing, const float *count);
/* *count = the number of the n targets that are not ignore_index, as f32;
 * `count` is one f32 of zrt_alloc memory. */
void zrt_count_targets(const void *targets, zrt_dtype target_dtype,
                       int64_t n, int64_t ignore_index, float *count);

/* out[i, :] = table[ids[i], :] for i < n; ids outside [0, vocab) fail. */
void zrt_embedding(zrt_dtype dtype, const void *table, const void *ids,
                   zrt_dtype id_dtype, void *out, int64_t n, int64_t vocab,
                   int64_t cols);
/* dtable (overwritten) = scatter-add of dy rows by ids; row padding_idx
 * (when in [0, vocab); -1 for none) stays zero (train.embedding's
 * padding_idx). */
void zrt_embedding_grad(zrt_dtype dtype, const void *dy, const void *ids,
                        zrt_dtype id_dtype, void *dtable, int64_t n,
                        int64_t vocab, int64_t cols, int64_t padding_idx);

/* y = x with dimensions permuted: y dim i is x dim perm[i]. */
void zrt_transpose(zrt_dtype dtype, const void *x, void *y, int rank,
                   const int64_t *shape, const int64_t *perm);
/* y = sum of x over the dimensions whose flag is set (removed), times
 * `scale` (1/count for a mean). */
void zrt_reduce_sum(zrt_dtype dtype, const void *x, void *y, int rank,
                    const int64_t *shape, const uint8_t *reduced,
                    double scale);
/* y = max of x over the dimensions whose flag is set (removed); a NaN in a
 * slice gives NaN (train.amax). */
void zrt_reduce_max(zrt_dtype dtype, const void *x, void *y, int rank,
                    const int64_t *shape, const uint8_t *reduced);
/* dx (x's shape) = dy / k where x equals its slice's maximum y (k elements
 * of the slice do), 0 elsewhere (train.amax_grad). */
void zrt_reduce_max_grad(zrt_dtype dtype, const void *dy, const void *x,
                         const void *y, void *dx, int rank,
                         const int64_t *shape, const uint8_t *reduced);
/* y = sum((x - mean)^2) / (n - correction) over the flagged dimensions
 * (removed), n the elements each result reduces; n > correction
 * (train.var). */
void zrt_reduce_var(zrt_dtype dtype, const void *x, void *y, int rank,
                    const int64_t *shape, const uint8_t *reduced,
                    int64_t correction);
/* y = x - max - log(sum(exp(x - max))) of each row (train.log_softmax). */
void zrt_log_softmax(zrt_dtype dtype, const void *x, void *y, int64_t rows,
                     int64_t cols);
/* torch.gather: y (idx_shape) at position i = x at i with coordinate `dim`
 * replaced by idx[i]; idx_shape[d] <= x_shape[d] for d != dim; indices
 * outside [0, x_shape[dim]) fail (train.gather). */
void zrt_gather(zrt_dtype dtype, const void *x, const void *idx,
                zrt_dtype idx_dtype, void *y, int rank, const int64_t *x_shape,
                const int64_t *idx_shape, int dim);
/* dx (x_shape, overwritten) = zeros, then dy scatter-added where zrt_gather
 * read (train.gather_grad); duplicates add up, in position order. */
void zrt_gather_grad(zrt_dtype dtype, const void *dy, const void *idx,
                     zrt_dtype idx_dtype, void *dx, int rank,
                     const int64_t *x_shape, const int64_t *idx_shape,
                     int dim);
/* The NumPy broadcast of x (x_shape, right-aligned) to y_shape. */
void zrt_broadcast(zrt_dtype dtype, const void *x, int x_rank,
                   const int64_t *x_shape, void *y, int y_rank,
                   const int64_t *y_shape);
/* Concatenation / split along one dimension of tensors viewed as
 * [outer, size_i * inner]. */
void zrt_concat(zrt_dtype dtype, int count, const void *const *inputs,
                const int64_t *sizes, void *out, int64_t outer, int64_t inner);
void zrt_split(zrt_dtype dtype, const void *input, int count,
               void *const *outputs, const int64_t *sizes, int64_t outer,
               int64_t inner);

/* train.pack / train.unpack: the count tensors (numels[i] elements each)
 * end to end in one flat buffer. */
void zrt_pack(zrt_dtype dtype, int count, const void *const *inputs,
              const int64_t *numels, void *out);
void zrt_unpack(zrt_dtype dtype, const void *input, int count,
                void *const *outputs, const int64_t *numels);

/* *out = the sum of squares of x, accumulated in f32 (out: one f32 of
 * zrt_alloc memory). */
void zrt_squared_norm(zrt_dtype dtype, const void *x, int64_t n, float *out);
/* *out = min(1, max_norm / (sqrt(*squared_norm) + 1e-6)). */
void zrt_clip_coef(const float *squared_norm, double max_norm, float *out);
/* The learning-rate schedules of train.lr_schedule. */
typedef enum zrt_lr_kind {
  ZRT_LR_CONSTANT = 0, /* lr at every step */
  ZRT_LR_COSINE = 1,   /* nanoGPT's linear warm-up and cosine decay */
} zrt_lr_kind;

/* The learning rate at `step`, on the host: it depends on the step alone. */
float zrt_lr_schedule(int64_t step, double lr, zrt_lr_kind schedule,
                      int64_t warmup, double min_lr, int64_t max_steps);
/* torch.optim.AdamW on f32 tensors, in place, t = step + 1. grad_scale is
 * NULL or one f32 (device memory on a GPU: the clipping coefficient
 * zrt_clip_coef wrote) that each gradient is multiplied by first, rounded
 * to f32: bitwise the update of the product computed apart. */
void zrt_adamw(float *param, const float *grad, const float *grad_scale,
               float *exp_avg, float *exp_avg_sq, int64_t n, float lr,
               int64_t step,
               double beta1, double beta2, double eps, double weight_decay);
/* torch.optim.SGD with momentum, in place. */
void zrt_sgd(float *param, const float *grad, float *momentum_buffer,
             int64_t n, float lr, double momentum, double weight_decay);

/* The optimizer over this rank's shard of a flat buffer (zrt_buffer), one
 * launch on a GPU: n elements whose logical indices in the buffer are
 * first .. first + n - 1. Element i takes weight decay only if first + i
 * lies in a segment s, [segment_begin[s], segment_end[s]), whose decay[s]
 * is set (a member with weight decay); every other element -- padding, gaps,
 * members without decay -- gets none. Segments are sorted and do not
 * overlap; the three arrays are host memory (`segments` entries). Each
 * element is updated exactly as zrt_adamw / zrt_sgd update it (with
 * weight_decay or 0), so the result is bitwise that of the per-tensor
 * calls on each member's part. */
void zrt_adamw_buffer(float *param, const float *grad,
                      const float *grad_scale, float *exp_avg,
                      float *exp_avg_sq, int64_t n, int64_t first,
                      int segments, const int64_t *segment_begin,
                      const int64_t *segment_end, const uint8_t *decay,
                      float lr, int64_t step, double beta1, double beta2,
                      double eps, double weight_decay);
void zrt_sgd_buffer(float *param, const float *grad, float *momentum_buffer,
                    int64_t n, int64_t first, int segments,
                    const int64_t *segment_begin, const int64_t *segment_end,
                    const uint8_t *decay, float lr, double momentum,
                    double weight_decay);

/* dst = src, `bytes` bytes, both zrt_alloc or state memory (ordered with
 * the kernels on a GPU). */
void zrt_copy(void *dst, const void *src, size_t bytes);
/* host[i] = src[i] as f32, i < n: the values a step hands back (loss,
 * gradient norm, logits). On a GPU this waits for them: the one host
 * synchronisation of a step. */
void zrt_read_f32(float *host, const void *src, zrt_dtype dtype, int64_t n);

/*===----------------------------------------------------------------------===*
 * CUDA only: what generated kernels launch with (lib/Target/Cpp emits
 * these for --target=cuda).
 *===----------------------------------------------------------------------===*/

/* The stream every kernel of a step runs on (a cudaStream_t), which
 * generated code passes to the collectives; they run on the runtime's own
 * stream, ordered with it by events. */
void *zrt_compute_stream(void);
/* After a launch of a generated kernel: fails naming `kernel` when the
 * launch did not go through (and, with ZEROC_CUDA_SYNC=1, when it faulted). */
void zrt_check_launch(const char *kernel);

/*===----------------------------------------------------------------------===*
 * Tracing (the executable's --trace PATH --trace-steps A:B; Trace.cpp).
 * Generated code brackets each op of the training step with these calls,
 * through the ZRT_TRACE macro: a test of zrt_trace_enabled, nonzero only
 * while a traced step runs, so a run without --trace pays one predictable
 * branch per op. A site is a constant the generated code defines once per
 * op.
 *===----------------------------------------------------------------------===*/

typedef struct zrt_trace_site {
  const char *name;     /* "matmul transformer.h.0.attn.c_attn" */
  const char *kind;     /* the op: "matmul", "all_gather_start", "wait" */
  const char *phase;    /* "forward", "backward" or "optimizer" */
  const char *location; /* "gpt2.mlir:57:10", or "" */
  /* Collectives (their start and their wait): the collective's number in
   * the step, from 0, its kind (0 all-reduce, 1 reduce-scatter, 2
   * all-gather), its whole buffer in elements (n, padding included) and the
   * bytes this rank sends for it (ring accounting, as zrt_comm_bytes_sent
   * counts them). -1 and zeros for other ops. */
  int32_t collective;
  int32_t collective_kind;
  int64_t elements;
  int64_t bytes;
} zrt_trace_site;

extern int zrt_trace_enabled;

/* An op's kernels and runtime calls: the compute track. */
void zrt_trace_begin(const zrt_trace_site *site);
void zrt_trace_end(const zrt_trace_site *site);
/* Before and after a collective's start call. The communication track
 * shows the collective from its start to the end of its wait (the CPU, where
 * MPI completes it there) or from its input being ready to its completion
 * on the communication stream (CUDA). */
void zrt_trace_collective_begin(const zrt_trace_site *site);
void zrt_trace_collective_end(const zrt_trace_site *site);
/* Around the wait for a collective (`site` is the wait's, with the
 * collective's number): the waits track, the time the compute stream
 * stalls. */
void zrt_trace_wait_begin(const zrt_trace_site *site);
void zrt_trace_wait_end(const zrt_trace_site *site);

#ifdef __GNUC__
#define ZRT_TRACE(call, site)                                                  \
  do {                                                                         \
    if (__builtin_expect(zrt_trace_enabled, 0))                                \
      zrt_trace_##call(&(site));                                               \
  } while (0)
#else
#define ZRT_TRACE(call, site)                                                  \
  do {                                                                         \
    if (zrt_trace_enabled)                                                     \
      zrt_trace_##call(&(site));                                               \
  } while (0)
#endif

/* f32 <-> bf16 (round to nearest even). */
static inline uint16_t zrt_f32_to_bf16(float value) {
  union { float f; uint32_t u; } bits = {value};
  if ((bits.u & 0x7fffffffu) > 0x7f800000u) /* NaN stays NaN */
    return (uint16_t)((bits.u >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((bits.u >> 16) & 1u);
  return (uint16_t)((bits.u + rounding) >> 16);
}
static inline float zrt_bf16_to_f32(uint16_t value) {
  union { uint32_t u; float f; } bits = {(uint32_t)value << 16};
  return bits.f;
}

/*===----------------------------------------------------------------------===*
 * The program: what generated code tells the runtime's main.
 *===----------------------------------------------------------------------===*/

typedef enum zrt_state_kind {
  ZRT_STATE_PARAM = 0,
  ZRT_STATE_MASTER = 1,
  ZRT_STATE_EXP_AVG = 2,
  ZRT_STATE_EXP_AVG_SQ = 3,
  ZRT_STATE_MOMENTUM_BUFFER = 4,
  ZRT_STATE_GRAD = 5,
} zrt_state_kind;

typedef enum zrt_init {
  ZRT_INIT_ZEROS = 0,
  ZRT_INIT_ONES = 1,
  ZRT_INIT_NORMAL = 2,
} zrt_init;

/* A flat buffer: the storage of several states of one dtype laid end to
 * end (a bucket's parameters, or its gradients, ...), so that a collective
 * over the bucket runs in place on it. Its logical elements are numbered
 * 0 .. numel-1; each member state occupies [buffer_offset, buffer_offset +
 * state.numel) of them (members do not overlap; elements of no member are
 * padding). A replicated buffer (shard_numel == numel) is stored whole on
 * every rank; a sharded one (numel == N * shard_numel, N the world size)
 * stores logical elements [r*S, (r+1)*S) on rank r, S = shard_numel. The
 * runtime allocates `data` once (zrt_alloc, `shard_numel` elements counted
 * in `category`), zeroes it (padding stays zero unless the program writes
 * it) and points each member's `data` into it (zrt_state_range). */
typedef struct zrt_buffer {
  const char *name;           /* for messages: "bucket0.params" */
  zrt_dtype dtype;            /* every member's dtype */
  zrt_mem_category category;  /* where its bytes are counted */
  int64_t numel;       /* the logical buffer, padded: N * shard_numel when sharded */
  int64_t shard_numel; /* elements this rank stores: numel when replicated,
                          numel / N when sharded */
  void *data;          /* set by the runtime */
} zrt_buffer;

/* One train.param or train.state: its own storage or a member of a flat
 * buffer.
 *
 * Its own storage (buffer == -1): the whole tensor, stored on every rank;
 * the runtime allocates `data` (numel elements).
 *
 * A member of program->buffers[buffer] (buffer >= 0): its flat element i is
 * the buffer's logical element buffer_offset + i. In a replicated buffer
 * the state holds all its elements at buffer.data + buffer_offset; in a
 * sharded one rank r holds the state's elements [lo, hi), lo = clamp(r*S -
 * buffer_offset, 0, numel), hi = clamp((r+1)*S - buffer_offset, 0, numel),
 * S = shard_numel, at buffer.data + (buffer_offset + lo - r*S) (nothing
 * when hi <= lo). The runtime sets `data` to the first element held (NULL
 * when none). Sharding is the buffer's alone: the compiler puts every
 * state that is sharded in a buffer.
 *
 * zrt_state_range computes what a rank holds; every runtime path that
 * touches states goes through it. Before the first step the runtime
 * initializes what each rank holds: a parameter's element i from its
 * initializer with the shared counter-based RNG
 * (include/zeroc/Support/Random.h), a master copy as its parameter's
 * initial values in f32, other state as zeros, so that the values depend
 * on the logical index alone, not on the layout, the stage or the world
 * size. */
typedef struct zrt_state {
  const char *name;   /* "transformer.wte.weight", "….exp_avg" */
  const char *of;     /* the parameter a state belongs to; NULL for a param */
  zrt_state_kind kind;
  zrt_dtype dtype;
  int rank;
  const int64_t *shape; /* the logical (unsharded) shape */
  int64_t numel;        /* logical elements */
  zrt_init init;
  double std;
  int weight_decay;
  void *data;
  int buffer;             /* -1: its own storage; else an index into
                             program->buffers */
  int64_t buffer_offset;  /* a member's first element in the buffer's
                             logical numbering (0 when buffer == -1) */
} zrt_state;

/* What one rank holds of a state: its flat elements [offset, offset +
 * count), stored contiguously from `data` (NULL when count is 0). */
typedef struct zrt_range {
  int64_t offset;
  int64_t count;
  void *data;
} zrt_range;

struct zrt_program;

/* The elements of `state` that rank `rank` of `world_size` holds (all of
 * them for its own storage, its share of a buffer for a member); `data` is computed from the current storage pointers
 * (state->data, or the buffer's data for a member), so it is meaningful
 * for this rank only. The one definition of the state layout: allocation,
 * initialization, --init and the checkpoints (--save, --resume: logical
 * tensors, cut where the ranks' ranges end) use it. */
zrt_range zrt_state_range(const struct zrt_program *program,
                          const zrt_state *state, int rank, int world_size);

/* Entry points return 0, or non-zero after zrt_fail-free error reporting. */
/* One step: the loss (this rank's view of the global mean), the global
 * gradient norm before clipping and the learning rate it applied. */
typedef void (*zrt_train_step_fn)(zrt_comm *comm, const void *tokens,
                                  const void *targets, int64_t step,
                                  float *loss, float *grad_norm, float *lr);
typedef void (*zrt_forward_fn)(zrt_comm *comm, const void *tokens,
                               const void *targets, float *loss);
/* The next-token logits of one sequence of seq_len tokens: seq_len * vocab
 * floats, row-major, written to host memory. */
typedef void (*zrt_logits_fn)(zrt_comm *comm, const void *tokens,
                              float *logits);
/* Completes the stage 1-2 parameter gathers that train-defer-gathers moved
 * into the next step: after it every rank holds the whole updated
 * parameters. Called before anything reads them between steps. */
typedef void (*zrt_gather_params_fn)(zrt_comm *comm);

typedef struct zrt_program {
  const char *model;        /* the module's train.model, or "model" */
  int64_t world_size;       /* N the program was compiled for */
  int64_t zero_stage;
  int64_t batch_per_rank;   /* sequences of one rank's step */
  int64_t seq_len;          /* T: tokens per sequence */
  int64_t vocab;            /* ids must be < vocab */
  zrt_dtype id_dtype;       /* ZRT_I32 or ZRT_I64 */
  int num_states;
  zrt_state *states;
  zrt_train_step_fn train_step;
  zrt_forward_fn forward;   /* NULL when the model has none */
  zrt_logits_fn logits;     /* NULL when the model has none (no sampling) */
  int num_buffers;          /* 0: every state has its own storage */
  zrt_buffer *buffers;
  /* The module's train.tied: a parameter's second names (a tied lm_head),
   * num_tied pairs {alias, parameter} flattened into 2 * num_tied strings.
   * Checkpoint exports write the parameter under each alias too; --init
   * accepts a file with either name. */
  int num_tied;
  const char *const *tied;
  /* NULL unless the step defers parameter gathers (stages 1-2). */
  zrt_gather_params_fn gather_params;
} zrt_program;

/* Defined by the generated code. */
const zrt_program *zeroc_program(void);

#ifdef __cplusplus
}
#endif

#endif /* ZEROC_RUNTIME_ZRT_H */
