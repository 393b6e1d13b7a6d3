//! Where a connection's HTTP/2 streams run: in the connection's own task,
//! up to [`INLINE_STREAMS`] at a time, and as tasks of their own beyond.
//!
//! hyper serves each HTTP/2 stream (each gRPC call) as a future handed to
//! its executor. Spawned as a task of its own (hyper's default), a stream
//! runs on whichever worker thread is free, and each frame it queues (the
//! answer's headers, then its data, then the gRPC trailers) wakes the
//! connection's task, which then often runs on the other worker at the
//! same moment and writes what is queued so far: measured under a gRPC
//! move load, 1.6 `writev` calls per answer and a third more context
//! switches than the same answers over HTTP/1.1, where the handler runs in
//! the connection's task and an answer is one write.
//!
//! Polled by the connection's task instead, a stream queues all its frames
//! before the connection is polled again, so an answer leaves in one write,
//! and no other thread is woken to run it. The price is that those streams
//! share one thread with their connection; so only the first
//! [`INLINE_STREAMS`] streams in flight on a connection run there, and any
//! beyond are spawned as before: a client with many calls at once on one
//! connection (one channel for a whole backend) still has the whole server.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use futures_util::stream::{FuturesUnordered, StreamExt};
use futures_util::task::AtomicWaker;

/// Most streams of one connection run in the connection's task at a time.
pub(crate) const INLINE_STREAMS: usize = 8;

type Stream = Pin<Box<dyn Future<Output = ()> + Send>>;

/// What the executor and the connection's task share.
#[derive(Default)]
struct Shared {
    /// Streams handed over and not yet taken by the connection's task.
    handed: Mutex<Vec<Stream>>,
    /// Streams running in the connection's task (handed over included).
    inline: AtomicUsize,
    /// The connection's task, to wake when a stream is handed over.
    task: AtomicWaker,
}

/// hyper's executor for one connection's HTTP/2 streams.
#[derive(Clone, Default)]
pub(crate) struct StreamExecutor {
    shared: Arc<Shared>,
}

impl<F> hyper::rt::Executor<F> for StreamExecutor
where
    F: Future<Output = ()> + Send + 'static,
{
    fn execute(&self, stream: F) {
        // Only the connection's task hands streams over (hyper calls this
        // while it polls the connection), so this count cannot race past the
        // limit; the connection's task only lowers it.
        if self.shared.inline.load(Ordering::Acquire) >= INLINE_STREAMS {
            tokio::spawn(stream);
            return;
        }
        self.shared.inline.fetch_add(1, Ordering::AcqRel);
        self.shared.handed.lock().unwrap_or_else(PoisonError::into_inner).push(Box::pin(stream));
        self.shared.task.wake();
    }
}

impl StreamExecutor {
    /// The streams this executor hands to the connection's task, to poll there.
    pub(crate) fn streams(&self) -> InlineStreams {
        InlineStreams { shared: Arc::clone(&self.shared), running: FuturesUnordered::new() }
    }
}

/// A connection's inline streams, polled by its task.
pub(crate) struct InlineStreams {
    shared: Arc<Shared>,
    running: FuturesUnordered<Stream>,
}

impl InlineStreams {
    /// Runs the streams handed over; never finishes (a connection gets new
    /// streams for as long as it is open).
    pub(crate) fn poll_run(&mut self, cx: &mut Context<'_>) -> Poll<Infallible> {
        self.shared.task.register(cx.waker());
        // `inline` counts the streams running and those handed over, so
        // only when it is ahead is there anything to take: an HTTP/1.1
        // connection, which never hands one over, takes no lock here.
        // Anything handed over after this look wakes the task again.
        if self.shared.inline.load(Ordering::Acquire) > self.running.len() {
            self.take_handed();
        }
        while let Poll::Ready(Some(())) = self.running.poll_next_unpin(cx) {
            self.shared.inline.fetch_sub(1, Ordering::AcqRel);
        }
        Poll::Pending
    }

    fn take_handed(&mut self) {
        let handed = std::mem::take(&mut *self.shared.handed.lock().unwrap_or_else(PoisonError::into_inner));
        self.running.extend(handed);
    }

    /// Once the connection is over: the streams still running finish in a
    /// task of their own, as spawned streams would (a call in progress is
    /// not cut short because its connection went away first).
    pub(crate) fn finish(mut self) {
        self.take_handed();
        if !self.running.is_empty() {
            tokio::spawn(async move { while self.running.next().await.is_some() {} });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::rt::Executor;
    use std::sync::atomic::AtomicBool;

    /// A future that ends when `open` is set and it is polled.
    fn gate(open: &Arc<AtomicBool>, done: &Arc<AtomicUsize>) -> impl Future<Output = ()> + Send + 'static {
        let (open, done) = (Arc::clone(open), Arc::clone(done));
        std::future::poll_fn(move |cx| {
            if open.load(Ordering::Acquire) {
                done.fetch_add(1, Ordering::AcqRel);
                Poll::Ready(())
            } else {
                // Poll again soon: the test opens the gate from outside.
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        })
    }

    #[tokio::test]
    async fn streams_run_in_the_connections_task_up_to_the_limit_and_beyond_it_as_tasks() {
        let executor = StreamExecutor::default();
        let mut streams = executor.streams();
        let (open, done) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
        for _ in 0..INLINE_STREAMS + 3 {
            executor.execute(gate(&open, &done));
        }
        assert_eq!(executor.shared.inline.load(Ordering::Acquire), INLINE_STREAMS);
        // The inline ones run only when the connection's task polls them.
        let waker = futures_util::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        assert!(streams.poll_run(&mut cx).is_pending());
        assert_eq!(streams.running.len(), INLINE_STREAMS);
        open.store(true, Ordering::Release);
        assert!(streams.poll_run(&mut cx).is_pending());
        assert_eq!(streams.running.len(), 0);
        assert_eq!(executor.shared.inline.load(Ordering::Acquire), 0);
        // The three spawned ones finish on the runtime.
        for _ in 0..100 {
            if done.load(Ordering::Acquire) == INLINE_STREAMS + 3 {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(done.load(Ordering::Acquire), INLINE_STREAMS + 3);
        // With room again, the next stream runs inline.
        executor.execute(gate(&open, &done));
        assert_eq!(executor.shared.inline.load(Ordering::Acquire), 1);
    }

    #[tokio::test]
    async fn streams_still_running_when_the_connection_ends_are_finished_elsewhere() {
        let executor = StreamExecutor::default();
        let streams = executor.streams();
        let (open, done) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
        executor.execute(gate(&open, &done));
        streams.finish();
        open.store(true, Ordering::Release);
        for _ in 0..100 {
            if done.load(Ordering::Acquire) == 1 {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(done.load(Ordering::Acquire), 1);
    }
}
