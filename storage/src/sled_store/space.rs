//! Room on the store's file system: the writer refuses a group that would
//! leave less than [`KEEP_FREE`], and recovers from a failed write only once
//! there is room again.

use std::path::Path;

/// Free bytes the store leaves on its file system: a group of appends that
/// would leave less is refused before anything is written.
///
/// Why keep room: sled needs some to open the database (it writes a
/// snapshot of its page table and zeroes the unused tail of its last log
/// segment, up to a segment of 512 KiB), so a store that filled its disk to
/// the last byte could neither restart nor recover; and a write that does
/// hit a full disk latches sled's error, which also fails the reads that
/// would have to finish a node split. 4 MiB holds a whole segment beside
/// the snapshot of tens of thousands of tree nodes (a few dozen bytes
/// each); a much larger database may need more to reopen on a full disk.
pub(super) const KEEP_FREE: u64 = 4 << 20;

/// Bytes this process may still write on the file system holding `dir`, as
/// `statvfs` reports them; `None` where it cannot tell (then writing is the
/// only way to find out).
#[cfg(unix)]
pub(super) fn free_bytes(dir: &Path) -> Option<u64> {
    let stats = rustix::fs::statvfs(dir).ok()?;
    // Root may also write the blocks the file system keeps for it (ext4's
    // reserve), and a disk filled by root is full only once those are gone.
    let blocks = if rustix::process::geteuid().is_root() { stats.f_bfree } else { stats.f_bavail };
    Some(blocks.saturating_mul(stats.f_frsize))
}

/// Bytes this process may still write: unknown off Unix.
#[cfg(not(unix))]
pub(super) fn free_bytes(_dir: &Path) -> Option<u64> {
    None
}

#[cfg(all(test, unix))]
mod tests {
    use super::free_bytes;

    #[test]
    fn free_bytes_reports_the_file_system_of_a_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(free_bytes(dir.path()).is_some(), "statvfs answers for an existing directory");
        assert_eq!(free_bytes(&dir.path().join("missing")), None, "and says nothing for a missing one");
    }
}
