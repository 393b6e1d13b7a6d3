//! Projections: read models folded from the store's global feed.
//!
//! Every committed record has a global position in the store's feed (the
//! `$all` stream of event stores). A projection folds the feed, in order,
//! into rows of its own, kept by the store with the position it has folded
//! up to (its checkpoint). Each step reads a batch of entries after the
//! checkpoint, folds them, and commits the rows and the new checkpoint
//! together, on condition that the checkpoint is still the one it started
//! from: a step that another process beat commits nothing, so no record is
//! folded twice, and a crash loses at most the step under way, which the
//! next start folds again. A projection is a pure fold of the feed: built
//! again from position 0 (`ludo projections rebuild NAME`) it holds the same
//! rows.
//!
//! A server keeps each projection up to date while it runs ([`Projections::spawn`]):
//! it holds the projection's lease (on PostgreSQL an advisory lock, so one
//! replica at a time advances it, and the others take over if it goes),
//! folds what the feed holds, then waits for the store's notice of the next
//! append (or polls, on a store whose notices may be lost).

pub mod games;

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ludo_storage::{EventStore, FeedEntry, ProjectionCommit, StoreError};
use serde::Serialize;

/// Feed entries a step folds and commits together.
pub const BATCH: usize = 1024;

/// How long a server lets appends gather before it folds them: a
/// projection is committed (a write and a flush of its own) at most about
/// this often, in batches, rather than once per move; what reads it may lag
/// the log by about this much.
pub const GATHER: Duration = Duration::from_millis(100);

/// How long a server waits before trying again a projection that failed,
/// or whose lease another server holds.
const RETRY: Duration = Duration::from_secs(2);

/// What a fold resolves to (boxed: projections are kept as trait objects).
pub type Folded<'a> = Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>>;

/// A read model folded from the feed.
pub trait Projection: Send + Sync + 'static {
    /// Its name, as `ludo projections` takes it and the store keeps it.
    fn name(&self) -> &'static str;

    /// What it holds, for a person.
    fn about(&self) -> &'static str;

    /// Folds the next feed entry into `rows`. Deterministic: the same
    /// entries in the same order make the same rows, whenever they are
    /// folded. An error stops the projection at this entry (nothing of its
    /// step is committed) and is reported, never skipped.
    fn fold<'a>(&'a self, entry: &'a FeedEntry, rows: &'a mut Rows) -> Folded<'a>;

    /// Writes to `rows` what the step's folds left pending, once the
    /// step's last entry is folded: a projection whose rows are a function
    /// of many entries (a game's summary, of each of its moves) writes each
    /// row once a step rather than once an entry. The default has nothing
    /// pending.
    fn settle<'a>(&'a self, rows: &'a mut Rows) -> Folded<'a> {
        let _ = rows;
        Box::pin(std::future::ready(Ok(())))
    }

    /// Forgets what it keeps in memory between folds (its rows in the
    /// store are the truth): before a rebuild, and after a step was lost
    /// to another process.
    fn forget(&self) {}
}

/// A projection's rows, as a step sees them: the store's, with the step's
/// own changes on top.
pub struct Rows {
    store: Arc<dyn EventStore>,
    name: &'static str,
    changes: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
}

impl Rows {
    /// The row at `key`, as this step leaves it so far.
    ///
    /// # Errors
    /// The store's.
    pub async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        match self.changes.get(key) {
            Some(change) => Ok(change.clone()),
            None => self.store.projection_get(self.name, key).await,
        }
    }

    /// Sets the row at `key`.
    pub fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.changes.insert(key, Some(value));
    }

    /// Removes the row at `key`.
    pub fn delete(&mut self, key: Vec<u8>) {
        self.changes.insert(key, None);
    }

    /// The store the feed comes from (for a projection that reads a
    /// game's log or its sealed data to fold it).
    #[must_use]
    pub fn store(&self) -> &Arc<dyn EventStore> {
        &self.store
    }
}

