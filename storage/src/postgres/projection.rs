//! Projection storage in PostgreSQL: `ludo_projections` (name →
//! checkpoint) and `ludo_projection_rows` (name, key → value; `bytea`
//! compares bytewise, so `ORDER BY key` is the rows' byte order).
//!
//! A commit is one transaction that locks the projection's row (`FOR
//! UPDATE`) before comparing its checkpoint, so two servers committing the
//! same projection are serialized and the second finds the checkpoint moved.
//! A first commit (no row yet) inserts the row with `ON CONFLICT DO
//! NOTHING`: of two first commits, the second inserts nothing and is
//! refused. A reset deletes the projection's row first, taking the same
//! lock, so no commit can slip rows in behind it.

use tokio_postgres::types::ToSql;

use super::{Db, backend, seq_out};
use crate::contract::StoreError;
use crate::projection::{MAX_PROJECTION_SCAN, ProjectionCommit, ProjectionRow, conflict};

fn checkpoint_in(checkpoint: u64) -> i64 {
    // `ProjectionCommit::validate` refused checkpoints beyond bigint.
    i64::try_from(checkpoint).unwrap_or(i64::MAX)
}

pub(super) async fn load(db: Db, name: String) -> Result<Option<u64>, StoreError> {
    let client = db.client().await?;
    let statement = client.prepare_cached("SELECT checkpoint FROM ludo_projections WHERE name = $1").await.map_err(|e| backend(&e))?;
    let row = client.query_opt(&statement, &[&name]).await.map_err(|e| backend(&e))?;
    row.map(|row| seq_out(row.get(0))).transpose()
}

pub(super) async fn commit(db: Db, commit: ProjectionCommit) -> Result<(), StoreError> {
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| backend(&e))?;
    let locked = tx.prepare_cached("SELECT checkpoint FROM ludo_projections WHERE name = $1 FOR UPDATE").await.map_err(|e| backend(&e))?;
    let actual = tx.query_opt(&locked, &[&commit.name]).await.map_err(|e| backend(&e))?.map(|row| seq_out(row.get(0))).transpose()?;
    if actual != commit.expected {
        return Err(conflict(&commit.name, commit.expected, actual));
    }
    let checkpoint = checkpoint_in(commit.checkpoint);
    if actual.is_none() {
        let first = tx
            .prepare_cached("INSERT INTO ludo_projections (name, checkpoint) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING")
            .await
            .map_err(|e| backend(&e))?;
        if tx.execute(&first, &[&commit.name, &checkpoint]).await.map_err(|e| backend(&e))? == 0 {
            // Another first commit got there meanwhile.
            drop(tx);
            let actual = load(db, commit.name.clone()).await?;
            return Err(conflict(&commit.name, commit.expected, actual));
        }
    } else {
        let moved = tx.prepare_cached("UPDATE ludo_projections SET checkpoint = $2 WHERE name = $1").await.map_err(|e| backend(&e))?;
        tx.execute(&moved, &[&commit.name, &checkpoint]).await.map_err(|e| backend(&e))?;
    }
    let (mut deleted, mut keys, mut values) = (Vec::new(), Vec::new(), Vec::new());
    for (key, value) in commit.changes() {
        match value {
            Some(value) => {
                keys.push(key);
                values.push(value);
            }
            None => deleted.push(key),
        }
    }
    if !deleted.is_empty() {
        let delete = tx
            .prepare_cached("DELETE FROM ludo_projection_rows WHERE name = $1 AND key = ANY($2::bytea[])")
            .await
            .map_err(|e| backend(&e))?;
        tx.execute(&delete, &[&commit.name, &deleted]).await.map_err(|e| backend(&e))?;
    }
    if !keys.is_empty() {
        let upsert = tx
            .prepare_cached(
                "INSERT INTO ludo_projection_rows (name, key, value) SELECT $1, k, v FROM unnest($2::bytea[], $3::bytea[]) AS t (k, v)
                 ON CONFLICT (name, key) DO UPDATE SET value = EXCLUDED.value",
            )
            .await
            .map_err(|e| backend(&e))?;
        let params: [&(dyn ToSql + Sync); 3] = [&commit.name, &keys, &values];
        tx.execute(&upsert, &params).await.map_err(|e| backend(&e))?;
    }
    tx.commit().await.map_err(|e| backend(&e))
}

pub(super) async fn get(db: Db, name: String, key: Vec<u8>) -> Result<Option<Vec<u8>>, StoreError> {
    let client = db.client().await?;
    let statement =
        client.prepare_cached("SELECT value FROM ludo_projection_rows WHERE name = $1 AND key = $2").await.map_err(|e| backend(&e))?;
    let row = client.query_opt(&statement, &[&name, &key]).await.map_err(|e| backend(&e))?;
    Ok(row.map(|row| row.get(0)))
}

pub(super) async fn scan(db: Db, name: String, after: Option<Vec<u8>>, limit: usize) -> Result<Vec<ProjectionRow>, StoreError> {
    let limit = i64::try_from(limit.min(MAX_PROJECTION_SCAN)).unwrap_or(0);
    if limit == 0 {
        return Ok(Vec::new());
    }
    let client = db.client().await?;
    let rows = match after {
        Some(after) => {
            let statement = client
                .prepare_cached("SELECT key, value FROM ludo_projection_rows WHERE name = $1 AND key > $2 ORDER BY key LIMIT $3")
                .await
                .map_err(|e| backend(&e))?;
            client.query(&statement, &[&name, &after, &limit]).await
        }
        None => {
            let statement = client
                .prepare_cached("SELECT key, value FROM ludo_projection_rows WHERE name = $1 ORDER BY key LIMIT $2")
                .await
                .map_err(|e| backend(&e))?;
            client.query(&statement, &[&name, &limit]).await
        }
    }
    .map_err(|e| backend(&e))?;
    Ok(rows.into_iter().map(|row| (row.get(0), row.get(1))).collect())
}

pub(super) async fn reset(db: Db, name: String) -> Result<(), StoreError> {
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| backend(&e))?;
    // The checkpoint's row first: its lock keeps commits out until the end.
    for sql in ["DELETE FROM ludo_projections WHERE name = $1", "DELETE FROM ludo_projection_rows WHERE name = $1"] {
        let statement = tx.prepare_cached(sql).await.map_err(|e| backend(&e))?;
        tx.execute(&statement, &[&name]).await.map_err(|e| backend(&e))?;
    }
    tx.commit().await.map_err(|e| backend(&e))
}

pub(super) async fn names(db: Db) -> Result<Vec<(String, u64)>, StoreError> {
    let client = db.client().await?;
    let statement = client
        .prepare_cached(r#"SELECT name, checkpoint FROM ludo_projections ORDER BY name COLLATE "C""#)
        .await
        .map_err(|e| backend(&e))?;
    let rows = client.query(&statement, &[]).await.map_err(|e| backend(&e))?;
    rows.into_iter().map(|row| Ok((row.get(0), seq_out(row.get(1))?))).collect()
}
