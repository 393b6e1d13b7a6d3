//! `Durability::Fsync`: a real fsync after sled's flush.
//!
//! sled 0.34's `flush()` writes its log with `sync_file_range` on Linux: the
//! data pages reach the device, but the file's metadata (its size, as the log
//! grows) and the device's write cache are only flushed by sled's periodic
//! `fsync`. Records over about a quarter of a segment go to separate blob
//! files, which sled writes without any sync at all. This module closes both
//! gaps: it fsyncs sled's data file, and every blob file it has not synced yet
//! together with the blob directory.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Name of sled's data file and blob directory inside the store's directory.
const DATA_FILE: &str = "db";
const BLOB_DIR: &str = "blobs";

/// Keeps what it needs to fsync sled's files after each group flush.
#[derive(Debug)]
pub(super) struct FileSyncer {
    data_file: File,
    blob_dir: PathBuf,
    synced_blobs: HashSet<OsString>,
}

impl FileSyncer {
    /// Prepares syncing the sled database in `dir` (already opened by sled),
    /// and makes the directory entries of its files durable.
    pub(super) fn open(dir: &Path) -> io::Result<Self> {
        // Write access: some platforms refuse to fsync a read-only handle.
        let data_file = OpenOptions::new().read(true).write(true).open(dir.join(DATA_FILE))?;
        sync_dir(dir)?;
        let mut syncer = FileSyncer { data_file, blob_dir: dir.join(BLOB_DIR), synced_blobs: HashSet::new() };
        syncer.sync()?;
        Ok(syncer)
    }

    /// fsyncs the data file, then any blob written since the last call.
    pub(super) fn sync(&mut self) -> io::Result<()> {
        self.data_file.sync_all()?;
        self.sync_new_blobs()
    }

    fn sync_new_blobs(&mut self) -> io::Result<()> {
        let entries = match std::fs::read_dir(&self.blob_dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        let mut present = HashSet::new();
        let mut new_blob = false;
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name();
            if !self.synced_blobs.contains(&name) {
                match File::open(entry.path()) {
                    Ok(file) => file.sync_all()?,
                    // Collected by sled meanwhile: nothing left to sync.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(e),
                }
                new_blob = true;
            }
            present.insert(name);
        }
        if new_blob {
            sync_dir(&self.blob_dir)?;
        }
        // Forget blobs sled has removed.
        self.synced_blobs = present;
        Ok(())
    }
}

/// fsyncs a directory, making the entries of its files durable.
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    // Directories cannot be opened as files elsewhere; their entries are
    // made durable with the files.
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}
