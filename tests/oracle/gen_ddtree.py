#!/usr/bin/env python3
"""Reference DDTree trees and acceptance for the engine's DDTree (docs/dflash.md 5).

An independent plain-Python DDTree written from the published algorithm (Ringel & Romano,
arXiv 2604.12989; the semantics of `liranringel/ddtree:ddtree.py` as docs/dflash.md 5.1-5.3
describes them), not from the engine's code:

- per depth d = 1..D (draft slot d-1), K = min(budget, V) candidates: the top-K of the
  float32 logits, log-probabilities = top logits - logsumexp(logits), in float32;
- best-first search with Python's heapq (a min-heap) over entries
  (-log w, rank tuple, parent index, depth, rank, log w); log w is a Python float (double)
  summed from the float32 log-probabilities; the root's first child (depth 1, rank 0) is
  the first entry; popping an entry makes node n (n = 1, 2, ... in pop order) and pushes its
  next sibling (same parent and depth, rank + 1, log w - logq[rank] + logq[rank + 1]) when
  rank + 1 < K, and its first child (depth + 1, rank 0, log w + logq_{depth+1}[0]) when
  depth < D; stops after `budget` nodes or when the heap is empty. Ties in log w are broken by
  the rank tuples (lexicographic, a prefix first), as tuple comparison does;
- verification walks from the root: cur = 0; while posterior[cur] is a child token of cur,
  cur = that child; the accepted path is the visited nodes (root included), its length the
  acceptance length, posterior[cur] the bonus token. posterior[n] is the target's greedy
  token after node n's path: here the given continuation's token at depth(n) for nodes on
  the continuation, and an arbitrary token elsewhere (the walk never reads those).

Cases are random: per-slot logits from several families (Gaussian, peaked, flat, small
integers so that exact ties occur within and across slots, identical slots), vocabularies
from 2 to 300, block sizes 2 to 16 (D = B-1 slots), budgets 1 to 64, and target
continuations built from the tree so that they match partially: through a random node then
off the tree, through the top-1 chain past the tree, off at the first token, or through
tokens the budget left out.

Writes OUT/cases.json: {"cases": [...]} with, per case, name, kind, vocab, budget,
root_token, logits [D][V] (float32 values), topk_ids/topk_log_probs [D][k] with
k = min(V, budget + extra) >= min(budget, V) (the engine's stored top-k may exceed the
budget), continuation [D + 1] (the target's greedy tokens after the root), and expected:
tokens, parents, depths, ranks (root first), log_weights (doubles), accepted_path,
acceptance_length, bonus_token. Every float is a float32 value or a double, written with
repr so that it reads back bit for bit.

Usage: gen_ddtree.py OUT_DIR
"""

import heapq
import json
import random
import sys
from pathlib import Path

import torch

SEED = 20260601


def reference_topk(logits, k):
    """Top-k ids and float32 log-probabilities of one slot's float32 logits [V]."""
    top, ids = torch.topk(logits, k)
    log_z = torch.logsumexp(logits, dim=-1)
    return ids.tolist(), (top - log_z).to(torch.float32).tolist()


def build_tree(top_ids, top_lp, budget, root_token):
    """top_ids/top_lp: per depth (1..D) lists of at least K = min(budget, V) entries."""
    tokens, parents, depths, ranks, weights = [root_token], [-1], [0], [0], [0.0]
    children = [{}]
    D = len(top_ids)
    if budget <= 0 or D == 0:
        return dict(tokens=tokens, parents=parents, depths=depths, ranks=ranks,
                    log_weights=weights), children
    K = min(budget, len(top_ids[0]))
    first = float(top_lp[0][0])
    heap = [(-first, (0,), 0, 1, 0, first)]
    while heap and len(tokens) - 1 < budget:
        _, path, parent, depth, rank, logw = heapq.heappop(heap)
        index = len(tokens)
        token = top_ids[depth - 1][rank]
        tokens.append(token)
        parents.append(parent)
        depths.append(depth)
        ranks.append(rank)
        weights.append(logw)
        children.append({})
        children[parent][token] = index
        if rank + 1 < K:
            w = logw - float(top_lp[depth - 1][rank]) + float(top_lp[depth - 1][rank + 1])
            heapq.heappush(heap, (-w, path[:-1] + (rank + 1,), parent, depth, rank + 1, w))
        if depth < D:
            w = logw + float(top_lp[depth][0])
            heapq.heappush(heap, (-w, path + (0,), index, depth + 1, 0, w))
    return dict(tokens=tokens, parents=parents, depths=depths, ranks=ranks,
                log_weights=weights), children


def verify(tree, children, continuation, rng, vocab):
    """The greedy tree walk with per-node posteriors (docs/dflash.md 5.2)."""
    n = len(tree["tokens"])
    on_continuation = [False] * n
    on_continuation[0] = True
    posterior = [0] * n
    for i in range(n):
        if i > 0:
            p = tree["parents"][i]
            on_continuation[i] = (on_continuation[p]
                                  and continuation[tree["depths"][i] - 1] == tree["tokens"][i])
        posterior[i] = (continuation[tree["depths"][i]] if on_continuation[i]
                        else rng.randrange(vocab))
    path = [0]
    cur = 0
    while posterior[cur] in children[cur]:
        cur = children[cur][posterior[cur]]
        path.append(cur)
    return path, posterior[cur]


