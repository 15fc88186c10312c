"""zeroc's Python side: model builders that write `train` dialect IR.

Standard library only; importing zeroc never imports PyTorch.

* `zeroc.ir`: the IR text emitter (types, parameters, optimizer, ops);
* `zeroc.models.gpt2`: nanoGPT's GPT-2 (``python3 -m zeroc.models.gpt2``).
"""
