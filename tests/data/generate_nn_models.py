#!/usr/bin/env python3
"""Tiny random-weight models from `transformers`, for `kiln::nn`'s tests.

`crates/kiln/tests/nn.rs` loads these files, runs the same models written
with `kiln::nn` (the examples `gpt2.rs` and `llama.rs`) and compares the
logits with the ones recorded here. CI has no torch, so the outputs are
committed; rerun this script only to change the models:

    python3 tests/data/generate_nn_models.py   # needs torch, transformers, safetensors

Written to `tests/data/nn/`:

- `gpt2.safetensors`: GPT2LMHeadModel(n_layer=2, n_embd=64, n_head=4,
  vocab_size=100, n_positions=32) in the Hugging Face hub's layout (names
  without `transformer.`, no `lm_head.weight`: it is tied to `wte`).
- `llama.safetensors`: LlamaForCausalLM(hidden_size=64,
  intermediate_size=128, 2 layers, 4 query heads, 2 key/value heads,
  vocab_size=100) as its state dict (`model.…`, `lm_head.weight`).
- `gpt2_io.safetensors`, `llama_io.safetensors`: `input_ids` (int64,
  1x16) and the model's `logits` (float32, 1x16x100).
- `gpt2_config.json`, `llama_config.json`: the models' configs, as
  transformers writes `config.json`.
- `bert.safetensors`, `bert_io.safetensors`, `bert_config.json`:
  BertModel(hidden_size=64, 2 layers, 4 heads, intermediate_size=128,
  vocab_size=100, max_position_embeddings=64) and, for 2x12 `input_ids`,
  `token_type_ids` and an `attention_mask` with the second row's last
  four positions padded, its `last_hidden_state` and `pooler_output`.
- `vit.safetensors`, `vit_io.safetensors`, `vit_config.json`:
  ViTModel(image_size=32, patch_size=8, hidden_size=64, 2 layers, 4
  heads, intermediate_size=128) and, for two 3x32x32 images, its
  `last_hidden_state` and `pooler_output`.
- `llama_generate.safetensors`, `gpt2_generate.safetensors`: `prompt`
  (the first 8 of `input_ids`) and `generated`, the tokens transformers'
  greedy `generate` appends with the committed weights (32 for Llama, 24
  for GPT-2, whose 32 positions hold no more; `--only generation` remakes
  just these files, `--only bert` just BERT's); the smallest gap between
  the two largest logits
  along the way is printed, to show no step is a near tie.

Every parameter is the model's initialisation plus 0.1 * N(0, 1) noise,
so that biases and norm weights (initialised to 0 and 1) are not trivial.
Both run in eval mode with eager attention, in float32.
"""

import os

import torch
from safetensors.torch import save_file
from transformers import (BertConfig, BertModel, GPT2Config, GPT2LMHeadModel, LlamaConfig,
                          LlamaForCausalLM, ViTConfig, ViTModel)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn")


def perturb(model):
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return model.eval()


def record(model, name, weights):
    input_ids = torch.randint(0, model.config.vocab_size, (1, 16), dtype=torch.int64)
    with torch.no_grad():
        logits = model(input_ids).logits.float().contiguous()
    save_file({k: v.contiguous() for k, v in weights.items()},
              os.path.join(OUT, f"{name}.safetensors"))
    save_file({"input_ids": input_ids, "logits": logits},
              os.path.join(OUT, f"{name}_io.safetensors"))
    model.config.to_json_file(os.path.join(OUT, f"{name}_config.json"))
    print(f"{name}: {sum(v.numel() for v in weights.values())} parameters, "
          f"max |logit| {logits.abs().max().item():.4f}")


def gpt2():
    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=100, n_positions=32,
                        attn_implementation="eager")
    model = perturb(GPT2LMHeadModel(config))
    weights = {
        k.removeprefix("transformer."): v
        for k, v in model.state_dict().items()
        if k != "lm_head.weight" and not k.endswith(".attn.bias") and not k.endswith(".masked_bias")
    }
    record(model, "gpt2", weights)


def llama():
    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, vocab_size=100,
                         attn_implementation="eager")
    model = perturb(LlamaForCausalLM(config))
    weights = {k: v for k, v in model.state_dict().items() if "rotary_emb" not in k}
    record(model, "llama", weights)


