"""schemathesis hooks of tests/schemathesis.rs (loaded through SCHEMATHESIS_HOOKS).

Each one narrows what schemathesis generates, never what it checks, and
only where the OpenAPI document cannot state the server's rule exactly.
"""

import unicodedata

import schemathesis

# An export (`POST /v1/verify`, `POST /v1/games/import`) is JSON Lines text:
# sent as schemathesis sends any text body.
schemathesis.serializer.alias("application/x-ndjson", "text/plain")

# Characters the server refuses in stored text (player names, options'
# strings): ludo_game::text::is_visible. The document's `PlayerName`
# pattern states the Basic Multilingual Plane's exactly; these the pattern
# leaves to its description, as ECMA-262 patterns without the `u` flag
# cannot name characters beyond U+FFFF, and no pattern can track which code
# points Unicode has assigned so far.
INVISIBLE = {"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp"}


def unstated(text: str) -> bool:
    """Whether `text` holds a character whose fate the pattern does not state."""
    for c in text:
        category = unicodedata.category(c)
        # Python's Unicode may be older than the server's: a character it
        # calls unassigned may be assigned there, so either way it is left out.
        if category == "Cn" or (ord(c) > 0xFFFF and category in INVISIBLE):
            return True
    return False


def stated(value) -> bool:
    """Whether every string in `value` (keys included) is one the document judges."""
    if isinstance(value, str):
        return not unstated(value)
    if isinstance(value, dict):
        return all(stated(k) and stated(v) for k, v in value.items())
    if isinstance(value, list):
        return all(stated(v) for v in value)
    return True


@schemathesis.hook
def filter_body(context, body):
    return stated(body)
