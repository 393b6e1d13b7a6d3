"""Writes the SDK's typed shapes from the server's OpenAPI document.

    python tools/gen_types.py [DOCUMENT] [--out DIR]

writes {types,cardinal,kardinal,battle13}.py into DIR (default
src/ludotheque) from DOCUMENT (default the repository's
openapi/openapi.json).

The document is the contract (it is exact: every union discriminated, every
field's presence stated), so the SDK's TypedDicts are derived from it rather
than written by hand. The modules are never committed (the repository keeps
no generated file but openapi/openapi.json): the package's build runs this
tool (hatch_build.py), and install-tools.sh runs it into src/ so that mypy
can check a checkout.

Options come in two shapes, both read from the document's `required`
lists: a request's `<kind>.OptionsRequest` has every key `NotRequired`
(left out: the kind's default), an answer's `<kind>.Options` every key
present (the server fills in the defaults).

Naming: a kind's schemas go to that kind's module without the prefix
(`cardinal.View` -> `ludotheque.cardinal.View`); a nested name reads as
English with its parent last (`cardinal.Move.Build` -> `BuildMove`,
`Status.Waiting` -> `WaitingStatus`). Everything else goes to
`ludotheque.types`, including the unions over the three kinds.
"""

from __future__ import annotations

import json
import keyword
import sys
import textwrap
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent / "src" / "ludotheque"
DEFAULT_DOCUMENT = HERE.parent.parent.parent / "openapi" / "openapi.json"
KINDS = ("cardinal", "kardinal", "battle13")
COMMON = "types"
REF = "#/components/schemas/"

Schema = dict[str, Any]


def module_of(schema_name: str) -> str:
    head = schema_name.split(".", 1)[0]
    return head if head in KINDS else COMMON


def python_name(schema_name: str) -> str:
    parts = schema_name.split(".")
    if parts[0] in KINDS:
        parts = parts[1:]
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        return parts[1] + parts[0]
    raise ValueError(f"unexpected schema name {schema_name!r}")


def ref_target(schema: Schema) -> str | None:
    ref = schema.get("$ref")
    if ref is None:
        return None
    assert ref.startswith(REF), ref
    return str(ref[len(REF) :])


