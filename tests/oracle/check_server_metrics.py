#!/usr/bin/env python3
"""`dflash-eval import` and `summary` against the speculative-decoding metrics of vLLM's and
SGLang's own code (issue 37, item 4): the same per-step acceptance is fed through the servers'
published stats code, written as each server's records, imported, and the tool's tau_vllm,
tau_sglang, tau_reference and per-slot acceptance must equal what the servers' code computes.

Neither server can run here (no GPU, and their dependencies are not installed: both are
`pip install --no-deps`, scripts/requirements-nodeps.txt). Their metric code is torch-free but its
modules import their servers, so only the definitions below are run, compiled from the installed
files (line numbers kept) or, for one module, loaded by path with two import stubs:

vLLM 0.34.0 (V1 engine)
  vllm/v1/spec_decode/metrics.py, loaded by path: SpecDecodingStats (observe_draft) and
    SpecDecodingLogging (observe per scheduler step, log: "Mean acceptance length" and
    "Per-position acceptance rate"; both read from log()'s own locals). Stubs: prometheus_client
    (not installed; imported at module level for SpecDecodingProm, the Prometheus logger, which
    is not run here) and vllm.config (imported for SpecDecodingProm's type annotation; the real
    package needs psutil, pydantic, ...).
  vllm/v1/core/sched/scheduler.py: Scheduler.make_spec_decoding_stats, called per request and
    step as update_from_output calls it (one drafted block of num_speculative_tokens =
    block size - 1, vllm/v1/worker/gpu/spec_decode/dflash/config.py, num_lookahead_tokens).
  vllm/v1/metrics/stats.py: RequestSpecDecodeMetrics (observe, to_dict): the per-request
    payload (CompletionOutput.spec_decode_metrics, `metrics.speculative_decoding`).
  The tool reads both RequestOutput forms, each imported here: the V1 engine's
  outputs[0].spec_decode_metrics (dataclasses.asdict of those RequestSpecDecodeMetrics, at the
  summary level, a histogram, and at the detailed level, the steps in order), and the V0
  engine's metrics.spec_token_acceptance_counts (vLLM 0.8-0.9: counts[0] the verify steps and
  counts[i] the steps whose i-th draft was accepted, vllm 0.9.2 vllm/sequence.py RequestMetrics
  and vllm/engine/output_processor/multi_step.py), which V1 no longer writes, so those records
  carry the request's own SpecDecodingStats as [num_drafts] + num_accepted_tokens_per_pos.

SGLang 0.5.23
  sglang/srt/managers/schedule_batch.py: Req.update_spec_correct_drafts_histogram.
  sglang/srt/managers/utils.py: GenerationBatchResult.get_num_generated_tokens.
  sglang/srt/managers/scheduler_components/metrics_reporter.py:
    SchedulerMetricsReporter.update_spec_metrics (per decode batch).
  sglang/srt/managers/scheduler_components/internal_state.py:
    SchedulerInternalStateController._average_accept_length (/server_info avg_spec_accept_length).
  sglang/srt/managers/tokenizer_manager.py: TokenizerManager._calculate_spec_decoding_metrics
    (the /generate response's meta_info: spec_verify_ct, spec_accept_length, histogram, ...).
  sglang/test/run_eval.py: print_accept_length_summary (the mean over requests of
    spec_accept_length, read from the statistics.fmean it calls).
  The records are the /generate responses with that meta_info. SGLang 0.5.21 dropped
  meta_info.spec_accept_histogram, which 0.5.20 and earlier wrote (0.5.15-0.5.20 as an alias of
  spec_correct_drafts_histogram): the responses are imported as 0.5.23 writes them (this check
  found the tool refusing them).

Per case (fixed seed; every step accepting none, every step accepting all, random steps, block
sizes 2 to 16), both imported runs (the vLLM and the SGLang records of the same steps) must give:
tau_vllm = vLLM's mean acceptance length = SGLang's avg_spec_accept_length; slot_acceptance =
vLLM's per-position acceptance rates; tau_sglang = the mean over requests of SGLang's
spec_accept_length; tau_reference = the mean over requests of vLLM's per-request
mean_acceptance_length; steps = the verify steps both servers counted (relative 1e-9, exact for
integers).

Usage: check_server_metrics.py DFLASH_EVAL WORK_DIR
"""

