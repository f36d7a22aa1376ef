"""llguidance (native, PyPI llguidance 1.9) as one engine of benches/sbs/engines.mjs.

Reads a job from stdin: {"tokenizer": PATH, "eos": [ID...], "groups": [{"schema": S,
"instances": [{"ids": [...]}]}], "layout": "compact"|"spaced"} and prints one JSON
object per group (a line each): {"error": str|null, "firstMaskMs": float,
"instances": [{"accepted": bool, "refusedAt": int|null}], "maskMs": [float...]}.

Time to first mask = schema text -> grammar_from_json_schema -> LLMatcher ->
first fill_next_token_bitmask. Every mask is timed with perf_counter_ns around
fill_next_token_bitmask alone (the Python call overhead, ~0.3-1 us, included).
A stream is accepted when every token is consumed and the matcher then accepts
(EOS allowed). Run with the .venv-bench interpreter (engines.mjs creates it).
"""
import json
import sys
import time

import llguidance as llg
import llguidance.numpy as lln


def main():
    job = json.load(sys.stdin)
    tok = llg.LLTokenizer(job["tokenizer"], eos_token=job["eos"][0] if job["eos"] else None)
    n = tok.vocab_size
    sep = (", ", ": ") if job.get("layout") == "spaced" else (",", ":")
    bitmask = lln.allocate_token_bitmask(1, n)
    pc = time.perf_counter_ns
    for g in job["groups"]:
        schema = g["schema"]
        guide = {"whitespace_flexible": False, "item_separator": sep[0], "key_separator": sep[1]}
        s = dict(schema, **{"x-guidance": guide}) if isinstance(schema, dict) else {"allOf": [schema], "x-guidance": guide}
        out = {"error": None, "firstMaskMs": None, "instances": [], "maskMs": []}
        t0 = pc()
        try:
            grm = llg.LLMatcher.grammar_from_json_schema(s)
            m0 = llg.LLMatcher(tok, grm, log_level=0)
            if m0.is_error():
                raise RuntimeError(m0.get_error())
            lln.fill_next_token_bitmask(m0, bitmask)
            out["firstMaskMs"] = (pc() - t0) / 1e6
            if m0.is_error():
                raise RuntimeError(m0.get_error())
        except Exception as e:  # noqa: BLE001 - a compile failure is a result
            out["error"] = str(e)[:300]
            print(json.dumps(out), flush=True)
            continue
        for inst in g["instances"]:
            m = llg.LLMatcher(tok, grm, log_level=0)
            refused = None
            for k, t in enumerate(inst["ids"]):
                a = pc()
                lln.fill_next_token_bitmask(m, bitmask)
                out["maskMs"].append((pc() - a) / 1e6)
                allowed = (int(bitmask[0, t >> 5]) >> (t & 31)) & 1
                if not allowed or not m.consume_token(t) or m.is_error():
                    refused = k
                    break
            if refused is None:
                a = pc()
                lln.fill_next_token_bitmask(m, bitmask)
                out["maskMs"].append((pc() - a) / 1e6)
                if not m.is_accepting():
                    refused = len(inst["ids"])
            out["instances"].append({"accepted": refused is None, "refusedAt": refused})
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
