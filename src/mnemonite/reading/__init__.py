"""Reading what people say: a dependency parser's reading of statements, for the conflict pipeline and the
consolidator alike (`StatementReader`), with typed values that compare however they are written (`Value`).

The parser is an optional extra (``pip install 'mnemonite[parser]'``); without it statements are read by the
locale pack's rules, and `parser_available` says which reader runs.
"""

from mnemonite.reading.parser import MODEL, ParserUnavailableError, load_parser
from mnemonite.reading.parser import available as parser_available
from mnemonite.reading.statement import Reading, StatementReader
from mnemonite.reading.values import Value, value_of

__all__ = [
    "MODEL",
    "ParserUnavailableError",
    "Reading",
    "StatementReader",
    "Value",
    "load_parser",
    "parser_available",
    "value_of",
]
