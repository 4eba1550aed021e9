#!/usr/bin/env python3
"""`dflash-eval run --temperature` against z-lab's published `dflash` package (0.1.0), in law.

A sampled loop cannot be compared token for token with the package's (it draws with
torch.multinomial, the engine by inverse CDF from its own seeded stream), so this compares
distributions, with scipy's chi-square tests at p > 0.01:

1. Acceptance: the acceptance lengths of >= 2000 sampled steps of the engine's loop at T = 1
   (>= 1000 at T = 0.7 with top-p 0.9 and top-k 8) and as many of the package's
   dflash_generate (its own caches) on the same tiny dense Qwen3 target and package drafter
   (tests/oracle/gen_dflash_package.py's), same prompts, budget and block size: a two-sample
   test of the histograms; and a DFlash2 drafter at T = 1 (>= 1000 steps), whose candidate
   selector draws the drafts.
2. Losslessness: the engine's second and third generated tokens over 3000 responses to one
   prompt against the target's own sampling distribution at T = 1, computed exactly from the
   target (every continuation of the vocabulary, batched): goodness-of-fit tests.
3. Losslessness token by token, at T = 1 and at T = 0.7 with top-p 0.9 and top-k 8, in blocks of
   3 (two drafts: a step can reject its first draft and leave a drafted slot past it, and accepts
   both often enough for a bonus): every generated token of 4000 responses (1000 repeats of the 4
   prompts; 12 and 16 new tokens) against the target's sampling distribution given the realized
   prefix: transformers' own logits warpers (temperature, top-k, top-p, in generate's order, which
   is the package's _sampling_probs' and the engine's) on the target's logits from one batched
   forward over the realized sequences. Per token the randomized probability-integral transform
   u = F(x-) + V p(x) (tokens ranked most probable first, V uniform: u is uniform on [0, 1] when x
   follows p), a Kolmogorov-Smirnov test per class at p > 0.01 / 10 (Bonferroni over 2 settings x
   5 classes), and no token where p(x) = 0. A class must be settled before its token is drawn (an
   accepted draft alone follows min(p, q), a residual draw (p - q)+; only the slot holding either
   follows p), so the classes are: the first token (the prefill's draw), the token at draft slot 1
   and at draft slot 2 of a step, the bonus after a fully accepted block, and the tokens at
   positions an earlier step had drafted past its first rejection (drawn by a later step, after
   the rollback). Tokens per class at T = 1 / T = 0.7: first 4000 / 4000, slot 1 25677 / 46058,
   slot 2 12306 / 11164, bonus 6017 / 2778, past a rejection 11213 / 31871 (each must reach
   1000). Against a reference at T = 0.9 or 1.1 (engine at 1), or at 0.8, without top-p or
   without top-k (engine at 0.7), every class falls below 1e-3 (the first token's least: 2e-4).
4. The record explains each step: per drafted slot the recorded p, q and u give the recorded
   accepted count (slot i accepted while float32 u * q < p).
5. A DSpark drafter, built and saved by speculators 0.9.0 (tests/oracle/gen_speculators.py's
   builder, a vanilla Markov head of full rank, scaled up so its bias matters, and the confidence
   head, over that script's tiny target): each draft is drawn from the Markov-biased distribution
   after the draft before it, which is also its q in the acceptance test; test 2 (the second and
   third generated tokens against the target's own T = 1 distribution) and test 4 on it. Taking q
   from the logits before the bias fails test 2.

Usage: check_sampling_distribution.py DFLASH_EVAL WORK_DIR
"""

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch
from scipy import stats
from transformers import LogitsProcessorList, TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

sys.path.insert(0, str(Path(__file__).parent))
import dflash.model  # noqa: E402
import gen_dflash_package as fixtures  # noqa: E402

# (drafter, setting, repeats of the 4 prompts, steps the test needs at least); "dflash2" drafts
# with its candidate selector, whose draws over the candidates the acceptance test uses.
SETTINGS = [("dflash", dict(temperature=1.0, top_p=1.0, top_k=0), 30, 2000),
            ("dflash", dict(temperature=0.7, top_p=0.9, top_k=8), 12, 1000),
            ("dflash2", dict(temperature=1.0, top_p=1.0, top_k=0), 40, 1000)]
