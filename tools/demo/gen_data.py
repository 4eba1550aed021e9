#!/usr/bin/env python3
"""Step 3: the drafter's training data = the target's own greedy answers.

Prompts: the def lines of the functions held out of the target's training (every 10th
function of the corpus; the demo prompts in resources/demo/prompts.jsonl are excluded), in
the chat format the engine uses ({"prompt": ...}, thinking off). The target (the saved bf16
weights, computed in fp32 like the engine) answers greedily, up to MAX_NEW tokens, stopping
at <|im_end|> or <|endoftext|>; prompts of equal token length are batched (no padding).
Then one no-cache forward over each whole sequence records the target features:
"feats" = hidden_states[id + 1] for id in TAP_IDS, concatenated (the output of layer id, what
the engine and z-lab's dflash feed a drafter whose config names TAP_IDS), and "feats_shifted"
= hidden_states[id] for the same ids (the output of layer id - 1: the off-by-one that
drafter-tap-shifted is trained on, train_drafter.py --tap-offset -1). Both come from the same
forward, so every drafter trains on the same answers. Writes WORK/drafter_data.pt.
"""

import json
import sys
import time
from collections import defaultdict

import torch
from transformers import Qwen3_5ForCausalLM

import common
from corpus import functions

N_PROMPTS = int(sys.argv[1]) if len(sys.argv) > 1 else 256
MAX_NEW = 96
TAP_IDS = [1, 3, 4]


def main():
    torch.set_num_threads(2)
    tok = common.load_tokenizer()
    model = Qwen3_5ForCausalLM.from_pretrained(common.OUT / "target", dtype=torch.float32).eval()
    stops = [tok.token_to_id(common.IM_END), tok.token_to_id(common.ENDOFTEXT)]
    demo = {json.loads(l)["prompt"] for l in (common.OUT / "prompts.jsonl").read_text().splitlines() if l}
    sigs, seen = [], set(demo)
    for i, (sig, _) in enumerate(functions()):
        if i % 10 == 0 and sig not in seen:
            seen.add(sig)
            sigs.append(sig)
    sigs = sigs[:N_PROMPTS]
    by_len = defaultdict(list)
    for sig in sigs:
        ids = tok.encode(common.render_chat([{"role": "user", "content": sig}], True)).ids
        by_len[len(ids)].append(ids)
    t0 = time.time()
    seqs = []
    with torch.no_grad():
        for n, group in sorted(by_len.items()):
            for s in range(0, len(group), 64):
                batch = torch.tensor(group[s:s + 64])
                out = model.generate(input_ids=batch, attention_mask=torch.ones_like(batch),
                                     max_new_tokens=MAX_NEW, do_sample=False, eos_token_id=stops,
                                     pad_token_id=stops[1])
                for row in out.tolist():
                    resp = row[n:]
                    for j, t in enumerate(resp):
                        if t in stops:
                            resp = resp[:j + 1]
                            break
                    seqs.append((row[:n], resp))
            print(f"generated {len(seqs)}/{len(sigs)} ({time.time() - t0:.0f}s)", flush=True)
        gen_s = time.time() - t0
        data = []
        for prompt, resp in seqs:
            ids = torch.tensor(prompt + resp)
            hs = model(input_ids=ids[None], output_hidden_states=True, use_cache=False).hidden_states
            feats = torch.cat([hs[i + 1][0] for i in TAP_IDS], -1)
            shifted = torch.cat([hs[i][0] for i in TAP_IDS], -1)
            data.append({"tokens": ids, "prompt_len": len(prompt), "feats": feats.to(torch.bfloat16),
                         "feats_shifted": shifted.to(torch.bfloat16)})
    lens = [len(r) for _, r in seqs]
    print(f"drafter data: {len(data)} answers, mean {sum(lens) / len(lens):.1f} tokens, "
          f"generation {gen_s:.0f}s, features {time.time() - t0 - gen_s:.0f}s", flush=True)
    print("sample answer:", repr(tok.decode(seqs[0][1], skip_special_tokens=False)[:300]))
    torch.save({"tap_ids": TAP_IDS, "data": data}, common.WORK / "drafter_data.pt")
    common.write_json(common.WORK / "gen_data.json", {"answers": len(data), "max_new": MAX_NEW,
                                                      "generation_seconds": round(gen_s),
                                                      "mean_answer_tokens": sum(lens) / len(lens)})


if __name__ == "__main__":
    main()