import __future__

import ast
import dataclasses
import importlib.metadata
import importlib.util
import json
import math
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import types
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from types import SimpleNamespace
from typing import Any

VERSIONS = {"vllm": "0.34.0", "sglang": "0.5.23"}
DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"
MAX_NEW = 4  # the reference run's budget: the check reads the imported runs only
PROMPTS = [[5, 6, 7], [9, 10], [11, 12, 13, 14], [15, 16], [17, 18, 19]]


# ---------------------------------------------------------------------------------------------
# Loading the servers' code without importing their packages


def package_file(package, relative_path):
    # find_spec of a top-level name locates the package without running its __init__.
    return Path(importlib.util.find_spec(package).origin).parent / relative_path


def load_module_file(package, relative_path, stubs):
    """One module file of an installed package, run with `stubs` standing in for some of its
    imports. Afterwards the stubs, and the package's modules imported meanwhile (which may hold
    them), leave sys.modules again; other packages imported meanwhile (numpy, ...) stay."""
    before = set(sys.modules)
    sys.modules.update(stubs)
    try:
        path = package_file(package, relative_path)
        spec = importlib.util.spec_from_file_location(f"_oracle_{package}_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        for name in set(sys.modules) - before:
            if name == package or name.startswith(package + "."):
                del sys.modules[name]
        for name in stubs:
            sys.modules.pop(name, None)


def compile_definitions(package, relative_path, names, **globals_):
    """The named definitions ("function", "Class", or "Class.method" as a plain function taking
    self) of an installed module file, compiled from its source with the file's own __future__
    flags and line numbers, in a fresh module whose globals are `globals_`: the rest of the file,
    and its imports, are not run."""
    path = package_file(package, relative_path)
    tree = ast.parse(path.read_text(), filename=str(path))
    flags = 0
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            for alias in node.names:
                flags |= getattr(__future__, alias.name).compiler_flag
    module = types.ModuleType(f"_oracle_{package}_{path.stem}")
    module.__dict__.update(globals_)
    sys.modules[module.__name__] = module  # dataclasses looks its class's module up
    for name in names:
        scope, found = tree.body, None
        for part in name.split("."):
            found = next((n for n in scope if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name == part), None)
            if found is None:
                raise AssertionError(f"{path}: no definition {name!r} (another release of {package}?)")
            scope = found.body
        if "." in name and found.decorator_list:
            raise AssertionError(f"{path}:{found.lineno}: {name} is decorated; compile it with its class")
        exec(compile(ast.Module(body=[found], type_ignores=[]), str(path), "exec", flags=flags, dont_inherit=True),
             module.__dict__)
    return module


def call_reading_locals(function, *args, **kwargs):
    """Call `function` and return its local variables as they were when it returned."""
    seen = {}

    def profile(frame, event, _):
        if event == "return" and frame.f_code is function.__code__:
            seen.update(frame.f_locals)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        function(*args, **kwargs)
    finally:
        sys.setprofile(previous)
    return seen


def check_versions():
    for package, version in VERSIONS.items():
        installed = importlib.metadata.version(package)
        if installed != version:
            raise AssertionError(f"{package} {installed} is installed; this check reads {version}'s code "
                                 "(scripts/requirements-nodeps.txt)")


def load_vllm():
    class Unused:  # stands in for prometheus_client's metric classes and vllm.config's SpeculativeConfig
        pass

    prometheus = types.ModuleType("prometheus_client")
    prometheus.Counter = prometheus.Gauge = prometheus.Histogram = Unused
    config = types.ModuleType("vllm.config")
    config.SpeculativeConfig = Unused
    metrics = load_module_file("vllm", "v1/spec_decode/metrics.py", {"prometheus_client": prometheus,
                                                                     "vllm.config": config})
    scheduler = compile_definitions("vllm", "v1/core/sched/scheduler.py", ["Scheduler.make_spec_decoding_stats"],
                                    SpecDecodingStats=metrics.SpecDecodingStats)
    stats = compile_definitions("vllm", "v1/metrics/stats.py", ["RequestSpecDecodeMetrics"], dataclass=dataclass,
                                field=field, Any=Any)
    return SimpleNamespace(SpecDecodingStats=metrics.SpecDecodingStats, SpecDecodingLogging=metrics.SpecDecodingLogging,
                           make_spec_decoding_stats=scheduler.make_spec_decoding_stats,
                           RequestSpecDecodeMetrics=stats.RequestSpecDecodeMetrics)


def load_sglang():
    req = compile_definitions("sglang", "srt/managers/schedule_batch.py", ["Req.update_spec_correct_drafts_histogram"])
    result = compile_definitions("sglang", "srt/managers/utils.py", ["GenerationBatchResult.get_num_generated_tokens"])
    reporter = compile_definitions("sglang", "srt/managers/scheduler_components/metrics_reporter.py",
                                   ["SchedulerMetricsReporter.update_spec_metrics"])
    state = compile_definitions("sglang", "srt/managers/scheduler_components/internal_state.py",
                                ["SchedulerInternalStateController._average_accept_length"])
    # get_spec(): the server's speculative arguments, set per case. _ragged_verify_cap_accept():
    # whether SGLANG_RAGGED_VERIFY_MODE is "cap-accept"; its default is "static" (srt/environ.py:1572).
    tokenizer = compile_definitions("sglang", "srt/managers/tokenizer_manager.py",
                                    ["TokenizerManager._calculate_spec_decoding_metrics"],
                                    get_spec=None, _ragged_verify_cap_accept=lambda: False)
    # print_accept_length_summary prints statistics.fmean(...) to 4 places; the value itself is
    # read where it is computed, from the fmean it calls.
    means = []

    def fmean(values):
        means.append(statistics.fmean(values))
        return means[-1]

    run_eval = compile_definitions("sglang", "test/run_eval.py", ["print_accept_length_summary"],
                                   statistics=SimpleNamespace(fmean=fmean))
    return SimpleNamespace(update_histogram=req.update_spec_correct_drafts_histogram,
                           get_num_generated_tokens=result.get_num_generated_tokens,
                           update_spec_metrics=reporter.update_spec_metrics,
                           average_accept_length=state._average_accept_length, tokenizer=tokenizer,
                           calculate_spec_decoding_metrics=tokenizer._calculate_spec_decoding_metrics,
                           print_accept_length_summary=run_eval.print_accept_length_summary, fmeans=means)


# ---------------------------------------------------------------------------------------------
# The servers' figures for a case: requests[r] = accepted drafts of each of request r's steps


def engine_steps(requests):
    """Verify steps as a continuous-batching engine runs them (all requests admitted together):
    engine step t verifies step t of every request still running."""
    for t in range(max(len(r) for r in requests)):
        yield [(i, r[t]) for i, r in enumerate(requests) if t < len(r)]


def vllm_figures(v, requests, block):
    # num_speculative_tokens of a DFlash drafter of block size `block`: its draft pass has one
    # bonus query plus one per draft token (v1/worker/gpu/spec_decode/dflash/config.py:53-56).
    k = block - 1
    scheduler = SimpleNamespace(log_stats=True, num_spec_tokens=k)
    logging = v.SpecDecodingLogging()
    own = [None] * len(requests)  # each request's steps alone, for its V0-format counts
    per_request = [v.RequestSpecDecodeMetrics.new(k) for _ in requests]
    detailed = [v.RequestSpecDecodeMetrics.new(k) for _ in requests]  # --per-request-spec-decode-metrics detailed
    for batch in engine_steps(requests):
        step_stats = None  # one SpecDecodingStats per scheduler step, over the batch
        for i, accepted in batch:
            # update_from_output, per request with scheduled drafts (v1/core/sched/scheduler.py:2411
            # and 2427); no grammar-invalidated drafts.
            step_stats = v.make_spec_decoding_stats(scheduler, step_stats, num_draft_tokens=k,
                                                    num_accepted_tokens=accepted, num_invalid_spec_tokens=None,
                                                    request_id=str(i))
            own[i] = v.make_spec_decoding_stats(scheduler, own[i], num_draft_tokens=k, num_accepted_tokens=accepted,
                                                num_invalid_spec_tokens=None, request_id=str(i))
            per_request[i].observe(num_draft_tokens=k, num_accepted=accepted, detailed=False)
            detailed[i].observe(num_draft_tokens=k, num_accepted=accepted, detailed=True)
        # LoggingStatLogger.record observes each step's stats (v1/metrics/loggers.py:238).
        logging.observe(step_stats)
    messages = []
    log = call_reading_locals(type(logging).log, logging, log_fn=lambda *a: messages.append(a[0] % a[1:]))
    return SimpleNamespace(
        mean_acceptance_length=float(log["mean_acceptance_length"]),
        per_position=[float(x) for x in log["acceptance_rates"]],
        num_drafts=int(log["num_drafts"]), message=messages[0],
        counts=[[s.num_drafts] + list(s.num_accepted_tokens_per_pos) for s in own],
        per_request=[m.to_dict() for m in per_request],
        v1_summary=[dataclasses.asdict(m) for m in per_request], v1_detailed=[dataclasses.asdict(m) for m in detailed])


def sglang_figures(s, requests, block, rng):
    # DFlash's block size is speculative_num_draft_tokens (srt/speculative/dflash_worker_v2.py:511).
    s.tokenizer.get_spec = lambda: SimpleNamespace(speculative_num_draft_tokens=block)
    # Req.__init__'s counters (srt/managers/schedule_batch.py:1365-1379); output_ids starts with
    # the token sampled at prefill, before any verify step.
    reqs = [SimpleNamespace(output_ids=[rng.randrange(100, 200)], spec_verify_ct=0, spec_num_correct_drafts=0,
                            spec_num_block_accept_tokens=0, spec_num_cap_tokens=0, spec_correct_drafts_histogram=[],
                            spec_cap_lens_histogram=[]) for _ in requests]
    reporter = SimpleNamespace(spec_num_accept_tokens=0, spec_num_correct_drafts=0, spec_num_forward_ct=0,
                               spec_num_block_accept_tokens=0, spec_num_cap_tokens=0, spec_total_num_accept_tokens=0,
                               spec_total_num_forward_ct=0)
    for batch in engine_steps(requests):
        for i, accepted in batch:
            # The verify step of a running request (scheduler_components/batch_result_processor.py:
            # 817-836): it commits its accepted drafts and the bonus token, counts one verify step
            # and its correct drafts, and adds the step to the histogram.
            req = reqs[i]
            req.output_ids += [rng.randrange(100, 200) for _ in range(accepted + 1)]
            req.spec_verify_ct += 1
            req.spec_num_correct_drafts += accepted
            s.update_histogram(req, accepted)
        # The decode batch's totals for the scheduler's counters (batch_result_processor.py:982-991).
        result = SimpleNamespace(num_correct_drafts=sum(a for _, a in batch), num_non_draft_tokens_per_req=1)
        s.update_spec_metrics(reporter, len(batch), result.num_correct_drafts,
                              num_accept_tokens=s.get_num_generated_tokens(result, len(batch)))
    # At the decode log the interval's counts join the lifetime totals (metrics_reporter.py:999-1000).
    reporter.spec_total_num_accept_tokens += reporter.spec_num_accept_tokens
    reporter.spec_total_num_forward_ct += reporter.spec_num_forward_ct
    controller = SimpleNamespace(scheduler=SimpleNamespace(metrics_reporter=reporter,
                                                           spec_algorithm=SimpleNamespace(is_none=lambda: False)))
    server_info_accept_length = s.average_accept_length(controller)
    # The batch output's per-request lists (scheduler_components/output_streamer.py:522-526, 558-564):
    # completion_tokens is len(output_ids).
    fields = ("spec_verify_ct", "spec_num_correct_drafts", "spec_num_block_accept_tokens", "spec_num_cap_tokens",
              "spec_correct_drafts_histogram", "spec_cap_lens_histogram")
    recv = SimpleNamespace(**{name: [getattr(r, name) for r in reqs] for name in fields},
                           completion_tokens=[len(r.output_ids) for r in reqs])
    responses = []
    for i, req in enumerate(reqs):
        meta_info = {"id": f"req-{i}", "finish_reason": {"type": "length", "length": len(req.output_ids)},
                     "prompt_tokens": len(PROMPTS[i]), "reasoning_tokens": 0, "completion_tokens": len(req.output_ids),
                     "cached_tokens": 0, "e2e_latency": 0.5}
        s.calculate_spec_decoding_metrics(None, meta_info, recv, i)
        responses.append({"text": "", "output_ids": req.output_ids, "meta_info": meta_info})
    printed = StringIO()
    s.fmeans.clear()
    with redirect_stdout(printed):
        s.print_accept_length_summary([SimpleNamespace(_meta_infos=[r["meta_info"] for r in responses])])
    if len(s.fmeans) != 1:
        raise AssertionError(f"SGLang's print_accept_length_summary averaged no spec_accept_length:\n"
                             f"{printed.getvalue()}")
    return SimpleNamespace(responses=responses, mean_accept_length=s.fmeans[0], printed=printed.getvalue(),
                           server_info_accept_length=server_info_accept_length,
                           verify_steps=sum(r.spec_verify_ct for r in reqs))


# ---------------------------------------------------------------------------------------------
# Records, the tool, and the comparison


def vllm_records(counts, sglang_responses):
    """V0 RequestOutput as vars(), nested objects as dicts (gen_import_fixtures.py), with the
    same generated tokens as the SGLang responses."""
    return [{"request_id": str(i), "prompt": None, "prompt_token_ids": PROMPTS[i], "prompt_logprobs": None,
             "outputs": [{"index": 0, "text": "", "token_ids": r["output_ids"], "cumulative_logprob": None,
                          "logprobs": None, "finish_reason": "length", "stop_reason": None, "lora_request": None}],
             "finished": True,
             "metrics": {"arrival_time": 1.0, "last_token_time": 2.0, "first_scheduled_time": 1.0,
                         "first_token_time": 1.5, "time_in_queue": 0.0, "finished_time": 2.0, "scheduler_time": 0.01,
                         "model_forward_time": None, "model_execute_time": None,
                         "spec_token_acceptance_counts": c},
             "lora_request": None, "encoder_prompt": None, "encoder_prompt_token_ids": None, "num_cached_tokens": 0,
             "multi_modal_placeholders": {}}
            for i, (c, r) in enumerate(zip(counts, sglang_responses))]


def vllm_v1_records(spec_decode_metrics, sglang_responses):
    """vLLM 0.34's RequestOutput (vllm/outputs.py) as vars(), nested objects as dicts: the V1
    engine's per-request counts in outputs[0].spec_decode_metrics (RequestSpecDecodeMetrics, as
    --per-request-spec-decode-metrics writes it), metrics None as the V1 engine leaves it here."""
    return [{"request_id": str(i), "prompt": None, "prompt_token_ids": PROMPTS[i], "prompt_logprobs": None,
             "prompt_token_id_logprobs": None,
             "outputs": [{"index": 0, "text": "", "token_ids": r["output_ids"], "cumulative_logprob": None,
                          "logprobs": None, "routed_experts": None, "finish_reason": "length", "stop_reason": None,
                          "lora_request": None, "sampling_mask": None, "spec_decode_metrics": m,
                          "weight_versions": None}],
             "finished": True, "metrics": None, "lora_request": None, "encoder_prompt": None,
             "encoder_prompt_token_ids": None, "num_cached_tokens": 0, "num_cache_creation_tokens": 0,
             "kv_transfer_params": None, "ec_transfer_params": None}
            for i, (m, r) in enumerate(zip(spec_decode_metrics, sglang_responses))]


def write_records(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def tool(binary, *args, check=True):
    p = subprocess.run([binary, *args], capture_output=True, text=True, timeout=300)
    if check and p.returncode != 0:
        raise AssertionError(f"dflash-eval {args[0]} failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}")
    return p


def same(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


CASES = {  # name: (block size, accepted drafts of each request's steps, or how to draw them)
    "none_accepted_b8": (8, [[0] * 5, [0], [0] * 4]),
    "all_accepted_b8": (8, [[7] * 3, [7] * 6, [7]]),
    "random_b2": (2, "random"),
    "random_b4": (4, "random"),
    "random_b16": (16, "random"),
    "mixed_b8": (8, "mixed"),  # a request accepting nothing, one accepting everything, two random
}


def case_requests(rng, block, spec):
    if spec == "random":
        return [[rng.randint(0, block - 1) for _ in range(rng.randint(1, 12))] for _ in range(len(PROMPTS))]
    if spec == "mixed":
        return [[0] * 9, [block - 1] * 2] + [[rng.randint(0, block - 1) for _ in range(rng.randint(3, 10))]
                                              for _ in range(2)]
    return spec


def main():
    binary, work = sys.argv[1], Path(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    check_versions()
    v, s = load_vllm(), load_sglang()
    prompts = write_records(work / "prompts.jsonl", [{"ids": p} for p in PROMPTS])
    rng = random.Random(37)
    failures = []

    def expect(case, what, tool_value, server_value, source):
        exact = isinstance(server_value, int) or (isinstance(server_value, list) and server_value
                                                  and isinstance(server_value[0], list))
        ok = tool_value == server_value if exact else (
            len(tool_value) == len(server_value) and all(same(a, b) for a, b in zip(tool_value, server_value))
            if isinstance(server_value, list) else same(tool_value, server_value))
        if not ok:
            failures.append(f"{case}: {what}: the tool gives {tool_value!r}, {source} gives {server_value!r}")

    for case, (block, spec) in CASES.items():
        requests = case_requests(rng, block, spec)
        vl = vllm_figures(v, requests, block)
        sg = sglang_figures(s, requests, block, rng)
        print(f"{case}: B={block}, steps per request {[len(r) for r in requests]}")
        print("  vLLM: " + re.sub(r" (Accepted|Drafted) throughput: [^,]*,", "", vl.message))
        print(f"  SGLang: {sg.printed.strip().splitlines()[1]}; avg_spec_accept_length {sg.server_info_accept_length}")

        # Both servers' counting of the same steps, before the tool is asked.
        if vl.num_drafts != sg.verify_steps or not same(vl.mean_acceptance_length, sg.server_info_accept_length):
            raise AssertionError(f"{case}: vLLM counts {vl.num_drafts} drafts, mean acceptance length "
                                 f"{vl.mean_acceptance_length}; SGLang {sg.verify_steps} verify steps, "
                                 f"avg_spec_accept_length {sg.server_info_accept_length}")

        case_dir = work / case
        case_dir.mkdir()
        session = str(case_dir / "session.dfi")
        common = ["--session", session, "--block-size", str(block), "--max-new-tokens", str(MAX_NEW), "--json"]
        vllm_file = write_records(case_dir / f"vllm_{case}.jsonl", vllm_records(vl.counts, sg.responses))
        imported = {"vllm": json.loads(tool(binary, "import", "--format", "vllm", str(vllm_file), *common, "--target",
                                            str(DEMO / "target"), "--drafter", str(DEMO / "drafter-good"),
                                            "--prompts", str(prompts), "--no-chat").stdout)["imported_run"]}
        sglang_file = write_records(case_dir / f"sglang_{case}.jsonl", sg.responses)
        p = tool(binary, "import", "--format", "sglang", str(sglang_file), *common)
        imported["sglang"] = json.loads(p.stdout)["imported_run"]
        for level in ("summary", "detailed"):
            v1_file = write_records(case_dir / f"vllm_v1_{level}_{case}.jsonl",
                                    vllm_v1_records(getattr(vl, f"v1_{level}"), sg.responses))
            p = tool(binary, "import", "--format", "vllm", str(v1_file), *common)
            imported[f"vllm V1 {level}"] = json.loads(p.stdout)["imported_run"]
        # The detailed level keeps the steps in order: the session's steps are vLLM's, step by step.
        with sqlite3.connect(session) as db:
            recorded = [[a for (a,) in db.execute("SELECT accepted_count FROM steps WHERE run_id=? AND prompt_id=? "
                                                  "ORDER BY step_index", (imported["vllm V1 detailed"], i))]
                        for i in range(len(requests))]
        expect(case, "vllm V1 detailed import: accepted drafts per step, in order", recorded,
               [m["per_step_accepted"] for m in vl.v1_detailed], "vLLM's RequestSpecDecodeMetrics per_step_accepted")

        summary = json.loads(tool(binary, "summary", "--json", session).stdout)
        tau_reference = statistics.fmean(r["mean_acceptance_length"] for r in vl.per_request)
        for fmt, run in imported.items():
            rows = [r for r in summary["rows"] if r["run_ids"] == [run]]
            positions = [p for p in summary["positions"] if p["run_id"] == run and p["mode"] == "live"]
            if len(rows) != 1 or len(positions) != 1:
                raise AssertionError(f"{case}: run {run} ({fmt}) has {len(rows)} summary rows and {len(positions)} "
                                     f"position tables:\n{json.dumps(summary)[:3000]}")
            row, pos = rows[0], positions[0]
            what = f"{fmt} import (run {run})"
            expect(case, f"{what} tau_vllm", row["tau_vllm"], vl.mean_acceptance_length,
                   "vLLM's SpecDecodingLogging.log mean_acceptance_length")
            expect(case, f"{what} tau_vllm", row["tau_vllm"], sg.server_info_accept_length,
                   "SGLang's _average_accept_length (avg_spec_accept_length)")
            expect(case, f"{what} slot_acceptance", pos["slot_acceptance"], vl.per_position,
                   "vLLM's SpecDecodingLogging.log acceptance_rates")
            expect(case, f"{what} tau_sglang", row["tau_sglang"], sg.mean_accept_length,
                   "SGLang's print_accept_length_summary mean of meta_info spec_accept_length")
            expect(case, f"{what} tau_reference", row["tau_reference"], tau_reference,
                   "the mean over requests of vLLM's RequestSpecDecodeMetrics mean_acceptance_length")
            expect(case, f"{what} steps", row["steps"], vl.num_drafts, "vLLM's num_drafts")
            expect(case, f"{what} steps", pos["steps"], sg.verify_steps, "SGLang's summed spec_verify_ct")
            expect(case, f"{what} responses", row["responses"], len(requests), "the request count")
        print(f"  dflash-eval: tau_vllm {row['tau_vllm']:.6f}, tau_sglang {row['tau_sglang']:.6f}, "
              f"tau_reference {row['tau_reference']:.6f}, slots {[round(x, 4) for x in pos['slot_acceptance']]}")

    if failures:
        raise AssertionError(f"{len(failures)} disagreement(s) with the servers' code:\n  " + "\n  ".join(failures))
    print(f"server metrics: dflash-eval agrees with vLLM {VERSIONS['vllm']} and SGLang {VERSIONS['sglang']} "
          f"on {len(CASES)} cases")


if __name__ == "__main__":
    main()
