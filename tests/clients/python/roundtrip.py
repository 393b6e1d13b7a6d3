#!/usr/bin/env python3
"""Round trip of every game kind through a Python client generated from the
ludotheque OpenAPI document.

    roundtrip.py --openapi PATH_OR_URL --base http://127.0.0.1:PORT --out DIR

1. Generates a client package (`ludo_client`) from the document into DIR with
   openapi-python-client (the version pinned in requirements.txt beside this
   file; run it with the interpreter the generator is installed in), and
   imports it.
2. Against the running server at --base, for each kind, through the
   GENERATED client's typed API:
   - GET /v1/kinds: the kind's `default_options` must parse into that kind's
     own options class (`cardinal.Options` -> CardinalOptions, ...) and
     serialize back to exactly what the server sent;
   - POST /v1/games with options built from the generated classes of a
     request's options (`cardinal.OptionsRequest`, every option optional);
   - GET /v1/games/{id}: `options` must be an instance of the kind's options
     class and serialize back to exactly the server's raw JSON (fetched again
     with urllib): the Kardinal board and Battle 13's target_crowns survive;
   - GET /v1/games/{id}/legal-moves for the seat to move: every move parses
     into a class of that kind's moves and serializes back unchanged;
   - POST /v1/games/{id}/moves with the first legal move (typed), then
     GET /v1/games/{id}/events: the recorded move parses back to the same move.
   Every typed answer is also checked to serialize back to the raw body the
   server sent ("round-trips"), so a union the client resolves to the wrong
   class, or a field it drops, is caught anywhere in the answer.
3. The transparency log, through the generated client: GET /v1/log, its
   checkpoint (text) and /.well-known/ludotheque-log-key before any game
   ended (no checkpoint: 404) and after two games ended by resignation
   (POST /v1/games/{id}/resign, whose answer carries the receipt); GET
   /v1/games/{id}/receipt (409 game_not_over while the game is played);
   GET /v1/log/consistency (400 for sizes the log does not have). The
   receipts' RFC 6962 inclusion proofs and the consistency proof are checked
   against the checkpoints' roots with hashlib (the gRPC-Web client also
   checks the checkpoints' Ed25519 signatures).

Prints one line per check ("ok" or "FAIL" with what differs) and exits 0 when
every check passes, 1 otherwise. Needs no network but the server's address.

The script is written against the document's names, not its layout: endpoints
are found by method and path, options classes by the schema names
`<kind>.Options`, a kind's move classes by their `<Kind>` prefix (every schema
of a kind is named `<kind>.…`), and request bodies that are unions (e.g. one
create request per kind) are resolved by the types their fields accept.
"""

from __future__ import annotations

import argparse
import base64
import enum
import hashlib
import importlib
import json
import pkgutil
import subprocess
import sys
import types
import typing
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable

PACKAGE = "ludo_client"

# (kind, players, the options to create the game with)
KINDS: list[tuple[str, list[str], dict[str, Any]]] = [
    ("cardinal", ["Ann", "Bob"], {"first_seat": 1}),
    ("kardinal", ["Ann", "Bob", "Cid"], {"variant": "dynamic", "first_seat": 2}),
    ("battle13", ["Ann", "Bob", "Cid", "Dee"], {"target_crowns": 50, "first_seat": 3}),
]

# How many moves each game plays through the client (the second one of Battle 13
# is a seat's first chance to pass: `{"type": "pass"}` is also a Kardinal move).
STEPS = 3

# The operations used, by method and path (their operationIds are read from the document).
OPERATIONS = {
    "list_kinds": ("get", "/v1/kinds"),
    "create_game": ("post", "/v1/games"),
    "get_game": ("get", "/v1/games/{id}"),
    "legal_moves": ("get", "/v1/games/{id}/legal-moves"),
    "submit_move": ("post", "/v1/games/{id}/moves"),
    "list_events": ("get", "/v1/games/{id}/events"),
    "resign": ("post", "/v1/games/{id}/resign"),
    "game_receipt": ("get", "/v1/games/{id}/receipt"),
    "log_info": ("get", "/v1/log"),
    "log_checkpoint": ("get", "/v1/log/checkpoint"),
    "log_key": ("get", "/.well-known/ludotheque-log-key"),
    "log_consistency": ("get", "/v1/log/consistency"),
}


# ---------------------------------------------------------------------------
# Reporting


class Report:
    def __init__(self) -> None:
        self.passed = 0
        self.failed: list[str] = []

    def check(self, scope: str, what: str, problems: list[str] | str | None) -> bool:
        """Records one check: passes when `problems` is empty."""
        if isinstance(problems, str):
            problems = [problems]
        if not problems:
            self.passed += 1
            print(f"ok   {scope}: {what}", flush=True)
            return True
        message = f"FAIL {scope}: {what}\n" + "\n".join(f"       - {p}" for p in problems)
        self.failed.append(message)
        print(message, flush=True)
        return False

    def finish(self) -> int:
        print()
        if self.failed:
            print(f"{len(self.failed)} check(s) failed:")
            for message in self.failed:
                print("  " + message.splitlines()[0])
        print(f"roundtrip: {self.passed} passed, {len(self.failed)} failed")
        return 1 if self.failed else 0


