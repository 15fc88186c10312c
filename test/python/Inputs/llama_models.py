"""Llama-class models and a minGPT-style GPT in plain PyTorch, written the
way people write them, for the tests against zeroc (no `transformers`).

* `HFLlama`: Hugging Face's LlamaForCausalLM, by its conventions and
  parameter names (model.embed_tokens, model.layers.N.self_attn.q_proj,
  mlp.gate_proj, input_layernorm, model.norm, lm_head): LlamaRMSNorm in
  f32 with ``.to(input_dtype)``, rotate-half rotary embeddings from a
  rotary module's cos/sin, ``repeat_kv`` by ``[:, :, None, :, :]`` /
  ``expand`` / ``reshape``, an additive causal mask sliced from a
  ``triu(-inf, diagonal=1)`` buffer, softmax over ``.float()`` scores, a
  SwiGLU MLP with ``nn.SiLU``. The model of
  test/Integration/pytorch-llama.py, and the rotate-half model the
  importer's tests import.
* `MetaLlama`: llama2.c's / Meta's reference model.py: interleaved rotary
  embeddings through reshape to pairs, ``unbind(-1)``, ``torch.stack(...,
  dim=-1)`` and ``flatten(3)`` with ``freqs_cos`` / ``freqs_sin`` buffers
  sliced to the sequence length, an RMSNorm written out
  (``x.pow(2).mean(-1, keepdim=True)``, ``torch.rsqrt``, ``.float()`` and
  ``.type_as``), ``repeat_kv`` on [B, T, H, D] by ``x[:, :, :, None, :]``,
  a ``triu`` mask buffer, shape asserts and ``x.ndim``, F.silu and
  nn.Dropout. `complex_rope=True` writes the rotation with
  ``torch.view_as_complex`` / ``view_as_real`` as Meta's original does.
* `MinGPT`: Karpathy's minGPT: separate key/query/value projections, a
  learned position parameter sliced to the sequence (``pos_emb[:, :t, :]``),
  a ``masked_fill`` by a tril buffer, an ``nn.Sequential`` MLP and dropout.

`adamw_losses` (from torch_models) trains any of them.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


# --- Hugging Face conventions -------------------------------------------------

class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, dim, max_position_embeddings, base):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.max_position_embeddings = max_position_embeddings

    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(
            position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype=x.dtype), emb.sin().to(dtype=x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep,
                                                           slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class LlamaAttention(nn.Module):
    def __init__(self, hidden_size, num_heads, num_key_value_heads, max_positions):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.num_key_value_heads = num_key_value_heads
        self.num_key_value_groups = num_heads // num_key_value_heads
        self.q_proj = nn.Linear(hidden_size, num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden_size, num_key_value_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden_size, num_key_value_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(num_heads * self.head_dim, hidden_size, bias=False)

    def forward(self, hidden_states, position_embeddings, attention_mask):
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states).view(
            bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(
            bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(
            bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        cos, sin = position_embeddings
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
        key_states = repeat_kv(key_states, self.num_key_value_groups)
        value_states = repeat_kv(value_states, self.num_key_value_groups)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(
            self.head_dim)
        attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1,
                                             dtype=torch.float32).to(query_states.dtype)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous().reshape(bsz, q_len, -1)
        return self.o_proj(attn_output)


class LlamaMLP(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, hidden_size, num_heads, num_kv_heads, intermediate_size, eps,
                 max_positions):
        super().__init__()
        self.self_attn = LlamaAttention(hidden_size, num_heads, num_kv_heads, max_positions)
        self.mlp = LlamaMLP(hidden_size, intermediate_size)
        self.input_layernorm = LlamaRMSNorm(hidden_size, eps=eps)
        self.post_attention_layernorm = LlamaRMSNorm(hidden_size, eps=eps)

    def forward(self, hidden_states, position_embeddings, attention_mask):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(hidden_states, position_embeddings, attention_mask)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        return residual + self.mlp(hidden_states)


class LlamaModel(nn.Module):
    def __init__(self, vocab_size, hidden_size, num_layers, num_heads, num_kv_heads,
                 intermediate_size, eps, max_positions, rope_theta):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden_size)
        self.layers = nn.ModuleList([
            LlamaDecoderLayer(hidden_size, num_heads, num_kv_heads, intermediate_size, eps,
                              max_positions) for _ in range(num_layers)])
        self.norm = LlamaRMSNorm(hidden_size, eps=eps)
        self.rotary_emb = LlamaRotaryEmbedding(hidden_size // num_heads, max_positions,
                                               rope_theta)
        mask = torch.full((max_positions, max_positions), float("-inf")).triu(diagonal=1)
        self.register_buffer("causal_mask", mask[None, None], persistent=False)

    def forward(self, input_ids):
        inputs_embeds = self.embed_tokens(input_ids)
        seq_len = input_ids.shape[1]
        position_ids = torch.arange(seq_len).unsqueeze(0)
        position_embeddings = self.rotary_emb(inputs_embeds, position_ids)
        attention_mask = self.causal_mask[:, :, :seq_len, :seq_len]
        hidden_states = inputs_embeds
        for layer in self.layers:
            hidden_states = layer(hidden_states, position_embeddings, attention_mask)
        return self.norm(hidden_states)


class HFLlama(nn.Module):
    """LlamaForCausalLM: `model` and `lm_head`, forward(input_ids, targets)
    returning (logits, loss)."""

    def __init__(self, vocab_size=256, hidden_size=48, num_layers=2, num_heads=4,
                 num_kv_heads=2, intermediate_size=112, eps=1e-5, max_positions=32,
                 rope_theta=10000.0, tie_word_embeddings=False, qk_std=0.02):
        super().__init__()
        self.model = LlamaModel(vocab_size, hidden_size, num_layers, num_heads, num_kv_heads,
                                intermediate_size, eps, max_positions, rope_theta)
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)
        if tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight
        # Hugging Face's _init_weights: normal(0, initializer_range) for
        # Linear and Embedding, RMSNorm weights ones.
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)
        # Tests make attention scores of order 1 (qk_std 0.4), so that the
        # loss depends on the rotary embeddings well beyond rounding.
        for layer in self.model.layers:
            nn.init.normal_(layer.self_attn.q_proj.weight, std=qk_std)
            nn.init.normal_(layer.self_attn.k_proj.weight, std=qk_std)

    def forward(self, input_ids, targets=None):
        hidden_states = self.model(input_ids)
        logits = self.lm_head(hidden_states)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


# --- Meta's reference code and llama2.c ---------------------------------------

def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.cos(freqs), torch.sin(freqs)


def reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    assert 0 <= 1 < ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(shape)


def apply_rotary_emb(xq, xk, freqs_cos, freqs_sin):
    # llama2.c: pairs of real numbers.
    xq_r, xq_i = xq.float().reshape(xq.shape[:-1] + (-1, 2)).unbind(-1)
    xk_r, xk_i = xk.float().reshape(xk.shape[:-1] + (-1, 2)).unbind(-1)
    freqs_cos = reshape_for_broadcast(freqs_cos, xq_r)
    freqs_sin = reshape_for_broadcast(freqs_sin, xq_r)
    xq_out_r = xq_r * freqs_cos - xq_i * freqs_sin
    xq_out_i = xq_r * freqs_sin + xq_i * freqs_cos
    xk_out_r = xk_r * freqs_cos - xk_i * freqs_sin
    xk_out_i = xk_r * freqs_sin + xk_i * freqs_cos
    xq_out = torch.stack([xq_out_r, xq_out_i], dim=-1).flatten(3)
    xk_out = torch.stack([xk_out_r, xk_out_i], dim=-1).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def apply_rotary_emb_complex(xq, xk, freqs_cis):
    # Meta's original: complex numbers.
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def meta_repeat_kv(x, n_rep):
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return (x[:, :, :, None, :].expand(bs, slen, n_kv_heads, n_rep, head_dim)
            .reshape(bs, slen, n_kv_heads * n_rep, head_dim))


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float()).type_as(x)
        return output * self.weight


class MetaAttention(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, max_seq_len, dropout):
        super().__init__()
        self.n_kv_heads = n_kv_heads
        self.n_local_heads = n_heads
        self.n_local_kv_heads = n_kv_heads
        self.n_rep = self.n_local_heads // self.n_local_kv_heads
        self.head_dim = dim // n_heads
        self.wq = nn.Linear(dim, n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, self.n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, self.n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(n_heads * self.head_dim, dim, bias=False)
        self.resid_dropout = nn.Dropout(dropout)
        mask = torch.full((1, 1, max_seq_len, max_seq_len), float("-inf"))
        mask = torch.triu(mask, diagonal=1)
        self.register_buffer("mask", mask)

    def forward(self, x, freqs, complex_rope):
        bsz, seqlen, _ = x.shape
        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
        xq = xq.view(bsz, seqlen, self.n_local_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
        if complex_rope:
            xq, xk = apply_rotary_emb_complex(xq, xk, freqs)
        else:
            xq, xk = apply_rotary_emb(xq, xk, *freqs)
        xk = meta_repeat_kv(xk, self.n_rep)
        xv = meta_repeat_kv(xv, self.n_rep)
        xq = xq.transpose(1, 2)
        xk = xk.transpose(1, 2)
        xv = xv.transpose(1, 2)
        scores = torch.matmul(xq, xk.transpose(2, 3)) / math.sqrt(self.head_dim)
        assert hasattr(self, "mask")
        scores = scores + self.mask[:, :, :seqlen, :seqlen]
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, xv)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.resid_dropout(self.wo(output))


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim, dropout):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.w2(F.silu(self.w1(x)) * self.w3(x)))


class TransformerBlock(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, hidden_dim, eps, max_seq_len, dropout):
        super().__init__()
        self.attention = MetaAttention(dim, n_heads, n_kv_heads, max_seq_len, dropout)
        self.feed_forward = FeedForward(dim, hidden_dim, dropout)
        self.attention_norm = RMSNorm(dim, eps)
        self.ffn_norm = RMSNorm(dim, eps)

    def forward(self, x, freqs, complex_rope):
        h = x + self.attention.forward(self.attention_norm(x), freqs, complex_rope)
        return h + self.feed_forward.forward(self.ffn_norm(h))


class MetaLlama(nn.Module):
    """llama2.c's Transformer: tok_embeddings, layers, norm, output."""

    def __init__(self, vocab_size=256, dim=48, n_layers=2, n_heads=4, n_kv_heads=2,
                 hidden_dim=112, norm_eps=1e-5, max_seq_len=32, rope_theta=10000.0,
                 dropout=0.0, complex_rope=False, qk_std=0.02):
        super().__init__()
        self.complex_rope = complex_rope
        self.tok_embeddings = nn.Embedding(vocab_size, dim)
        self.dropout = nn.Dropout(dropout)
        self.layers = torch.nn.ModuleList([
            TransformerBlock(dim, n_heads, n_kv_heads, hidden_dim, norm_eps, max_seq_len,
                             dropout) for _ in range(n_layers)])
        self.norm = RMSNorm(dim, eps=norm_eps)
        self.output = nn.Linear(dim, vocab_size, bias=False)
        freqs_cos, freqs_sin = precompute_freqs_cis(dim // n_heads, max_seq_len, rope_theta)
        if complex_rope:
            self.register_buffer("freqs_cis", torch.complex(freqs_cos, freqs_sin),
                                 persistent=False)
        else:
            self.register_buffer("freqs_cos", freqs_cos, persistent=False)
            self.register_buffer("freqs_sin", freqs_sin, persistent=False)
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                nn.init.normal_(p, mean=0.0, std=0.02)
            if name.endswith("w3.weight") or name.endswith("wo.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layers))
            if name.endswith("wq.weight") or name.endswith("wk.weight"):
                nn.init.normal_(p, mean=0.0, std=qk_std)

    def forward(self, tokens, targets):
        _bsz, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        h = self.dropout(h)
        if self.complex_rope:
            freqs = self.freqs_cis[:seqlen]
        else:
            freqs = (self.freqs_cos[:seqlen], self.freqs_sin[:seqlen])
        for layer in self.layers:
            h = layer(h, freqs, self.complex_rope)
        h = self.norm(h)
        logits = self.output(h)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                               ignore_index=-1)


# --- minGPT -------------------------------------------------------------------

class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout):
        super().__init__()
        self.key = nn.Linear(n_embd, n_embd)
        self.query = nn.Linear(n_embd, n_embd)
        self.value = nn.Linear(n_embd, n_embd)
        self.attn_drop = nn.Dropout(dropout)
        self.resid_drop = nn.Dropout(dropout)
        self.proj = nn.Linear(n_embd, n_embd)
        self.register_buffer("mask", torch.tril(torch.ones(block_size, block_size))
                             .view(1, 1, block_size, block_size))
        self.n_head = n_head

    def forward(self, x):
        B, T, C = x.size()
        k = self.key(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = self.query(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = self.value(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.attn_drop(att)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_drop(self.proj(y))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(n_embd)
        self.ln2 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size, dropout)
        self.mlp = nn.Sequential(
            nn.Linear(n_embd, 4 * n_embd),
            nn.GELU(),
            nn.Linear(4 * n_embd, n_embd),
            nn.Dropout(dropout),
        )

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return x


class MinGPT(nn.Module):
    """minGPT's GPT (the 2020 mingpt/model.py), forward(idx, targets)."""

    def __init__(self, vocab_size=256, block_size=32, n_layer=2, n_head=3, n_embd=48,
                 dropout=0.0):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, n_embd)
        self.pos_emb = nn.Parameter(torch.zeros(1, block_size, n_embd))
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.Sequential(*[Block(n_embd, n_head, block_size, dropout)
                                      for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)
        self.block_size = block_size
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                module.weight.data.normal_(mean=0.0, std=0.02)
                if isinstance(module, nn.Linear) and module.bias is not None:
                    module.bias.data.zero_()
        # Random positions, so that slicing them is tested with values.
        nn.init.normal_(self.pos_emb, std=0.02)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        assert t <= self.block_size, "Cannot forward, model block size is exhausted."
        token_embeddings = self.tok_emb(idx)
        position_embeddings = self.pos_emb[:, :t, :]
        x = self.drop(token_embeddings + position_embeddings)
        x = self.blocks(x)
        x = self.ln_f(x)
        logits = self.head(x)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss
