"""Shared fixtures. The suite runs against a real server whose base URL is in
LUDO_BASE (e.g. `http://127.0.0.1:8080`); without one it fails, never skips,
so a CI that forgot to start the server cannot pass by testing nothing."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Generic, TypeVar

import httpx
import pytest

from ludotheque import Client

# The example bot is imported from examples/, exactly as the docs show it.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))


@pytest.fixture(scope="session")
def base_url() -> str:
    base = os.environ.get("LUDO_BASE")
    if not base:
        pytest.fail("LUDO_BASE is not set: start a server (ludo serve --listen 127.0.0.1:PORT) and export its URL")
    try:
        httpx.get(f"{base.rstrip('/')}/healthz", timeout=5).raise_for_status()
    except httpx.HTTPError as error:
        pytest.fail(f"LUDO_BASE={base} is unreachable: {error!r}")
    return base


@pytest.fixture
def client(base_url: str) -> Iterator[Client]:
    with Client(base_url) as c:
        yield c


T = TypeVar("T")


class Background(Generic[T]):
    """Runs `work` on a daemon thread. `result()` waits a bounded time and
    re-raises the thread's error; a thread stuck on a stream that never ends
    fails its test instead of holding up the run."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._value: list[T] = []
        self._error: list[BaseException] = []

        def run() -> None:
            try:
                self._value.append(work())
            except BaseException as error:  # handed to the test's thread
                self._error.append(error)

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def result(self, timeout: float = 60) -> T:
        self._thread.join(timeout)
        if self._thread.is_alive():
            pytest.fail(f"still running after {timeout} s")
        if self._error:
            raise self._error[0]
        return self._value[0]


class CutStream(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A response body that breaks off after `chunks` chunks, as a flaky network would."""

    def __init__(self, inner: httpx.SyncByteStream | httpx.AsyncByteStream, chunks: int) -> None:
        self._inner = inner
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        assert isinstance(self._inner, httpx.SyncByteStream)
        for n, chunk in enumerate(self._inner):
            if n == self._chunks:
                raise httpx.ReadError("connection cut by the test")
            yield chunk

    async def __aiter__(self) -> AsyncIterator[bytes]:
        assert isinstance(self._inner, httpx.AsyncByteStream)
        n = 0
        async for chunk in self._inner:
            if n == self._chunks:
                raise httpx.ReadError("connection cut by the test")
            n += 1
            yield chunk

    def close(self) -> None:
        assert isinstance(self._inner, httpx.SyncByteStream)
        self._inner.close()

    async def aclose(self) -> None:
        assert isinstance(self._inner, httpx.AsyncByteStream)
        await self._inner.aclose()


class Cutter:
    """Which stream connections to cut: the first `times`, after `chunks` chunks each."""

    def __init__(self, chunks: int, times: int) -> None:
        self.chunks, self.times, self.streams = chunks, times, 0

    def cut(self, request: httpx.Request, response: httpx.Response, stream: httpx.SyncByteStream | httpx.AsyncByteStream) -> httpx.Response:
        """`response`, or the same with its body cut short if this stream is one to cut."""
        if not request.url.path.endswith("/stream"):
            return response
        self.streams += 1
        if self.streams > self.times:
            return response
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=CutStream(stream, self.chunks),
            extensions=response.extensions,
        )


class CuttingTransport(httpx.HTTPTransport):
    """Cuts the first `times` stream connections after `chunks` chunks each."""

    def __init__(self, chunks: int, times: int) -> None:
        super().__init__()
        self.cutter = Cutter(chunks, times)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        assert isinstance(response.stream, httpx.SyncByteStream)
        return self.cutter.cut(request, response, response.stream)


class AsyncCuttingTransport(httpx.AsyncHTTPTransport):
    """`CuttingTransport` for the async client."""

    def __init__(self, chunks: int, times: int) -> None:
        super().__init__()
        self.cutter = Cutter(chunks, times)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return self.cutter.cut(request, response, response.stream)