MAX_NEW = 40
LOSSLESS_RESPONSES = 3000
ALPHA = 0.01
# Token-by-token losslessness: (setting, repeats of the 4 prompts, max new tokens) in blocks of
# CONDITIONAL_BLOCK, each class needing CONDITIONAL_MIN tokens.
CONDITIONAL_BLOCK = 3
CONDITIONAL_RUNS = [(SETTINGS[0][1], 1000, 12), (SETTINGS[1][1], 1000, 16)]
CONDITIONAL_CLASSES = ("first", "slot 1", "slot 2", "bonus", "past a rejection")
CONDITIONAL_MIN = 1000


def run_engine(engine, work, target, drafter, prompts, setting, samples, max_new, block=None):
    """block None: the checkpoint's block size."""
    session = work / f"engine_{Path(drafter).name}_T{setting['temperature']}_{samples}_{max_new}_B{block}.dfi"
    session.unlink(missing_ok=True)
    block_args = [] if block is None else ["--block-size", str(block)]
    subprocess.run([engine, "run", "--target", str(target), "--drafter", str(drafter), "--prompts", str(prompts),
                    "--mode", "live", "--ddtree", "0", "--no-chat", "--no-parity", "--max-new-tokens", str(max_new),
                    "--temperature", str(setting["temperature"]), "--top-p", str(setting["top_p"]),
                    "--top-k", str(setting["top_k"]), "--seed", "11", "--samples", str(samples),
                    *block_args, "-o", str(session)], check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, "OMP_NUM_THREADS": "1"})  # as torch below: tiny models, busy host
    return session


def live_prompts_file(work):
    """fixtures.LIVE_PROMPTS as a prompts file, prompt id i for LIVE_PROMPTS[i]."""
    prompts_file = work / "prompts.jsonl"
    prompts_file.write_text("".join(json.dumps({"id": i, "ids": p}) + "\n" for i, p in enumerate(fixtures.LIVE_PROMPTS)))
    return prompts_file


def blob(data, dtype):
    return np.frombuffer(data, dtype=np.dtype(dtype).newbyteorder("<"))


def engine_steps(session):
    db = sqlite3.connect(session)
    rows = db.execute("SELECT run_id, prompt_id, step_index, anchor_token, draft_tokens, accepted_count, "
                      "bonus_token, counted_length, target_probs, draft_probs, accept_uniforms, anchor_position "
                      "FROM steps WHERE mode = 0 ORDER BY run_id, prompt_id, step_index").fetchall()
    db.close()
    return [dict(run=r[0], prompt=r[1], index=r[2], anchor=r[3], drafts=blob(r[4], "i4"), accepted=r[5],
                 bonus=r[6], counted=r[7], p=blob(r[8], "f4"), q=blob(r[9], "f4"), u=blob(r[10], "f4"),
                 position=r[11])
            for r in rows]


def accept_length(step):
    return step["counted"] if step["counted"] > 0 else step["accepted"] + 1


def committed_tokens(step):
    """The tokens a step added to its response: its accepted drafts and the bonus, as many as it
    counted (a budget or a stop token cuts the last step short)."""
    return (list(step["drafts"][:step["accepted"]]) + [step["bonus"]])[:accept_length(step)]


def check_records_explain_acceptance(steps):
    for s in steps:
        assert len(s["p"]) == len(s["q"]) == len(s["u"]) == len(s["drafts"]) > 0, s
        passed = (s["u"] * s["q"]) < s["p"]  # float32, as the package's torch.rand_like(q) * q < p
        replayed = int(np.cumprod(passed).sum())
        assert replayed == s["accepted"], f"recorded p, q, u give {replayed} accepted, the step says {s['accepted']}"


def package_lengths(target, drafter, prompts, setting, stops, min_steps):
    if not torch.cuda.is_available():  # acceptance_lengths come with return_stats' CUDA clock
        dflash.model._cuda_time = time.perf_counter
    lengths, seed = [], 0
    while len(lengths) < min_steps:
        for prompt in prompts:
            torch.manual_seed(seed)
            seed += 1
            out = dflash.model.dflash_generate(drafter, target, torch.tensor([prompt]), MAX_NEW, stops or None,
                                               return_stats=True, **setting)
            lengths += list(out.acceptance_lengths)
    return lengths