class Fatal(Exception):
    """A failure after which the checks of one kind (or all) cannot go on."""


def short(value: Any, limit: int = 100) -> str:
    if isinstance(value, dict) and len(json.dumps(value)) > limit:
        keys = ", ".join(list(value)[:8]) + (", …" if len(value) > 8 else "")
        return f"an object {{{keys}}}"
    if isinstance(value, list) and len(json.dumps(value)) > limit:
        return f"an array of {len(value)}"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def diff(expected: Any, got: Any, path: str = "$", out: list[str] | None = None, limit: int = 12) -> list[str]:
    """Where `got` (the client's serialization) differs from `expected` (the server's JSON)."""
    if out is None:
        out = []
    if len(out) >= limit:
        return out
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in list(expected) + [k for k in got if k not in expected]:
            at = f"{path}.{key}"
            if key not in got:
                out.append(f"{at}: dropped by the client (the server sent {short(expected[key])})")
            elif key not in expected:
                out.append(f"{at}: added by the client ({short(got[key])}; the server sent no such key)")
            else:
                diff(expected[key], got[key], at, out, limit)
            if len(out) >= limit:
                out.append("… (more differences not shown)")
                break
    elif isinstance(expected, list) and isinstance(got, list):
        if len(expected) != len(got):
            out.append(f"{path}: the server sent {len(expected)} items, the client serialized {len(got)}")
        for i, (e, g) in enumerate(zip(expected, got, strict=False)):
            diff(e, g, f"{path}[{i}]", out, limit)
            if len(out) >= limit:
                break
    elif type(expected) is not type(got) and not (_number(expected) and _number(got)) or expected != got:
        out.append(f"{path}: the server sent {short(expected)}, the client serialized {short(got)}")
    return out


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def drop_nulls(value: Any) -> Any:
    """`{"a": null}` and `{}` mean the same for the server's optional fields."""
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value


# ---------------------------------------------------------------------------
# Generation and import


def load_document(source: str, out: Path) -> tuple[dict[str, Any], Path]:
    if source.startswith(("http://", "https://")):
        with urllib.request.urlopen(source, timeout=30) as response:
            text = response.read().decode("utf-8")
        path = out / "openapi.json"
        path.write_text(text, encoding="utf-8")
    else:
        path = Path(source).resolve()
        text = path.read_text(encoding="utf-8")
    return json.loads(text), path


def generate(document: Path, out: Path) -> tuple[str, str]:
    """Generates the client package into out/ludo_client; returns (generator version, its output)."""
    try:
        from importlib.metadata import version

        import openapi_python_client  # noqa: F401

        generator_version = version("openapi-python-client")
    except ImportError as error:
        raise Fatal(f"openapi-python-client is not installed for {sys.executable} ({error}); run .ci/install-client-tools") from error
    config = out / "generator-config.json"
    config.write_text(
        json.dumps({"project_name_override": "ludo-client", "package_name_override": PACKAGE, "post_hooks": []}),
        encoding="utf-8",
    )
    command = [
        sys.executable,
        "-m",
        "openapi_python_client",
        "generate",
        "--path",
        str(document),
        "--output-path",
        str(out / PACKAGE),
        "--meta",
        "none",
        "--config",
        str(config),
        "--overwrite",
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300)
    output = (run.stdout + run.stderr).strip()
    if run.returncode != 0 or not (out / PACKAGE / "__init__.py").exists():
        raise Fatal(f"the generator failed (exit {run.returncode}):\n{output}")
    return generator_version, output