/// Why a projection did not advance.
#[derive(Debug, thiserror::Error)]
pub enum ProjectionError {
    /// No projection has this name.
    #[error("no projection is called `{0}` (see `ludo projections status`)")]
    Unknown(String),
    /// Another process holds its lease.
    #[error("another server is advancing projection `{0}` now; stop it, or try again")]
    Leased(String),
    /// It has not reached a position in time.
    #[error("projection `{name}` has folded the feed up to position {checkpoint}, not yet {wanted}; try again")]
    Behind {
        /// The projection.
        name: &'static str,
        /// Where it stands.
        checkpoint: u64,
        /// The position waited for.
        wanted: u64,
    },
    /// An entry does not fold.
    #[error("projection `{name}` does not fold the feed's entry at position {position}: {reason}")]
    Fold {
        /// The projection.
        name: &'static str,
        /// The entry's position.
        position: u64,
        /// Why.
        reason: String,
    },
    /// The store failed or refused.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Where a projection stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProjectionStatus {
    /// Its name.
    pub name: &'static str,
    /// What it holds.
    pub about: &'static str,
    /// The feed position it has folded up to (0: none yet).
    pub checkpoint: u64,
    /// The feed's last position.
    pub head: u64,
}

impl ProjectionStatus {
    /// Entries it has still to fold.
    #[must_use]
    pub fn behind(&self) -> u64 {
        self.head.saturating_sub(self.checkpoint)
    }
}

/// The projections a store's server keeps.
pub struct Projections {
    store: Arc<dyn EventStore>,
    all: Vec<Arc<dyn Projection>>,
    /// Per projection (as in `all`): rung by a reader waiting for it, so
    /// its keeper folds now rather than after [`GATHER`].
    nudges: Vec<tokio::sync::Notify>,
    /// Per projection (as in `all`): whether this process keeps it (holds
    /// its lease in [`Self::spawn`]'s task), and so takes offers for it.
    keeping: Vec<AtomicBool>,
    /// The `games` projection, typed for its offers, and its index in `all`.
    games: (Arc<games::Games>, usize),
}

impl std::fmt::Debug for Projections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Projections").field("names", &self.all.iter().map(|p| p.name()).collect::<Vec<_>>()).finish_non_exhaustive()
    }
}

impl Projections {
    /// The built-in projections over `store`.
    #[must_use]
    pub fn new(store: Arc<dyn EventStore>) -> Self {
        let games = Arc::new(games::Games::default());
        let all: Vec<Arc<dyn Projection>> = vec![Arc::clone(&games) as Arc<dyn Projection>];
        let nudges = all.iter().map(|_| tokio::sync::Notify::new()).collect();
        let keeping = all.iter().map(|_| AtomicBool::new(false)).collect();
        Projections { store, all, nudges, keeping, games: (games, 0) }
    }

    /// The `games` projection.
    #[must_use]
    pub fn games(&self) -> &games::Games {
        &self.games.0
    }

    /// Hands the game as a commit of this process left it to the `games`
    /// projection, if this process keeps it (see [`games`]): otherwise
    /// nobody here folds that entry soon, and the offer is dropped.
    pub(crate) fn offer(&self, offered: games::Offered) {
        let (games, index) = &self.games;
        if self.keeping[*index].load(Ordering::Acquire) {
            games.offer(offered);
        }
    }

    /// The projection called `name`.
    ///
    /// # Errors
    /// [`ProjectionError::Unknown`].
    pub fn get(&self, name: &str) -> Result<&Arc<dyn Projection>, ProjectionError> {
        self.all.iter().find(|p| p.name() == name).ok_or_else(|| ProjectionError::Unknown(name.to_string()))
    }

