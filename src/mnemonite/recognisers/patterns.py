"""The default recognisers written as expressions: keys and tokens by their published formats,
private keys, government identifiers, e-mail addresses."""

from __future__ import annotations

from typing import Final

from mnemonite.recognisers.base import SecretPattern, pattern

__all__ = ["DEFAULT_PATTERNS"]

# what may come between the name of a value and the value: "= ", ": '", " is ", "\": \""
_SAYS = r"[\"']?\s*(?:is|was|=|:|->|=>|is\s+now|will\s+be|'s|\u2019s)?\s*[:=]?\s*[\"'`\u201c\u2018]?"
_TOKEN = r"[A-Za-z0-9_\-./+=~]"

_KEYS: Final = (
    pattern("API key", r"(?<![\w-])sk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_\-]{20,}", "entropy", run=16),
    pattern("API key", r"(?<![\w-])sk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}", "entropy", run=16),
    pattern("API key", r"(?<!\w)(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})", "entropy", run=16),
    pattern("API key", r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])", "entropy", run=16),
    pattern("API key", r"(?<![\w-])AIza[0-9A-Za-z_\-]{35}(?![\w-])", "entropy", run=16),
    pattern("API key", r"(?<![\w.-])ya29\.[0-9A-Za-z_\-]{20,}", "entropy", run=16),
    pattern("API key", r"(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}", "entropy", run=16),
    pattern("API key", r"(?<![\w-])xapp-\d-[A-Za-z0-9-]{10,}", "entropy", run=16),
    pattern("API key", r"(?<!\w)(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", "entropy", run=16),
    pattern("API key", r"(?<!\w)(?:glpat-[A-Za-z0-9_\-]{20,}|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,}"
            r"|SG\.[\w-]{22}\.[\w-]{43}|pypi-AgE[A-Za-z0-9_\-]{50,}|dop_v1_[a-f0-9]{64}"
            r"|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"
            r"|sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}|key-[0-9a-z]{32}|lin_api_[A-Za-z0-9]{32,}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}"
            r"|pat[A-Za-z0-9]{14}\.[a-f0-9]{64}|secret_[A-Za-z0-9]{43}|AAAA[A-Za-z0-9_\-]{7}:[A-Za-z0-9_\-]{100,})(?![\w-])",
            "entropy", run=16),
    pattern("API key", r"(?<![\w.-])(?:gsk_[A-Za-z0-9]{40,}|r8_[A-Za-z0-9]{30,}|pplx-[A-Za-z0-9]{40,}"
            r"|GOCSPX-[A-Za-z0-9_\-]{20,}|dapi[a-f0-9]{32}|dckr_pat_[A-Za-z0-9_\-]{20,}|hvs\.[A-Za-z0-9_\-]{20,}"
            r"|gl(?:sa|c)_[A-Za-z0-9_]{32,}|ATATT[A-Za-z0-9_\-=]{40,}|ATBB[A-Za-z0-9]{28,}|EAA[A-Za-z0-9]{60,}"
            r"|sntry[su]_[A-Za-z0-9_=+/-]{40,}|AGE-SECRET-KEY-1[0-9A-Z]{58}|sk\.eyJ[A-Za-z0-9_\-.]{40,})(?![\w-])",
            "entropy", run=16),
    pattern("API key", r"(?<![\w:])\d{8,10}:[A-Za-z0-9_\-]{35}(?![\w-])", "entropy", digits=8, grouped=True, run=16),
    pattern("API key", r"(?i:accountkey|sharedaccesskey)=(?P<value>[A-Za-z0-9+/]{40,100}={0,2})", "entropy", run=16),
    pattern("API key", r"(?<![\w.-])eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", run=16),
    # an AWS secret access key, or any token announced as a key, a token or a secret
    pattern("API key", r"(?i:aws_secret_access_key|secret[_ ]access[_ ]key)" + _SAYS
            + r"(?P<value>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])", run=16),
    pattern("API key", r"(?<![A-Za-z])(?:api[_ -]?key|api[_ -]?token|access[_ -]?token|auth[_ -]?token"
            r"|refresh[_ -]?token"
            r"|client[_ -]?secret|secret[_ -]?key|licen[cs]e key|apikey|token|secret|bearer|key)s?"
            r"(?:\s+(?:for|to|of)\s+(?:the\s+|my\s+|our\s+)?[\w.-]{1,30})?" + _SAYS
            + r"(?P<value>[A-Za-z0-9]" + _TOKEN + r"{15,200})", "entropy", ignore_case=True, run=16),
    # a token in a URL's query
    pattern("API key", r"[?&](?:access_token|token|api_key|apikey|key|auth|sig|signature|client_secret|code)"
            r"=(?P<value>[A-Za-z0-9_\-.~%]{16,})", "entropy", ignore_case=True, run=16),
    # private keys: the whole PEM block (an unterminated one to the end of its base64 lines)
    pattern("private key", r"-----BEGIN [A-Z ]{0,20}PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]{0,20000}?-----END [A-Z ]{0,20}PRIVATE KEY(?: BLOCK)?-----"
            r"|(?:\s*(?:\\n)?[A-Za-z0-9+/=:,-]{1,100}){1,400})", hints="-----begin"),
)  # fmt: skip