def merged_table(rows, minimum=10):
    """Columns (categories) with fewer than `minimum` counts over all rows folded into the next."""
    table = np.array(rows, dtype=float)
    merged, carry = [], np.zeros(table.shape[0])
    for column in table.T:
        carry = carry + column
        if carry.sum() >= minimum:
            merged.append(carry)
            carry = np.zeros(table.shape[0])
    if carry.sum() > 0:
        if merged:
            merged[-1] = merged[-1] + carry
        else:
            merged.append(carry)
    return np.array(merged).T


def check_acceptance(engine, work, target_dir, drafters, target, stops):
    prompts_file = live_prompts_file(work)
    for kind, setting, repeats, min_steps in SETTINGS:
        drafter_dir, drafter = drafters[kind]
        steps = engine_steps(run_engine(engine, work, target_dir, drafter_dir, prompts_file, setting, repeats, MAX_NEW))
        check_records_explain_acceptance(steps)
        ours = [accept_length(s) for s in steps]
        assert len(ours) >= min_steps, f"only {len(ours)} engine steps at {setting}: raise its repeats"
        theirs = package_lengths(target, drafter, fixtures.LIVE_PROMPTS, setting, stops, len(ours))
        top = max(ours + theirs)
        a, b = Counter(ours), Counter(theirs)
        table = merged_table([[a[k] for k in range(1, top + 1)], [b[k] for k in range(1, top + 1)]])
        chi2, p, dof, _ = stats.chi2_contingency(table)
        print(f"acceptance {kind} {setting}: engine {len(ours)} steps mean {np.mean(ours):.3f}, package {len(theirs)} "
              f"steps mean {np.mean(theirs):.3f}; chi2 {chi2:.2f} dof {dof} p {p:.3f}")
        assert p > ALPHA, f"accepted-length distributions differ from the package's at {setting} (p = {p:.4g})"


def exact_token_marginals(target, prompt):
    """P(x2) and P(x3) under the target's own sampling at T = 1, summed over every x1 (and x2)."""
    vocab = target.config.vocab_size
    with torch.no_grad():
        p1 = torch.softmax(target(torch.tensor([prompt])).logits[0, -1].double(), -1)
        firsts = torch.tensor([prompt + [x1] for x1 in range(vocab)])
        p2_given = torch.softmax(target(firsts).logits[:, -1].double(), -1)  # [x1, x2]
        pairs = torch.tensor([prompt + [x1, x2] for x1 in range(vocab) for x2 in range(vocab)])
        p3_given = torch.softmax(target(pairs).logits[:, -1].double(), -1).view(vocab, vocab, vocab)
    joint12 = p1[:, None] * p2_given
    return joint12.sum(0).numpy(), (joint12[:, :, None] * p3_given).sum((0, 1)).numpy()


def engine_outputs(steps):
    """Each response's generated tokens, rebuilt from its steps: the first anchor, then each
    step's accepted drafts and last token, as many as it counted."""
    responses = {}
    for s in steps:
        out = responses.setdefault((s["run"], s["prompt"]), [s["anchor"]])
        out += committed_tokens(s)
    return list(responses.values())


def check_lossless(engine, work, target_dir, drafter_dir, target):
    prompt = fixtures.LIVE_PROMPTS[0]
    prompts_file = work / "lossless.jsonl"
    prompts_file.write_text("".join(json.dumps({"id": i, "ids": prompt}) + "\n" for i in range(LOSSLESS_RESPONSES)))
    steps = engine_steps(run_engine(engine, work, target_dir, drafter_dir, prompts_file, SETTINGS[0][1], 1, 3))
    check_records_explain_acceptance(steps)
    outputs = engine_outputs(steps)
    assert len(outputs) == LOSSLESS_RESPONSES and all(len(o) >= 3 for o in outputs)
    for position, expected in zip((1, 2), exact_token_marginals(target, prompt)):
        counts = np.bincount([o[position] for o in outputs], minlength=len(expected))
        order = np.argsort(-expected)  # fold the rare tokens together, expected >= 5 per bin
        table = merged_table([counts[order], expected[order] * LOSSLESS_RESPONSES], minimum=5 * 2)
        chi2, p = stats.chisquare(table[0], table[1] * table[0].sum() / table[1].sum())
        print(f"lossless ({Path(drafter_dir).name}): generated token {position + 1} over {len(outputs)} responses against the target's "
              f"T=1 distribution: chi2 {chi2:.2f} over {table.shape[1]} bins, p {p:.3f}")
        assert p > ALPHA, f"generated token {position + 1} is not distributed as the target samples it (p = {p:.4g})"