class Module:
    """One generated module: its TypedDicts, its aliases and what they name."""

    def __init__(self, name: str, schemas: dict[str, Schema]) -> None:
        self.name = name
        self.schemas = schemas
        self.imports_common: set[str] = set()  # names a kind module takes from ludotheque.types
        self.kind_modules: set[str] = set()  # kind modules the common module names
        self.uses_literal = False
        self.uses_any = False
        self.uses_not_required = False

    # -- type expressions ------------------------------------------------

    def ref(self, target: str) -> str:
        """The expression naming a schema from this module."""
        home = module_of(target)
        name = python_name(target)
        if home == self.name:
            return name
        if self.name == COMMON:
            self.kind_modules.add(home)
            return f"{home}.{name}"
        assert home == COMMON, f"{self.name} refers to {target}"
        self.imports_common.add(name)
        return name

    def expr(self, schema: Schema, deps: set[str]) -> str:
        """A type expression for `schema`; `deps` gathers the schemas it names."""
        target = ref_target(schema)
        if target is not None:
            deps.add(target)
            return self.ref(target)
        if "oneOf" in schema or "anyOf" in schema:
            members = schema.get("oneOf") or schema.get("anyOf")
            return union([self.expr(m, deps) for m in members or []])
        if "const" in schema:
            self.uses_literal = True
            return f"Literal[{json.dumps(schema['const'])}]"
        if "enum" in schema:
            self.uses_literal = True
            return "Literal[" + ", ".join(json.dumps(v) for v in schema["enum"]) + "]"
        kind = schema.get("type")
        if kind is None:
            self.uses_any = True
            return "Any"
        if isinstance(kind, list):
            return union([self.expr({**schema, "type": k}, deps) for k in kind])
        if kind == "array":
            return f"list[{self.expr(schema.get('items', {}), deps)}]"
        if kind == "object":
            # Only free-form objects get here (named objects are TypedDicts):
            # `info`, a seat's information set in its engine's own shape.
            self.uses_any = True
            return "dict[str, Any]"
        return {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}[kind]

    # -- declarations ----------------------------------------------------

    def declarations(self) -> tuple[list[str], list[Alias]]:
        classes: list[str] = []
        aliases: list[Alias] = []
        for schema_name, schema in self.schemas.items():
            name = python_name(schema_name)
            if is_class(schema):
                classes.append(self.typed_dict(schema_name, name, schema))
            else:
                deps: set[str] = set()
                text = self.expr(schema, deps)
                doc = comment(schema.get("description", ""), f"Schema `{schema_name}`.")
                aliases.append(Alias(schema_name, deps, f"{doc}{name}: TypeAlias = {wrap_union(text)}\n"))
        return classes, aliases

    def typed_dict(self, schema_name: str, name: str, schema: Schema) -> str:
        required = set(schema.get("required", []))
        fields: list[tuple[str, str, str]] = []
        for field, field_schema in schema["properties"].items():
            text = self.expr(field_schema, set())
            if field not in required:
                self.uses_not_required = True
                text = f"NotRequired[{text}]"
            description = field_schema.get("description", "")
            for member in field_schema.get("oneOf", []):
                description = description or member.get("description", "")
            fields.append((field, text, description))
        doc = docstring(schema.get("description", ""), f"Schema `{schema_name}`.")
        if any(keyword.iskeyword(f) for f, _, _ in fields):
            # A key that is a Python keyword (`from`) needs the call syntax,
            # which is evaluated at import: keep it to plain types.
            assert all(f in required for f, _, _ in fields), name
            body = "".join(f"        {json.dumps(f)}: {t},\n" for f, t, _ in fields)
            return f'{comment_after(doc)}{name} = TypedDict(\n    "{name}",\n    {{\n{body}    }},\n)\n'
        lines = [f"class {name}(TypedDict):", indent(doc)]
        for field, text, description in fields:
            if description:
                lines.append(indent(comment(description)).rstrip("\n"))
            lines.append(f"    {field}: {text}")
        return "\n".join(lines) + "\n"

    def render(self) -> str:
        classes, aliases = self.declarations()
        ordered = order_aliases(aliases)
        names_class = {a.schema for a in ordered if self.names_class(a.schema, set())}
        head = [
            f'"""{module_doc(self.name)}\n\nGenerated by tools/gen_types.py from openapi/openapi.json: do not edit."""\n',
            "from __future__ import annotations\n",
        ]
        typing_names = ["TYPE_CHECKING", "TypeAlias", "TypedDict"]
        if self.uses_literal:
            typing_names.append("Literal")
        if self.uses_any:
            typing_names.append("Any")
        head.append(f"from typing import {', '.join(sorted(typing_names))}\n")
        if self.kind_modules:
            head.append(f"from . import {', '.join(sorted(self.kind_modules))}\n")
        guarded: list[str] = []
        if self.uses_not_required:
            # Annotations are never evaluated at run time (PEP 563 above), so
            # NotRequired is for type checkers only; they all ship
            # typing_extensions, and Python 3.10 needs nothing installed.
            guarded.append("    from typing_extensions import NotRequired\n")
        if self.imports_common:
            # Names from ludotheque.types appear only in annotations; importing
            # them for the type checker alone keeps the modules free of cycles.
            names = "".join(f"        {n},\n" for n in sorted(self.imports_common))
            guarded.append(f"    from .types import (\n{names}    )\n")
        if guarded:
            head.append("if TYPE_CHECKING:\n" + "".join(guarded))
        # Scalar aliases first (fields name them), classes, then the unions
        # of classes, which Python evaluates at import.
        parts = ["\n".join(head)]
        parts += [a.text for a in ordered if a.schema not in names_class]
        parts += classes
        parts += [a.text for a in ordered if a.schema in names_class]
        return "\n\n".join(p.rstrip("\n") + "\n" for p in parts)

    def names_class(self, schema_name: str, seen: set[str]) -> bool:
        """Whether an alias names a TypedDict, directly or through other aliases."""
        if schema_name in seen:
            return False
        seen.add(schema_name)
        schema = ALL[schema_name]
        if is_class(schema):
            return True
        return any(self.names_class(d, seen) for d in refs_in(schema))


class Alias:
    def __init__(self, schema: str, deps: set[str], text: str) -> None:
        self.schema = schema
        self.deps = deps
        self.text = text


ALL: dict[str, Schema] = {}


