"""Embedders: the `Embedder` protocol, the packaged offline ONNX model, and OpenAI-compatible endpoints."""

from mnemonite.embedding.base import Embedder, normalise
from mnemonite.embedding.onnx import DEFAULT_MODEL_ID, OnnxEmbedder
from mnemonite.embedding.openai import OpenAIEmbedder

__all__ = ["DEFAULT_MODEL_ID", "Embedder", "OnnxEmbedder", "OpenAIEmbedder", "normalise"]