    /// Where each projection stands.
    ///
    /// # Errors
    /// The store's.
    pub async fn status(&self) -> Result<Vec<ProjectionStatus>, ProjectionError> {
        let head = self.store.feed_head()?;
        let mut status = Vec::with_capacity(self.all.len());
        for projection in &self.all {
            let checkpoint = self.store.projection_load(projection.name()).await?.unwrap_or(0);
            status.push(ProjectionStatus { name: projection.name(), about: projection.about(), checkpoint, head });
        }
        Ok(status)
    }

    /// Folds and commits the next batch of entries after the projection's
    /// checkpoint; answers how many it folded (0: it is up to date).
    ///
    /// # Errors
    /// An entry that does not fold; the store's (a conflict: another
    /// process advanced it meanwhile, and this step committed nothing).
    pub async fn step(&self, projection: &dyn Projection) -> Result<usize, ProjectionError> {
        let name = projection.name();
        let checkpoint = self.store.projection_load(name).await?;
        let entries = self.store.read_feed(checkpoint.unwrap_or(0), BATCH).await?;
        let Some(last) = entries.last().map(|entry| entry.position) else { return Ok(0) };
        let mut rows = Rows { store: Arc::clone(&self.store), name, changes: BTreeMap::new() };
        for entry in &entries {
            projection.fold(entry, &mut rows).await.map_err(|reason| {
                projection.forget();
                ProjectionError::Fold { name, position: entry.position, reason }
            })?;
        }
        projection.settle(&mut rows).await.map_err(|reason| {
            projection.forget();
            ProjectionError::Fold { name, position: last, reason }
        })?;
        let commit =
            ProjectionCommit { name: name.to_string(), expected: checkpoint, checkpoint: last, puts: rows.changes.into_iter().collect() };
        if let Err(err) = self.store.projection_commit(commit).await {
            projection.forget();
            return Err(err.into());
        }
        Ok(entries.len())
    }

    /// Folds everything the feed holds now; answers the checkpoint reached.
    ///
    /// # Errors
    /// As [`Self::step`].
    pub async fn catch_up(&self, projection: &dyn Projection) -> Result<u64, ProjectionError> {
        while self.step(projection).await? > 0 {}
        Ok(self.store.projection_load(projection.name()).await?.unwrap_or(0))
    }

    /// Waits until projection `name` has folded the feed up to `position`
    /// (a reader's read-your-writes: the feed's head when its request
    /// came), for at most `within`. A projection nobody advances (no server
    /// keeps it: a tool, a test) is folded here, under its lease; one this
    /// process keeps is nudged to fold now; one another server keeps is
    /// waited for.
    ///
    /// # Errors
    /// [`ProjectionError::Unknown`]; [`ProjectionError::Behind`] when it
    /// is still short of `position` after `within`; as [`Self::step`].
    pub async fn reach(&self, name: &str, position: u64, within: Duration) -> Result<(), ProjectionError> {
        let index = self.all.iter().position(|p| p.name() == name).ok_or_else(|| ProjectionError::Unknown(name.to_string()))?;
        let projection = &self.all[index];
        let deadline = tokio::time::Instant::now() + within;
        let mut pause = Duration::from_millis(1);
        loop {
            let checkpoint = self.store.projection_load(projection.name()).await?.unwrap_or(0);
            if checkpoint >= position {
                return Ok(());
            }
            if let Some(_lease) = self.store.projection_lease(projection.name()).await? {
                self.catch_up(&**projection).await?;
                continue;
            }
            self.nudges[index].notify_one();
            if tokio::time::Instant::now() + pause > deadline {
                return Err(ProjectionError::Behind { name: projection.name(), checkpoint, wanted: position });
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(25));
        }
    }

    /// Builds `name` again from position 0, under its lease; answers the
    /// checkpoint reached.
    ///
    /// # Errors
    /// [`ProjectionError::Unknown`]; [`ProjectionError::Leased`] while a
    /// server advances it; as [`Self::step`].
    pub async fn rebuild(&self, name: &str) -> Result<u64, ProjectionError> {
        let projection = self.get(name)?;
        let Some(_lease) = self.store.projection_lease(projection.name()).await? else {
            return Err(ProjectionError::Leased(name.to_string()));
        };
        projection.forget();
        self.store.projection_reset(projection.name()).await?;
        self.catch_up(&**projection).await
    }