def random_logits(kind, D, V, gen, rng):
    if kind == "gaussian":
        return torch.randn(D, V, generator=gen) * rng.choice([0.5, 1.0, 3.0])
    if kind == "peaked":
        x = torch.randn(D, V, generator=gen)
        x[torch.arange(D), torch.randint(V, (D,), generator=gen)] += rng.choice([8.0, 20.0, 60.0])
        return x
    if kind == "flat":
        return torch.zeros(D, V)
    if kind == "integer_ties":
        return torch.randint(0, 4, (D, V), generator=gen).float()
    if kind == "identical_slots":
        return torch.randint(0, 3, (1, V), generator=gen).float().repeat(D, 1)
    if kind == "halves":  # probabilities that are powers of two: sums tie exactly
        x = torch.full((D, V), -30.0)
        for d in range(D):
            perm = torch.randperm(V, generator=gen)
            for r in range(min(V, 4)):
                x[d, perm[r]] = -float(r + 1) * 0.6931471805599453
        return x
    raise ValueError(kind)


KINDS = ["gaussian", "peaked", "flat", "integer_ties", "identical_slots", "halves"]


def continuation_for(tree, top_ids, D, V, rng, how):
    """D + 1 target tokens after the root: depth i's token is continuation[i - 1]; the last
    one is only ever a bonus."""
    def path_tokens(node):
        out = []
        while node > 0:
            out.append(tree["tokens"][node])
            node = tree["parents"][node]
        return out[::-1]

    def off_tree_token(node):
        used = {tree["tokens"][i] for i in range(len(tree["tokens"])) if tree["parents"][i] == node}
        free = [t for t in range(V) if t not in used]
        return rng.choice(free) if free else rng.randrange(V)

    n = len(tree["tokens"])
    if how == "through_node":
        node = rng.randrange(n)
        prefix = path_tokens(node)
        if len(prefix) < D + 1:
            prefix.append(off_tree_token(node))
    elif how == "top1_chain":
        prefix = [top_ids[d][0] for d in range(D)]
    elif how == "first_off":
        prefix = [off_tree_token(0)]
    elif how == "left_out":  # a candidate the budget or K left out, where one exists
        d = rng.randrange(D)
        prefix = [top_ids[i][0] for i in range(d)] + [rng.choice(top_ids[d][-2:])]
    else:
        raise ValueError(how)
    while len(prefix) < D + 1:
        prefix.append(rng.randrange(V))
    return prefix[:D + 1]


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(SEED)
    gen = torch.Generator().manual_seed(SEED)
    cases = []
    hows = ["through_node", "through_node", "top1_chain", "first_off", "left_out"]
    budgets = list(range(1, 17)) + [20, 24, 31, 32, 40, 48, 63, 64]
    index = 0
    for kind in KINDS:
        for budget in budgets:
            for _ in range(3):
                block = rng.choice([2, 3, 4, 5, 8, 10, 16])
                D = block - 1
                V = rng.choice([2, 3, 5, 8, 16, 40, 300])
                logits = random_logits(kind, D, V, gen, rng).to(torch.float32)
                k = min(V, budget + rng.choice([0, 0, 1, 5]))
                topk = [reference_topk(logits[d], k) for d in range(D)]
                top_ids = [t[0] for t in topk]
                top_lp = [t[1] for t in topk]
                root = rng.randrange(V)
                tree, children = build_tree(top_ids, top_lp, budget, root)
                how = hows[index % len(hows)]
                continuation = continuation_for(tree, top_ids, D, V, rng, how)
                path, bonus = verify(tree, children, continuation, rng, V)
                assert bonus == continuation[len(path) - 1]
                cases.append(dict(
                    name=f"{kind}_b{budget}_{index}", kind=kind, how=how, vocab=V,
                    block_size=block, budget=budget, root_token=root,
                    logits=logits.tolist(), topk_ids=top_ids, topk_log_probs=top_lp,
                    continuation=continuation,
                    expected=dict(**tree, accepted_path=path, acceptance_length=len(path),
                                  bonus_token=bonus)))
                index += 1
    # Budget larger than the whole candidate tree (V = 2, D = 1) and budget 0 (bare root).
    for budget, V, D in ((8, 2, 1), (0, 5, 3), (64, 3, 2)):
        logits = torch.randn(D, V, generator=gen)
        k = min(V, max(budget, 1))
        topk = [reference_topk(logits[d], k) for d in range(D)]
        top_ids = [t[0] for t in topk]
        top_lp = [t[1] for t in topk]
        tree, children = build_tree(top_ids, top_lp, budget, 0)
        continuation = [top_ids[d][0] for d in range(D)] + [1]
        path, bonus = verify(tree, children, continuation, rng, V)
        cases.append(dict(
            name=f"edge_b{budget}_v{V}_d{D}", kind="edge", how="top1_chain", vocab=V,
            block_size=D + 1, budget=budget, root_token=0, logits=logits.tolist(),
            topk_ids=top_ids, topk_log_probs=top_lp, continuation=continuation,
            expected=dict(**tree, accepted_path=path, acceptance_length=len(path),
                          bonus_token=bonus)))
    (out / "cases.json").write_text(json.dumps({"seed": SEED, "cases": cases}))
    lengths = [c["expected"]["acceptance_length"] for c in cases]
    print(f"{len(cases)} DDTree cases -> {out / 'cases.json'}; acceptance lengths "
          f"1..{max(lengths)}, mean {sum(lengths) / len(lengths):.2f}")


if __name__ == "__main__":
    main()
