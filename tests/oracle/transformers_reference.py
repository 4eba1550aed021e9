"""What transformers itself says about a target model, shared by the oracle generators:
its greedy continuation."""

import torch


def greedy(model, prompt, new_tokens):
    """transformers' greedy continuation of `prompt`, every token from a full recompute."""
    ids = list(prompt)
    with torch.no_grad():
        for _ in range(new_tokens):
            ids.append(int(model(input_ids=torch.tensor([ids]), use_cache=False).logits[0, -1].argmax()))
    return ids