_GOVERNMENT: Final = (
    pattern("government id", r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])", digits=9,
            grouped=True),
    pattern("government id", r"(?<![A-Za-z0-9])(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
            r" ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])", ignore_case=True, digits=6, grouped=True),
    pattern("government id", r"(?<![\w-])(?:\d{8}|[XYZ]\d{7})-?[A-Z](?![\w-])", "dni", digits=7, grouped=True),
    pattern("government id", r"(?<![\d.])\d{3}\.\d{3}\.\d{3}-\d{2}(?![\d-])", "cpf", digits=11, grouped=True),
    pattern("government id", r"(?<![\d ])[2-9]\d{3} \d{4} \d{4}(?![\d ]\d)", "verhoeff", digits=12, grouped=True),
    pattern("government id", r"\b(?:bsn|burgerservicenummer|sofi)\b\D{0,20}(?P<value>\d{9})\b", "mod11",
            ignore_case=True, digits=9, grouped=True, hints="bsn|burgerservicenummer|sofi"),
    pattern("government id", r"\b(?:aadhaar|aadhar)\b\D{0,20}(?P<value>[2-9]\d{3} ?\d{4} ?\d{4})\b", "verhoeff",
            ignore_case=True, digits=12, grouped=True, hints="aadha"),
    pattern("government id", r"\bcpf\b\D{0,20}(?P<value>\d{11})\b", "cpf", ignore_case=True, digits=11, grouped=True,
            hints="cpf"),
    pattern("government id", r"\b(?:sin|social insurance(?: number)?|nas)\b\D{0,20}(?P<value>\d{3}[ -]?\d{3}[ -]?\d{3})"
            r"\b", "luhn", ignore_case=True, digits=9, grouped=True, hints="sin|social|nas"),
    pattern("government id", r"\b(?:ssn|social(?: security| sec)?(?: number| no\.?| #)?|passport(?: number| no\.?| #)?"
            r"|national id(?: number)?|id number|tax id|tax file number|tfn|driver'?s licen[cs]e(?: number| no\.?)?"
            r"|licen[cs]e number|nino|ni number|national insurance(?: number)?|personnummer|steuer-?id)\b\D{0,16}?"
            r"(?P<value>[A-Z]{0,3}\d(?:[ -]?\d|[A-Z0-9]){4,17})(?![A-Za-z0-9])", ignore_case=True, digits=5,
            hints="ssn|social|passport|national|id number|tax|tfn|licen|nino|ni number|personnummer|steuer"),
)  # fmt: skip

# a password given with the user name, or before the word that names it
_PASSWORDS: Final = (
    pattern("password", r"(?i:\b(?:login|creds|credentials|user(?:name)? and password)\b)\s*(?:is|are|:|=)?\s*"
            r"[\w.@+-]{2,60} ?/ ?(?P<value>[^\s/]{4,64})(?=[\s,;!?)]|$)", "password", hints="login|cred|user"),
    pattern("password", r"(?i:\b(?:user(?:name)?|login|email)\s*[:=]\s*\S{2,60}\s*[,;/ ]\s*(?:pass(?:word)?|pw|pwd)"
            r"\s*[:=])\s*(?P<value>\S{4,64})", "password", hints="pass|pw"),
    pattern("password", r"(?i:\b(?:use|try|it'?s|it is|type|enter)\s+)[\"'`\u201c]?(?P<value>[^\s\"'`\u201d]{4,64})"
            r"[\"'`\u201d]?(?i:\s+(?:as|for)\s+(?:the\s+|my\s+|your\s+|our\s+)?(?:new\s+)?(?:password|pw|pwd|passphrase))",
            "password", hints="pass|pw"),
    pattern("password", r"(?<![\w\"'`])[\"'`\u201c]?(?P<value>[^\s\"'`\u201d]{4,64})[\"'`\u201d]?(?i:\s+(?:is|was)\s+"
            r"(?:my|the|our|his|her|their|your)\s+(?:[\w-]+\s+){0,2}(?:password|pw|pwd|passphrase|passcode))\b",
            "password", hints="pass|pw"),
    pattern("password", r"(?i:\b(?:log ?in|sign ?in|logon|unlock it|get in)\s+with\s+)[\"'`\u201c]?"
            r"(?P<value>[^\s\"'`\u201d]{5,63}[^\s\"'`\u201d.,;:])", "strong password", hints="log|sign|unlock|get in"),
    pattern("password", r"(?i:\b(?:pass ?phrase|recovery phrase|seed phrase|secret phrase|mnemonic)\b[\"']?\s*"
            r"(?:is|was|:|=)?\s*[:=]?\s*)[\"'`\u201c]?(?P<value>[A-Za-z]+(?: (?!(?i:and|or|but|so|because|which|that"
            r"|i|we)\b)[A-Za-z]+){2,23})", "passphrase",
            hints="phrase|mnemonic"),
)  # fmt: skip

# a PIN given before the word that names it: "0519 is my pin"
_PINS: Final = (
    pattern("PIN", r"(?<![\w.,-])(?P<value>\d{4,8})(?i:\s+(?:is|was)\s+(?:my|the|our|his|her|their|your)\s+"
            r"(?:\w+\s)?(?:pin|passcode|pin code|door code|gate code|alarm code|code))\b", hints="pin|code", digits=4,
            grouped=True),
)  # fmt: skip

_PERSONAL: Final = (
    pattern("email address", r"(?<![\w.+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*"
            r"\.[A-Za-z]{2,24}(?![\w-])", level="internal", hints="@"),
)  # fmt: skip

DEFAULT_PATTERNS: Final[tuple[SecretPattern, ...]] = (*_KEYS, *_GOVERNMENT, *_PASSWORDS, *_PINS, *_PERSONAL)