def dspark_pair(work):
    """A speculators DSpark drafter (vanilla Markov head of full rank, confidence head) and the
    tiny target it drafts for, both saved under `work`; the target as a transformers model."""
    import gen_speculators as speculators  # speculators' own builder; its imports stand in the data pipeline
    case = dict(vocab=16, draft_vocab=16, block=4, aux=[2, 3],
                dspark=dict(markov_rank=16, markov_head_type="vanilla", sample_from_anchor=False))
    target = speculators.make_target(case["vocab"], speculators.SEED + 200)
    target.save_pretrained(work / "dspark_target", safe_serialization=True)
    drafter = speculators.build_drafter(case, work / "dspark_target", speculators.SEED + 201)
    with torch.no_grad():  # a bias strong enough that a q taken without it shows in the test
        drafter.markov_head.markov_w2.weight.mul_(6.0)
    drafter.save_pretrained(work / "dspark", safe_serialization=True)
    return target, work / "dspark_target", work / "dspark"


def target_sampling_probs(logits, setting):
    """The target's sampling distribution at `setting` as transformers' generate samples it: its own
    logits warpers, in generate's order (temperature, top-k, top-p: also the order of the package's
    _sampling_probs and of the engine), then a float64 softmax. Rows of `logits` [N, V]."""
    warpers = LogitsProcessorList([TemperatureLogitsWarper(setting["temperature"])])
    if setting["top_k"] > 0:
        warpers.append(TopKLogitsWarper(setting["top_k"]))
    if setting["top_p"] < 1.0:
        warpers.append(TopPLogitsWarper(setting["top_p"]))
    return torch.softmax(warpers(None, logits.float()).double(), -1)


def classified_tokens(steps, prompts):
    """Each response's realized sequence (prompt and generated tokens), and every generated token
    as (response, position, classes). A class is settled before its token is drawn: the first
    token, the token at draft slot j of a step, the bonus (after every draft of the block was
    accepted), and "past a rejection" (a position an earlier step drafted beyond its first
    rejection, so a later step drew it)."""
    sequences, past, tokens = {}, {}, []
    for s in steps:
        key = (s["run"], s["prompt"])
        if key not in sequences:
            sequences[key], past[key] = list(prompts[s["prompt"]]) + [int(s["anchor"])], set()
            tokens.append((key, len(sequences[key]) - 1, ("first",)))
        sequence, start, drafts = sequences[key], s["position"], s["drafts"]
        assert start == len(sequence) - 1 and sequence[start] == s["anchor"], f"step {s['index']} of {key} is astray"
        for i, token in enumerate(committed_tokens(s)):
            slot = "bonus" if i == len(drafts) else f"slot {i + 1}"
            tokens.append((key, len(sequence), (slot, "past a rejection") if len(sequence) in past[key] else (slot,)))
            sequence.append(int(token))
        if s["accepted"] < len(drafts):
            past[key].update(range(start + s["accepted"] + 2, start + len(drafts) + 1))
    return sequences, tokens


