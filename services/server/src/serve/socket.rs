//! A connection's socket, as hyper sees it: it notes when bytes move (for
//! the connection's watchdog, see [`super::connection`]) and tells
//! HTTP/2 apart by its preface, to let h2 write answers together (see
//! [`Metered::is_write_vectored`]).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::connection::Activity;

/// A socket that notes when bytes move, and which protocol its client
/// speaks (see [`Metered::is_write_vectored`]).
pub(super) struct Metered {
    inner: TcpStream,
    activity: Arc<Activity>,
    protocol: Protocol,
}

/// What a connection's first bytes said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Protocol {
    /// This many bytes have matched HTTP/2's connection preface so far.
    Sniffing(usize),
    /// The whole preface came: HTTP/2; `wrote` once anything was written.
    Http2 { wrote: bool },
    /// Anything else (HTTP/1.1).
    Other,
}

/// What an HTTP/2 client sends first (RFC 9113, section 3.4).
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

impl Protocol {
    /// Where the sniffing stands once `read` has followed what was read before.
    fn after(self, read: &[u8]) -> Protocol {
        let Protocol::Sniffing(matched) = self else { return self };
        let take = read.len().min(H2_PREFACE.len() - matched);
        if read[..take] != H2_PREFACE[matched..matched + take] {
            Protocol::Other
        } else if matched + take == H2_PREFACE.len() {
            Protocol::Http2 { wrote: false }
        } else {
            Protocol::Sniffing(matched + take)
        }
    }
}

impl AsyncRead for Metered {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.progressed();
            if matches!(self.protocol, Protocol::Sniffing(_)) {
                self.protocol = self.protocol.after(&buf.filled()[before..]);
            }
        }
        polled
    }
}

impl Metered {
    /// `inner`, its moves noted in `activity`.
    pub(super) fn new(inner: TcpStream, activity: Arc<Activity>) -> Self {
        Metered { inner, activity, protocol: Protocol::Sniffing(0) }
    }

    /// Notes a write (see [`Metered::is_write_vectored`]).
    fn writing(&mut self) {
        if let Protocol::Http2 { wrote } = &mut self.protocol {
            *wrote = true;
        }
    }
}

impl AsyncWrite for Metered {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.writing();
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.progressed();
        }
        polled
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        self.writing();
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.progressed();
        }
        polled
    }

    /// Vectored, as the socket is, except to HTTP/2 (h2) before its first
    /// write. h2 asks once, when it sets up the connection (after hyper read
    /// the preface, before anything is written), to choose which DATA frames
    /// it sends as buffers of their own rather than copying them into its
    /// write buffer: from 256 bytes with vectored writes, from 1 KiB
    /// without. A frame sent as its own buffer is written before h2 takes
    /// another frame, so every gRPC answer of 256 bytes or more (nearly all
    /// whole answers) cost a `writev` of its own. Told "not vectored" then,
    /// h2 copies answers under 1 KiB, and the answers of calls that finished
    /// together leave in one write; told "vectored" on every write after,
    /// it still sends a larger frame with its head in one `writev`.
    fn is_write_vectored(&self) -> bool {
        self.protocol != Protocol::Http2 { wrote: false } && self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_http2_preface_is_told_apart_however_it_is_read() {
        let whole = Protocol::Sniffing(0).after(H2_PREFACE);
        assert_eq!(whole, Protocol::Http2 { wrote: false });
        // In pieces, and with the client's first frames in the same read.
        let mut pieces = Protocol::Sniffing(0);
        for piece in [&H2_PREFACE[..1], &H2_PREFACE[1..10], &H2_PREFACE[10..]] {
            pieces = pieces.after(piece);
        }
        assert_eq!(pieces, Protocol::Http2 { wrote: false });
        let mut more = H2_PREFACE.to_vec();
        more.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
        assert_eq!(Protocol::Sniffing(0).after(&more), Protocol::Http2 { wrote: false });
        // Part of it so far.
        assert_eq!(Protocol::Sniffing(0).after(b"PRI * "), Protocol::Sniffing(6));
        // HTTP/1.1, even when it starts as the preface does.
        assert_eq!(Protocol::Sniffing(0).after(b"POST /v1/games HTTP/1.1\r\n"), Protocol::Other);
        assert_eq!(Protocol::Sniffing(0).after(b"PRI * HTTP/1.1\r\n"), Protocol::Other);
        assert_eq!(Protocol::Sniffing(6).after(b"HTTP/2.1"), Protocol::Other);
        // Settled once told apart.
        assert_eq!(Protocol::Other.after(H2_PREFACE), Protocol::Other);
    }

    #[tokio::test]
    async fn writes_are_not_vectored_to_http2_until_its_first_write() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};

        async fn pair() -> (Metered, TcpStream) {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let client = TcpStream::connect(listener.local_addr().expect("address")).await.expect("connect");
            let (server, _) = listener.accept().await.expect("accept");
            (Metered::new(server, Arc::new(Activity::new())), client)
        }
        let mut buf = [0_u8; 64];

        let (mut h2, mut client) = pair().await;
        assert!(h2.is_write_vectored(), "a socket writes vectored");
        client.write_all(H2_PREFACE).await.expect("preface");
        let mut read = 0;
        while read < H2_PREFACE.len() {
            read += h2.read(&mut buf[read..]).await.expect("read");
        }
        assert!(!h2.is_write_vectored(), "h2 sets up its connection as for a socket without vectored writes");
        h2.write_all(b"settings").await.expect("write");
        assert!(h2.is_write_vectored(), "and writes vectored after");

        let (mut h1, mut client) = pair().await;
        client.write_all(b"GET /healthz HTTP/1.1\r\n\r\n").await.expect("request");
        let read = h1.read(&mut buf).await.expect("read");
        assert!(read > 0);
        assert_eq!(h1.protocol, Protocol::Other);
        assert!(h1.is_write_vectored(), "HTTP/1.1 writes vectored from the start");
    }
}