def bert():
    torch.manual_seed(0)
    config = BertConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=128, vocab_size=100, max_position_embeddings=64,
                        attn_implementation="eager")
    model = perturb(BertModel(config))
    input_ids = torch.randint(0, 100, (2, 12), dtype=torch.int64)
    token_type_ids = torch.zeros(2, 12, dtype=torch.int64)
    token_type_ids[:, 6:] = 1
    attention_mask = torch.ones(2, 12, dtype=torch.int64)
    attention_mask[1, 8:] = 0
    with torch.no_grad():
        out = model(input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
    weights = {k: v.contiguous() for k, v in model.state_dict().items() if "position_ids" not in k
               and "token_type_ids" not in k}
    save_file(weights, os.path.join(OUT, "bert.safetensors"))
    save_file({"input_ids": input_ids, "token_type_ids": token_type_ids,
               "attention_mask": attention_mask,
               "last_hidden_state": out.last_hidden_state.contiguous(),
               "pooler_output": out.pooler_output.contiguous()},
              os.path.join(OUT, "bert_io.safetensors"))
    config.to_json_file(os.path.join(OUT, "bert_config.json"))
    print(f"bert: {sum(v.numel() for v in weights.values())} parameters")


def vit():
    torch.manual_seed(0)
    config = ViTConfig(image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2,
                       num_attention_heads=4, intermediate_size=128,
                       attn_implementation="eager")
    model = perturb(ViTModel(config))
    pixel_values = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        out = model(pixel_values)
    weights = {k: v.contiguous() for k, v in model.state_dict().items()}
    save_file(weights, os.path.join(OUT, "vit.safetensors"))
    save_file({"pixel_values": pixel_values,
               "last_hidden_state": out.last_hidden_state.contiguous(),
               "pooler_output": out.pooler_output.contiguous()},
              os.path.join(OUT, "vit_io.safetensors"))
    config.to_json_file(os.path.join(OUT, "vit_config.json"))
    print(f"vit: {sum(v.numel() for v in weights.values())} parameters")


def generation():
    """transformers' greedy generate with the committed Llama and GPT-2
    weights: 32 tokens for Llama, 24 for GPT-2 (whose 32 positions hold
    the 8-token prompt and 24 more)."""
    from safetensors.torch import load_file
    config = LlamaConfig.from_json_file(os.path.join(OUT, "llama_config.json"))
    model = LlamaForCausalLM(config)
    model.load_state_dict(load_file(os.path.join(OUT, "llama.safetensors")), strict=False)
    greedy(model, "llama", 32)
    config = GPT2Config.from_json_file(os.path.join(OUT, "gpt2_config.json"))
    model = GPT2LMHeadModel(config)
    weights = load_file(os.path.join(OUT, "gpt2.safetensors"))
    weights = {f"transformer.{k}": v for k, v in weights.items()}
    weights["lm_head.weight"] = weights["transformer.wte.weight"]
    model.load_state_dict(weights, strict=False)
    greedy(model, "gpt2", 24)


def greedy(model, name, count):
    from safetensors.torch import load_file
    config = model.config
    model.eval()
    prompt = load_file(os.path.join(OUT, f"{name}_io.safetensors"))["input_ids"][:, :8].contiguous()
    with torch.no_grad():
        # An explicit mask: without one, generate masks the prompt's
        # tokens equal to the pad id as padding. No end-of-sequence token:
        # greedy decoding goes on for all 32 tokens.
        model.generation_config.eos_token_id = None
        out = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=count,
                             do_sample=False, output_logits=True, return_dict_in_generate=True,
                             pad_token_id=config.vocab_size - 1)
    generated = out.sequences[:, prompt.shape[1]:].contiguous()
    gaps = [(l[0].topk(2).values[0] - l[0].topk(2).values[1]).item() for l in out.logits]
    save_file({"prompt": prompt, "generated": generated},
              os.path.join(OUT, f"{name}_generate.safetensors"))
    print(f"{name} generation: {generated.tolist()}, smallest top-2 gap {min(gaps):.2e}")


def basic_block():
    """torchvision's ResNet BasicBlock (stride 2, 1x1 downsample), random
    weights and batch-norm statistics, eval mode: weights, the input and
    PyTorch's output in one file."""
    import torchvision
    torch.manual_seed(17)
    downsample = torch.nn.Sequential(torch.nn.Conv2d(4, 6, 1, stride=2, bias=False),
                                     torch.nn.BatchNorm2d(6))
    block = torchvision.models.resnet.BasicBlock(4, 6, stride=2, downsample=downsample).eval()
    g = torch.Generator().manual_seed(3)
    for m in block.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-1, 1, generator=g)
            m.running_var.uniform_(0.5, 2, generator=g)
            m.weight.data.uniform_(0.5, 1.5, generator=g)
            m.bias.data.uniform_(-0.5, 0.5, generator=g)
    x = torch.randn(2, 4, 8, 8, generator=g)
    with torch.no_grad():
        y = block(x)
    tensors = {k: v.contiguous() for k, v in block.state_dict().items()
               if not k.endswith("num_batches_tracked")}
    tensors.update(input=x, expected=y)
    save_file(tensors, os.path.join(OUT, "basic_block.safetensors"))
    print(f"basic_block: max |y| {y.abs().max().item():.4f}")


if __name__ == "__main__":
    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    import sys
    if sys.argv[1:2] == ["--only"]:
        for name in sys.argv[2:]:
            globals()[name]()
    else:
        gpt2()
        llama()
        basic_block()
        bert()
        vit()
        generation()