def randomized_pit(sequences, tokens, target, setting, rng):
    """Per token, u = F(x-) + V p(x) and p(x), where p is the target's sampling distribution given
    the token's realized prefix (one forward over the right-padded sequences: the target is causal),
    F(x-) the mass of the tokens ranked before x, and V uniform: u is uniform on [0, 1] when x
    follows p. The tokens are ranked by p, most probable first, so that a sampler too sharp or too
    flat (a temperature, a top-k or top-p cut wrong) shifts u one way over every row alike."""
    keys = list(sequences)
    width = max(len(sequence) for sequence in sequences.values())
    batch = torch.tensor([sequences[k] + [0] * (width - len(sequences[k])) for k in keys])
    with torch.no_grad():
        logits = target(batch).logits
    row = {k: i for i, k in enumerate(keys)}
    rows = torch.tensor([row[key] for key, _, _ in tokens])
    positions = torch.tensor([position for _, position, _ in tokens])
    probs = target_sampling_probs(logits[rows, positions - 1], setting)
    x = batch[rows, positions][:, None]
    ranked, order = probs.sort(dim=-1, descending=True, stable=True)
    rank = (order == x).long().argmax(-1, keepdim=True)
    below = (ranked.cumsum(-1) - ranked).gather(-1, rank)[:, 0]
    px = probs.gather(-1, x)[:, 0]
    return (below + torch.from_numpy(rng.random(len(tokens))) * px).numpy(), px.numpy()


def conditional_fit(sequences, tokens, target, reference):
    """Per class: (tokens, tokens where the reference gives p(x) = 0, Kolmogorov-Smirnov p-value of
    their randomized PIT against the uniform), with the target sampling at `reference`."""
    u, px = randomized_pit(sequences, tokens, target, reference, np.random.default_rng(5))
    fits = {}
    for name in CONDITIONAL_CLASSES:
        members = [i for i, (_, _, classes) in enumerate(tokens) if name in classes]
        fits[name] = (len(members), int((px[members] == 0).sum()), stats.kstest(u[members], "uniform").pvalue)
    return fits


def check_lossless_conditionals(engine, work, target_dir, drafter_dir, target):
    threshold = ALPHA / (len(CONDITIONAL_RUNS) * len(CONDITIONAL_CLASSES))  # Bonferroni
    for setting, repeats, max_new in CONDITIONAL_RUNS:
        session = run_engine(engine, work, target_dir, drafter_dir, live_prompts_file(work), setting, repeats,
                             max_new, CONDITIONAL_BLOCK)
        steps = engine_steps(session)
        check_records_explain_acceptance(steps)
        sequences, tokens = classified_tokens(steps, fixtures.LIVE_PROMPTS)
        for name, (count, outside, p) in conditional_fit(sequences, tokens, target, setting).items():
            print(f"lossless given the prefix, {setting}, block {CONDITIONAL_BLOCK}: {name}: {count} tokens, "
                  f"{outside} outside the target's distribution, KS p {p:.3f}")
            assert count >= CONDITIONAL_MIN, f"only {count} tokens of class {name} at {setting}: raise the budget"
            assert outside == 0, f"{outside} tokens of class {name} at {setting} have probability 0 for the target"
            assert p > threshold, f"class {name} at {setting} does not follow the target's distribution (p = {p:.4g})"


def main():
    engine, work = sys.argv[1], Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    # Tiny models: more threads than free cores only spin in OpenMP barriers on a busy host.
    torch.set_num_threads(1)
    target = fixtures.live_target()
    target_dir = work / "target"
    target.save_pretrained(target_dir, safe_serialization=True)
    drafters = {}
    for kind, cfg in (("dflash", fixtures.LIVE_DRAFTER), ("dflash2", fixtures.LIVE_DFLASH2)):
        drafter = fixtures.new_drafter(cfg, torch.Generator().manual_seed(fixtures.SEED + 1))
        fixtures.save_zlab_layout(drafter, work / kind)
        drafters[kind] = (work / kind, drafter)
    eos = target.config.eos_token_id
    stops = [t for t in ([eos] if isinstance(eos, int) else (eos or [])) if t < target.config.vocab_size]
    check_acceptance(engine, work, target_dir, drafters, target, stops)
    check_lossless(engine, work, target_dir, drafters["dflash"][0], target)
    check_lossless_conditionals(engine, work, target_dir, drafters["dflash"][0], target)
    dspark_target, dspark_target_dir, dspark_dir = dspark_pair(work)
    check_lossless(engine, work, dspark_target_dir, dspark_dir, dspark_target)


if __name__ == "__main__":
    main()
