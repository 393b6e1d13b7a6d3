"""The official Python SDK of ludotheque: `Client` (blocking) and
`AsyncClient` (asyncio) over the REST API, with the API's shapes as
TypedDicts (`ludotheque.types`, and per kind `ludotheque.cardinal`,
`ludotheque.kardinal`, `ludotheque.battle13`)."""

from . import battle13, cardinal, kardinal, types
from ._async import AsyncClient, AsyncFeed
from ._core import RetryPolicy
from ._sync import Client, Feed
from ._version import __version__
from .errors import LudoError, Problem, TransportError

__all__ = [
    "AsyncClient",
    "AsyncFeed",
    "Client",
    "Feed",
    "LudoError",
    "Problem",
    "RetryPolicy",
    "TransportError",
    "__version__",
    "battle13",
    "cardinal",
    "kardinal",
    "types",
]
