"""Export a sentence-transformers model folder (BERT-style: all-MiniLM-L6-v2) to ONNX, locally.

The transformer is traced once with torch (``torch.onnx.export``) from the weights in the folder, no
hub involved, and written next to a key of what it was made from: the weights' SHA-256 and this
module's format version. :func:`exported_model` runs the export in a child process, so the daemon
that then runs the model on ONNX Runtime never imports torch (about 400 MB of its memory).

``quantize="int8"`` (``embeddings.quantize``) makes a second file from the float export: its weights
quantised to 8 bits by ONNX Runtime's dynamic quantisation (signed, one scale per output channel),
activations quantised as each call runs. Its vectors are close to the float model's but not the same,
so rows embedded by it are recorded under another model name (``EmbeddingsConfig.recorded_model``).

    python -m memory_cortex.models.onnx_export export MODEL_FOLDER OUT.onnx
    python -m memory_cortex.models.onnx_export quantize FLOAT.onnx OUT.onnx
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ..config import Quantization

# Bump when the exported graph changes (inputs, outputs, opset): a cached file of another format is
# made again.
FORMAT = 1
OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
EXPORT_TIMEOUT_S = 600


class ExportFailed(RuntimeError):
    """The model could not be exported; the message says why (the child's last lines)."""


def exported_model(model_folder: Path, cache_dir: Path, name: str, quantize: Quantization = "none") -> Path:
    """The ONNX file of ``model_folder`` in ``cache_dir`` (``<name>-<key>.onnx``, or
    ``<name>-int8-<key>.onnx`` quantised): the cached one when its key matches, else made now in a
    child process (a few seconds for MiniLM) and written atomically. The int8 file is made from the
    float one, which is made first when missing and kept. The weights are hashed once a call.

    Raises:
        ExportFailed: the folder has no weights, the cache cannot be written, or the export failed.
    """
    safe_name = "".join(char if char.isalnum() or char in "-_." else "_" for char in name) or "model"
    key = model_key(model_folder)
    float_model = cache_dir / f"{safe_name}-{key}.onnx"
    if not float_model.is_file():
        _made_by_child(float_model, ["export", str(model_folder)], f"exporting {model_folder} to ONNX")
    if quantize == "none":
        return float_model
    target = cache_dir / f"{safe_name}-{quantize}-{quantized_key(key, quantize)}.onnx"
    if not target.is_file():
        _made_by_child(target, ["quantize", str(float_model)], f"quantising {float_model.name} to {quantize}")
    return target


def _made_by_child(target: Path, arguments: list[str], what: str) -> None:
    """Run this module as a child with ``arguments`` and its output file, then move that file to
    ``target`` (atomically; a partial file is never left). ``what`` names the work in an error."""
    cache_dir = target.parent
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(prefix=f".{target.name}.", dir=cache_dir)
    except OSError as exc:
        raise ExportFailed(
            f"cannot write the model's ONNX export into {cache_dir} ({exc.strerror or exc}):"
            " set embeddings.cache_dir to a folder this user can write"
        ) from exc
    os.close(fd)
    try:
        child = subprocess.run(
            [sys.executable, "-m", __name__, *arguments, partial],
            capture_output=True,
            text=True,
            timeout=EXPORT_TIMEOUT_S,
            check=False,
        )
        if child.returncode != 0:
            last = " / ".join((child.stderr or child.stdout).strip().splitlines()[-3:])
            raise ExportFailed(f"{what} failed: {last}")
        os.replace(partial, target)
    finally:
        Path(partial).unlink(missing_ok=True)


def model_key(model_folder: Path) -> str:
    """16 hex digits naming the weights of ``model_folder`` and this export's format."""
    weights = next((model_folder / name for name in WEIGHT_FILES if (model_folder / name).is_file()), None)
    if weights is None:
        raise ExportFailed(f"no model weights ({' or '.join(WEIGHT_FILES)}) in {model_folder}")
    digest = hashlib.sha256(f"format {FORMAT} opset {OPSET}\n".encode())
    with weights.open("rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def quantized_key(float_key: str, quantize: Quantization) -> str:
    """16 hex digits naming a quantised copy: the float export's key, the quantisation and the
    ONNX Runtime that makes it (another version may quantise otherwise)."""
    import onnxruntime

    made_of = f"{float_key}\n{quantize} per-channel, onnxruntime {onnxruntime.__version__}\n"
    return hashlib.sha256(made_of.encode()).hexdigest()[:16]


def export(model_folder: Path, out: Path) -> None:
    """Trace the transformer of ``model_folder`` to ``out``: inputs ``input_ids``,
    ``attention_mask``, ``token_type_ids`` (int64, batch × tokens), output ``last_hidden_state``.
    Pooling and normalisation stay outside the graph (the embedder does them)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_folder), local_files_only=True)
    model = AutoModel.from_pretrained(str(model_folder), local_files_only=True).eval()

    class _HiddenStates(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(
            self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
        ) -> torch.Tensor:
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    sample = tokenizer(["an example sentence", "two"], padding=True, return_tensors="pt")
    axes = {name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "last_hidden_state")}
    with torch.no_grad():
        torch.onnx.export(
            _HiddenStates(),
            tuple(sample[name] for name in INPUTS),
            str(out),
            input_names=list(INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )


def quantize_int8(float_model: Path, out: Path) -> None:
    """``float_model``'s weights quantised to signed 8 bits, one scale per output channel, into
    ``out`` (ONNX Runtime's dynamic quantisation: activations are quantised as each call runs)."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.getLogger().setLevel(logging.ERROR)  # its advice to pre-process is for image models
    quantize_dynamic(float_model, out, weight_type=QuantType.QInt8, per_channel=True)


def _main(argv: list[str]) -> None:
    """``export MODEL_FOLDER OUT`` or ``quantize FLOAT_ONNX OUT``."""
    if len(argv) != 3 or argv[0] not in ("export", "quantize"):
        raise SystemExit("usage: python -m memory_cortex.models.onnx_export export|quantize SOURCE OUT.onnx")
    verb, source, out = argv[0], Path(argv[1]), Path(argv[2])
    if verb == "export":
        export(source, out)
    else:
        quantize_int8(source, out)


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import warnings

    warnings.simplefilter("ignore")  # the tracer's notes about Python control flow are not errors
    _main(sys.argv[1:])