def refs_in(schema: Any) -> set[str]:
    if isinstance(schema, dict):
        found = {t for t in [ref_target(schema)] if t}
        for value in schema.values():
            found |= refs_in(value)
        return found
    if isinstance(schema, list):
        return set().union(*(refs_in(v) for v in schema)) if schema else set()
    return set()


def is_class(schema: Schema) -> bool:
    return schema.get("type") == "object" and "properties" in schema


def union(members: list[str]) -> str:
    seen: list[str] = []
    for m in members:
        for part in m.split(" | "):
            if part not in seen:
                seen.append(part)
    # `None` last reads as "optional".
    seen.sort(key=lambda p: p == "None")
    return " | ".join(seen)


def wrap_union(text: str) -> str:
    """One member a line, for unions too long to read on one."""
    if len(text) < 60:
        return text
    return "(\n    " + "\n    | ".join(text.split(" | ")) + "\n)"


def order_aliases(aliases: list[Alias]) -> list[Alias]:
    """Aliases are evaluated at import: each after those it names."""
    by_name = {a.schema: a for a in aliases}
    done: list[Alias] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen or name not in by_name:
            return
        seen.add(name)
        for dep in sorted(by_name[name].deps):
            visit(dep)
        done.append(by_name[name])

    for a in aliases:
        visit(a.schema)
    return done


def clean(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', "'''").strip()


def docstring(description: str, schema_line: str) -> str:
    body = clean(description)
    text = f"{body}\n\n{schema_line}" if body else schema_line
    return f'"""{text}"""' if "\n" not in text else f'"""{text}\n"""'


def comment(description: str, extra: str = "") -> str:
    text = " ".join(description.split())
    if extra:
        text = f"{text} {extra}".strip()
    if not text:
        return ""
    return "".join(f"# {line}\n" for line in textwrap.wrap(text, 84))


def comment_after(doc: str) -> str:
    return comment(doc.strip('"'))


def indent(text: str) -> str:
    return "".join(f"    {line}\n" if line else "\n" for line in text.split("\n")).rstrip("\n")


def module_doc(name: str) -> str:
    if name == COMMON:
        return (
            "The API's shared shapes, and the unions over the three kinds.\n\n"
            'Each union is discriminated by `kind`: `if game["kind"] == "battle13":` narrows\n'
            "a `GameState` to `battle13.GameState`."
        )
    title = {"cardinal": "Cardinal", "kardinal": "Kardinal & König", "battle13": "Battle 13"}[name]
    return (
        f"{title}: options, moves, views, effects and events.\n\n"
        'Moves and effects are unions discriminated by `type` (`if move["type"] == ...:` narrows).'
    )


def check_options(schemas: dict[str, Schema]) -> None:
    """A request's options are all optional, an answer's all present: the
    SDK's creation helpers and readers rely on both."""
    for kind in KINDS:
        request = schemas[f"{kind}.OptionsRequest"]
        answer = schemas[f"{kind}.Options"]
        assert not request.get("required"), f"{kind}.OptionsRequest has required keys"
        assert set(answer.get("required", [])) == set(answer["properties"]), f"{kind}.Options leaves keys out"
        assert set(request["properties"]) == set(answer["properties"]), f"{kind}: request and answer options differ"


def generate(document: Path) -> dict[str, str]:
    """Each generated module's file name and text."""
    schemas: dict[str, Schema] = json.loads(document.read_text())["components"]["schemas"]
    ALL.clear()
    ALL.update(schemas)
    modules = {name: Module(name, {}) for name in (COMMON, *KINDS)}
    for schema_name in sorted(schemas):
        modules[module_of(schema_name)].schemas[schema_name] = schemas[schema_name]
    check_options(schemas)
    out: dict[str, str] = {}
    for name, module in modules.items():
        names = [python_name(s) for s in module.schemas]
        duplicates = {n for n in names if names.count(n) > 1}
        assert not duplicates, f"{name}: names clash: {duplicates}"
        out[f"{name}.py"] = module.render()
    return out


def main(argv: list[str]) -> int:
    args = list(argv)
    out = PACKAGE
    if "--out" in args:
        at = args.index("--out")
        out = Path(args[at + 1])
        del args[at : at + 2]
    document = Path(args[0]) if args else DEFAULT_DOCUMENT
    if not document.is_file():
        print(f"gen_types: no OpenAPI document at {document}", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    for name, text in generate(document).items():
        (out / name).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
