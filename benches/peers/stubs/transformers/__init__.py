"""Stand-in for `transformers`, only so that `import xgrammar` works without it.

xgrammar imports `PreTrainedTokenizerBase` / `PreTrainedTokenizerFast` for
`TokenizerInfo.from_huggingface`; benches/peers/peers.py builds `TokenizerInfo`
directly from tokenizer.json's vocabulary instead.
"""


class PreTrainedTokenizerBase:
    pass


class PreTrainedTokenizerFast(PreTrainedTokenizerBase):
    pass


class LogitsProcessor:  # base class of xgrammar.contrib.hf.LogitsProcessor
    pass
