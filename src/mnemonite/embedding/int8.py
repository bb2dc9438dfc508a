"""An int8 copy of an ONNX sentence encoder whose vectors do not depend on a text's batch-mates.

onnxruntime's dynamic quantization (`quantize_dynamic`) quantizes the weights of every matrix
product to int8 per output channel, and each product's input at run time with one scale and zero
point for the whole tensor: the whole batch, padding included. A text's vector then changes with
the texts it is embedded beside (a cosine as low as 0.98 against the same text alone, `bench/embedding.py`), which is
fine for one query at a time and wrong for stored vectors.

`per_row` rewrites each of those run-time quantizations to one scale and zero point per row (per
word piece of each text): every row is quantized from its own minimum and maximum, the matrix
product runs in int8 with a zero point of 0, and the zero point's share is taken off afterwards
with the weights' column sums. A text's vector is then the same in any batch, and closer to the
model's own than with one scale per tensor (`bench/embedding.py`).
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from mnemonite.errors import EmbeddingError

FORMAT = "rowwise-int8-v1"  # part of the cached file's name: change it when the recipe changes
MIN_PROBE_COSINE = 0.98  # the copy is used only if its vectors of the probes are this close to the model's

PROBES = (
    "ok",
    "Where did Sam say he was moving next spring?",
    "I started learning the cello last month and practise every evening after work, mostly scales.",
    "[8 May 2023] Caroline: The support group was so powerful, I heard stories that made me cry and "
    "I left feeling hopeful about the future. I want to help other people the way they helped me.",
    "Reminder: the quarterly tax report is due on 15 April; send receipts to the accountant by Friday.",
)


def build(model_path: Path, target: Path, check: Callable[[Path], float]) -> None:
    """Write an int8 copy of ``model_path`` to ``target``: constants folded, weights quantized per
    channel, inputs per row. ``check(path)`` returns the copy's lowest cosine to the model on the
    probes; below `MIN_PROBE_COSINE` the copy is refused (`EmbeddingError`). The file appears at
    ``target`` whole or not at all.
    """
    import onnx
    import onnxruntime
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        folded, quantized, rewritten = (Path(work) / name for name in ("folded.onnx", "q.onnx", "rows.onnx"))
        # Weights stored as int8 plus a scale become plain matrices to quantize once folded.
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        quiet = _Quiet()  # the quantizer logs each tensor, and advises its own pre-processing, on the root logger
        logging.getLogger().addFilter(quiet)
        try:
            quantize_dynamic(str(folded), str(quantized), weight_type=QuantType.QInt8, per_channel=True)
        finally:
            logging.getLogger().removeFilter(quiet)
        model = onnx.load(str(quantized))
        per_row(model)
        onnx.save(model, str(rewritten))
        lowest = check(rewritten)
        if lowest < MIN_PROBE_COSINE:
            raise EmbeddingError(
                f"the int8 copy's vectors are too far from the model's on this machine (lowest cosine {lowest:.3f})"
            )
        os.replace(rewritten, target)


class _Quiet(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if "onnxruntime" not in record.pathname:  # another thread's record: not ours to drop
            return True
        if record.levelno < logging.WARNING:
            return False
        return "pre-processing before quantization" not in record.getMessage()


def per_row(model: Any) -> None:
    """Rewrite, in place, every ``DynamicQuantizeLinear`` of ``model`` to quantize per row (last axis).

    The graph must be what `quantize_dynamic` writes: each quantized input feeds only
    ``MatMulInteger`` nodes with constant weights, each followed by a ``Cast`` and the ``Mul`` by
    the scales. Anything else raises `EmbeddingError`, and the caller keeps the model itself.
    """
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    weights = {tensor.name: tensor for tensor in graph.initializer}
    users: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            users.setdefault(name, []).append(node)
    if not any(node.op_type == "DynamicQuantizeLinear" for node in graph.node):
        raise EmbeddingError("the quantized model has no dynamic quantization to rewrite")

    constants = [
        numpy_helper.from_array(np.array(0.0, np.float32), "rows_zero"),
        numpy_helper.from_array(np.array(255.0, np.float32), "rows_255"),
        numpy_helper.from_array(np.array(1e-12, np.float32), "rows_tiny"),
        numpy_helper.from_array(np.array(0, np.uint8), "rows_zero_u8"),
    ]
    nodes: list[Any] = []
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 17)
    if opset >= 18:  # ReduceMax/ReduceMin take their axes as an input from opset 18
        constants.append(numpy_helper.from_array(np.array([-1], np.int64), "rows_axes"))

    def reduce(op_type: str, x: str, out: str) -> Any:
        if opset >= 18:
            return helper.make_node(op_type, [x, "rows_axes"], [out], keepdims=1)
        return helper.make_node(op_type, [x], [out], axes=[-1], keepdims=1)

    for node in graph.node:
        if node.op_type != "DynamicQuantizeLinear":
            nodes.append(node)
            continue
        (x,), (quantized, scale, zero_point) = node.input, node.output
        at = f"{x}_rows_"
        nodes += [
            reduce("ReduceMax", x, at + "max0"),
            reduce("ReduceMin", x, at + "min0"),
            helper.make_node("Max", [at + "max0", "rows_zero"], [at + "max"]),
            helper.make_node("Min", [at + "min0", "rows_zero"], [at + "min"]),
            helper.make_node("Sub", [at + "max", at + "min"], [at + "range"]),
            helper.make_node("Div", [at + "range", "rows_255"], [at + "scale0"]),
            helper.make_node("Max", [at + "scale0", "rows_tiny"], [scale]),
            helper.make_node("Div", [at + "min", scale], [at + "low"]),
            helper.make_node("Neg", [at + "low"], [at + "zero0"]),
            helper.make_node("Round", [at + "zero0"], [at + "zero"]),
            helper.make_node("Div", [x, scale], [at + "scaled"]),
            helper.make_node("Round", [at + "scaled"], [at + "rounded"]),
            helper.make_node("Add", [at + "rounded", at + "zero"], [at + "shifted"]),
            helper.make_node("Clip", [at + "shifted", "rows_zero", "rows_255"], [at + "clipped"]),
            helper.make_node("Cast", [at + "clipped"], [quantized], to=TensorProto.UINT8),
        ]
        for product in users.get(zero_point, []):
            nodes += _corrected(product, quantized, at + "zero", weights, users, constants)
    graph.initializer.extend(constants)
    ordered = _topological(nodes, {t.name for t in graph.initializer} | {i.name for i in graph.input})
    del graph.node[:]
    graph.node.extend(ordered)


def _corrected(
    product: Any, quantized: str, zero: str, weights: dict[str, Any], users: dict[str, list[Any]], constants: list[Any]
) -> list[Any]:
    """Point ``product`` (a ``MatMulInteger`` of the row-quantized input) at a zero point of 0, and return the
    nodes that take each row's zero point times the weights' column sums off its result before the scaling."""
    from onnx import helper, numpy_helper

    if product.op_type != "MatMulInteger" or len(product.input) < 4 or product.input[0] != quantized:
        raise EmbeddingError(f"unexpected quantized graph: {quantized} feeds {product.op_type}")
    if product.input[1] not in weights or product.input[3] not in weights:
        raise EmbeddingError(f"unexpected quantized graph: {product.name} has no constant weights")

    def only(name: str, op_type: str) -> Any:
        found = users.get(name, [])
        if len(found) != 1 or found[0].op_type != op_type:
            raise EmbeddingError(f"unexpected quantized graph: {name} does not feed one {op_type}")
        return found[0]

    weight = numpy_helper.to_array(weights[product.input[1]]).astype(np.int64)
    weight_zero = numpy_helper.to_array(weights[product.input[3]]).astype(np.int64)
    sums = f"{product.output[0]}_rows_colsum"
    constants.append(numpy_helper.from_array((weight - weight_zero).sum(axis=0).astype(np.float32), sums))
    product.input[2] = "rows_zero_u8"
    cast = only(product.output[0], "Cast")
    scaling = only(cast.output[0], "Mul")
    corrected = f"{cast.output[0]}_rows"
    scaling.input[list(scaling.input).index(cast.output[0])] = corrected
    return [
        helper.make_node("Mul", [zero, sums], [corrected + "_offset"]),
        helper.make_node("Sub", [cast.output[0], corrected + "_offset"], [corrected]),
    ]


def _topological(nodes: list[Any], available: set[str]) -> list[Any]:
    """``nodes`` in an order where each one's inputs are made before it (ONNX requires it)."""
    ready, ordered, waiting = set(available) | {""}, [], list(nodes)
    while waiting:
        rest = []
        for node in waiting:
            if all(name in ready for name in node.input):
                ordered.append(node)
                ready.update(node.output)
            else:
                rest.append(node)
        if len(rest) == len(waiting):
            raise EmbeddingError("unexpected quantized graph: a cycle or a missing input")
        waiting = rest
    return ordered