    /// Keeps every projection up to date until `closing` turns true: one
    /// task each, which takes the projection's lease, folds what the feed
    /// holds, and then folds each new append as the store announces it.
    pub fn spawn(self: &Arc<Self>, closing: tokio::sync::watch::Receiver<bool>) {
        for index in 0..self.all.len() {
            tokio::spawn(Arc::clone(self).keep(index, closing.clone()));
        }
    }

    async fn keep(self: Arc<Self>, index: usize, mut closing: tokio::sync::watch::Receiver<bool>) {
        let (projection, nudge) = (Arc::clone(&self.all[index]), &self.nudges[index]);
        let name = projection.name();
        let poll = self.store.poll_every().unwrap_or(Duration::from_secs(30));
        while !*closing.borrow() {
            let lease = match self.store.projection_lease(name).await {
                Ok(Some(lease)) => lease,
                Ok(None) => {
                    tracing::debug!(projection = name, "another server advances this projection");
                    if wait(&mut closing, RETRY).await {
                        return;
                    }
                    continue;
                }
                Err(err) => {
                    tracing::warn!(%err, projection = name, "the projection's lease could not be taken");
                    if wait(&mut closing, RETRY).await {
                        return;
                    }
                    continue;
                }
            };
            // Subscribed before catching up: an append between the two rings.
            let mut notices = self.store.subscribe();
            tracing::info!(projection = name, "keeping the projection up to date");
            let _keeping = Keeping::start(&self.keeping[index], &*projection);
            while lease.is_held() && !*closing.borrow() {
                // Notices of appends the fold below reads anyway: forgotten
                // first, so one that comes while it folds rings again.
                while let Ok(_) | Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) = notices.try_recv() {}
                match self.catch_up(&*projection).await {
                    Ok(_) => {}
                    Err(err) => {
                        tracing::warn!(%err, projection = name, "the projection stopped; it tries again");
                        if wait(&mut closing, RETRY).await {
                            return;
                        }
                        continue;
                    }
                }
                let heard = tokio::select! {
                    notice = notices.recv() => {
                        if matches!(notice, Err(tokio::sync::broadcast::error::RecvError::Closed)) {
                            return; // the store closed
                        }
                        true
                    }
                    () = tokio::time::sleep(poll) => false,
                    () = nudge.notified() => false,
                    _ = closing.wait_for(|closed| *closed) => return,
                };
                // Let more appends gather, then fold them together (unless
                // a reader waits for them).
                if heard {
                    tokio::select! {
                        () = tokio::time::sleep(GATHER) => {}
                        () = nudge.notified() => {}
                        _ = closing.wait_for(|closed| *closed) => return,
                    }
                }
            }
        }
    }
}

/// Marks a projection kept by this process while it lives: offers are
/// taken for it meanwhile, and forgotten when it ends (nobody here folds
/// their entries then).
struct Keeping<'a> {
    flag: &'a AtomicBool,
    projection: &'a dyn Projection,
}

impl<'a> Keeping<'a> {
    fn start(flag: &'a AtomicBool, projection: &'a dyn Projection) -> Self {
        flag.store(true, Ordering::Release);
        Keeping { flag, projection }
    }
}

impl Drop for Keeping<'_> {
    fn drop(&mut self) {
        self.flag.store(false, Ordering::Release);
        self.projection.forget();
    }
}

/// Waits `pause`, or less if the service closes (answers whether it did).
async fn wait(closing: &mut tokio::sync::watch::Receiver<bool>, pause: Duration) -> bool {
    let slept = tokio::select! {
        () = tokio::time::sleep(pause) => true,
        _ = closing.wait_for(|closed| *closed) => false,
    };
    !slept || *closing.borrow()
}
