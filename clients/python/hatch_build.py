"""Generates the SDK's modules when the package is built.

The repository commits no generated file but openapi/openapi.json, so the
typed shapes (types.py, cardinal.py, kardinal.py, battle13.py: from the
OpenAPI document, tools/gen_types.py) and the blocking client (_sync.py:
from _async.py, tools/gen_sync.py) are written here, into a scratch
directory, and forced into the wheel (they are git-ignored, so hatch would
not pick them up from src/ even when they are there).

The document is read from the repository around this directory
(clients/python/../../openapi/openapi.json): build from a checkout, e.g.
`pip install ./clients/python`. An sdist carries the generated modules
(it is built from a checkout too), so a wheel built from an unpacked sdist
uses those.
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

GENERATED = ("types.py", "cardinal.py", "kardinal.py", "battle13.py", "_sync.py")


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class GenerateHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        document = root.parent.parent / "openapi" / "openapi.json"
        package = root / "src" / "ludotheque"
        if document.is_file():
            self.scratch = Path(tempfile.mkdtemp(prefix="ludotheque-build-"))
            for name, text in load(root / "tools" / "gen_types.py").generate(document).items():
                (self.scratch / name).write_text(text)
            sync = load(root / "tools" / "gen_sync.py")
            (self.scratch / "_sync.py").write_text(sync.translate((package / "_async.py").read_text()))
            source = self.scratch
        elif (root / "PKG-INFO").is_file() and all((package / name).is_file() for name in GENERATED):
            source = package  # an unpacked sdist: it carries the generated modules
        else:
            raise RuntimeError(
                f"ludotheque SDK: the OpenAPI document {document} is missing. The SDK's types are "
                "generated from it at build time, so build from a checkout of the repository "
                "(pip install ./clients/python), not from a copy of clients/python alone."
            )
        prefix = "ludotheque" if self.target_name == "wheel" else "src/ludotheque"
        for name in GENERATED:
            build_data["force_include"][str(source / name)] = f"{prefix}/{name}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        scratch = getattr(self, "scratch", None)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
