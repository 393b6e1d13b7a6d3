//! Reading the global feed from PostgreSQL (how positions are given: see
//! the module docs of `postgres`).

use super::{Db, backend, seq_out, stream_out};
use crate::contract::{FeedEntry, MAX_FEED_PAGE, StoreError};

/// Entries at positions after `after`, at most `limit` (and
/// [`MAX_FEED_PAGE`]), in position order.
pub(super) async fn read(db: Db, after: u64, limit: usize) -> Result<Vec<FeedEntry>, StoreError> {
    let limit = i64::try_from(limit.min(MAX_FEED_PAGE)).unwrap_or(0);
    // A position beyond bigint holds nothing after it.
    let Ok(after) = i64::try_from(after) else { return Ok(Vec::new()) };
    if limit == 0 {
        return Ok(Vec::new());
    }
    let client = db.client().await?;
    let statement = client
        .prepare_cached("SELECT position, stream, seq, bytes FROM ludo_records WHERE position > $1 ORDER BY position LIMIT $2")
        .await
        .map_err(|e| backend(&e))?;
    let rows = client.query(&statement, &[&after, &limit]).await.map_err(|e| backend(&e))?;
    rows.into_iter()
        .map(|row| {
            let stream: &[u8] = row.get(1);
            Ok(FeedEntry { position: seq_out(row.get(0))?, stream: stream_out(stream)?, seq: seq_out(row.get(2))?, bytes: row.get(3) })
        })
        .collect()
}

/// The last position given (committed).
pub(super) async fn head(db: Db) -> Result<u64, StoreError> {
    let client = db.client().await?;
    let statement = client.prepare_cached("SELECT head FROM ludo_feed").await.map_err(|e| backend(&e))?;
    let row = client.query_opt(&statement, &[]).await.map_err(|e| backend(&e))?;
    row.map_or(Ok(0), |row| seq_out(row.get(0)))
}