class Generated:
    """The imported generated package and what the checks need from it."""

    def __init__(self, out: Path, document: dict[str, Any]) -> None:
        from openapi_python_client.strings import ClassName, PythonIdentifier

        self._class_name = lambda name: str(ClassName(name, "field_"))
        self._identifier = lambda name: str(PythonIdentifier(name, "field_"))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]
        sys.path.insert(0, str(out))
        importlib.invalidate_caches()
        self.package = importlib.import_module(PACKAGE)
        self.models = importlib.import_module(PACKAGE + ".models")
        self.types = importlib.import_module(PACKAGE + ".types")
        self.errors = importlib.import_module(PACKAGE + ".errors")
        self.namespace: dict[str, Any] = {}
        self.namespace.update(vars(self.types))
        self.namespace.update({k: v for k, v in vars(self.models).items() if isinstance(v, type)})
        api = importlib.import_module(PACKAGE + ".api")
        modules = {}
        for info in pkgutil.walk_packages(api.__path__, PACKAGE + ".api."):
            modules.setdefault(info.name.rsplit(".", 1)[-1], info.name)
        self.operations: dict[str, types.ModuleType] = {}
        self.missing: list[str] = []
        for key, (method, path) in OPERATIONS.items():
            operation = document.get("paths", {}).get(path, {}).get(method)
            if operation is None:
                self.missing.append(f"{method.upper()} {path} is not in the document")
                continue
            operation_id = operation.get("operationId")
            if not operation_id:
                self.missing.append(f"{method.upper()} {path} has no operationId")
                continue
            module = modules.get(self._identifier(operation_id))
            if module is None:
                self.missing.append(
                    f"{method.upper()} {path} (operationId {operation_id}) was not generated (see the generator's warnings)"
                )
                continue
            self.operations[key] = importlib.import_module(module)

    def model(self, schema_name: str) -> type:
        name = self._class_name(schema_name)
        cls = getattr(self.models, name, None)
        if not isinstance(cls, type):
            raise Fatal(f"the generated package has no class {name} for schema {schema_name}")
        return cls

    def class_prefix(self, kind: str) -> str:
        """The prefix of the classes generated from the kind's schemas (`kardinal.Move` -> `Kardinal…`)."""
        return self._class_name(f"{kind}.X")[:-1]

    def field_name(self, json_name: str) -> str:
        return self._identifier(json_name)

    def hints(self, target: Any) -> dict[str, Any]:
        namespace = dict(self.namespace)
        module = sys.modules.get(getattr(target, "__module__", ""), None)
        if module is not None:
            namespace.update(vars(module))
        return typing.get_type_hints(target, globalns=namespace, localns=namespace)

    def client(self, base: str, token: str | None = None) -> Any:
        import httpx

        timeout = httpx.Timeout(30.0)
        if token is None:
            return self.package.Client(base_url=base, timeout=timeout, raise_on_unexpected_status=True)
        return self.package.AuthenticatedClient(base_url=base, token=token, timeout=timeout, raise_on_unexpected_status=True)

    def is_unset(self, value: Any) -> bool:
        return isinstance(value, self.types.Unset)


# ---------------------------------------------------------------------------
# Typed construction helpers


def union_members(hint: Any) -> list[Any]:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return [m for a in typing.get_args(hint) for m in union_members(a)]
    return [hint]


def accepts(hint: Any, value: Any) -> bool:
    """Whether a field annotated `hint` accepts `value` as it is."""
    for member in union_members(hint):
        if member is typing.Any:
            return True
        origin = typing.get_origin(member)
        if origin is typing.Literal:
            if any(value == v and type(value) is type(v) for v in typing.get_args(member)):
                return True
        elif origin is not None:
            if isinstance(origin, type) and isinstance(value, origin):
                return True
        elif member is type(None):
            if value is None:
                return True
        elif isinstance(member, type) and isinstance(value, member):
            if not (isinstance(value, bool) and member is int):
                return True
    return False


def coerce(hint: Any, value: Any) -> Any:
    """`value` as a field annotated `hint` takes it: an enum member for an enum."""
    if accepts(hint, value):
        return value
    for member in union_members(hint):
        if isinstance(member, type) and issubclass(member, enum.Enum):
            try:
                return member(value)
            except ValueError:
                continue
    raise TypeError(f"{short(value)} fits no type of {hint}")


def build(generated: Generated, cls: type, data: dict[str, Any], typed: dict[str, Any] | None = None) -> Any:
    """An instance of a generated class through its constructor: `data` holds
    plain JSON values (an enum field gets its member), `typed` generated objects."""
    hints = generated.hints(cls)
    kwargs = {}
    for key, value in data.items():
        name = generated.field_name(key)
        if name not in hints:
            raise TypeError(f"{cls.__name__} has no field {name} (for {key!r})")
        kwargs[name] = coerce(hints[name], value)
    for key, value in (typed or {}).items():
        kwargs[generated.field_name(key)] = value
    return cls(**kwargs)


def body_class(generated: Generated, function: Callable[..., Any], fits: Callable[[type, dict[str, Any]], bool]) -> type:
    """The class of `function`'s `body`; for a union, the member that `fits`."""
    hint = generated.hints(function)["body"]
    candidates = [m for m in union_members(hint) if isinstance(m, type) and hasattr(m, "from_dict")]
    matching = [c for c in candidates if fits(c, generated.hints(c))]
    if not matching:
        raise Fatal(f"no class of the request body ({', '.join(c.__name__ for c in candidates)}) fits")
    return matching[0]


def kind_of(value: Any) -> Any:
    return getattr(value, "value", value)


def class_list(value: Any) -> str:
    return type(value).__name__


# ---------------------------------------------------------------------------
# HTTP


