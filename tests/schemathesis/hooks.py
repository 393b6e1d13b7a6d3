"""schemathesis hooks of tests/schemathesis.rs (loaded through SCHEMATHESIS_HOOKS).

Each one narrows what schemathesis generates, never what it checks, and
only where the OpenAPI document cannot state the server's rule exactly.
"""

import itertools
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


EXPORT_OPERATIONS = {("POST", "/v1/verify"), ("POST", "/v1/games/import")}


# `filter_case`, not `filter_body`: every phase applies it, coverage too.
@schemathesis.hook
def filter_case(context, case):
    body = case.body
    if isinstance(body, (dict, list, str)) and not stated(body):
        return False
    operation = (case.operation.method.upper(), case.operation.path)
    if operation in EXPORT_OPERATIONS and (body is None or isinstance(body, (dict, list, int, float, bool))):
        # An export is text: a body the schema forbids for not being a
        # string cannot be sent as such (sent as its JSON text, it is a
        # string again, which verify reports on as it should). An absent
        # or empty body stays: it is refused.
        return False
    return True


# The seat and admin tokens of the games this run made, by game id. The
# stateful phase follows a new game's links to its operations, most of
# which answer its seats or its admin only: without their tokens, all it
# would see of them is 401.
TOKENS = {}
TURNS = itertools.count()


@schemathesis.hook
def after_call(context, case, response):
    operation = (case.operation.method.upper(), case.operation.path)
    if response.status_code not in (200, 201):
        return
    try:
        body = response.json()
    except ValueError:
        return
    if not isinstance(body, dict):
        return
    game = (case.path_parameters or {}).get("id")
    if operation == ("POST", "/v1/games") and "id" in body:
        seats = [seat["token"] for seat in body.get("seats", [])]
        TOKENS[body["id"]] = {"seats": seats, "admin": body.get("admin_token")}
    elif operation in (("POST", "/v1/games/{id}/join"), ("POST", "/v1/games/{id}/seats/{seat}/token")) and game in TOKENS:
        TOKENS[game]["seats"].append(body.get("token"))


@schemathesis.auth(refresh_interval=None)
class GameTokens:
    """The token an operation of a game this run made asks for: its admin's,
    or one of its seats' in turn (a spectator's, none, every third time
    where a token is optional)."""

    def get(self, case, context):
        game = TOKENS.get((case.path_parameters or {}).get("id"))
        if game is None:
            return None
        schemes = [name for requirement in case.operation.definition.raw.get("security", []) for name in requirement]
        turn = next(TURNS)
        if "admin_token" in schemes:
            return game["admin"]
        seats = [token for token in game["seats"] if token]
        if "seat_token" not in schemes or not seats:
            return None
        optional = {} in case.operation.definition.raw.get("security", [])
        if optional and turn % 3 == 0:
            return None
        return seats[turn % len(seats)]

    def set(self, case, data, context):
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}
