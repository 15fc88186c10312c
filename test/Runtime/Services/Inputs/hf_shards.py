"""Writes Hugging Face sharded checkpoints (model-0000K-of-0000N.safetensors
with model.safetensors.index.json) of a safetensors file, good and broken,
for test/Runtime/Services/hf-sharded.test. Standard library only.

usage: hf_shards.py MODEL.safetensors DIR
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "Evaluator", "Inputs"))
import evalref  # noqa: E402


def write_checkpoint(directory, shards, weight_map=None, index_text=None):
    """shards: list of [(name, dtype, shape, values)], one per shard."""
    os.makedirs(directory, exist_ok=True)
    n = len(shards)
    names = ["model-%05d-of-%05d.safetensors" % (k + 1, n) for k in range(n)]
    mapping = {}
    for name, entries in zip(names, shards):
        evalref.write_safetensors(os.path.join(directory, name), entries)
        for entry in entries:
            mapping[entry[0]] = name
    if weight_map is not None:
        mapping = weight_map(mapping)
    text = index_text if index_text is not None else json.dumps(
        {"metadata": {"total_size": 0, "format": "pt"}, "weight_map": mapping}, indent=2)
    with open(os.path.join(directory, "model.safetensors.index.json"), "w") as f:
        f.write(text)


def main():
    model, out = sys.argv[1], sys.argv[2]
    tensors, _, _ = evalref.read_safetensors(model)
    # As Hugging Face saves a tied model: no lm_head.weight; and the rotary
    # table old checkpoints carry, which zeroc drops.
    entries = [(name, "F32", shape, values) for name, (_, shape, values) in tensors.items()
               if name != "lm_head.weight"]
    rotary = ("transformer.h.0.attn.rotary_emb.inv_freq", "F32", [4], [1.0, 0.1, 0.01, 0.001])
    first, second = entries[:2] + [rotary], entries[2:]
    write_checkpoint(os.path.join(out, "good"), [first, second])
    # The index puts a tensor in the other shard.
    def moved(mapping):
        mapping = dict(mapping)
        mapping[second[0][0]] = "model-00001-of-00002.safetensors"
        return mapping
    write_checkpoint(os.path.join(out, "moved"), [first, second], weight_map=moved)
    # The index names a tensor that no shard holds.
    def extra(mapping):
        return {**mapping, "transformer.h.9.mlp.weight": "model-00002-of-00002.safetensors"}
    write_checkpoint(os.path.join(out, "extra"), [first, second], weight_map=extra)
    # A shard holds a tensor the index does not list.
    def dropped(mapping):
        return {k: v for k, v in mapping.items() if k != second[-1][0]}
    write_checkpoint(os.path.join(out, "unlisted"), [first, second], weight_map=dropped)
    # Not an index.
    write_checkpoint(os.path.join(out, "nomap"), [first, second],
                     index_text='{"metadata": {"total_size": 3}}')
    write_checkpoint(os.path.join(out, "badjson"), [first, second],
                     index_text='{"weight_map": {"a": }')
    # A folder with neither an index nor model.safetensors.
    os.makedirs(os.path.join(out, "empty"), exist_ok=True)
    print("wrote sharded checkpoints of %d tensors" % len(entries))


if __name__ == "__main__":
    main()