def raw_get(base: str, path: str, token: str | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(base + path, headers={"accept": "application/json"})
    if token is not None:
        request.add_header("authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        body = error.read()
        try:
            return error.code, json.loads(body)
        except ValueError:
            return error.code, body.decode("utf-8", "replace")


def raw_post(base: str, path: str, body: Any) -> tuple[int, Any]:
    request = urllib.request.Request(
        base + path, data=json.dumps(body).encode("utf-8"), headers={"content-type": "application/json", "accept": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")


def call(generated: Generated, what: str, function: Callable[..., Any], **kwargs: Any) -> tuple[Any, Any, int]:
    """Calls a generated `sync_detailed`; returns (parsed, raw JSON body, status)."""
    try:
        response = function(**kwargs)
    except generated.errors.UnexpectedStatus as error:
        raise Fatal(
            f"{what}: the server answered {error.status_code}, a status the document does not list for it: {error.content[:500]!r}"
        ) from error
    except Exception as error:  # noqa: BLE001 - a generated parser's exception is a finding
        raise Fatal(f"{what}: the generated client raised {type(error).__name__}: {error}") from error
    status = int(response.status_code)
    try:
        raw = json.loads(response.content) if response.content else None
    except ValueError:
        raw = response.content.decode("utf-8", "replace")
    return response.parsed, raw, status


def success_classes(generated: Generated, function: Callable[..., Any]) -> list[type]:
    hint = generated.hints(function)["return"]
    return [m for m in union_members(hint) if isinstance(m, type) and hasattr(m, "from_dict") and m.__name__ != "Problem"]


def expect(generated: Generated, what: str, parsed: Any, raw: Any, status: int, want_status: int, function: Callable[..., Any]) -> None:
    """The answer has the success status and parsed into one of the success classes of `function`."""
    if status != want_status:
        raise Fatal(f"{what}: HTTP {status} (expected {want_status}): {short(raw, 600)}")
    classes = success_classes(generated, function)
    if parsed is None or type(parsed) not in classes:
        names = " or ".join(c.__name__ for c in classes) or "a model"
        raise Fatal(f"{what}: the client parsed the answer as {type(parsed).__name__}, not {names}: {short(raw, 300)}")


def envelope_check(
    report: Report, generated: Generated, scope: str, kind: str, what: str, parsed: Any, function: Callable[..., Any]
) -> None:
    """Where an answer is a union of per-kind envelopes, it parses as this kind's one."""
    if len(success_classes(generated, function)) > 1:
        prefix = generated.class_prefix(kind)
        name = type(parsed).__name__
        report.check(
            scope, f"{what} parses as the {kind} envelope", None if name.startswith(prefix) else f"parsed as {name}, not a {prefix}… class"
        )


# ---------------------------------------------------------------------------
# The checks


def roundtrip_check(report: Report, scope: str, what: str, parsed: Any, raw: Any) -> bool:
    try:
        serialized = parsed.to_dict()
    except Exception as error:  # noqa: BLE001
        return report.check(scope, what, f"to_dict() raised {type(error).__name__}: {error}")
    return report.check(scope, what, diff(raw, serialized))


def options_check(report: Report, scope: str, where: str, generated: Generated, kind: str, options: Any, raw_options: Any) -> None:
    cls = generated.model(f"{kind}.Options")
    report.check(
        scope,
        f"{where}: options parse as {cls.__name__}",
        None if isinstance(options, cls) else f"the client parsed {short(raw_options)} as {class_list(options)}, not {cls.__name__}",
    )
    serialized = options.to_dict() if hasattr(options, "to_dict") else options
    report.check(scope, f"{where}: options serialize back to the server's JSON", diff(raw_options, serialized))


def check_kind(
    report: Report, generated: Generated, base: str, kind: str, players: list[str], requested: dict[str, Any], kinds: tuple[Any, Any]
) -> None:
    scope = kind
    ops = generated.operations

    # GET /v1/kinds
    parsed_kinds, raw_kinds = kinds
    if parsed_kinds is not None:
        info = next((k for k in parsed_kinds.kinds if kind_of(k.kind) == kind), None)
        raw_info = next((k for k in raw_kinds["kinds"] if k.get("kind") == kind), None)
        if info is None or raw_info is None:
            report.check(scope, "GET /v1/kinds lists the kind", f"not listed (server: {raw_info is not None}, client: {info is not None})")
        else:
            options_check(
                report, scope, "GET /v1/kinds default_options", generated, kind, info.default_options, raw_info["default_options"]
            )
            roundtrip_check(report, scope, "GET /v1/kinds: the kind's entry round-trips", info, raw_info)

    # POST /v1/games with typed options: a request's own class, in which every
    # option may be left out (answers' options hold every one).
    options_cls = generated.model(f"{kind}.OptionsRequest")
    options = build(generated, options_cls, requested)
    report.check(scope, f"typed {options_cls.__name__}{short(requested)} serializes as given", diff(requested, options.to_dict()))

    def create_fits(cls: type, hints: dict[str, Any]) -> bool:
        kind_name, options_name = generated.field_name("kind"), generated.field_name("options")
        if kind_name in hints:
            try:
                coerce(hints[kind_name], kind)
            except TypeError:
                return False
        return options_name not in hints or accepts(hints[options_name], options)

    create = ops["create_game"]
    body_cls = body_class(generated, create.sync_detailed, create_fits)
    body = build(generated, body_cls, {"kind": kind, "players": players}, {"options": options})
    sent = body.to_dict()
    report.check(scope, f"POST /v1/games body ({body_cls.__name__}) carries the options", diff(requested, sent.get("options")))
    created, raw_created, status = call(generated, "POST /v1/games", create.sync_detailed, client=generated.client(base), body=body)
    expect(generated, "POST /v1/games", created, raw_created, status, 201, create.sync)
    envelope_check(report, generated, scope, kind, "POST /v1/games: the created game", created, create.sync)
    roundtrip_check(report, scope, "POST /v1/games: the created game round-trips", created, raw_created)
    created_options = getattr(created, generated.field_name("options"), None)
    if created_options is not None and not generated.is_unset(created_options):
        options_check(report, scope, "POST /v1/games answer", generated, kind, created_options, raw_created.get("options"))
    game_id = raw_created["id"]
    tokens = {s["seat"]: s["token"] for s in raw_created["seats"]}
    seat = (raw_created["status"].get("to_move") or [0])[0]
    token = tokens[seat]
    seat_client = generated.client(base, token)

    # GET /v1/games/{id}, typed and raw
    get = ops["get_game"]
    state, _, status = call(generated, "GET /v1/games/{id}", get.sync_detailed, id=game_id, client=seat_client)
    status_raw, raw_state = raw_get(base, f"/v1/games/{game_id}", token)
    if status_raw != 200:
        raise Fatal(f"GET /v1/games/{{id}} (urllib): HTTP {status_raw}: {short(raw_state, 600)}")
    expect(generated, "GET /v1/games/{id}", state, raw_state, status, 200, get.sync)
    envelope_check(report, generated, scope, kind, "GET /v1/games/{id}: the game state", state, get.sync)
    raw_options = raw_state["options"]
    requested_problems = [
        f"option {k}: asked for {short(v)}, the server recorded {short(raw_options.get(k))}"
        for k, v in requested.items()
        if raw_options.get(k) != v
    ]
    report.check(scope, "the server recorded the options asked for", requested_problems)
    state_options = getattr(state, generated.field_name("options"))
    options_check(report, scope, "GET /v1/games/{id}", generated, kind, state_options, raw_options)
    serialized_options = state_options.to_dict() if hasattr(state_options, "to_dict") else state_options
    # The fields the issue names, spelled out.
    survivors = {"kardinal": ("board", "the Kardinal board"), "battle13": ("target_crowns", "target_crowns")}
    if kind in survivors:
        key, name = survivors[kind]
        sent = raw_options.get(key)
        if not isinstance(serialized_options, dict):
            problem = f"the client's options serialize to {short(serialized_options)}, not an object"
        elif key not in serialized_options:
            problem = f"the client's options have no {key} (the server sent {short(sent)})"
        elif serialized_options[key] != sent:
            problem = f"the client's options have {key} {short(serialized_options[key])} (the server sent {short(sent)})"
        elif sent is None:
            problem = f"the server sent no {key}"
        else:
            problem = None
        report.check(scope, f"GET /v1/games/{{id}}: {name} survives the client", problem)
    roundtrip_check(report, scope, "GET /v1/games/{id}: the game state round-trips", state, raw_state)

    # Then a few steps: the legal moves of the seat to move, the first one submitted.
    to_move = raw_state["status"].get("to_move") or []
    for step in range(1, STEPS + 1):
        if not to_move:
            break
        seat = to_move[0]
        to_move = play_step(report, generated, base, kind, f"{scope} step {step}", game_id, tokens[seat])


def play_step(report: Report, generated: Generated, base: str, kind: str, scope: str, game_id: str, token: str) -> list[int]:
    """Lists the seat's legal moves and submits the first; returns the seats to move next."""
    ops = generated.operations
    prefix = generated.class_prefix(kind)
    seat_client = generated.client(base, token)

    # GET /v1/games/{id}/legal-moves
    legal = ops["legal_moves"]
    moves, raw_moves, status = call(generated, "GET /v1/games/{id}/legal-moves", legal.sync_detailed, id=game_id, client=seat_client)
    expect(generated, "GET /v1/games/{id}/legal-moves", moves, raw_moves, status, 200, legal.sync)
    envelope_check(report, generated, scope, kind, "GET /v1/games/{id}/legal-moves", moves, legal.sync)
    move_list = moves.moves
    if not move_list:
        raise Fatal(f"seat {raw_moves.get('seat')} has no legal move")
    wrong = [
        f"move {i} {short(raw_moves['moves'][i], 80)} parsed as {class_list(m)}, not a {prefix}… move class"
        for i, m in enumerate(move_list)
        if not type(m).__name__.startswith(prefix)
    ]
    report.check(
        scope,
        f"seat {raw_moves.get('seat')}'s legal moves ({len(move_list)}) parse as {kind} moves",
        wrong[:5] + ([f"… and {len(wrong) - 5} more"] if len(wrong) > 5 else []),
    )
    roundtrip_check(report, scope, "GET /v1/games/{id}/legal-moves round-trips", moves, raw_moves)

    # POST /v1/games/{id}/moves with the first legal move, typed
    move, raw_move = move_list[0], raw_moves["moves"][0]
    version = raw_moves["version"]
    submit = ops["submit_move"]

    def submit_fits(cls: type, hints: dict[str, Any]) -> bool:
        name = generated.field_name("move")
        return name in hints and accepts(hints[name], move)

    submit_cls = body_class(generated, submit.sync_detailed, submit_fits)
    submission = build(generated, submit_cls, {"expected_version": version, "request_id": f"roundtrip-{kind}-{version}"}, {"move": move})
    sent = submission.to_dict()
    report.check(scope, f"the submitted move ({class_list(move)}) serializes as the server listed it", diff(raw_move, sent.get("move")))
    accepted, raw_accepted, status = call(
        generated, "POST /v1/games/{id}/moves", submit.sync_detailed, id=game_id, client=seat_client, body=submission
    )
    expect(generated, f"POST /v1/games/{{id}}/moves {short(sent.get('move'), 200)}", accepted, raw_accepted, status, 200, submit.sync)
    envelope_check(report, generated, scope, kind, "POST /v1/games/{id}/moves: the accepted move", accepted, submit.sync)
    report.check(
        scope,
        "the move was accepted at the next version",
        None if raw_accepted.get("version") == version + 1 else f"version {raw_accepted.get('version')}, expected {version + 1}",
    )
    roundtrip_check(report, scope, "POST /v1/games/{id}/moves: the accepted move round-trips", accepted, raw_accepted)

    # GET /v1/games/{id}/events: the recorded move parses back to the same move
    events = ops["list_events"]
    query = {"from_" if "from_" in generated.hints(events.sync_detailed) else "from": version + 1, "limit": 1}
    page, raw_page, status = call(generated, "GET /v1/games/{id}/events", events.sync_detailed, id=game_id, client=seat_client, **query)
    expect(generated, "GET /v1/games/{id}/events", page, raw_page, status, 200, events.sync)
    envelope_check(report, generated, scope, kind, "GET /v1/games/{id}/events", page, events.sync)
    recorded = [e for e in page.events if getattr(e, generated.field_name("seq"), None) == version + 1]
    raw_recorded = [e for e in raw_page["events"] if e.get("seq") == version + 1]
    if not recorded or not raw_recorded:
        report.check(scope, "the log holds the submitted move", f"no event {version + 1} in {short(raw_page)}")
    else:
        event, raw_event = recorded[0], raw_recorded[0]
        report.check(scope, "the log holds the submitted move", diff(drop_nulls(raw_move), drop_nulls(raw_event.get("move"))))
        event_move = getattr(event, generated.field_name("move"))
        report.check(
            scope,
            "the recorded move parses as the submitted move's class",
            None if type(event_move) is type(move) else f"parsed as {class_list(event_move)}, the submitted move was a {class_list(move)}",
        )
        roundtrip_check(report, scope, "GET /v1/games/{id}/events round-trips", page, raw_page)
    next_status = raw_accepted.get("status") or {}
    return list(next_status.get("to_move") or [])


# ---------------------------------------------------------------------------
# The transparency log: RFC 6962 (RFC 9162 section 2.1) hashing and proofs


def leaf_hash(leaf: str) -> bytes:
    return hashlib.sha256(b"\x00" + leaf.encode("utf-8")).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def unhash(text: str) -> bytes:
    raw = base64.b64decode(text, validate=True)
    if len(raw) != 32:
        raise ValueError(f"a hash is 32 bytes, not {len(raw)}")
    return raw


def included(leaf: str, index: int, size: int, proof: list[str], root: str) -> bool:
    """Whether `proof` leads from `leaf` at `index` to `root` of a tree of `size` leaves."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf_hash(leaf)
    for p in map(unhash, proof):
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            r = node_hash(p, r)
            while fn % 2 == 0 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == unhash(root)


def consistent(old: int, new: int, proof: list[str], old_root: str, new_root: str) -> bool:
    """Whether `proof` shows the tree of `old` leaves to be a prefix of the tree of `new` leaves."""
    if old == new:
        return not proof and old_root == new_root
    if old == 0 or old > new:
        return old == 0 and not proof
    path = [unhash(h) for h in proof]
    if old & (old - 1) == 0:
        path.insert(0, unhash(old_root))
    if not path:
        return False
    fn, sn = old - 1, new - 1
    while fn % 2 == 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            while fn % 2 == 0 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and fr == unhash(old_root) and sr == unhash(new_root)


def checkpoint_tree(note: str) -> tuple[str, int, str]:
    """The (origin, size, root) a checkpoint's signed text states (its signature is not checked here)."""
    origin, size, root = note.split("\n")[:3]
    return origin, int(size), root


def leaf_facts(leaf: str) -> dict[str, str]:
    return {line.split(" ", 1)[0]: (line.split(" ", 1) + [""])[1] for line in leaf.rstrip("\n").split("\n")[1:]}


def check_log(report: Report, generated: Generated, base: str) -> None:
    scope = "log"
    ops = generated.operations
    anyone = generated.client(base)
    consistency_query = "from_" if "from_" in generated.hints(ops["log_consistency"].sync_detailed) else "from"

    def typed(what: str, op: str, schema: str, want_status: int = 200, **kwargs: Any) -> tuple[Any, Any]:
        """A JSON answer parsed as `schema`'s class, checked to round-trip."""
        parsed, raw, status = call(generated, what, ops[op].sync_detailed, client=kwargs.pop("client", anyone), **kwargs)
        cls = generated.model(schema)
        if status != want_status or not isinstance(parsed, cls):
            raise Fatal(
                f"{what}: HTTP {status} parsed as {type(parsed).__name__} (expected {want_status}, {cls.__name__}): {short(raw, 400)}"
            )
        roundtrip_check(report, scope, f"{what} round-trips", parsed, raw)
        return parsed, raw

    def refused(what: str, op: str, want_status: int, want_code: str, **kwargs: Any) -> None:
        problem, raw = typed(what, op, "Problem", want_status, **kwargs)
        report.check(
            scope, f"{what}: {want_status} {want_code}", None if problem.code == want_code else f"code {problem.code}: {short(raw)}"
        )

    def text(what: str, op: str) -> str:
        parsed, raw, status = call(generated, what, ops[op].sync_detailed, client=anyone)
        if status != 200 or not isinstance(parsed, str):
            raise Fatal(f"{what}: HTTP {status} parsed as {type(parsed).__name__}, not text: {short(raw, 400)}")
        return parsed

    # Before any game ended: a key, no checkpoint.
    empty, raw_empty = typed("GET /v1/log (an empty log)", "log_info", "LogInfo")
    key = empty.key
    report.check(
        scope,
        "the key is a verifier key named after the origin and key id",
        None if key.startswith(f"{empty.origin}+{empty.key_id}+") and len(empty.key_id) == 8 else f"{short(raw_empty)}",
    )
    report.check(
        scope,
        "an empty log has no checkpoint nor tree",
        [f"{k}: {short(raw_empty[k])}" for k in ("checkpoint", "tree") if raw_empty.get(k) is not None],
    )
    refused("GET /v1/log/checkpoint (an empty log)", "log_checkpoint", 404, "not_found")
    served_key = text("GET /.well-known/ludotheque-log-key", "log_key")
    report.check(scope, "the well-known key is the log's, on one line", None if served_key == key + "\n" else f"{served_key!r} vs {key!r}")
    proof, _ = typed("GET /v1/log/consistency?from=0&to=0", "log_consistency", "ConsistencyProof", **{consistency_query: 0, "to": 0})
    report.check(scope, "the empty tree is consistent with itself by an empty proof", None if proof.proof == [] else short(proof.proof))

    # Two games end by resignation: leaves 0 and 1.
    games = []
    for resigning in (0, 1):
        status, created = raw_post(base, "/v1/games", {"kind": "cardinal", "players": ["Ann", "Bob"]})
        if status != 201:
            raise Fatal(f"POST /v1/games: HTTP {status}: {short(created, 400)}")
        game_id, tokens = created["id"], {s["seat"]: s["token"] for s in created["seats"]}
        if resigning == 0:
            refused("GET /v1/games/{id}/receipt (a game being played)", "game_receipt", 409, "game_not_over", id=game_id)
        changed, raw_changed = typed(
            "POST /v1/games/{id}/resign (the game ends)",
            "resign",
            "TableChanged",
            id=game_id,
            client=generated.client(base, tokens[resigning]),
        )
        receipt_cls = generated.model("Receipt")
        if not isinstance(changed.receipt, receipt_cls):
            raise Fatal(f"the answer that ended the game carries no receipt: {short(raw_changed, 400)}")
        games.append((game_id, resigning, raw_changed["receipt"]))

    log, raw_log = typed("GET /v1/log (two games ended)", "log_info", "LogInfo")
    checkpoint = raw_log.get("checkpoint") or ""
    tree = raw_log.get("tree") or {}
    report.check(scope, "the key stays the same", None if log.key == key else f"{log.key} after {key}")
    report.check(scope, "the log holds two leaves", None if tree.get("size") == 2 else short(raw_log))
    latest = checkpoint_tree(checkpoint) if checkpoint else ("", 0, "")
    report.check(
        scope,
        "the checkpoint states the tree",
        None if latest == (log.origin, tree.get("size"), tree.get("root")) else f"{latest} vs {tree}",
    )
    served = text("GET /v1/log/checkpoint", "log_checkpoint")
    report.check(scope, "GET /v1/log/checkpoint is the latest checkpoint", None if served == checkpoint else f"{served!r}")

    for index, (game_id, resigning, ended) in enumerate(games):
        what = f"GET /v1/games/{{id}}/receipt (leaf {index})"
        _, raw_receipt = typed(what, "game_receipt", "Receipt", id=game_id)
        report.check(scope, f"{what}: the receipt the resignation answered", diff(ended, raw_receipt))
        facts = leaf_facts(raw_receipt["leaf"])
        want = {"game": game_id, "outcome": "finished", "winners": str(1 - resigning), "forfeits": f"{resigning}:resigned"}
        got = {k: facts.get(k) for k in want}
        report.check(scope, f"{what}: the leaf names the game and its outcome", diff(want, got))
        report.check(
            scope,
            f"{what}: leaf {index}, naming the log's key",
            None if (raw_receipt["leaf_index"], raw_receipt["key"]) == (index, key) else short(raw_receipt),
        )
        origin, size, root = checkpoint_tree(raw_receipt["checkpoint"])
        report.check(
            scope,
            f"{what}: the inclusion proof leads to the root of the tree of {size} leaves",
            None
            if (origin, size) == (log.origin, index + 1) and included(raw_receipt["leaf"], index, size, raw_receipt["inclusion"], root)
            else f"{short(raw_receipt)}",
        )
        forged = raw_receipt["leaf"].replace(f"game {game_id}", "game someone-else")
        report.check(
            scope,
            f"{what}: a forged leaf is not included",
            "included" if included(forged, index, size, raw_receipt["inclusion"], root) else None,
        )
        state_status, raw_state = raw_get(base, f"/v1/games/{game_id}")
        report.check(
            scope,
            "GET /v1/games/{id}: the state of a game over carries its receipt",
            diff(raw_receipt, raw_state.get("receipt")) if state_status == 200 else f"HTTP {state_status}",
        )

    # The first game's tree is a prefix of the latest.
    _, first_size, first_root = checkpoint_tree(games[0][2]["checkpoint"])
    proof, raw_proof = typed(
        f"GET /v1/log/consistency?from={first_size}&to=2", "log_consistency", "ConsistencyProof", **{consistency_query: first_size, "to": 2}
    )
    report.check(
        scope,
        "the consistency proof leads from the first checkpoint's root to the latest's",
        None if consistent(first_size, 2, proof.proof, first_root, latest[2]) else short(raw_proof),
    )
    report.check(
        scope, "a wrong old root is not consistent", "consistent" if consistent(first_size, 2, proof.proof, latest[2], latest[2]) else None
    )
    refused(
        "GET /v1/log/consistency?from=1&to=3 (past the log)", "log_consistency", 400, "invalid_input", **{consistency_query: 1, "to": 3}
    )
    refused("GET /v1/log/consistency?from=2&to=1", "log_consistency", 400, "invalid_input", **{consistency_query: 2, "to": 1})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--openapi", required=True, help="the OpenAPI document: a path, or an http(s) URL such as BASE/openapi.json")
    parser.add_argument("--base", required=True, help="the running server, e.g. http://127.0.0.1:8080")
    parser.add_argument("--out", required=True, help="a directory for the generated client (created; its client is replaced)")
    parser.add_argument("--verbose", action="store_true", help="print the generator's output")
    args = parser.parse_args()
    base = args.base.rstrip("/")
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    report = Report()

    try:
        document, document_path = load_document(args.openapi, out)
        generator_version, output = generate(document_path, out)
    except Fatal as error:
        report.check("client", "generate the client", str(error))
        return report.finish()
    warnings = [line for line in output.splitlines() if line.startswith("WARNING")]
    print(f"generated {PACKAGE} with openapi-python-client {generator_version} from {document_path} into {out / PACKAGE}")
    if args.verbose and output:
        print(output)
    elif warnings:
        print("the generator's warnings (what it cannot generate is not used here; --verbose shows its whole output):")
        for line in warnings:
            print(f"  {line}")

    generated = Generated(out, document)
    if not report.check("client", "the operations used are generated", generated.missing):
        return report.finish()

    kinds: tuple[Any, Any] = (None, None)
    try:
        list_kinds = generated.operations["list_kinds"]
        parsed, raw, status = call(generated, "GET /v1/kinds", list_kinds.sync_detailed, client=generated.client(base))
        expect(generated, "GET /v1/kinds", parsed, raw, status, 200, list_kinds.sync)
        kinds = (parsed, raw)
    except Fatal as error:
        report.check("client", "GET /v1/kinds", str(error))

    for kind, players, requested in KINDS:
        try:
            check_kind(report, generated, base, kind, players, requested, kinds)
        except Fatal as error:
            report.check(kind, "the round trip goes on", str(error))
        except Exception as error:  # noqa: BLE001 - report, go on with the next kind
            report.check(kind, "the round trip goes on", f"{type(error).__name__}: {error}")

    # No game above ends: the log is still empty when this starts.
    try:
        check_log(report, generated, base)
    except Fatal as error:
        report.check("log", "the log's checks go on", str(error))
    except Exception as error:  # noqa: BLE001
        report.check("log", "the log's checks go on", f"{type(error).__name__}: {error}")
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
