"""Stand-in for `torch`, only so that `import xgrammar` works without PyTorch.

xgrammar 0.2.x imports torch at module level for type annotations and for
`allocate_token_bitmask`; benches/peers/peers.py never calls those paths: it passes
numpy int32 arrays (DLPack) to `GrammarMatcher.fill_next_token_bitmask`.
Anything that really needs torch fails loudly here.
"""
int32 = "int32"
bool = "bool"
float32 = "float32"


class Tensor:  # annotations only
    def __init__(self, *a, **k):
        raise RuntimeError("benches/peers/stubs/torch: PyTorch is not installed")


class device:  # annotations only
    def __init__(self, *a, **k):
        raise RuntimeError("benches/peers/stubs/torch: PyTorch is not installed")


def tensor(value, dtype=None):
    """xgrammar builds a module-level constant `_FULL_MASK = torch.tensor(-1, ...)`."""
    return value


def __getattr__(name):
    if name[:1].isupper():  # LongTensor, FloatTensor, ...: used in annotations only
        return Tensor
    raise AttributeError(f"benches/peers/stubs/torch: torch.{name} is not available (PyTorch is not installed)")
