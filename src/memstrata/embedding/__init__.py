"""Embedders: the `Embedder` protocol, the packaged offline ONNX model, and OpenAI-compatible endpoints."""

from memstrata.embedding.base import Embedder, normalise
from memstrata.embedding.onnx import DEFAULT_MODEL_ID, OnnxEmbedder
from memstrata.embedding.openai import OpenAIEmbedder

__all__ = ["DEFAULT_MODEL_ID", "Embedder", "OnnxEmbedder", "OpenAIEmbedder", "normalise"]
